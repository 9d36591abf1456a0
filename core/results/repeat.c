/* Merging a configuration's repetitions (see repeat.h). */
#include "results/repeat.h"
#include "results/remeasure.h"
#include "results/seeds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "stats/stats_json.h"

int dlb_rep_of(json_t *rec)
{
    json_t *v = json_object_get(rec, "rep");
    return json_is_integer(v) ? (int)json_integer_value(v) : -1;
}

long long dlb_round_of(json_t *rec)
{
    json_t *v = json_object_get(rec, "round");
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static size_t index_of(json_t *rec)
{
    return (size_t)json_integer_value(json_object_get(rec, "index"));
}

static int ok(json_t *rec)
{
    const char *s = json_string_value(json_object_get(rec, "status"));
    return s && !strcmp(s, "ok");
}

int dlb_reps_stopped(json_t *records, size_t index, long long round)
{
    size_t i;
    json_t *v;
    json_array_foreach(records, i, v)
        if (dlb_rep_of(v) >= 0 && index_of(v) == index && dlb_round_of(v) == round &&
            !ok(v))
            return 1;
    return 0;
}

/* The figures that follow from the median, over the pooled samples:
 * `first` is the record `out` was copied from. */
static void set_speed(json_t *out, const struct dlb_record *first,
                      const struct dlb_stats *st)
{
    double sps = first->measure.samples_per_step;
    double flops = first->measure.flops_per_step;
    json_object_set_new(out, "stats", dlb_stats_json(st));
    if (st->median > 0 && sps > 0)
        json_object_set_new(out, "throughput",
                            json_pack("{s:f,s:f,s:f}", "median", sps / st->median,
                                      "ci_lo", sps / st->ci_hi, "ci_hi",
                                      sps / st->ci_lo));
    const struct dlb_rec_metric *g = dlb_record_metric(first, "gflops");
    double was = g ? g->value : NAN;
    if (!(g && flops > 0 && st->median > 0 && was > 0))
        return;
    /* the metrics that scale with the step time, set through the record */
    struct dlb_record m;
    if (dlb_record_read(out, NULL, &m, NULL) != DLB_OK)
        return;
    double now = flops / st->median * 1e-9;
    dlb_record_set_metric(&m, "gflops", now, g->unit);
    static const char *const shares[] = {"peak_fp32_share", "peak_share"};
    for (size_t k = 0; k < 2; k++) {
        const struct dlb_rec_metric *share = dlb_record_metric(first, shares[k]);
        if (share)
            dlb_record_set_metric(&m, shares[k], share->value * now / was,
                                  share->unit);
    }
    dlb_record_store(&m, out);
    dlb_record_free(&m);
}

/* The center of the pooled statistics: each process one vote. The pooled
 * samples' own median weights a process by how many samples it took, and
 * a process in a bad phase of the machine takes the most (its interval
 * converges last, so it runs to time_cap): the dataloader suite's
 * baseline measured 22.0k, 14.8k and 28.0k samples/s in three processes,
 * and the pooled median was the bad one's, 15.0k. The geometric mean of
 * the process medians is the center of the interval dlb_reps_widen_ci
 * puts around it (an analysis of variance on their logarithms). The
 * pooled interval is stretched to hold it; the quantiles, spread and
 * extremes stay those of the pooled samples. */
static void center_on_processes(struct dlb_stats *st, const double *medians,
                                size_t n)
{
    double mean, ss;
    if (!dlb_reps_log_medians_of(medians, n, 1.0, &mean, &ss))
        return;
    double c = exp(mean);
    st->median = c;
    st->ci_lo = fmin(st->ci_lo, c);
    st->ci_hi = fmax(st->ci_hi, c);
    st->ci_rel_halfwidth = (st->ci_hi - st->ci_lo) / 2 / c;
}

/* The processes' "system" figures (sysmeter.h) as one: the mean of each
 * figure over the processes that have it, and doubtful when any process
 * was, since its median is one vote of the merged figure. */
static json_t *merge_system(const struct dlb_record *const *group, size_t n)
{
    static const char *const keys[] = {
        "minor_faults", "major_faults", "voluntary_switches", "involuntary_switches",
        "involuntary_per_s", "steal_share", "cpu_per_wall", "wall_s"};
    json_t *out = json_object();
    size_t n_doubt = 0;
    const char *why = NULL;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        double sum = 0;
        size_t got = 0;
        for (size_t i = 0; i < n; i++) {
            const struct dlb_rec_system *y = &group[i]->system;
            const double v[] = {y->minor_faults, y->major_faults,
                                y->voluntary_switches, y->involuntary_switches,
                                y->involuntary_per_s, y->steal_share,
                                y->cpu_per_wall, y->wall_s};
            if (!isnan(v[k])) {
                sum += v[k];
                got++;
            }
        }
        if (got)
            json_object_set_new(out, keys[k], json_real(sum / (double)got));
    }
    for (size_t i = 0; i < n; i++) {
        const char *w = group[i]->system.doubtful;
        if (w && !n_doubt++)
            why = w;
    }
    if (why) {
        char buf[300];
        snprintf(buf, sizeof buf, "in %zu of %zu processes; in the first, %s", n_doubt, n,
                 why);
        json_object_set_new(out, "doubtful", json_string(buf));
    }
    return out;
}

