/* The probe's figures as JSON, and the cache that spares every run the
 * seconds of probing: peak.json holds one entry per CPU model and thread
 * count, {"probe_version": 2, "entries": {MODEL: {"THREADS": {...}}}}.
 * A file of another probe version is not read: its entries are measured
 * again and the file replaced. */
#include "peak/peak_impl.h"
#include "util/cache_dir.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

json_t *dlb_peak_to_json(const struct dlb_peak *p)
{
    json_t *j = json_pack("{s:s, s:i}", "cpu_model", p->cpu_model,
                          "threads", p->threads);
    int ok = j != NULL;
    /* a unit the probe did not measure is null */
    for (int u = 0; ok && u < DLB_PEAK_NUNITS; u++) {
        const struct dlb_peak_unit_desc *d = &dlb_peak_units[u];
        const char *isa = dlb_peak_isa(p, (enum dlb_peak_unit)u);
        json_t *fig = json_null();
        if (u == DLB_PEAK_FP32 || strcmp(isa, "none") != 0)
            fig = json_pack("{s:f, s:f, s:s}",
                            d->all, dlb_peak_figure(p, (enum dlb_peak_unit)u, 0),
                            d->one, dlb_peak_figure(p, (enum dlb_peak_unit)u, 1),
                            "isa", isa);
        ok = json_object_set_new(j, d->key, fig) == 0;
    }
    json_t *rest = json_pack(
        "{s:{s:f, s:f, s:s, s:f}, s:b, s:b, s:f, s:I, s:i}",
        "memory", "triad_gbs", p->triad_gbs, "read_gbs", p->read_gbs,
        "isa", p->mem_isa, "mib", p->mem_mib,
        "pinned", p->pinned, "contended", p->contended,
        "probe_s", p->probe_s,
        "measured_at", (json_int_t)p->measured_at,
        "probe_version", DLB_PEAK_PROBE_VERSION);
    ok = ok && rest && json_object_update(j, rest) == 0;
    json_decref(rest);
    if (!ok) {
        json_decref(j);
        return NULL;
    }
    return j;
}

/* The ISAs a figure may name: fp32 and memory, the kernels' names; every
 * other unit, its own. */
static int isa_known(const char *s, const char *unit_isa)
{
    if (unit_isa)
        return !strcmp(s, unit_isa);
    return !strcmp(s, "avx512") || !strcmp(s, "avx2") || !strcmp(s, "c");
}

/* A figure must be a positive finite number. */
static int figure(const json_t *o, const char *key, double *v)
{
    json_t *j = json_object_get(o, key);
    if (!json_is_number(j))
        return 0;
    *v = json_number_value(j);
    return isfinite(*v) && *v > 0;
}

static int copy_isa(const json_t *o, char *dst, size_t size,
                    const char *unit_isa)
{
    const char *s = json_string_value(json_object_get(o, "isa"));
    if (!s || !isa_known(s, unit_isa))
        return 0;
    snprintf(dst, size, "%s", s);
    return 1;
}

/* Unit u's member of j into q: an object with both figures and its isa, or
 * (for all but fp32) null for a unit not measured. 0 when invalid. */
static int unit_from_json(const json_t *j, enum dlb_peak_unit u,
                          struct dlb_peak *q)
{
    const struct dlb_peak_unit_desc *d = &dlb_peak_units[u];
    const json_t *o = json_object_get(j, d->key);
    double all, one;
    char isa[16];
    if (u != DLB_PEAK_FP32 && json_is_null(o)) {
        dlb_peak_set(q, u, 0, 0, "none");
        return 1;
    }
    if (!figure(o, d->all, &all) || !figure(o, d->one, &one)
        || !copy_isa(o, isa, sizeof isa, d->isa))
        return 0;
    dlb_peak_set(q, u, all, one, isa);
    return 1;
}

dlb_status dlb_peak_from_json(const json_t *j, struct dlb_peak *p,
                              struct dlb_error *err)
{
    struct dlb_peak q = {0};
    json_t *mem = json_object_get(j, "memory");
    json_t *threads = json_object_get(j, "threads");
    json_t *when = json_object_get(j, "measured_at");
    json_t *pinned = json_object_get(j, "pinned");
    json_t *contended = json_object_get(j, "contended");
    const char *model = json_string_value(json_object_get(j, "cpu_model"));
    const char *bad = NULL;
    if (!json_is_object(j))
        bad = "not an object";
    else if (!model)
        bad = "cpu_model";
    else if (!json_is_integer(threads) || json_integer_value(threads) < 1
             || json_integer_value(threads) > 1024)
        bad = "threads";
    for (int u = 0; !bad && u < DLB_PEAK_NUNITS; u++)
        if (!unit_from_json(j, (enum dlb_peak_unit)u, &q))
            bad = dlb_peak_units[u].key;
    if (!bad && (!figure(mem, "triad_gbs", &q.triad_gbs)
                 || !figure(mem, "read_gbs", &q.read_gbs)
                 || !figure(mem, "mib", &q.mem_mib)
                 || !copy_isa(mem, q.mem_isa, sizeof q.mem_isa, NULL)))
        bad = "memory";
    if (!bad && (!json_is_integer(when) || !json_is_boolean(pinned)
                 || !json_is_boolean(contended)))
        bad = "measured_at, pinned or contended";
    if (bad)
        return dlb_errorf(err, DLB_ERR_INPUT, "peak figures: missing or "
                          "invalid %s", bad);
    snprintf(q.cpu_model, sizeof q.cpu_model, "%s", model);
    q.threads = (int)json_integer_value(threads);
    q.measured_at = (long long)json_integer_value(when);
    q.pinned = json_is_true(pinned);
    q.contended = json_is_true(contended);
    json_t *ps = json_object_get(j, "probe_s");
    q.probe_s = json_is_number(ps) ? json_number_value(ps) : 0;
    *p = q;
    return DLB_OK;
}

