/* The one reader of a record's JSON (core/results/record.h): every member the
 * struct models is checked for its type, and a wrong one is an error that
 * names the record and the member, instead of a figure read as 0. */
#define _POSIX_C_SOURCE 200809L
#include "results/record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rd {
    const char *where;
    json_t *rec;
    struct dlb_error *err;
    dlb_status st;
};

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Note the first error only: the rest of the record is read regardless,
 * and the caller drops it. */
static void bad(struct rd *c, const char *obj, const char *key,
                const json_t *v, const char *want)
{
    if (c->st != DLB_OK)
        return;
    const char *id = json_string_value(json_object_get(c->rec, "id"));
    c->st = dlb_errorf(c->err, DLB_ERR_INPUT, "%s: record %" JSON_INTEGER_FORMAT
                       " (%s): \"%s%s%s\" is %s; expected %s",
                       c->where ? c->where : "record",
                       json_integer_value(json_object_get(c->rec, "index")),
                       id ? id : "?", obj ? obj : "", obj ? "." : "", key,
                       type_name(v), want);
}

/* Members that are absent or null read as absent. */
static json_t *member(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_null(v) ? NULL : v;
}

static double num(struct rd *c, const json_t *obj, const char *oname,
                  const char *key)
{
    json_t *v = member(obj, key);
    if (!v)
        return NAN;
    if (!json_is_number(v)) {
        bad(c, oname, key, v, "a number");
        return NAN;
    }
    return json_number_value(v);
}

static long long count(struct rd *c, const json_t *obj, const char *oname,
                       const char *key)
{
    json_t *v = member(obj, key);
    if (!v)
        return -1;
    if (!json_is_integer(v)) {
        bad(c, oname, key, v, "an integer");
        return -1;
    }
    return (long long)json_integer_value(v);
}

static int boolean(struct rd *c, const json_t *obj, const char *oname,
                   const char *key)
{
    json_t *v = member(obj, key);
    if (!v)
        return -1;
    if (!json_is_boolean(v)) {
        bad(c, oname, key, v, "true or false");
        return -1;
    }
    return json_is_true(v);
}

static const char *str(struct rd *c, const json_t *obj, const char *oname,
                       const char *key)
{
    json_t *v = member(obj, key);
    if (!v)
        return NULL;
    if (!json_is_string(v)) {
        bad(c, oname, key, v, "a string");
        return NULL;
    }
    return json_string_value(v);
}

static json_t *object(struct rd *c, const json_t *obj, const char *key)
{
    json_t *v = member(obj, key);
    if (v && !json_is_object(v)) {
        bad(c, NULL, key, v, "an object");
        return NULL;
    }
    return v;
}

static json_t *array(struct rd *c, const json_t *obj, const char *key)
{
    json_t *v = member(obj, key);
    if (v && !json_is_array(v)) {
        bad(c, NULL, key, v, "an array");
        return NULL;
    }
    return v;
}

static void read_stats(struct rd *c, struct dlb_record *r)
{
    json_t *o = object(c, c->rec, "stats");
    struct dlb_rec_stats *s = &r->stats;
    s->n = count(c, o, "stats", "n");
    s->median = num(c, o, "stats", "median");
    s->mean = num(c, o, "stats", "mean");
    s->stddev = num(c, o, "stats", "stddev");
    s->cv = num(c, o, "stats", "cv");
    s->min = num(c, o, "stats", "min");
    s->max = num(c, o, "stats", "max");
    s->p5 = num(c, o, "stats", "p5");
    s->p95 = num(c, o, "stats", "p95");
    s->p99 = num(c, o, "stats", "p99");
    s->ci_lo = num(c, o, "stats", "ci_lo");
    s->ci_hi = num(c, o, "stats", "ci_hi");
    s->ci_rel_halfwidth = num(c, o, "stats", "ci_rel_halfwidth");
    s->ci_exact = boolean(c, o, "stats", "ci_exact");
    json_t *cp = member(o, "ci_processes");
    if (cp && !json_is_object(cp))
        bad(c, "stats", "ci_processes", cp, "an object");
    cp = json_is_object(cp) ? cp : NULL;
    s->ci_processes.sd_log = num(c, cp, "stats.ci_processes", "sd_log");
    s->ci_processes.df = num(c, cp, "stats.ci_processes", "df");
    s->ci_processes.halfwidth_log = num(c, cp, "stats.ci_processes", "halfwidth_log");

    o = object(c, c->rec, "throughput");
    r->throughput.median = num(c, o, "throughput", "median");
    r->throughput.ci_lo = num(c, o, "throughput", "ci_lo");
    r->throughput.ci_hi = num(c, o, "throughput", "ci_hi");
}

