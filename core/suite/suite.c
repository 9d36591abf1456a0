/* Suite files: read, parse with inih, activate plugins, validate every key.
 *
 * Three passes keep the rules simple. inih collects section headers and
 * `key = value` lines with their line numbers; then the plugins the suite
 * mentions are looked up (so that [quick] or a filter may name a plugin
 * whose section comes later); then every entry is validated in file order. */
#define _POSIX_C_SOURCE 200809L
#include "suite/suite.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "suite/param.h"
#include "suite/suite_load.h"

#define DLB_SUITE_MAX_BYTES (16u << 20)

static const char *const builtin_sections[] = {"suite", "sweep", "quick"};

static const struct dlb_param_def enable_def = {
    "enable", DLB_PARAM_BOOL, "on", 0, 0, 0, NULL, NULL,
    "run the plugin in this configuration; off gives the baseline"};

/* Record the first error as "FILE:LINE: message". */
dlb_status dlb_suite_fail_at(struct dlb_suite_loader *L, int line,
                             dlb_status st, const char *fmt, ...)
{
    char msg[sizeof L->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->st == DLB_OK) {
        L->st = dlb_errorf(L->err, st, "%s:%d: %s", L->path, line, msg);
    }
    return L->st;
}

/* ---- pass 2: plugins ------------------------------------------------- */

static int is_builtin(const char *section)
{
    for (size_t k = 0; k < 3; k++)
        if (!strcmp(section, builtin_sections[k]))
            return 1;
    return 0;
}

static dlb_status add_ns(struct dlb_suite *s, const char *name,
                         const struct dlb_plugin *p,
                         const struct dlb_param_def *defs, unsigned n)
{
    struct dlb_ns *v = realloc(s->ns, (s->n_ns + 1) * sizeof *v);
    if (!v)
        return DLB_ERR_NOMEM;
    s->ns = v;
    struct dlb_ns *ns = &s->ns[s->n_ns];
    unsigned total = n + (p ? 1 : 0);
    ns->name = strdup(name);
    ns->plugin = p;
    ns->defs = malloc(total * sizeof *ns->defs);
    ns->n = total;
    s->n_ns++;
    if (!ns->name || !ns->defs)
        return DLB_ERR_NOMEM;
    if (n)
        memcpy(ns->defs, defs, n * sizeof *defs);
    if (p)
        ns->defs[n] = enable_def;
    return DLB_OK;
}

static dlb_status activate(struct dlb_suite_loader *L, const char *name,
                           int line, int from_section)
{
    struct dlb_suite *s = L->s;
    for (unsigned k = 1; k < s->n_ns; k++)
        if (!strcmp(s->ns[k].name, name))
            return DLB_OK;
    const struct dlb_plugin *p = NULL;
    struct dlb_error inner = {""};
    dlb_status st = L->lookup ? L->lookup(L->lookup_ctx, name, &p, &inner)
                              : dlb_errorf(&inner, DLB_ERR_INPUT,
                                           "unknown plugin '%s'", name);
    if (st != DLB_OK) {
        const char *best =
            from_section ? dlb_suggest(name, builtin_sections, 3) : NULL;
        if (best)
            return dlb_suite_fail_at(
                L, line, DLB_ERR_INPUT,
                "unknown section [%s] (did you mean [%s]?)", name, best);
        return dlb_suite_fail_at(L, line, st, "%s", inner.msg);
    }
    char why[512];
    if (dlb_param_table_check(p->params, p->n_params, why, sizeof why) !=
        DLB_OK)
        return dlb_suite_fail_at(L, line, DLB_ERR_PLUGIN,
                                 "plugin '%s': bad parameter table: %s", name,
                                 why);
    if (dlb_param_find(p->params, p->n_params, "enable") >= 0)
        return dlb_suite_fail_at(
            L, line, DLB_ERR_PLUGIN,
            "plugin '%s': the key 'enable' is reserved by dlbench", name);
    if (add_ns(s, name, p, p->params, p->n_params) != DLB_OK)
        return dlb_suite_fail_at(L, line, DLB_ERR_NOMEM, "out of memory");
    return DLB_OK;
}

/* Activate each plugin of a comma-separated list: `plugins`, or the
 * `workload` values other than the built-in CNN, which must be plugins
 * that provide a workload. */
static dlb_status activate_list(struct dlb_suite_loader *L, const char *list,
                                int line, int workloads)
{
    char *copy = strdup(list);
    if (!copy)
        return dlb_suite_fail_at(L, line, DLB_ERR_NOMEM, "out of memory");
    char *save = NULL;
    for (char *t = strtok_r(copy, ", \t", &save); t && L->st == DLB_OK;
         t = strtok_r(NULL, ", \t", &save)) {
        if (workloads && !strcmp(t, "cnn"))
            continue;
        if (activate(L, t, line, 0) != DLB_OK || !workloads)
            continue;
        for (unsigned k = 1; k < L->s->n_ns; k++)
            if (!strcmp(L->s->ns[k].name, t) && !L->s->ns[k].plugin->workload)
                dlb_suite_fail_at(
                    L, line, DLB_ERR_INPUT,
                    "workload '%s': plugin '%s' provides no workload; expected "
                    "\"cnn\" or a workload plugin",
                    t, t);
    }
    free(copy);
    return L->st;
}