dlb_status dlb_peak_cache_path(char *buf, size_t size, struct dlb_error *err)
{
    const char *name = "/peak.json";
    if (size <= strlen(name))
        return dlb_errorf(err, DLB_ERR_INPUT, "cache path buffer too short");
    dlb_status s = dlb_cache_dir(buf, size - strlen(name), err);
    if (s == DLB_OK)
        strcat(buf, name);
    return s;
}

/* The cache file's JSON: *root NULL when the file does not exist. */
static dlb_status read_cache(const char *path, json_t **root,
                             struct dlb_error *err)
{
    *root = NULL;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return DLB_OK;
        return dlb_errorf(err, DLB_ERR_IO, "%s: %s", path, strerror(errno));
    }
    json_error_t je;
    json_t *j = json_loadf(f, 0, &je);
    fclose(f);
    if (!j)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s:%d:%d: not valid JSON "
                          "(%s); delete the file to re-measure", path,
                          je.line, je.column, je.text);
    if (!json_is_integer(json_object_get(j, "probe_version"))
        || !json_is_object(json_object_get(j, "entries"))) {
        json_decref(j);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: not a dlbench peak cache "
                          "(no probe_version or entries); delete the file to "
                          "re-measure", path);
    }
    *root = j;
    return DLB_OK;
}

dlb_status dlb_peak_load(const char *path, int threads, struct dlb_peak *out,
                         int *found, struct dlb_error *err)
{
    char def[4096], model[128], key[16];
    *found = 0;
    dlb_status st = DLB_OK;
    if (!path && (st = dlb_peak_cache_path(def, sizeof def, err)) != DLB_OK)
        return st;
    path = path ? path : def;
    json_t *root;
    if ((st = read_cache(path, &root, err)) != DLB_OK || !root)
        return st;
    /* another probe version's figures are not wrong, just not comparable */
    if (json_integer_value(json_object_get(root, "probe_version"))
        != DLB_PEAK_PROBE_VERSION) {
        json_decref(root);
        return DLB_OK;
    }
    dlb_peak_cpu_model(model, sizeof model);
    threads = dlb_peak_resolve_threads(threads);
    snprintf(key, sizeof key, "%d", threads);
    json_t *cpu = json_object_get(json_object_get(root, "entries"), model);
    json_t *e = json_object_get(cpu, key);
    if (cpu && !json_is_object(cpu))
        st = dlb_errorf(err, DLB_ERR_INPUT, "%s: entry for \"%s\" is not an "
                        "object; delete the file to re-measure", path, model);
    else if (e) {
        struct dlb_error e2;
        struct dlb_peak p;
        st = dlb_peak_from_json(e, &p, &e2);
        if (st == DLB_OK && (p.threads != threads
                             || strcmp(p.cpu_model, model) != 0))
            st = dlb_errorf(&e2, DLB_ERR_INPUT, "peak figures: entry's "
                            "cpu_model or threads differ from its key");
        if (st != DLB_OK)
            dlb_errorf(err, st, "%s: entry \"%s\"/%s: %s; delete the file to "
                       "re-measure", path, model, key, e2.msg);
        else {
            p.from_cache = 1;
            *out = p;
            *found = 1;
        }
    }
    json_decref(root);
    return st;
}

/* mkdir -p for the directory part of path. */
static dlb_status make_dirs(const char *path, struct dlb_error *err)
{
    char d[4096];
    if (snprintf(d, sizeof d, "%s", path) >= (int)sizeof d)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: path too long", path);
    char *slash = strrchr(d, '/');
    if (!slash || slash == d)
        return DLB_OK;
    *slash = 0;
    return dlb_make_dirs(d, err);
}

