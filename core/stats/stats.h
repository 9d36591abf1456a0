/* Descriptive statistics of timing samples, and the tests used to compare
 * them. Pure functions: no I/O, no global state. */
#ifndef DLB_CORE_STATS_H
#define DLB_CORE_STATS_H

#include <stddef.h>
#include <dlbench/status.h>

struct dlb_stats {
    size_t n;
    double median, mean, stddev, cv; /* cv = stddev / mean (sample stddev, n-1) */
    double min, max, p5, p95, p99;   /* quantiles: linear interpolation (R type 7) */
    /* Distribution-free 95% confidence interval of the median, from order
     * statistics of the binomial(n, 0.5) distribution; when n is too small
     * for 95% coverage (n < 6) it spans [min, max] and ci_exact is 0. */
    double ci_lo, ci_hi;
    int ci_exact;
    double ci_rel_halfwidth;         /* (ci_hi - ci_lo) / 2 / median */
};

/* Compute every field of `out` from n >= 1 samples (not modified). */
dlb_status dlb_stats_compute(const double *samples, size_t n, struct dlb_stats *out);

/* Quantile q in [0,1] of an ascending array, linear interpolation (type 7). */
double dlb_quantile_sorted(const double *sorted, size_t n, double q);

/* 0-based ranks [lo, hi] of the order statistics that bound the median with
 * at least `conf` coverage (e.g. 0.95). Returns 0 when n is too small. */
int dlb_median_ci_ranks(size_t n, double conf, size_t *lo, size_t *hi);

/* Two-sided Mann-Whitney U test (normal approximation with tie correction
 * and continuity correction). Returns the p-value; *u gets U of sample a. */
double dlb_mann_whitney_p(const double *a, size_t na, const double *b,
                          size_t nb, double *u);

/* The 0.975 quantile of Student's t with `df` degrees of freedom (the
 * half-width factor of a two-sided 95% interval): exact for 1 and 2, the
 * Cornish-Fisher expansion to 1/df^4 beyond (within 0.1% from 3 on).
 * NAN when df < 1. */
double dlb_student_t_975(double df);

/* Two-sided p-value of Student's t statistic `t` with df > 0 degrees of
 * freedom (not necessarily whole, as Welch's are): P(|T| >= |t|). NAN
 * when df is not positive. */
double dlb_student_t_p(double t, double df);

/* Sort ascending in place. */
void dlb_sort_doubles(double *v, size_t n);

#endif