static void read_measure(struct rd *c, struct dlb_record *r)
{
    json_t *o = object(c, c->rec, "measure");
    struct dlb_rec_measure *m = &r->measure;
    r->has_measure = o != NULL;
    m->clock = str(c, o, "measure", "clock");
    m->peak_unit = str(c, o, "measure", "peak_unit");
    m->fewer_flops = str(c, o, "measure", "fewer_flops");
    m->converged = boolean(c, o, "measure", "converged");
    m->settled = boolean(c, o, "measure", "settled");
    m->steps_per_sample = num(c, o, "measure", "steps_per_sample");
    m->warmup_steps = num(c, o, "measure", "warmup_steps");
    m->warmup_s = num(c, o, "measure", "warmup_s");
    m->measure_s = num(c, o, "measure", "measure_s");
    m->samples_per_step = num(c, o, "measure", "samples_per_step");
    m->flops_per_step = num(c, o, "measure", "flops_per_step");
    m->timer_overhead_s = num(c, o, "measure", "timer_overhead_s");
    m->peak_measured_at = num(c, o, "measure", "peak_measured_at");
}

static void read_samples(struct rd *c, struct dlb_record *r)
{
    json_t *a = array(c, c->rec, "samples"), *v;
    size_t i;
    if (!a)
        return;
    r->has_samples = 1;
    r->samples = malloc((json_array_size(a) + 1) * sizeof *r->samples);
    if (!r->samples) {
        if (c->st == DLB_OK)
            c->st = dlb_errorf(c->err, DLB_ERR_NOMEM, "out of memory");
        return;
    }
    json_array_foreach(a, i, v) {
        if (!json_is_number(v) && !json_is_null(v)) {
            char key[40];
            snprintf(key, sizeof key, "samples[%zu]", i);
            bad(c, NULL, key, v, "a number");
        }
        r->samples[r->n_samples++] = json_is_number(v) ? json_number_value(v) : NAN;
    }
}

static void read_metrics_of(struct rd *c, struct dlb_record *r, json_t *o)
{
    json_t *m;
    const char *name;
    if (!o)
        return;
    r->has_metrics = 1;
    json_object_foreach(o, name, m) {
        if (!json_is_object(m)) {
            bad(c, "metrics", name, m, "an object {\"value\", \"unit\"}");
            continue;
        }
        char oname[300];
        snprintf(oname, sizeof oname, "metrics.%s", name);
        double v = num(c, m, oname, "value");
        const char *unit = str(c, m, oname, "unit");
        if (dlb_record_set_metric(r, name, v, unit) != DLB_OK && c->st == DLB_OK)
            c->st = dlb_errorf(c->err, DLB_ERR_NOMEM, "out of memory");
    }
}

static void read_added(struct rd *c, struct dlb_record *r)
{
    r->wall_s = num(c, c->rec, NULL, "wall_s");
    r->round = count(c, c->rec, NULL, "round");
    r->budget = num(c, c->rec, NULL, "budget");
    r->rep = count(c, c->rec, NULL, "rep");
    r->pass_position = count(c, c->rec, NULL, "pass_position");

    json_t *o = object(c, c->rec, "vs_baseline");
    struct dlb_rec_vs_baseline *vb = &r->vs_baseline;
    vb->baseline_id = str(c, o, "vs_baseline", "baseline_id");
    vb->speedup = num(c, o, "vs_baseline", "speedup");
    vb->speedup_ci_lo = num(c, o, "vs_baseline", "speedup_ci_lo");
    vb->speedup_ci_hi = num(c, o, "vs_baseline", "speedup_ci_hi");
    vb->accuracy_drop = num(c, o, "vs_baseline", "accuracy_drop");
    vb->workers = num(c, o, "vs_baseline", "workers");
    vb->scaling_efficiency = num(c, o, "vs_baseline", "scaling_efficiency");

    o = object(c, c->rec, "system");
    struct dlb_rec_system *s = &r->system;
    r->has_system = o != NULL;
    r->system_json = o;
    s->doubtful = str(c, o, "system", "doubtful");
    s->minor_faults = num(c, o, "system", "minor_faults");
    s->major_faults = num(c, o, "system", "major_faults");
    s->voluntary_switches = num(c, o, "system", "voluntary_switches");
    s->involuntary_switches = num(c, o, "system", "involuntary_switches");
    s->involuntary_per_s = num(c, o, "system", "involuntary_per_s");
    s->steal_share = num(c, o, "system", "steal_share");
    s->cpu_per_wall = num(c, o, "system", "cpu_per_wall");
    s->wall_s = num(c, o, "system", "wall_s");

    r->repetitions = array(c, c->rec, "repetitions");
    size_t n = json_array_size(r->repetitions), i;
    json_t *p;
    r->rep_medians = n ? malloc(n * sizeof *r->rep_medians) : NULL;
    if (n && !r->rep_medians && c->st == DLB_OK)
        c->st = dlb_errorf(c->err, DLB_ERR_NOMEM, "out of memory");
    json_array_foreach(r->repetitions, i, p) {
        char oname[40];
        snprintf(oname, sizeof oname, "repetitions[%zu]", i);
        if (!json_is_object(p))
            bad(c, NULL, oname, p, "an object");
        if (r->rep_medians)
            r->rep_medians[r->n_reps++] = num(c, p, oname, "median");
    }
    r->device = object(c, c->rec, "device");
    r->controls = object(c, c->rec, "controls");
    r->world = object(c, c->rec, "world");
    r->dataset = object(c, c->rec, "dataset");
}