static json_t *optional_count(long long v)
{
    return v >= 0 ? json_integer((json_int_t)v) : NULL;
}

/* The merged record of `group` (n >= 1 ok records, by rep). */
static json_t *merge(const struct dlb_record *const *group, size_t n)
{
    json_t *out = json_deep_copy(group[0]->json), *samples = json_array();
    json_t *reps = json_array();
    double wall = 0, *medians = malloc(n * sizeof *medians);
    int converged = 1;
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        const struct dlb_record *g = group[k];
        for (size_t i = 0; i < g->n_samples; i++)
            json_array_append_new(samples, isnan(g->samples[i]) ? json_null()
                                                               : json_real(g->samples[i]));
        m += g->n_samples;
        json_array_append_new(reps, json_pack(
            "{s:f,s:f,s:I,s:f,s:o*,s:O*}", "median", g->stats.median,
            "throughput", g->throughput.median, "n", (json_int_t)g->n_samples,
            "wall_s", g->wall_s, "pass_position", optional_count(g->pass_position),
            "system", g->system_json));
        if (medians)
            medians[k] = g->stats.median;
        wall += g->wall_s;
        converged &= g->measure.converged != 0;
    }
    json_object_set_new(out, "repetitions", reps);
    if (group[0]->has_system)
        json_object_set_new(out, "system", merge_system(group, n));
    json_object_del(out, "pass_position");
    double *v = malloc((m ? m : 1) * sizeof *v);
    struct dlb_stats st;
    if (v && medians) {
        size_t j = 0;
        for (size_t k = 0; k < n; k++)
            for (size_t i = 0; i < group[k]->n_samples; i++)
                v[j++] = isnan(group[k]->samples[i]) ? 0 : group[k]->samples[i];
        if (m && dlb_stats_compute(v, m, &st) == DLB_OK) {
            center_on_processes(&st, medians, n);
            set_speed(out, group[0], &st);
        }
    }
    free(v);
    free(medians);
    json_object_set_new(out, "samples", samples);
    json_object_set_new(out, "wall_s", json_real(wall));
    /* converged goes into the measure the processes had (never one made
     * up for a record without) */
    struct dlb_record done;
    if (group[0]->has_measure && dlb_record_read(out, NULL, &done, NULL) == DLB_OK) {
        done.measure.converged = converged;
        dlb_record_store(&done, out);
        dlb_record_free(&done);
    }
    json_object_del(out, "rep");
    return out;
}

json_t *dlb_reps_merge(json_t *records, int reps)
{
    struct dlb_record *recs;
    size_t n, i;
    if (dlb_records_read(records, NULL, &recs, &n, NULL) != DLB_OK)
        return NULL; /* never: the journal's records are checked */
    json_t *out = json_array();
    const struct dlb_record **group = calloc((size_t)(reps > 0 ? reps : 1), sizeof *group);
    if (!out || !group) {
        free(group);
        json_decref(out);
        dlb_records_free(recs, n);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        const struct dlb_record *v = &recs[i];
        if (v->rep < 0) {
            json_array_append(out, v->json);
            continue;
        }
        /* Each group once: at its first record. */
        int first = 1;
        for (size_t j = 0; j < i && first; j++) {
            const struct dlb_record *w = &recs[j];
            first = !(w->rep >= 0 && w->index == v->index && w->round == v->round);
        }
        if (!first)
            continue;
        size_t got = 0;
        const struct dlb_record *bad = NULL; /* one not ok stands for the group */
        memset(group, 0, (size_t)reps * sizeof *group);
        for (size_t j = i; j < n; j++) {
            const struct dlb_record *w = &recs[j];
            if (w->rep >= 0 && w->rep < reps && w->index == v->index &&
                w->round == v->round && !group[w->rep]) {
                group[w->rep] = w;
                got++;
                if (w->status != DLB_REC_OK && !bad)
                    bad = w;
            }
        }
        if (bad)
            json_array_append(out, bad->json);
        else if (got == (size_t)reps)
            json_array_append_new(out, merge(group, got));
    }
    free(group);
    dlb_records_free(recs, n);
    dlb_reps_widen_ci(out);
    return out;
}

json_t *dlb_records_as_configs(json_t *records, int reps)
{
    json_t *picked = dlb_remeasure_pick(records);
    json_t *folded = picked ? dlb_seeds_fold(picked) : NULL;
    json_t *merged = folded ? dlb_reps_merge(folded, reps) : NULL;
    json_decref(picked);
    json_decref(folded);
    return merged;
}