dlb_status dlb_peak_save(const char *path, const struct dlb_peak *p,
                         struct dlb_error *err)
{
    char def[4096], tmp[4160], key[16];
    dlb_status st = DLB_OK;
    if (!path && (st = dlb_peak_cache_path(def, sizeof def, err)) != DLB_OK)
        return st;
    path = path ? path : def;
    if ((st = make_dirs(path, err)) != DLB_OK)
        return st;
    json_t *root = NULL;
    struct dlb_error ignored;
    /* a corrupt file or another probe version's is replaced, not merged */
    if (read_cache(path, &root, &ignored) != DLB_OK || !root
        || json_integer_value(json_object_get(root, "probe_version"))
               != DLB_PEAK_PROBE_VERSION) {
        json_decref(root);
        root = json_pack("{s:i, s:{}}", "probe_version",
                         DLB_PEAK_PROBE_VERSION, "entries");
    }
    json_t *entries = json_object_get(root, "entries");
    json_t *cpu = json_object_get(entries, p->cpu_model);
    if (entries && !json_is_object(cpu)
        && json_object_set_new(entries, p->cpu_model, json_object()) == 0)
        cpu = json_object_get(entries, p->cpu_model);
    snprintf(key, sizeof key, "%d", p->threads);
    if (!json_is_object(cpu)
        || json_object_set_new(cpu, key, dlb_peak_to_json(p)) != 0) {
        json_decref(root);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory writing %s",
                          path);
    }
    /* unique per process, so that concurrent savers do not mix bytes */
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (json_dump_file(root, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
        st = dlb_errorf(err, DLB_ERR_IO, "cannot write %s: %s", tmp,
                        strerror(errno));
    else if (rename(tmp, path) != 0)
        st = dlb_errorf(err, DLB_ERR_IO, "cannot rename %s to %s: %s", tmp,
                        path, strerror(errno));
    if (st != DLB_OK)
        remove(tmp);
    json_decref(root);
    return st;
}

void dlb_peak_warn_add(struct dlb_error *warn, const char *what,
                       const char *msg)
{
    if (!warn)
        return;
    size_t n = strlen(warn->msg);
    snprintf(warn->msg + n, sizeof warn->msg - n, "%s%s%s", n ? "; " : "",
             what, msg);
}

dlb_status dlb_peak_get_opts(int threads, int allow_measure,
                             const struct dlb_peak_opts *o, const char *path,
                             struct dlb_peak *out, struct dlb_error *warn,
                             struct dlb_error *err)
{
    char def[4096];
    struct dlb_error e;
    int found = 0;
    if (warn)
        warn->msg[0] = 0;
    if (!path) {
        if (dlb_peak_cache_path(def, sizeof def, &e) == DLB_OK)
            path = def;
        else
            dlb_peak_warn_add(warn, "peak figures not cached: ", e.msg);
    }
    if (path) {
        dlb_status st = dlb_peak_load(path, threads, out, &found, &e);
        if (st == DLB_OK && found)
            return DLB_OK;
        if (st != DLB_OK)
            dlb_peak_warn_add(warn, "ignoring peak cache: ", e.msg);
    }
    if (!allow_measure) {
        char model[128];
        dlb_peak_cpu_model(model, sizeof model);
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "no cached peak figures "
                          "for \"%s\" with %d threads; run `dlbench info "
                          "--peak` to measure them", model,
                          dlb_peak_resolve_threads(threads));
    }
    return dlb_peak_measure_save(threads, o, path, out, warn, err);
}

dlb_status dlb_peak_measure_save(int threads, const struct dlb_peak_opts *o,
                                 const char *path, struct dlb_peak *out,
                                 struct dlb_error *warn, struct dlb_error *err)
{
    char def[4096];
    struct dlb_error e;
    struct dlb_peak_opts def_o;
    if (!o) {
        dlb_peak_opts_default(&def_o);
        o = &def_o;
    }
    if (!path && dlb_peak_cache_path(def, sizeof def, &e) == DLB_OK)
        path = def;
    dlb_status st = dlb_peak_measure_opts(threads, o, out, err);
    if (st != DLB_OK || !path)
        return st;
    /* a figure taken while the machine was busy would stay wrong for every
     * later run: report it this once, measure again next time */
    if (out->contended) {
        snprintf(e.msg, sizeof e.msg, "%d threads gave %.1f GFLOP/s against "
                 "%.1f for one; measure again when the machine is idle",
                 out->threads, out->fp32_gflops, out->fp32_gflops_1t);
        dlb_peak_warn_add(warn, "peak figures look contended, not cached: ", e.msg);
    } else if (dlb_peak_save(path, out, &e) != DLB_OK) {
        dlb_peak_warn_add(warn, "peak figures not cached: ", e.msg);
    }
    return st;
}

dlb_status dlb_peak_probe(int threads, struct dlb_peak *out,
                          struct dlb_error *warn, struct dlb_error *err)
{
    if (warn)
        warn->msg[0] = 0;
    return dlb_peak_measure_save(threads, NULL, NULL, out, warn, err);
}

dlb_status dlb_peak_get(int threads, int allow_measure, struct dlb_peak *out,
                        struct dlb_error *warn, struct dlb_error *err)
{
    return dlb_peak_get_opts(threads, allow_measure, NULL, NULL, out, warn,
                             err);
}