static void read_metrics(struct rd *c, struct dlb_record *r)
{
    read_metrics_of(c, r, object(c, c->rec, "metrics"));
}

dlb_status dlb_record_set_metrics_json(struct dlb_record *r, json_t *metrics,
                                       struct dlb_error *err)
{
    /* the record's own index and id name it in a message */
    json_t *who = json_pack("{s:I,s:s?}", "index", (json_int_t)r->index, "id", r->id);
    struct rd c = {"metrics", who, err, DLB_OK};
    if (!who)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (metrics && !json_is_object(metrics))
        bad(&c, NULL, "metrics", metrics, "an object");
    else
        read_metrics_of(&c, r, metrics);
    json_decref(who);
    return c.st;
}

dlb_status dlb_record_check(const json_t *rec, const char *where,
                            struct dlb_error *err)
{
    if (!json_is_object(rec))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: a record must be a JSON "
                          "object", where);
    if (!json_is_integer(json_object_get(rec, "index")))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: record has no integer "
                          "\"index\"", where);
    if (json_integer_value(json_object_get(rec, "index")) < 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: record \"index\" is %"
                          JSON_INTEGER_FORMAT "; a configuration's index is 0 "
                          "or more", where,
                          json_integer_value(json_object_get(rec, "index")));
    if (!json_is_string(json_object_get(rec, "id")))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: record has no string "
                          "\"id\"", where);
    const char *st = json_string_value(json_object_get(rec, "status"));
    if (!st)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: record has no string "
                          "\"status\"", where);
    if (dlb_rec_status_parse(st) >= 0)
        return DLB_OK;
    return dlb_errorf(err, DLB_ERR_INPUT, "%s: unknown status \"%s\" (expected "
                      "ok, skipped, failed, crashed, timeout or oom)", where, st);
}

dlb_status dlb_record_read(json_t *json, const char *where,
                           struct dlb_record *out, struct dlb_error *err)
{
    dlb_record_init(out);
    dlb_status s = dlb_record_check(json, where ? where : "record", err);
    if (s != DLB_OK)
        return s;
    struct rd c = {where, json, err, DLB_OK};
    out->json = json_incref(json);
    out->index = (long long)json_integer_value(json_object_get(json, "index"));
    out->id = json_string_value(json_object_get(json, "id"));
    out->status = (enum dlb_rec_status)dlb_rec_status_parse(
        json_string_value(json_object_get(json, "status")));
    out->reason = str(&c, json, NULL, "reason");
    out->config = object(&c, json, "config");
    read_stats(&c, out);
    read_measure(&c, out);
    read_samples(&c, out);
    read_metrics(&c, out);
    read_added(&c, out);
    if (c.st != DLB_OK)
        dlb_record_free(out);
    return c.st;
}

dlb_status dlb_record_validate(json_t *rec, const char *where,
                               struct dlb_error *err)
{
    struct dlb_record r;
    dlb_status s = dlb_record_read(rec, where, &r, err);
    if (s == DLB_OK)
        dlb_record_free(&r);
    return s;
}

dlb_status dlb_records_read(json_t *array, const char *where,
                            struct dlb_record **out, size_t *n,
                            struct dlb_error *err)
{
    size_t len = json_array_size(array), i;
    struct dlb_record *recs = calloc(len + 1, sizeof *recs);
    if (!recs)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory reading records");
    for (i = 0; i < len; i++) {
        char w[512];
        snprintf(w, sizeof w, "%s%srecords[%zu]", where ? where : "",
                 where ? ": " : "", i);
        dlb_status s = dlb_record_read(json_array_get(array, i), w, &recs[i], err);
        if (s != DLB_OK) {
            dlb_records_free(recs, i);
            return s;
        }
    }
    *out = recs;
    *n = len;
    return DLB_OK;
}

void dlb_records_free(struct dlb_record *recs, size_t n)
{
    for (size_t i = 0; recs && i < n; i++)
        dlb_record_free(&recs[i]);
    free(recs);
}

dlb_status dlb_results_parse(json_t *root, const char *path,
                             struct dlb_results *out, struct dlb_error *err)
{
    memset(out, 0, sizeof *out);
    dlb_status s = dlb_records_read(json_object_get(root, "records"), path,
                                    &out->records, &out->n, err);
    if (s != DLB_OK)
        return s;
    out->root = json_incref(root);
    out->context = json_object_get(root, "context");
    out->selection = json_object_get(root, "selection");
    if (!json_is_object(out->selection))
        out->selection = NULL;
    return DLB_OK;
}

void dlb_results_free(struct dlb_results *res)
{
    dlb_records_free(res->records, res->n);
    json_decref(res->root);
    memset(res, 0, sizeof *res);
}
