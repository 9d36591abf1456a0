/* The one writer of a record's JSON (core/results/record.h). It starts from the
 * JSON the record was read from, so members the struct does not model and
 * the order of members stay as they were, and it changes a member only
 * where the struct's figure differs from it: a record read and written
 * again is the same document, number forms (1 or 1.0) included. A record
 * built in memory gets its members in the schema's order. */
#define _POSIX_C_SOURCE 200809L
#include "results/record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An object member of the record, created on first write so that a record
 * without, say, a vs_baseline does not gain an empty one. */
struct obj {
    json_t *parent;
    const char *name;
    json_t *o;
};

static struct obj obj_of(json_t *parent, const char *name)
{
    json_t *o = json_object_get(parent, name);
    return (struct obj){parent, name, json_is_object(o) ? o : NULL};
}

static json_t *need(struct obj *w)
{
    if (!w->o) {
        w->o = json_object();
        json_object_set_new(w->parent, w->name, w->o);
    }
    return w->o;
}

static json_t *cur(const struct obj *w, const char *key)
{
    return w->o ? json_object_get(w->o, key) : NULL;
}

/* Absent (NAN or infinite, which JSON cannot hold) removes a number that
 * was there and keeps a null that was. */
static void put_num(struct obj *w, const char *key, double v)
{
    json_t *c = cur(w, key);
    if (!isfinite(v)) {
        if (json_is_number(c))
            json_object_del(w->o, key);
        return;
    }
    if (json_is_number(c) && json_number_value(c) == v)
        return;
    json_object_set_new(need(w), key, json_real(v));
}

/* A figure that is a count where it is whole (steps): a new one is
 * written as an integer, so that tables show 12, not 12.0. */
static void put_whole(struct obj *w, const char *key, double v)
{
    json_t *c = cur(w, key);
    if (isfinite(v) && !json_is_number(c) && v == floor(v) && fabs(v) < 9e15) {
        json_object_set_new(need(w), key, json_integer((json_int_t)v));
        return;
    }
    put_num(w, key, v);
}

static void put_count(struct obj *w, const char *key, long long v)
{
    json_t *c = cur(w, key);
    if (v < 0) {
        if (json_is_integer(c))
            json_object_del(w->o, key);
        return;
    }
    if (json_is_integer(c) && json_integer_value(c) == v)
        return;
    json_object_set_new(need(w), key, json_integer((json_int_t)v));
}

static void put_bool(struct obj *w, const char *key, int v)
{
    json_t *c = cur(w, key);
    if (v < 0) {
        if (json_is_boolean(c))
            json_object_del(w->o, key);
        return;
    }
    if (json_is_boolean(c) && json_is_true(c) == !!v)
        return;
    json_object_set_new(need(w), key, json_boolean(v));
}

static void put_str(struct obj *w, const char *key, const char *v)
{
    json_t *c = cur(w, key);
    if (!v) {
        if (json_is_string(c))
            json_object_del(w->o, key);
        return;
    }
    if (json_is_string(c) && !strcmp(json_string_value(c), v))
        return;
    json_object_set_new(need(w), key, json_string(v));
}

/* A member the struct holds as JSON (config, device ...). */
static void put_json(json_t *rec, const char *key, json_t *v)
{
    json_t *c = json_object_get(rec, key);
    if (!v) {
        if (c && !json_is_null(c))
            json_object_del(rec, key);
        return;
    }
    if (c != v && !json_equal(c, v))
        json_object_set(rec, key, v);
}

static void put_samples(json_t *rec, const struct dlb_record *r)
{
    json_t *a = json_object_get(rec, "samples");
    if (!r->has_samples) {
        if (json_is_array(a))
            json_object_del(rec, "samples");
        return;
    }
    int same = json_is_array(a) && json_array_size(a) == r->n_samples;
    for (size_t i = 0; same && i < r->n_samples; i++) {
        json_t *v = json_array_get(a, i);
        same = isnan(r->samples[i]) ? json_is_null(v)
               : json_is_number(v) && json_number_value(v) == r->samples[i];
    }
    if (same)
        return;
    a = json_array();
    for (size_t i = 0; i < r->n_samples; i++)
        json_array_append_new(a, isfinite(r->samples[i]) ? json_real(r->samples[i])
                                                         : json_null());
    json_object_set_new(rec, "samples", a);
}

