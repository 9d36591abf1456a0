/* Looking into a record (core/results/record.h): statuses, metrics and settings
 * by name, each saying "absent" apart from 0, and the selection's view of
 * one configuration. */
#define _POSIX_C_SOURCE 200809L
#include "results/record.h"
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {
    "ok", "skipped", "failed", "crashed", "timeout", "oom",
};
#define N_STATUS (sizeof status_names / sizeof *status_names)

const char *dlb_rec_status_name(enum dlb_rec_status s)
{
    return (size_t)s < N_STATUS ? status_names[s] : "failed";
}

int dlb_rec_status_parse(const char *name)
{
    for (size_t i = 0; name && i < N_STATUS; i++)
        if (!strcmp(name, status_names[i]))
            return (int)i;
    return -1;
}

long long dlb_rec_index_of(const json_t *rec)
{
    json_t *v = json_object_get(rec, "index");
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

const char *dlb_rec_id_of(const json_t *rec)
{
    return json_string_value(json_object_get(rec, "id"));
}

int dlb_rec_status_of(const json_t *rec)
{
    return dlb_rec_status_parse(json_string_value(json_object_get(rec, "status")));
}

const char *dlb_rec_reason_of(const json_t *rec)
{
    return json_string_value(json_object_get(rec, "reason"));
}

dlb_status dlb_rec_set_outcome(json_t *rec, enum dlb_rec_status st,
                               const char *reason)
{
    if (json_object_set_new(rec, "status", json_string(dlb_rec_status_name(st))) ||
        (reason && json_object_set_new(rec, "reason", json_string(reason))))
        return DLB_ERR_NOMEM;
    return DLB_OK;
}

int dlb_rec_same_config(const json_t *a, const json_t *b)
{
    return json_equal(json_object_get(a, "index"), json_object_get(b, "index")) &&
           json_equal(json_object_get(a, "id"), json_object_get(b, "id"));
}

json_t *dlb_record_slim(const json_t *rec, int with_rep)
{
    json_t *slim = json_pack("{s:O,s:O,s:O}", "index", json_object_get(rec, "index"),
                             "id", json_object_get(rec, "id"),
                             "status", json_object_get(rec, "status"));
    if (slim && with_rep)
        json_object_set(slim, "rep", json_object_get(rec, "rep"));
    /* what remeasure.h and seeds.h decide on */
    json_t *att = json_object_get(rec, "attempt"), *srep = json_object_get(rec, "seed_rep");
    json_t *acc = json_object_get(json_object_get(rec, "metrics"), "accuracy");
    if (slim && srep)
        json_object_set(slim, "seed_rep", srep);
    if (slim && acc)
        json_object_set_new(slim, "metrics", json_pack("{s:O}", "accuracy", acc));
    if (slim && json_object_get(rec, "seeds"))
        json_object_set(slim, "seeds", json_object_get(rec, "seeds"));
    const char *why = json_string_value(json_object_get(json_object_get(rec, "system"),
                                                        "doubtful"));
    if (slim && att)
        json_object_set(slim, "attempt", att);
    if (slim && why)
        json_object_set_new(slim, "system", json_pack("{s:s}", "doubtful", why));
    return slim;
}

int dlb_rec_has(double v)
{
    return !isnan(v);
}

void dlb_record_init(struct dlb_record *r)
{
    memset(r, 0, sizeof *r);
    r->index = -1;
    r->status = DLB_REC_OK;
    struct dlb_rec_stats *s = &r->stats;
    s->n = -1;
    s->median = s->mean = s->stddev = s->cv = s->min = s->max = NAN;
    s->p5 = s->p95 = s->p99 = s->ci_lo = s->ci_hi = s->ci_rel_halfwidth = NAN;
    s->ci_exact = -1;
    s->ci_processes.sd_log = s->ci_processes.df = s->ci_processes.halfwidth_log = NAN;
    r->throughput.median = r->throughput.ci_lo = r->throughput.ci_hi = NAN;
    struct dlb_rec_measure *m = &r->measure;
    m->converged = m->settled = -1;
    m->clock = m->peak_unit = m->fewer_flops = NULL;
    m->steps_per_sample = m->warmup_steps = m->warmup_s = m->measure_s = NAN;
    m->samples_per_step = m->flops_per_step = m->timer_overhead_s = NAN;
    m->peak_measured_at = NAN;
    r->wall_s = r->budget = NAN;
    r->round = r->rep = r->pass_position = -1;
    struct dlb_rec_vs_baseline *vb = &r->vs_baseline;
    vb->speedup = vb->speedup_ci_lo = vb->speedup_ci_hi = NAN;
    vb->accuracy_drop = vb->workers = vb->scaling_efficiency = NAN;
    struct dlb_rec_system *y = &r->system;
    y->minor_faults = y->major_faults = y->voluntary_switches = NAN;
    y->involuntary_switches = y->involuntary_per_s = y->steal_share = NAN;
    y->cpu_per_wall = y->wall_s = NAN;
}

static double finite_or_nan(double v)
{
    return isfinite(v) ? v : NAN;
}

void dlb_rec_stats_set(struct dlb_rec_stats *out, const struct dlb_stats *st)
{
    out->n = (long long)st->n;
    out->median = finite_or_nan(st->median);
    out->mean = finite_or_nan(st->mean);
    out->stddev = finite_or_nan(st->stddev);
    out->cv = finite_or_nan(st->cv);
    out->min = finite_or_nan(st->min);
    out->max = finite_or_nan(st->max);
    out->p5 = finite_or_nan(st->p5);
    out->p95 = finite_or_nan(st->p95);
    out->p99 = finite_or_nan(st->p99);
    out->ci_lo = finite_or_nan(st->ci_lo);
    out->ci_hi = finite_or_nan(st->ci_hi);
    out->ci_rel_halfwidth = finite_or_nan(st->ci_rel_halfwidth);
    out->ci_exact = !!st->ci_exact;
}

void dlb_record_free(struct dlb_record *r)
{
    for (size_t i = 0; i < r->n_metrics; i++) {
        free(r->metrics[i].name);
        free(r->metrics[i].unit);
    }
    free(r->metrics);
    free(r->samples);
    free(r->rep_medians);
    json_decref(r->json);
    dlb_record_init(r);
}

const struct dlb_rec_metric *dlb_record_metric(const struct dlb_record *r,
                                               const char *name)
{
    for (size_t i = 0; i < r->n_metrics; i++)
        if (!strcmp(r->metrics[i].name, name))
            return &r->metrics[i];
    return NULL;
}

int dlb_record_metric_value(const struct dlb_record *r, const char *name,
                            double *v)
{
    const struct dlb_rec_metric *m = dlb_record_metric(r, name);
    if (!m || isnan(m->value))
        return 0;
    *v = m->value;
    return 1;
}

dlb_status dlb_record_set_metric(struct dlb_record *r, const char *name,
                                 double value, const char *unit)
{
    char *u = unit ? strdup(unit) : NULL;
    if (unit && !u)
        return DLB_ERR_NOMEM;
    struct dlb_rec_metric *m = (struct dlb_rec_metric *)dlb_record_metric(r, name);
    if (!m) {
        char *n = strdup(name);
        struct dlb_rec_metric *grown =
            n ? realloc(r->metrics, (r->n_metrics + 1) * sizeof *grown) : NULL;
        if (!grown) {
            free(n);
            free(u);
            return DLB_ERR_NOMEM;
        }
        r->metrics = grown;
        m = &r->metrics[r->n_metrics++];
        m->name = n;
        m->unit = NULL;
    }
    free(m->unit);
    m->unit = u;
    m->value = value;
    return DLB_OK;
}

json_t *dlb_record_setting(const struct dlb_record *r, const char *key)
{
    return json_object_get(r->config, key);
}

int dlb_record_setting_num(const struct dlb_record *r, const char *key,
                           double *v)
{
    json_t *s = dlb_record_setting(r, key);
    if (!json_is_number(s))
        return 0;
    *v = json_number_value(s);
    return 1;
}

const char *dlb_record_setting_str(const struct dlb_record *r,
                                   const char *key)
{
    return json_string_value(dlb_record_setting(r, key));
}
