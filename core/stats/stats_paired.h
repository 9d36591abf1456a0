/* The accuracy change of a configuration against its baseline, trained
 * from the same seeds (suite key accuracy_seeds): the mean of the paired
 * differences with a 95% t interval over the seeds (the training noise:
 * initialisation, dropout, each replica's data stream), combined with the
 * test set's sampling error (which every seed shares and the t interval
 * does not see). That error is the paired one where both sides' marks are
 * known (which images each got right): two models scored on the same
 * images differ in sampling only on the images they disagree on, so a
 * setting that changes a handful of predictions of 10,000 has an interval
 * of tenths of a point where two independent test sets' binomial
 * intervals give +-1 point at 83%. Without the marks, the binomial
 * interval of each side, as if unpaired (an overstatement). */
#ifndef DLB_CORE_STATS_PAIRED_H
#define DLB_CORE_STATS_PAIRED_H

#include <stddef.h>
#include <stdint.h>

struct dlb_paired_diff {
    size_t n;         /* seeds */
    double mean;      /* mean of it[k] - base[k], points (+ is better) */
    double t_half;    /* 95% t half-width over the seeds; NAN when n < 2 */
    double binom_half;/* 95% half-width of the test set's sampling: the
                       * binomial's, or the paired one when images_paired;
                       * NAN when neither is known */
    double half;      /* the two combined (root of the sum of squares), or
                       * whichever is known; NAN when neither is */
    int images_paired;/* binom_half is the image-by-image one */
};

/* The paired difference of accuracies (percent) it[k] - base[k] over n
 * seeds, scored on test_images images each. */
void dlb_paired_diff(const double *it, const double *base, size_t n,
                     double test_images, struct dlb_paired_diff *out);

/* The test set's 95% sampling half-width of the difference, paired, in
 * points: marks_it[k] and marks_base[k] say which of `images` images seed
 * k's two models got right (util/hexbits.h). Each image's difference,
 * averaged over the n seeds, has a spread s over the images; the mean's
 * half-width is 1.96 s / sqrt(images) (with one seed, the Wald interval
 * of McNemar's paired proportions). NAN when n or images is under 2 for
 * the images. The images' own spread between seeds is also in the t
 * interval over the seeds, so combining the two overstates a little. */
double dlb_paired_images_half(const uint8_t *const *marks_it,
                              const uint8_t *const *marks_base, size_t n,
                              size_t images);

/* d's test-set interval replaced by the paired one (not NAN: from
 * dlb_paired_images_half) and combined again with the t interval. */
void dlb_paired_diff_use_images(struct dlb_paired_diff *d, double images_half);

/* What the interval says: +1 the change is above 0, -1 below, 0 the
 * interval holds 0 or is unknown ("no measurable effect"). */
int dlb_paired_diff_sign(const struct dlb_paired_diff *d);

/* Whether the interval shows the drop (baseline minus it) stays within
 * `limit` points: mean - half >= -limit. 0 when it does not or cannot
 * tell (unknown interval). */
int dlb_paired_diff_within(const struct dlb_paired_diff *d, double limit);

#endif
