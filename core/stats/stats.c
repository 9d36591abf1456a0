#include "stats/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int dlb_cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

void dlb_sort_doubles(double *v, size_t n)
{
    if (v && n > 1)
        qsort(v, n, sizeof *v, dlb_cmp_double);
}

/* A copy, so that callers keep their samples in measurement order. */
static double *dlb_copy_doubles(const double *v, size_t n)
{
    if (n > SIZE_MAX / sizeof *v)
        return NULL;
    double *c = malloc(n * sizeof *c);
    if (c)
        memcpy(c, v, n * sizeof *c);
    return c;
}

static int dlb_all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

double dlb_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (!sorted || n == 0 || isnan(q))
        return NAN;
    if (q <= 0.0)
        return sorted[0];
    if (q >= 1.0)
        return sorted[n - 1];
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)h;
    if (lo >= n - 1)
        return sorted[n - 1];
    return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

int dlb_median_ci_ranks(size_t n, double conf, size_t *lo, size_t *hi)
{
    if (!lo || !hi || n == 0 || isnan(conf) || conf >= 1.0)
        return 0;
    /* [x(j), x(n-j+1)] (1-based) misses the median when fewer than j
     * samples lie below it, or fewer than j above: coverage is
     * 1 - 2 P(B <= j-1) with B ~ binomial(n, 1/2). The widest interval,
     * j = 1, is tried first; j grows while the coverage still holds. */
    double alpha2 = (1.0 - conf) / 2.0;
    /* log pmf(k) = log C(n,k) - n log 2, built term by term; the terms are
     * summed with Kahan compensation because the running value reaches
     * -n log 2 (about -69000 for n = 100000) and plain summation would lose
     * the low digits that decide the boundary. */
    double logp = -(double)n * log(2.0), comp = 0.0;
    double cdf = exp(logp);          /* P(B <= 0); underflows to 0 for big n */
    if (cdf > alpha2)
        return 0;                    /* even [min, max] is too narrow */
    size_t j = 1;                    /* 1-based rank of the lower bound */
    size_t kmax = (n - 1) / 2;       /* keeps j <= n - j + 1 */
    for (size_t k = 1; k <= kmax; k++) {
        double term = log((double)(n - k + 1) / (double)k) - comp;
        double t = logp + term;
        comp = (t - logp) - term;
        logp = t;
        cdf += exp(logp);            /* now P(B <= k) */
        if (cdf > alpha2)
            break;
        j = k + 1;
    }
    *lo = j - 1;
    *hi = n - j;
    return 1;
}

dlb_status dlb_stats_compute(const double *samples, size_t n, struct dlb_stats *out)
{
    if (!samples || !out || n == 0)
        return DLB_ERR_INPUT;
    /* A NaN would make the sort order, and so every figure, meaningless. */
    if (!dlb_all_finite(samples, n))
        return DLB_ERR_INPUT;
    double *s = dlb_copy_doubles(samples, n);
    if (!s)
        return DLB_ERR_NOMEM;
    dlb_sort_doubles(s, n);

    struct dlb_stats st;
    memset(&st, 0, sizeof st);
    st.n = n;
    st.min = s[0];
    st.max = s[n - 1];
    st.median = dlb_quantile_sorted(s, n, 0.5);
    st.p5 = dlb_quantile_sorted(s, n, 0.05);
    st.p95 = dlb_quantile_sorted(s, n, 0.95);
    st.p99 = dlb_quantile_sorted(s, n, 0.99);

    /* Two passes: the sum of squared deviations from the mean does not
     * cancel catastrophically as sum(x^2) - n mean^2 would for timings with
     * a large offset and a small spread. */
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    st.mean = sum / (double)n;
    if (n > 1) {
        double ss = 0.0;
        for (size_t i = 0; i < n; i++) {
            double d = s[i] - st.mean;
            ss += d * d;
        }
        st.stddev = sqrt(ss / (double)(n - 1));
    }
    /* Relative figures have no meaning around zero: 0 when there is no
     * spread at all, infinite otherwise, so that a stopping rule on them
     * never declares convergence it has not seen. */
    if (st.mean != 0.0)
        st.cv = st.stddev / fabs(st.mean);
    else
        st.cv = st.stddev == 0.0 ? 0.0 : INFINITY;

    size_t lo, hi;
    if (dlb_median_ci_ranks(n, 0.95, &lo, &hi)) {
        st.ci_lo = s[lo];
        st.ci_hi = s[hi];
        st.ci_exact = 1;
    } else {
        st.ci_lo = st.min;
        st.ci_hi = st.max;
        st.ci_exact = 0;
    }
    double half = (st.ci_hi - st.ci_lo) / 2.0;
    if (st.median != 0.0)
        st.ci_rel_halfwidth = half / fabs(st.median);
    else
        st.ci_rel_halfwidth = half == 0.0 ? 0.0 : INFINITY;

    free(s);
    *out = st;
    return DLB_OK;
}

