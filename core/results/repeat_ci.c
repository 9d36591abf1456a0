/* The median interval of a configuration measured in several processes
 * (see repeat.h). */
#include "results/repeat.h"

#include <math.h>
#include <stdlib.h>

#include "stats/stats.h"

/* The share of the suite's budget a record was measured with: halving's
 * screening rounds record theirs, every other record had all of it. */
static double budget_of(const struct dlb_record *rec)
{
    return isnan(rec->budget) ? 1.0 : rec->budget;
}

size_t dlb_reps_log_medians_of(const double *med, size_t n, double scale,
                          double *mean, double *ss)
{
    if (n < 2 || !(scale > 0))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(med[i] > 0))
            return 0;
    *mean = *ss = 0;
    for (size_t i = 0; i < n; i++)
        *mean += log(med[i] / scale) / (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = log(med[i] / scale) - *mean;
        *ss += d * d;
    }
    return n;
}

size_t dlb_reps_log_medians(const struct dlb_record *rec, double scale,
                            double *mean, double *ss)
{
    return dlb_reps_log_medians_of(rec->rep_medians, rec->n_reps, scale, mean, ss);
}

/* Sum of squared deviations of ln(median) from their mean, over the
 * records measured with `budget`, and the degrees of freedom it carries. */
static void pool(const struct dlb_record *recs, size_t n, double budget,
                 double *ss, double *df)
{
    *ss = *df = 0;
    for (size_t i = 0; i < n; i++) {
        double mean, rec_ss;
        size_t r = dlb_reps_log_medians(&recs[i], 1.0, &mean, &rec_ss);
        if (!r || budget_of(&recs[i]) != budget)
            continue;
        *ss += rec_ss;
        *df += (double)r - 1;
    }
}

static void widen(struct dlb_record *rec, double sd, double df)
{
    struct dlb_rec_stats *st = &rec->stats;
    double r = (double)rec->n_reps;
    double med = st->median, lo = st->ci_lo, hi = st->ci_hi;
    double h = dlb_student_t_975(df) * sd / sqrt(r);
    if (!(med > 0) || isnan(h))
        return;
    /* fmin and fmax pass over a missing (NAN) interval */
    lo = fmin(lo, med * exp(-h));
    hi = fmax(hi, med * exp(h));
    st->ci_lo = lo;
    st->ci_hi = hi;
    st->ci_rel_halfwidth = (hi - lo) / 2 / med;
    st->ci_processes.sd_log = sd;
    st->ci_processes.df = df;
    st->ci_processes.halfwidth_log = h;
    double sps = rec->measure.samples_per_step;
    if (!isnan(rec->throughput.median) && sps > 0) {
        rec->throughput.ci_lo = sps / hi;
        rec->throughput.ci_hi = sps / lo;
    }
}

void dlb_reps_widen_ci(json_t *merged)
{
    struct dlb_record *recs;
    size_t n;
    if (dlb_records_read(merged, NULL, &recs, &n, NULL) != DLB_OK)
        return; /* never: dlb_reps_merge writes them */
    /* widen reads only the processes' medians, which pool reads: the
     * order in which records are widened does not matter */
    for (size_t i = 0; i < n; i++) {
        double mean, ss, df;
        if (!dlb_reps_log_medians(&recs[i], 1.0, &mean, &ss))
            continue;
        pool(recs, n, budget_of(&recs[i]), &ss, &df);
        if (df >= 1) {
            widen(&recs[i], sqrt(ss / df), df);
            dlb_record_store(&recs[i], json_array_get(merged, i));
        }
    }
    dlb_records_free(recs, n);
}
