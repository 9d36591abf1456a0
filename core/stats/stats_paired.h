/* The accuracy change of a configuration against its baseline, trained
 * from the same seeds (suite key accuracy_seeds): the mean of the paired
 * differences with a 95% t interval over the seeds (the training noise:
 * initialisation, dropout, each replica's data stream), combined with the
 * test set's binomial interval (the sampling of the test images, which
 * every seed shares and the t interval does not see). */
#ifndef DLB_CORE_STATS_PAIRED_H
#define DLB_CORE_STATS_PAIRED_H

#include <stddef.h>

struct dlb_paired_diff {
    size_t n;         /* seeds */
    double mean;      /* mean of it[k] - base[k], points (+ is better) */
    double t_half;    /* 95% t half-width over the seeds; NAN when n < 2 */
    double binom_half;/* 95% binomial half-width of the test set; NAN when
                       * test_images is not positive */
    double half;      /* the two combined (root of the sum of squares), or
                       * whichever is known; NAN when neither is */
};

/* The paired difference of accuracies (percent) it[k] - base[k] over n
 * seeds, scored on test_images images each. */
void dlb_paired_diff(const double *it, const double *base, size_t n,
                     double test_images, struct dlb_paired_diff *out);

/* What the interval says: +1 the change is above 0, -1 below, 0 the
 * interval holds 0 or is unknown ("no measurable effect"). */
int dlb_paired_diff_sign(const struct dlb_paired_diff *d);

/* Whether the interval shows the drop (baseline minus it) stays within
 * `limit` points: mean - half >= -limit. 0 when it does not or cannot
 * tell (unknown interval). */
int dlb_paired_diff_within(const struct dlb_paired_diff *d, double limit);

#endif
