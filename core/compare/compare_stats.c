/* The ratio of two medians, its interval and its test. */
#include "compare/compare.h"

#include <math.h>
#include <stdlib.h>
#include "stats/stats.h"

/* Pairs are m*n; beyond this many per side the samples are thinned to
 * evenly spaced order statistics, which keeps their distribution. */
#define MAX_PER_SIDE 1000

static double *thinned_logs(const double *v, size_t n, size_t *out_n)
{
    double *s = malloc(n * sizeof *s);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++)
        s[i] = v[i];
    dlb_sort_doubles(s, n);
    size_t k = n > MAX_PER_SIDE ? MAX_PER_SIDE : n;
    double *t = malloc(k * sizeof *t);
    if (!t) {
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < k; i++) {
        size_t j = k == n ? i : (size_t)((double)i * (double)(n - 1) / (double)(k - 1));
        t[i] = log(s[j]);
    }
    free(s);
    *out_n = k;
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

dlb_status dlb_ratio_estimate(const double *base, size_t nb, const double *new_s,
                              size_t nn, struct dlb_ratio *r)
{
    struct dlb_stats sb, sn;
    if (!nb || !nn || dlb_stats_compute(base, nb, &sb) != DLB_OK ||
        dlb_stats_compute(new_s, nn, &sn) != DLB_OK || sb.median <= 0)
        return DLB_ERR_INPUT;
    for (size_t i = 0; i < nb; i++)
        if (!(base[i] > 0))
            return DLB_ERR_INPUT;
    for (size_t i = 0; i < nn; i++)
        if (!(new_s[i] > 0))
            return DLB_ERR_INPUT;
    double u;
    r->ratio = sn.median / sb.median;
    r->p = dlb_mann_whitney_p(base, nb, new_s, nn, &u);
    size_t m, n;
    double *lb = thinned_logs(base, nb, &m), *ln = thinned_logs(new_s, nn, &n);
    double *d = lb && ln ? malloc(m * n * sizeof *d) : NULL;
    if (!d) {
        free(lb);
        free(ln);
        return DLB_ERR_NOMEM;
    }
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            d[i * n + j] = ln[j] - lb[i];
    qsort(d, m * n, sizeof *d, cmp_double);
    /* The interval's ends are the order statistics of the m*n differences
     * at the U test's critical value (normal approximation). */
    double mn = (double)m * (double)n;
    double k = floor(mn / 2.0 - 1.959964 * sqrt(mn * (double)(m + n + 1) / 12.0));
    size_t lo = k < 0 ? 0 : (size_t)k;
    size_t hi = m * n - 1 - lo;
    if (lo > hi)
        lo = hi = (m * n - 1) / 2;
    r->lo = exp(d[lo]);
    r->hi = exp(d[hi]);
    free(d);
    free(lb);
    free(ln);
    return DLB_OK;
}
