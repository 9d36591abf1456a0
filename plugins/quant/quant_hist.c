/* Searches over calibration histograms: quantiles (the percentile
 * calibrator) and the KL-divergence threshold (the entropy calibrator). */
#include "quant_calib.h"

#include <math.h>
#include <stdlib.h>

double qc_hist_quantile(const double *h, size_t n, double lo, double hi,
                        double q)
{
    double total = 0.0, seen = 0.0, width = (hi - lo) / (double)n;
    for (size_t k = 0; k < n; k++)
        total += h[k];
    if (!(total > 0.0))
        return lo;
    double want = q * total;
    for (size_t k = 0; k < n; k++) {
        if (seen + h[k] >= want && h[k] > 0.0)
            return lo + width * ((double)k + (want - seen) / h[k]);
        seen += h[k];
    }
    return hi;
}

/* Normalise d[0..n) to sum 1 with a small mass eps added to every bin
 * (additive smoothing), so that log(p / q) is finite everywhere; 0 when
 * d is all zeros. */
static int smooth(double *d, size_t n)
{
    const double eps = 1e-6;
    double sum = 0.0;
    for (size_t k = 0; k < n; k++)
        sum += d[k];
    if (!(sum > 0.0))
        return 0;
    for (size_t k = 0; k < n; k++)
        d[k] = (d[k] / sum + eps) / (1.0 + (double)n * eps);
    return 1;
}

/* KL(p || q) for clip point i: p the first i bins with the mass above
 * added to the last; q the first i bins merged into `levels` levels, each
 * level's mass spread over its non-empty bins. */
static double divergence(const double *h, size_t n, size_t i,
                         unsigned levels, double *p, double *q)
{
    double outliers = 0.0, kl = 0.0;
    for (size_t k = i; k < n; k++)
        outliers += h[k];
    for (size_t k = 0; k < i; k++)
        p[k] = h[k];
    p[i - 1] += outliers;
    for (unsigned j = 0; j < levels; j++) {
        size_t a = (size_t)((double)j * i / levels);
        size_t b = j + 1 == levels ? i : (size_t)((double)(j + 1) * i / levels);
        double mass = 0.0;
        size_t used = 0;
        for (size_t k = a; k < b; k++) {
            mass += h[k];
            used += h[k] != 0.0;
        }
        for (size_t k = a; k < b; k++)
            q[k] = h[k] != 0.0 ? mass / (double)used : 0.0;
    }
    if (!smooth(p, i) || !smooth(q, i))
        return INFINITY;
    for (size_t k = 0; k < i; k++)
        kl += p[k] * log(p[k] / q[k]);
    return kl;
}

double qc_entropy_threshold(const double *h, size_t n, double width,
                            unsigned levels)
{
    double best = INFINITY;
    size_t best_i = n;
    double *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q);
    if (!p || !q || levels == 0 || n < levels) {
        free(p);
        free(q);
        return (double)n * width;
    }
    for (size_t i = levels; i <= n; i++) {
        double kl = divergence(h, n, i, levels, p, q);
        if (kl < best) {
            best = kl;
            best_i = i;
        }
    }
    free(p);
    free(q);
    return (double)best_i * width;
}