double dlb_mann_whitney_p(const double *a, size_t na, const double *b,
                          size_t nb, double *u)
{
    if (u)
        *u = NAN;
    if (!a || !b || na == 0 || nb == 0 || !dlb_all_finite(a, na) ||
        !dlb_all_finite(b, nb))
        return NAN;
    double *sa = dlb_copy_doubles(a, na);
    double *sb = dlb_copy_doubles(b, nb);
    if (!sa || !sb) {
        free(sa);
        free(sb);
        return NAN;
    }
    dlb_sort_doubles(sa, na);
    dlb_sort_doubles(sb, nb);

    /* Merge the two sorted samples one tie group at a time: the group takes
     * the mean of the ranks it spans, and contributes t^3 - t to the tie
     * correction of the variance. */
    double rank_sum_a = 0.0, ties = 0.0, rank = 0.0;
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        double v;
        if (j >= nb || (i < na && sa[i] <= sb[j]))
            v = sa[i];
        else
            v = sb[j];
        size_t ca = 0, cb = 0;
        while (i < na && sa[i] == v) {
            i++;
            ca++;
        }
        while (j < nb && sb[j] == v) {
            j++;
            cb++;
        }
        double t = (double)(ca + cb);
        rank_sum_a += (double)ca * (rank + (t + 1.0) / 2.0);
        ties += t * t * t - t;
        rank += t;
    }
    free(sa);
    free(sb);

    double n1 = (double)na, n2 = (double)nb, nt = n1 + n2;
    double u_a = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    if (u)
        *u = u_a;
    double var = n1 * n2 / 12.0 * ((nt + 1.0) - ties / (nt * (nt - 1.0)));
    /* Every value tied: the samples cannot be told apart. */
    if (!(var > 0.0))
        return 1.0;
    double dev = fabs(u_a - n1 * n2 / 2.0) - 0.5;
    if (dev <= 0.0)
        return 1.0;
    double p = erfc(dev / sqrt(var) / sqrt(2.0));
    return p > 1.0 ? 1.0 : (p < 0.0 ? 0.0 : p);
}

double dlb_student_t_975(double df)
{
    if (!(df >= 1.0))
        return NAN;
    if (df < 2.0)
        return 12.706204736174696; /* Cauchy: tan(0.475 pi) */
    if (df < 3.0)
        return 0.95 / sqrt(2 * 0.975 * 0.025); /* (2p-1) / sqrt(2p(1-p)) */
    /* Abramowitz and Stegun 26.7.5 around the normal quantile. */
    double z = 1.959963984540054, z2 = z * z;
    double g1 = (z2 + 1) * z / 4;
    double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
    double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
    double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
    return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
}

/* The regularized incomplete beta function I_x(a, b) by its continued
 * fraction (DLMF 8.17.22), evaluated with the modified Lentz method; the
 * fraction converges fast for x < (a + 1) / (a + b + 2), and the
 * symmetry I_x(a, b) = 1 - I_(1-x)(b, a) covers the rest. */
static double incomplete_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    if (x > (a + 1) / (a + b + 2))
        return 1 - incomplete_beta(b, a, 1 - x);
    const double tiny = 1e-300;
    double f = 1, c = 1, d = 0;
    for (int j = 1; j <= 400; j++) {
        int m = j / 2;
        double dj = j % 2
            ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
            : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
        d = 1 + dj * d;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        c = 1 + dj / c;
        if (fabs(c) < tiny)
            c = tiny;
        f *= c * d;
        if (fabs(c * d - 1) < 1e-15)
            break;
    }
    double log_front = a * log(x) + b * log1p(-x) - log(a) -
                       (lgamma(a) + lgamma(b) - lgamma(a + b));
    return exp(log_front) / f;
}

double dlb_student_t_p(double t, double df)
{
    if (!(df > 0) || isnan(t))
        return NAN;
    /* P(|T| >= |t|) = I_(df / (df + t^2))(df / 2, 1 / 2) */
    double p = incomplete_beta(df / 2, 0.5, df / (df + t * t));
    return p < 0 ? 0 : (p > 1 ? 1 : p);
}
