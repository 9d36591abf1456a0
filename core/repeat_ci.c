/* The median interval of a configuration measured in several processes
 * (see repeat.h). */
#include "repeat.h"

#include <math.h>
#include <stdlib.h>

#include "stats.h"

static double num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The share of the suite's budget a record was measured with: halving's
 * screening rounds record theirs, every other record had all of it. */
static double budget_of(json_t *rec)
{
    json_t *v = json_object_get(rec, "budget");
    return json_is_number(v) ? json_number_value(v) : 1.0;
}

size_t dlb_reps_log_medians(json_t *rec, double scale, double *mean, double *ss)
{
    json_t *reps = json_object_get(rec, "repetitions"), *v;
    size_t i, n = json_array_size(reps);
    if (n < 2 || !(scale > 0))
        return 0;
    json_array_foreach(reps, i, v)
        if (!(num(v, "median") > 0))
            return 0;
    *mean = *ss = 0;
    json_array_foreach(reps, i, v)
        *mean += log(num(v, "median") / scale) / (double)n;
    json_array_foreach(reps, i, v) {
        double d = log(num(v, "median") / scale) - *mean;
        *ss += d * d;
    }
    return n;
}

/* Sum of squared deviations of ln(median) from their mean, over the
 * records measured with `budget`, and the degrees of freedom it carries. */
static void pool(json_t *merged, double budget, double *ss, double *df)
{
    size_t i;
    json_t *rec;
    *ss = *df = 0;
    json_array_foreach(merged, i, rec) {
        double mean, rec_ss;
        size_t r = dlb_reps_log_medians(rec, 1.0, &mean, &rec_ss);
        if (!r || budget_of(rec) != budget)
            continue;
        *ss += rec_ss;
        *df += (double)r - 1;
    }
}

static void widen(json_t *rec, double sd, double df)
{
    json_t *st = json_object_get(rec, "stats");
    double r = (double)json_array_size(json_object_get(rec, "repetitions"));
    double med = num(st, "median"), lo = num(st, "ci_lo"), hi = num(st, "ci_hi");
    double h = dlb_student_t_975(df) * sd / sqrt(r);
    if (!(med > 0) || isnan(h))
        return;
    /* fmin and fmax pass over a missing (NAN) interval */
    lo = fmin(lo, med * exp(-h));
    hi = fmax(hi, med * exp(h));
    json_object_set_new(st, "ci_lo", json_real(lo));
    json_object_set_new(st, "ci_hi", json_real(hi));
    json_object_set_new(st, "ci_rel_halfwidth", json_real((hi - lo) / 2 / med));
    json_object_set_new(st, "ci_processes",
                        json_pack("{s:f,s:f,s:f}", "sd_log", sd, "df", df,
                                  "halfwidth_log", h));
    json_t *tp = json_object_get(rec, "throughput");
    double sps = num(json_object_get(rec, "measure"), "samples_per_step");
    if (tp && sps > 0) {
        json_object_set_new(tp, "ci_lo", json_real(sps / hi));
        json_object_set_new(tp, "ci_hi", json_real(sps / lo));
    }
}

void dlb_reps_widen_ci(json_t *merged)
{
    size_t i;
    json_t *rec;
    /* widen reads only the processes' medians, which pool reads: the
     * order in which records are widened does not matter */
    json_array_foreach(merged, i, rec) {
        double mean, ss, df;
        if (!dlb_reps_log_medians(rec, 1.0, &mean, &ss))
            continue;
        pool(merged, budget_of(rec), &ss, &df);
        if (df >= 1)
            widen(rec, sqrt(ss / df), df);
    }
}