static void put_stats(json_t *rec, const struct dlb_record *r)
{
    const struct dlb_rec_stats *s = &r->stats;
    struct obj w = obj_of(rec, "stats");
    put_count(&w, "n", s->n);
    put_num(&w, "median", s->median);
    put_num(&w, "mean", s->mean);
    put_num(&w, "stddev", s->stddev);
    put_num(&w, "cv", s->cv);
    put_num(&w, "min", s->min);
    put_num(&w, "max", s->max);
    put_num(&w, "p5", s->p5);
    put_num(&w, "p95", s->p95);
    put_num(&w, "p99", s->p99);
    put_num(&w, "ci_lo", s->ci_lo);
    put_num(&w, "ci_hi", s->ci_hi);
    put_num(&w, "ci_rel_halfwidth", s->ci_rel_halfwidth);
    put_bool(&w, "ci_exact", s->ci_exact);
    if (w.o || !isnan(s->ci_processes.sd_log) || !isnan(s->ci_processes.df) ||
        !isnan(s->ci_processes.halfwidth_log)) {
        struct obj cp = obj_of(need(&w), "ci_processes");
        put_num(&cp, "sd_log", s->ci_processes.sd_log);
        put_num(&cp, "df", s->ci_processes.df);
        put_num(&cp, "halfwidth_log", s->ci_processes.halfwidth_log);
    }

    w = obj_of(rec, "throughput");
    put_num(&w, "median", r->throughput.median);
    put_num(&w, "ci_lo", r->throughput.ci_lo);
    put_num(&w, "ci_hi", r->throughput.ci_hi);
}

static void put_measure(json_t *rec, const struct dlb_record *r)
{
    const struct dlb_rec_measure *m = &r->measure;
    struct obj w = obj_of(rec, "measure");
    put_str(&w, "clock", m->clock);
    put_bool(&w, "converged", m->converged);
    put_bool(&w, "settled", m->settled);
    put_whole(&w, "warmup_steps", m->warmup_steps);
    put_num(&w, "warmup_s", m->warmup_s);
    put_num(&w, "measure_s", m->measure_s);
    put_whole(&w, "steps_per_sample", m->steps_per_sample);
    put_num(&w, "samples_per_step", m->samples_per_step);
    put_num(&w, "flops_per_step", m->flops_per_step);
    put_num(&w, "timer_overhead_s", m->timer_overhead_s);
    put_str(&w, "peak_unit", m->peak_unit);
    put_str(&w, "fewer_flops", m->fewer_flops);
    put_whole(&w, "peak_measured_at", m->peak_measured_at);
}

static int has_metric(const struct dlb_record *r, const char *name)
{
    return dlb_record_metric(r, name) != NULL;
}

static void put_metrics(json_t *rec, const struct dlb_record *r)
{
    struct obj w = obj_of(rec, "metrics");
    if (r->has_metrics) /* an empty one stays */
        need(&w);
    if (w.o) { /* a metric the struct dropped leaves the JSON */
        const char *name;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(w.o, tmp, name, v)
            if (!has_metric(r, name))
                json_object_del(w.o, name);
    }
    for (size_t i = 0; i < r->n_metrics; i++) {
        const struct dlb_rec_metric *m = &r->metrics[i];
        struct obj e = obj_of(need(&w), m->name);
        put_num(&e, "value", m->value);
        if (!e.o || !json_object_get(e.o, "value"))
            json_object_set_new(need(&e), "value", json_null());
        put_str(&e, "unit", m->unit);
    }
}

