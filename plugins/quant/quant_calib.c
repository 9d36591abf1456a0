/* Calibration statistics and the ranges each calibrator chooses. */
#include "quant_calib.h"

#include <math.h>
#include <stdlib.h>

void qc_stats_init(struct qc_stats *s)
{
    *s = (struct qc_stats){ .min = INFINITY, .max = -INFINITY };
}

void qc_stats_free(struct qc_stats *s)
{
    free(s->hist);
    free(s->abs_hist);
    s->hist = s->abs_hist = NULL;
}

void qc_observe_range(struct qc_stats *s, const float *x, size_t n,
                      double averaging)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        double v = x[k];
        if (!isfinite(v))
            continue; /* a NaN would poison every range after it */
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (lo > hi)
        return;
    s->min = lo < s->min ? lo : s->min;
    s->max = hi > s->max ? hi : s->max;
    if (s->batches++ == 0) {
        s->mov_min = lo;
        s->mov_max = hi;
    } else {
        s->mov_min += averaging * (lo - s->mov_min);
        s->mov_max += averaging * (hi - s->mov_max);
    }
    s->count += n;
}

static double absmax(const struct qc_stats *s)
{
    double a = fabs(s->min), b = fabs(s->max);
    return a > b ? a : b;
}

int qc_hist_begin(struct qc_stats *s)
{
    qc_stats_free(s);
    s->zeros = 0.0;
    s->hist = calloc(QC_BINS, sizeof *s->hist);
    s->abs_hist = calloc(QC_BINS, sizeof *s->abs_hist);
    return s->hist && s->abs_hist;
}

/* The bin of v in n bins over [lo, hi]; the top edge is the last bin. */
static size_t bin(double v, double lo, double hi)
{
    if (!(hi > lo))
        return 0;
    double k = floor((v - lo) / (hi - lo) * QC_BINS);
    return k < 0 ? 0 : k >= QC_BINS ? QC_BINS - 1 : (size_t)k;
}

void qc_observe_hist(struct qc_stats *s, const float *x, size_t n)
{
    double a = absmax(s);
    if (!s->hist || !s->abs_hist || !(s->max >= s->min))
        return;
    for (size_t k = 0; k < n; k++) {
        double v = x[k];
        if (!isfinite(v))
            continue;
        s->hist[bin(v, s->min, s->max)] += 1.0;
        s->abs_hist[bin(fabs(v), 0.0, a)] += 1.0;
        s->zeros += v == 0.0;
    }
}

/* h without the exact zeros: zero is exact in every range, so the
 * entropy search must not trade resolution for it (after a ReLU half of
 * the values are zeros, and their spike in the first bin would pull the
 * threshold down). */
static void without_zeros(const struct qc_stats *s, const double *h,
                          double lo, double hi, double *out)
{
    for (size_t k = 0; k < QC_BINS; k++)
        out[k] = h[k];
    if (lo <= 0.0 && hi >= 0.0)
        out[bin(0.0, lo, hi)] -= s->zeros;
}

/* The asymmetric entropy range: the top clipped by the KL search from
 * the minimum up, the bottom (when it is below zero) by the same search
 * on the reversed histogram. */
static void entropy_range(const struct qc_stats *s, double *lo, double *hi)
{
    double width = (s->max - s->min) / QC_BINS, h[QC_BINS], rev[QC_BINS];
    without_zeros(s, s->hist, s->min, s->max, h);
    *hi = s->min + qc_entropy_threshold(h, QC_BINS, width, 256);
    *lo = s->min;
    if (s->min >= 0.0)
        return;
    for (size_t k = 0; k < QC_BINS; k++)
        rev[k] = h[QC_BINS - 1 - k];
    *lo = s->max - qc_entropy_threshold(rev, QC_BINS, width, 256);
}

/* The symmetric one: |x| into 128 levels, as TensorRT. */
static double entropy_abs(const struct qc_stats *s, double a)
{
    double h[QC_BINS];
    without_zeros(s, s->abs_hist, 0.0, a, h);
    return qc_entropy_threshold(h, QC_BINS, a / QC_BINS, 128);
}

void qc_range(const struct qc_stats *s, enum qc_method m, double percentile,
              int symmetric, double *lo, double *hi)
{
    double a = absmax(s), t;
    if (!(s->max >= s->min)) { /* nothing seen */
        *lo = *hi = 0.0;
        return;
    }
    *lo = s->min;
    *hi = s->max;
    switch (m) {
    case QC_MINMAX:
        break;
    case QC_MOVING_MINMAX:
        *lo = s->mov_min;
        *hi = s->mov_max;
        break;
    case QC_PERCENTILE:
        if (!s->hist)
            break;
        if (symmetric) {
            t = qc_hist_quantile(s->abs_hist, QC_BINS, 0.0, a,
                                 percentile / 100.0);
            *lo = -t;
            *hi = t;
        } else {
            *lo = qc_hist_quantile(s->hist, QC_BINS, s->min, s->max,
                                   1.0 - percentile / 100.0);
            *hi = qc_hist_quantile(s->hist, QC_BINS, s->min, s->max,
                                   percentile / 100.0);
        }
        break;
    case QC_ENTROPY:
        if (!s->abs_hist)
            break;
        if (symmetric) {
            t = entropy_abs(s, a);
            *lo = -t;
            *hi = t;
        } else {
            /* u8 spans [min, max] in 256 levels: clip each end on its own
             * (a histogram of |x| would mix the two sides: an image's
             * background spike at its minimum would cut its bright
             * pixels). */
            entropy_range(s, lo, hi);
        }
        break;
    }
    if (symmetric) {
        t = fabs(*lo) > fabs(*hi) ? fabs(*lo) : fabs(*hi);
        *lo = -t;
        *hi = t;
    }
    /* Zero must be exact: padding, ReLU and dropout produce it. */
    *lo = *lo > 0.0 ? 0.0 : *lo;
    *hi = *hi < 0.0 ? 0.0 : *hi;
}

void qc_params(double lo, double hi, int u8, float *scale, int32_t *zero_point)
{
    double t = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
    double s = u8 ? (hi - lo) / 255.0 : t / 127.0;
    if (!(s > 0.0) || !isfinite(s) || (float)s <= 0.0f)
        s = 1.0; /* all zeros: any scale represents them */
    *scale = (float)s;
    if (!u8) {
        *zero_point = 0;
        return;
    }
    double z = nearbyint(-lo / (double)*scale);
    *zero_point = (int32_t)(z < 0 ? 0 : z > 255 ? 255 : z);
}
