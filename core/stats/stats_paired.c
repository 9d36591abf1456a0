/* Paired accuracy differences over seeds with their 95% interval
 * (stats_paired.h). */
#include "stats/stats_paired.h"

#include <math.h>

#include "stats/stats.h"

void dlb_paired_diff(const double *it, const double *base, size_t n,
                     double test_images, struct dlb_paired_diff *out)
{
    double sum = 0, ss = 0, pi = 0, pb = 0;
    out->n = n;
    out->mean = out->t_half = out->binom_half = out->half = NAN;
    if (!n)
        return;
    for (size_t k = 0; k < n; k++) {
        sum += it[k] - base[k];
        pi += it[k] / 100;
        pb += base[k] / 100;
    }
    out->mean = sum / (double)n;
    for (size_t k = 0; k < n; k++) {
        double d = it[k] - base[k] - out->mean;
        ss += d * d;
    }
    if (n >= 2)
        out->t_half = dlb_student_t_975((double)(n - 1)) *
                      sqrt(ss / (double)(n - 1) / (double)n);
    /* The test images are the same for every seed: their sampling error
     * does not shrink with more seeds, so it is added whole, at the mean
     * accuracies, unpaired (which overstates it a little). */
    if (test_images > 0) {
        pi /= (double)n, pb /= (double)n;
        out->binom_half = 100 * 1.96 * sqrt(pi * (1 - pi) / test_images +
                                            pb * (1 - pb) / test_images);
    }
    if (!isnan(out->t_half) && !isnan(out->binom_half))
        out->half = sqrt(out->t_half * out->t_half +
                         out->binom_half * out->binom_half);
    else
        out->half = isnan(out->t_half) ? out->binom_half : out->t_half;
}

int dlb_paired_diff_sign(const struct dlb_paired_diff *d)
{
    if (isnan(d->mean) || isnan(d->half))
        return 0;
    return d->mean - d->half > 0 ? 1 : d->mean + d->half < 0 ? -1 : 0;
}

int dlb_paired_diff_within(const struct dlb_paired_diff *d, double limit)
{
    return !isnan(d->mean) && !isnan(d->half) && d->mean - d->half >= -limit;
}