static void put_added(json_t *rec, const struct dlb_record *r)
{
    struct obj top = {rec, NULL, rec};
    put_num(&top, "wall_s", r->wall_s);
    put_count(&top, "round", r->round);
    put_num(&top, "budget", r->budget);
    put_count(&top, "rep", r->rep);
    put_count(&top, "pass_position", r->pass_position);

    const struct dlb_rec_vs_baseline *vb = &r->vs_baseline;
    struct obj w = obj_of(rec, "vs_baseline");
    put_str(&w, "baseline_id", vb->baseline_id);
    put_num(&w, "speedup", vb->speedup);
    put_num(&w, "speedup_ci_lo", vb->speedup_ci_lo);
    put_num(&w, "speedup_ci_hi", vb->speedup_ci_hi);
    put_num(&w, "workers", vb->workers);
    put_num(&w, "scaling_efficiency", vb->scaling_efficiency);
    put_num(&w, "accuracy_drop", vb->accuracy_drop);
    /* cleared: the member goes (one read empty stays as it was) */
    if (w.o && !json_object_size(w.o) &&
        json_object_size(json_object_get(r->json, "vs_baseline")))
        json_object_del(rec, "vs_baseline");

    const struct dlb_rec_system *s = &r->system;
    w = obj_of(rec, "system");
    if (r->has_system || w.o) {
        need(&w);
        put_num(&w, "minor_faults", s->minor_faults);
        put_num(&w, "major_faults", s->major_faults);
        put_num(&w, "voluntary_switches", s->voluntary_switches);
        put_num(&w, "involuntary_switches", s->involuntary_switches);
        put_num(&w, "involuntary_per_s", s->involuntary_per_s);
        put_num(&w, "steal_share", s->steal_share);
        /* the schema's word for a share that could not be read */
        if (!r->json && !isfinite(s->steal_share))
            json_object_set_new(w.o, "steal_share", json_null());
        put_num(&w, "cpu_per_wall", s->cpu_per_wall);
        put_num(&w, "wall_s", s->wall_s);
        put_str(&w, "doubtful", s->doubtful);
    }
    put_json(rec, "repetitions", r->repetitions);
    put_json(rec, "device", r->device);
    put_json(rec, "controls", r->controls);
    put_json(rec, "world", r->world);
    put_json(rec, "dataset", r->dataset);
}

json_t *dlb_record_write(const struct dlb_record *r)
{
    json_t *rec = r->json ? json_deep_copy(r->json) : json_object();
    if (!rec)
        return NULL;
    struct obj top = {rec, NULL, rec};
    put_count(&top, "index", r->index);
    put_str(&top, "id", r->id);
    put_json(rec, "config", r->config);
    put_str(&top, "status", dlb_rec_status_name(r->status));
    put_str(&top, "reason", r->reason);
    put_stats(rec, r);
    put_samples(rec, r);
    put_measure(rec, r);
    put_metrics(rec, r);
    put_added(rec, r);
    return rec;
}

/* Make dst equal to src, touching only what differs: a node that stays
 * the same stays the same node, so the strings a record borrowed from it
 * remain valid. */
static int merge(json_t *dst, json_t *src)
{
    const char *key;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(dst, tmp, key, v)
        if (!json_object_get(src, key))
            json_object_del(dst, key);
    json_object_foreach(src, key, v) {
        json_t *d = json_object_get(dst, key);
        if (json_is_object(d) && json_is_object(v)) {
            if (merge(d, v))
                return -1;
        } else if (!json_equal(d, v) && json_object_set(dst, key, v)) {
            return -1;
        }
    }
    return 0;
}

dlb_status dlb_record_store(const struct dlb_record *r, json_t *dst)
{
    json_t *w = dlb_record_write(r);
    if (!w)
        return DLB_ERR_NOMEM;
    int bad = merge(dst, w);
    json_decref(w);
    return bad ? DLB_ERR_NOMEM : DLB_OK;
}
