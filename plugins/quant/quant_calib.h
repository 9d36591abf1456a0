/* Calibrators: the range [lo, hi] an activation is quantised over, from
 * statistics of the values one layer receives during calibration, and the
 * scale and zero point of that range. Pure functions of the data, so that
 * tests can feed them crafted distributions.
 *
 * Statistics are gathered in two passes over the calibration images: the
 * first finds the range of the values (minmax, and the moving average of
 * each batch's minimum and maximum); the second, for the histogram
 * calibrators, fills QC_BINS bins over that range: one of x (for the two
 * tails of an asymmetric range) and one of |x| (for a symmetric one and
 * the entropy search). */
#ifndef DLB_QUANT_CALIB_H
#define DLB_QUANT_CALIB_H

#include <stddef.h>
#include <stdint.h>

#define QC_BINS 2048

enum qc_method { QC_MINMAX, QC_MOVING_MINMAX, QC_PERCENTILE, QC_ENTROPY };

struct qc_stats {
    double min, max;            /* over every value seen */
    double mov_min, mov_max;    /* moving average of the batches' */
    int batches;
    uint64_t count;
    /* pass 2 */
    double *hist;               /* QC_BINS of x over [min, max] */
    double *abs_hist;           /* QC_BINS of |x| over [0, absmax] */
    double zeros;               /* exact zeros among them */
};

void qc_stats_init(struct qc_stats *s);
void qc_stats_free(struct qc_stats *s);

/* Pass 1: one batch of n values. `averaging` is the moving average's
 * constant c: m = m + c * (batch - m), the first batch taken as it is. */
void qc_observe_range(struct qc_stats *s, const float *x, size_t n,
                      double averaging);
/* Pass 2: allocate the histograms over pass 1's range (0: out of memory),
 * then add batches. */
int qc_hist_begin(struct qc_stats *s);
void qc_observe_hist(struct qc_stats *s, const float *x, size_t n);

/* The range the method chooses; always contains 0. `symmetric` asks for
 * [-T, T]; percentile is in (0, 100]. Histogram methods need pass 2.
 *   minmax          [min, max] of everything seen;
 *   moving_minmax   the moving averages of the batches' min and max;
 *   percentile      the percentile of |x| (symmetric), or the two tails'
 *                   percentiles of x;
 *   entropy         symmetric: the KL threshold of |x| in 128 levels, as
 *                   TensorRT; asymmetric: each end of x clipped by the
 *                   same search in 256 levels. Exact zeros are left out of
 *                   the search: zero is exact in every range. */
void qc_range(const struct qc_stats *s, enum qc_method m, double percentile,
              int symmetric, double *lo, double *hi);

/* Scale and zero point of [lo, hi]: u8 asymmetric (hi - lo) / 255 with
 * zero point round(-lo / scale), or s8 symmetric max(|lo|, |hi|) / 127
 * with zero point 0. An empty range gets scale 1. */
void qc_params(double lo, double hi, int u8, float *scale, int32_t *zero_point);

/* ---- histogram searches (quant_hist.c) ------------------------------- */

/* The value below which `q` (in [0, 1]) of the histogram's mass lies,
 * linear within a bin; bins of width (hi - lo) / n from lo. */
double qc_hist_quantile(const double *h, size_t n, double lo, double hi,
                        double q);
/* The entropy calibrator's threshold over a histogram of |x| (n bins of
 * width `width` from 0): the clip point i * width, i in [levels, n], whose
 * clipped distribution (outliers into the last kept bin) loses the least
 * information, by KL divergence, when merged into `levels` levels: as
 * TensorRT's int8 entropy calibrator. */
double qc_entropy_threshold(const double *h, size_t n, double width,
                            unsigned levels);

#endif
