/* The quant plugin's calibrators on crafted distributions:
 * - uniform on [-1, 3]: every calibrator keeps (nearly) the whole range:
 *   minmax exactly, percentile 99.99 within 0.1% of it, entropy at least
 *   90% of it (clipping uniform data only loses information);
 * - a standard normal with 0.01% outliers at +-50: minmax keeps the
 *   outliers (range 50), percentile 99.9 clips to about 3.3 (the normal's
 *   99.9th percentile of |x|), entropy clips below 10 (and above 2, where
 *   it would cut the bulk); symmetric ranges are symmetric;
 * - non-negative data (after a ReLU): the range starts at 0, u8 zero
 *   point 0;
 * - moving_minmax: the first batch as it is, then m += c (batch - m);
 * - scale and zero point of a range; a range always contains 0; an
 *   all-zero input gets scale 1;
 * - histogram quantiles interpolate within a bin. */
#include "check.h"

#include <math.h>
#include <stdlib.h>

#include "quant_calib.h"

static uint64_t state = 88172645463325252ull;

static double uniform01(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

static double normal(void)
{
    double u = uniform01(), v = uniform01();
    return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(6.283185307179586 * v);
}

/* Both passes over x in batches of 1000. */
static void calibrate(struct qc_stats *s, const float *x, size_t n)
{
    qc_stats_init(s);
    for (size_t k = 0; k < n; k += 1000)
        qc_observe_range(s, x + k, n - k < 1000 ? n - k : 1000, 0.01);
    CHECK(qc_hist_begin(s));
    for (size_t k = 0; k < n; k += 1000)
        qc_observe_hist(s, x + k, n - k < 1000 ? n - k : 1000);
}

static void test_uniform(void)
{
    enum { N = 200000 };
    float *x = malloc(N * sizeof *x);
    double lo, hi;
    for (size_t k = 0; k < N; k++)
        x[k] = (float)(-1.0 + 4.0 * uniform01());
    struct qc_stats s;
    calibrate(&s, x, N);
    qc_range(&s, QC_MINMAX, 0, 0, &lo, &hi);
    CHECK(lo == s.min && hi == s.max);
    CHECK_NEAR(lo, -1.0, 1e-3);
    CHECK_NEAR(hi, 3.0, 1e-3);
    qc_range(&s, QC_PERCENTILE, 99.99, 0, &lo, &hi);
    CHECK(fabs(lo + 1.0) < 0.004 && fabs(hi - 3.0) < 0.004);
    qc_range(&s, QC_ENTROPY, 0, 0, &lo, &hi);
    CHECK(hi >= 0.9 * 3.0 && lo <= -0.9);
    qc_range(&s, QC_ENTROPY, 0, 1, &lo, &hi);
    CHECK(hi >= 0.9 * 3.0 && lo == -hi);
    qc_stats_free(&s);
    free(x);
}

static void test_outliers(void)
{
    enum { N = 100000 };
    float *x = malloc(N * sizeof *x);
    double lo, hi;
    for (size_t k = 0; k < N; k++)
        x[k] = (float)normal();
    for (size_t k = 0; k < 10; k++) /* 0.01% outliers */
        x[k * 9973] = k % 2 ? -50.0f : 50.0f;
    struct qc_stats s;
    calibrate(&s, x, N);
    qc_range(&s, QC_MINMAX, 0, 1, &lo, &hi);
    CHECK(hi == 50.0 && lo == -50.0);
    qc_range(&s, QC_PERCENTILE, 99.9, 1, &lo, &hi);
    CHECK(hi > 3.0 && hi < 3.6 && lo == -hi);
    qc_range(&s, QC_PERCENTILE, 99.9, 0, &lo, &hi);
    CHECK(hi > 2.8 && hi < 3.5 && lo < -2.8 && lo > -3.5);
    qc_range(&s, QC_ENTROPY, 0, 1, &lo, &hi);
    fprintf(stderr, "gaussian + outliers: entropy threshold %.3f\n", hi);
    CHECK(hi > 2.0 && hi < 10.0 && lo == -hi);
    qc_range(&s, QC_ENTROPY, 0, 0, &lo, &hi);
    CHECK(hi > 2.0 && hi < 10.0 && lo < -2.0 && lo > -10.0);
    /* the moving average of the batches' ranges smooths the outliers */
    qc_range(&s, QC_MOVING_MINMAX, 0, 1, &lo, &hi);
    CHECK(hi < 50.0);
    qc_stats_free(&s);
    free(x);
}

static void test_relu(void)
{
    enum { N = 50000 };
    float *x = malloc(N * sizeof *x);
    double lo, hi;
    float scale;
    int32_t zp;
    for (size_t k = 0; k < N; k++) {
        double v = normal();
        x[k] = (float)(v > 0 ? v : 0.0);
    }
    struct qc_stats s;
    calibrate(&s, x, N);
    for (int m = QC_MINMAX; m <= QC_ENTROPY; m++) {
        qc_range(&s, (enum qc_method)m, 99.99, 0, &lo, &hi);
        CHECK(lo == 0.0 && hi > 2.0);
        qc_params(lo, hi, 1, &scale, &zp);
        CHECK(zp == 0);
        CHECK_NEAR(scale, hi / 255.0, 1e-6);
    }
    qc_stats_free(&s);
    free(x);
}

static void test_moving(void)
{
    float a[2] = { -1.0f, 1.0f }, b[2] = { -2.0f, 2.0f };
    struct qc_stats s;
    double lo, hi;
    qc_stats_init(&s);
    qc_observe_range(&s, a, 2, 0.5);
    qc_range(&s, QC_MOVING_MINMAX, 0, 0, &lo, &hi);
    CHECK(lo == -1.0 && hi == 1.0);
    qc_observe_range(&s, b, 2, 0.5);
    qc_range(&s, QC_MOVING_MINMAX, 0, 0, &lo, &hi);
    CHECK(lo == -1.5 && hi == 1.5);
    qc_range(&s, QC_MINMAX, 0, 0, &lo, &hi);
    CHECK(lo == -2.0 && hi == 2.0);
    /* a range always holds zero */
    float c[2] = { 1.0f, 2.0f };
    qc_stats_init(&s);
    qc_observe_range(&s, c, 2, 0.5);
    qc_range(&s, QC_MINMAX, 0, 0, &lo, &hi);
    CHECK(lo == 0.0 && hi == 2.0);
}

static void test_params(void)
{
    float scale;
    int32_t zp;
    qc_params(-1.0, 3.0, 1, &scale, &zp);
    CHECK_NEAR(scale, 4.0 / 255.0, 1e-7);
    CHECK(zp == 64); /* round(63.75) */
    qc_params(-2.0, 1.0, 0, &scale, &zp);
    CHECK_NEAR(scale, 2.0 / 127.0, 1e-7);
    CHECK(zp == 0);
    qc_params(0.0, 0.0, 1, &scale, &zp);
    CHECK(scale == 1.0f && zp == 0);
}

static void test_quantile(void)
{
    double h[4] = { 1, 0, 2, 1 };
    CHECK_NEAR(qc_hist_quantile(h, 4, 0.0, 4.0, 0.25), 1.0, 1e-12);
    CHECK_NEAR(qc_hist_quantile(h, 4, 0.0, 4.0, 0.5), 2.5, 1e-12);
    CHECK_NEAR(qc_hist_quantile(h, 4, 0.0, 4.0, 1.0), 4.0, 1e-12);
    /* everything in the first bin: the entropy search keeps the least */
    double one[QC_BINS] = { 100.0 };
    CHECK(qc_entropy_threshold(one, QC_BINS, 1.0, 128) >= 128.0);
}

int main(void)
{
    test_uniform();
    test_outliers();
    test_relu();
    test_moving();
    test_params();
    test_quantile();
    return check_exit();
}
