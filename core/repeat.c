/* Merging a configuration's repetitions (see repeat.h). */
#include "repeat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "stats_json.h"

int dlb_rep_of(json_t *rec)
{
    json_t *v = json_object_get(rec, "rep");
    return json_is_integer(v) ? (int)json_integer_value(v) : -1;
}

static long long round_of(json_t *rec)
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
        if (dlb_rep_of(v) >= 0 && index_of(v) == index && round_of(v) == round &&
            !ok(v))
            return 1;
    return 0;
}

static double num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The figures that follow from the median, over the pooled samples. */
static void set_speed(json_t *out, const struct dlb_stats *st)
{
    json_t *meas = json_object_get(out, "measure");
    double sps = num(meas, "samples_per_step"), flops = num(meas, "flops_per_step");
    json_object_set_new(out, "stats", dlb_stats_json(st));
    if (st->median > 0 && sps > 0)
        json_object_set_new(out, "throughput",
                            json_pack("{s:f,s:f,s:f}", "median", sps / st->median,
                                      "ci_lo", sps / st->ci_hi, "ci_hi",
                                      sps / st->ci_lo));
    json_t *metrics = json_object_get(out, "metrics");
    json_t *g = json_object_get(metrics, "gflops");
    double was = num(g, "value");
    if (g && flops > 0 && st->median > 0 && was > 0) {
        double now = flops / st->median * 1e-9;
        json_object_set_new(g, "value", json_real(now));
        static const char *const shares[] = {"peak_fp32_share", "peak_share"};
        for (size_t k = 0; k < 2; k++) {
            json_t *share = json_object_get(metrics, shares[k]);
            if (share)
                json_object_set_new(share, "value",
                                    json_real(num(share, "value") * now / was));
        }
    }
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
static void center_on_processes(struct dlb_stats *st, json_t *merged)
{
    double mean, ss;
    if (!dlb_reps_log_medians(merged, 1.0, &mean, &ss))
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
static json_t *merge_system(json_t **group, size_t n)
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
            json_t *v = json_object_get(json_object_get(group[i], "system"), keys[k]);
            if (json_is_number(v)) {
                sum += json_number_value(v);
                got++;
            }
        }
        if (got)
            json_object_set_new(out, keys[k], json_real(sum / (double)got));
    }
    for (size_t i = 0; i < n; i++) {
        const char *w = json_string_value(
            json_object_get(json_object_get(group[i], "system"), "doubtful"));
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

/* The merged record of `group` (n >= 1 ok records, by rep). */
static json_t *merge(json_t **group, size_t n)
{
    json_t *out = json_deep_copy(group[0]), *samples = json_array(), *reps = json_array();
    double wall = 0;
    int converged = 1;
    for (size_t k = 0; k < n; k++) {
        json_t *s = json_object_get(group[k], "samples"), *v;
        size_t i;
        json_array_foreach(s, i, v)
            json_array_append(samples, v);
        json_t *st = json_object_get(group[k], "stats");
        json_array_append_new(reps, json_pack(
            "{s:f,s:f,s:I,s:f,s:O*,s:O*}", "median", num(st, "median"),
            "throughput", num(json_object_get(group[k], "throughput"), "median"),
            "n", (json_int_t)json_array_size(s),
            "wall_s", num(group[k], "wall_s"),
            "pass_position", json_object_get(group[k], "pass_position"),
            "system", json_object_get(group[k], "system")));
        wall += num(group[k], "wall_s");
        converged &= !json_is_false(json_object_get(json_object_get(group[k], "measure"),
                                                    "converged"));
    }
    json_object_set_new(out, "repetitions", reps);
    if (json_object_get(group[0], "system"))
        json_object_set_new(out, "system", merge_system(group, n));
    json_object_del(out, "pass_position");
    size_t m = json_array_size(samples);
    double *v = malloc((m ? m : 1) * sizeof *v);
    struct dlb_stats st;
    if (v) {
        for (size_t i = 0; i < m; i++)
            v[i] = json_number_value(json_array_get(samples, i));
        if (m && dlb_stats_compute(v, m, &st) == DLB_OK) {
            center_on_processes(&st, out);
            set_speed(out, &st);
        }
        free(v);
    }
    json_object_set_new(out, "samples", samples);
    json_object_set_new(out, "wall_s", json_real(wall));
    json_object_set_new(json_object_get(out, "measure"), "converged",
                        json_boolean(converged));
    json_object_del(out, "rep");
    return out;
}

json_t *dlb_reps_merge(json_t *records, int reps)
{
    size_t n = json_array_size(records), i;
    json_t *out = json_array(), *v;
    json_t **group = calloc((size_t)(reps > 0 ? reps : 1), sizeof *group);
    if (!out || !group) {
        free(group);
        json_decref(out);
        return NULL;
    }
    json_array_foreach(records, i, v) {
        int rep = dlb_rep_of(v);
        if (rep < 0) {
            json_array_append(out, v);
            continue;
        }
        /* Each group once: at its first record. */
        int first = 1;
        for (size_t j = 0; j < i && first; j++) {
            json_t *w = json_array_get(records, j);
            first = !(dlb_rep_of(w) >= 0 && index_of(w) == index_of(v) &&
                      round_of(w) == round_of(v));
        }
        if (!first)
            continue;
        size_t got = 0;
        json_t *bad = NULL; /* a record that is not ok stands for the group */
        memset(group, 0, (size_t)reps * sizeof *group);
        for (size_t j = i; j < n; j++) {
            json_t *w = json_array_get(records, j);
            int r = dlb_rep_of(w);
            if (r >= 0 && r < reps && index_of(w) == index_of(v) &&
                round_of(w) == round_of(v) && !group[r]) {
                group[r] = w;
                got++;
                if (!ok(w) && !bad)
                    bad = w;
            }
        }
        if (bad)
            json_array_append(out, bad);
        else if (got == (size_t)reps)
            json_array_append_new(out, merge(group, got));
    }
    free(group);
    dlb_reps_widen_ci(out);
    return out;
}