static dlb_status activate_plugins(struct dlb_suite_loader *L)
{
    for (size_t k = 0; k < L->n_ents && L->st == DLB_OK; k++) {
        const struct dlb_suite_entry *e = &L->ents[k];
        const char *dot = e->key ? strchr(e->key, '.') : NULL;
        if (!e->key && !is_builtin(e->section)) {
            activate(L, e->section, e->line, 1);
        } else if (e->key && !strcmp(e->section, "sweep") && dot &&
                   dlb_param_find(dlb_suite_keys, dlb_suite_n_keys,
                                  e->key) < 0) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(dot - e->key), e->key);
            activate(L, name, e->line, 0);
        } else if (e->key && !strcmp(e->section, "suite") &&
                   !strcmp(e->key, "plugins")) {
            activate_list(L, e->value, e->line, 0);
        }
        if (e->key && !strcmp(e->key, "workload") &&
            (!strcmp(e->section, "suite") || !strcmp(e->section, "sweep")))
            activate_list(L, e->value, e->line, 1);
    }
    return L->st;
}

/* ---- load and free --------------------------------------------------- */

static dlb_status read_file(const char *path, char **buf, size_t *len,
                            struct dlb_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "cannot open %s: %s", path,
                          strerror(errno));
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    dlb_status st = b ? DLB_OK : DLB_ERR_NOMEM;
    while (st == DLB_OK) {
        if (n == cap) {
            char *nb = cap >= DLB_SUITE_MAX_BYTES ? NULL : realloc(b, 2 * cap);
            if (!nb) {
                st = dlb_errorf(err, DLB_ERR_INPUT,
                                "%s: larger than %u MiB; is it a suite?", path,
                                DLB_SUITE_MAX_BYTES >> 20);
                break;
            }
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                st = dlb_errorf(err, DLB_ERR_IO, "cannot read %s: %s", path,
                                strerror(errno));
            break;
        }
    }
    fclose(f);
    if (st != DLB_OK) {
        free(b);
        return st == DLB_ERR_NOMEM ? dlb_errorf(err, st, "out of memory") : st;
    }
    *buf = b;
    *len = n;
    return DLB_OK;
}

static dlb_status set_name(struct dlb_suite *s)
{
    const char *name = NULL;
    for (size_t k = 0; k < s->n_fixed; k++)
        if (s->fixed[k].ref.ns == 0 &&
            !strcmp(s->ns[0].defs[s->fixed[k].ref.param].name, "name"))
            name = s->fixed[k].text;
    if (name && *name) {
        s->name = strdup(name);
    } else {
        const char *base = strrchr(s->path, '/');
        base = base ? base + 1 : s->path;
        size_t n = strlen(base);
        if (n > 4 && !strcmp(base + n - 4, ".ini"))
            n -= 4;
        s->name = strndup(base, n);
    }
    return s->name ? DLB_OK : DLB_ERR_NOMEM;
}

dlb_status dlb_suite_load(const char *path, dlb_plugin_lookup_fn lookup,
                          void *lookup_ctx, struct dlb_suite *out,
                          struct dlb_error *err)
{
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    size_t len = 0;
    dlb_status st = read_file(path, &buf, &len, err);
    if (st != DLB_OK)
        return st;
    struct dlb_suite_loader L = {0};
    L.path = path;
    L.buf = buf;
    L.len = len;
    L.err = err;
    L.s = out;
    L.lookup = lookup;
    L.lookup_ctx = lookup_ctx;
    out->crc32 = (uint32_t)crc32_z(0L, (const Bytef *)buf, len);
    out->path = strdup(path);
    if (!out->path ||
        add_ns(out, "suite", NULL, dlb_suite_keys, dlb_suite_n_keys) != DLB_OK)
        dlb_suite_fail_at(&L, 0, DLB_ERR_NOMEM, "out of memory");
    if (L.st == DLB_OK && dlb_suite_read_ini(&L) == DLB_OK &&
        activate_plugins(&L) == DLB_OK && dlb_suite_alloc_claims(&L) == DLB_OK)
        for (size_t k = 0; k < L.n_ents && L.st == DLB_OK; k++)
            if (L.ents[k].key)
                dlb_suite_check_entry(&L, &L.ents[k]);
    if (L.st == DLB_OK)
        dlb_suite_check_backend_keys(&L);
    if (L.st == DLB_OK && set_name(out) != DLB_OK)
        dlb_suite_fail_at(&L, 0, DLB_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < L.n_ents; k++) {
        free(L.ents[k].section);
        free(L.ents[k].key);
        free(L.ents[k].value);
    }
    free(L.ents);
    free(L.claimed);
    free(L.claimed_quick);
    free(L.ns_base);
    free(buf);
    if (L.st != DLB_OK)
        dlb_suite_free(out);
    return L.st;
}

static void free_axes(struct dlb_axis *a, size_t n)
{
    for (size_t k = 0; k < n; k++)
        dlb_strv_free(a[k].items, a[k].n);
    free(a);
}

static void free_settings(struct dlb_setting *v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        free(v[k].text);
    free(v);
}

void dlb_suite_free(struct dlb_suite *s)
{
    if (!s)
        return;
    for (unsigned k = 0; k < s->n_ns; k++) {
        free(s->ns[k].name);
        free(s->ns[k].defs);
    }
    free(s->ns);
    free_settings(s->fixed, s->n_fixed);
    free_settings(s->quick, s->n_quick);
    free_axes(s->axes, s->n_axes);
    free_axes(s->quick_axes, s->n_quick_axes);
    for (size_t k = 0; k < s->n_filters; k++) {
        for (size_t t = 0; t < s->filters[k].n; t++)
            dlb_strv_free(s->filters[k].terms[t].items,
                          s->filters[k].terms[t].n);
        free(s->filters[k].terms);
    }
    free(s->filters);
    free(s->path);
    free(s->name);
    memset(s, 0, sizeof *s);
}
