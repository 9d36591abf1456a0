/* Paired accuracy differences over seeds with their 95% interval
 * (stats_paired.h). */
#include "stats/stats_paired.h"

#include <math.h>

#include "stats/stats.h"
#include "util/hexbits.h"

/* The half-width from the seeds' and the test set's, whichever known. */
static void combine(struct dlb_paired_diff *d)
{
    if (!isnan(d->t_half) && !isnan(d->binom_half))
        d->half = sqrt(d->t_half * d->t_half + d->binom_half * d->binom_half);
    else
        d->half = isnan(d->t_half) ? d->binom_half : d->t_half;
}

void dlb_paired_diff(const double *it, const double *base, size_t n,
                     double test_images, struct dlb_paired_diff *out)
{
    double sum = 0, ss = 0, pi = 0, pb = 0;
    out->n = n;
    out->mean = out->t_half = out->binom_half = out->half = NAN;
    out->images_paired = 0;
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
     * accuracies, unpaired (which overstates it: by 5-10x where the two
     * disagree on few images; dlb_paired_diff_use_images does better). */
    if (test_images > 0) {
        pi /= (double)n, pb /= (double)n;
        out->binom_half = 100 * 1.96 * sqrt(pi * (1 - pi) / test_images +
                                            pb * (1 - pb) / test_images);
    }
    combine(out);
}

double dlb_paired_images_half(const uint8_t *const *marks_it,
                              const uint8_t *const *marks_base, size_t n,
                              size_t images)
{
    if (!n || images < 2)
        return NAN;
    /* sums of each image's difference (in seed counts, -n..n) and of its
     * square: exact integers, divided by n once at the end */
    double sum = 0, ss = 0;
    for (size_t i = 0; i < images; i++) {
        long d = 0;
        for (size_t k = 0; k < n; k++)
            d += dlb_hexbits_get(marks_it[k], i) - dlb_hexbits_get(marks_base[k], i);
        sum += (double)d;
        ss += (double)d * (double)d;
    }
    double N = (double)images, nn = (double)n;
    double var = (ss - sum * sum / N) / (N - 1) / (nn * nn);
    return 100 * 1.96 * sqrt(fmax(var, 0) / N);
}

void dlb_paired_diff_use_images(struct dlb_paired_diff *d, double images_half)
{
    d->binom_half = images_half;
    d->images_paired = 1;
    combine(d);
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
