/* Unit tests of core/stats/stats.c. Every expected value is worked out by hand in
 * the comment beside it, or (the large Mann-Whitney cases and the n=100000
 * interval) computed independently with exact integer arithmetic and
 * scipy.stats, as noted. */
#include "stats/stats.h"

#include "check.h"

#include <math.h>
#include <string.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void test_five_samples(void)
{
    const double x[] = {1, 2, 3, 4, 5};
    struct dlb_stats st;
    CHECK(dlb_stats_compute(x, 5, &st) == DLB_OK);
    CHECK(st.n == 5);
    CHECK_NEAR(st.median, 3.0, 1e-15);
    CHECK_NEAR(st.mean, 3.0, 1e-15);       /* 15 / 5 */
    /* squared deviations 4+1+0+1+4 = 10; sample variance 10/(5-1) = 2.5 */
    CHECK_NEAR(st.stddev, sqrt(2.5), 1e-15);
    CHECK_NEAR(st.cv, sqrt(2.5) / 3.0, 1e-15);
    CHECK(st.min == 1.0 && st.max == 5.0);
    /* type 7: h = (n-1) q; p5: h = 0.2, 1 + 0.2*(2-1) = 1.2;
     * p95: h = 3.8, 4 + 0.8 = 4.8; p99: h = 3.96, 4 + 0.96 = 4.96 */
    CHECK_NEAR(st.p5, 1.2, 1e-14);
    CHECK_NEAR(st.p95, 4.8, 1e-14);
    CHECK_NEAR(st.p99, 4.96, 1e-14);
    /* n = 5: even [x(1), x(5)] covers only 1 - 2/32 = 0.9375 < 0.95 */
    CHECK(st.ci_exact == 0);
    CHECK(st.ci_lo == 1.0 && st.ci_hi == 5.0);
    CHECK_NEAR(st.ci_rel_halfwidth, 2.0 / 3.0, 1e-15); /* (5-1)/2/3 */
}

static void test_ten_samples_unsorted(void)
{
    /* 1..10 shuffled: the function must sort a copy, not the caller's data */
    const double orig[] = {10, 3, 7, 1, 9, 2, 8, 4, 6, 5};
    double x[10];
    memcpy(x, orig, sizeof x);
    struct dlb_stats st;
    CHECK(dlb_stats_compute(x, 10, &st) == DLB_OK);
    CHECK(memcmp(x, orig, sizeof x) == 0);
    /* median: h = 9 * 0.5 = 4.5 -> (5 + 6) / 2 = 5.5; mean 55/10 = 5.5 */
    CHECK_NEAR(st.median, 5.5, 1e-15);
    CHECK_NEAR(st.mean, 5.5, 1e-15);
    /* squared deviations: 2*(0.25+2.25+6.25+12.25+20.25) = 82.5; /9 */
    CHECK_NEAR(st.stddev, sqrt(82.5 / 9.0), 1e-14);
    /* p5: h = 0.45 -> 1.45; p95: h = 8.55 -> 9.55; p99: h = 8.91 -> 9.91 */
    CHECK_NEAR(st.p5, 1.45, 1e-14);
    CHECK_NEAR(st.p95, 9.55, 1e-14);
    CHECK_NEAR(st.p99, 9.91, 1e-14);
    /* 95% CI of the median for n = 10 is x(2)..x(9) (see the ranks test) */
    CHECK(st.ci_exact == 1);
    CHECK(st.ci_lo == 2.0 && st.ci_hi == 9.0);
    CHECK_NEAR(st.ci_rel_halfwidth, 3.5 / 5.5, 1e-15); /* (9-2)/2/5.5 */
}

static void test_median_ci_ranks(void)
{
    size_t lo = 99, hi = 99;
    /* Coverage of [x(j), x(n-j+1)] (1-based) is 1 - 2 P(B <= j-1),
     * B ~ binomial(n, 1/2); the function returns 0-based lo = j-1,
     * hi = n-j for the largest j whose coverage is still >= conf. */

    /* n = 5: j = 1 gives 1 - 2 * 1/32 = 0.9375 < 0.95: not achievable */
    CHECK(dlb_median_ci_ranks(5, 0.95, &lo, &hi) == 0);
    CHECK(dlb_median_ci_ranks(1, 0.95, &lo, &hi) == 0);
    CHECK(dlb_median_ci_ranks(0, 0.95, &lo, &hi) == 0);
    /* n = 6: j = 1 gives 1 - 2/64 = 0.96875; j = 2: 1 - 2*7/64 = 0.78 */
    CHECK(dlb_median_ci_ranks(6, 0.95, &lo, &hi) == 1);
    CHECK(lo == 0 && hi == 5);
    /* n = 10: P(B <= 1) = (1 + 10)/1024, coverage 1 - 22/1024 = 0.9785;
     * j = 3: P(B <= 2) = 56/1024, coverage 0.8906 -> x(2)..x(9) */
    CHECK(dlb_median_ci_ranks(10, 0.95, &lo, &hi) == 1);
    CHECK(lo == 1 && hi == 8);
    /* n = 20: P(B <= 5) = (1+20+190+1140+4845+15504)/2^20 = 21700/1048576,
     * coverage 0.9586; adding C(20,6) = 38760 gives 60460/1048576,
     * coverage 0.8847 -> x(6)..x(15) */
    CHECK(dlb_median_ci_ranks(20, 0.95, &lo, &hi) == 1);
    CHECK(lo == 5 && hi == 14);
    /* n = 100: tabulated x(40)..x(61); P(B <= 39) = 0.01760,
     * coverage 0.9648; P(B <= 40) = 0.02844, coverage 0.9431 */
    CHECK(dlb_median_ci_ranks(100, 0.95, &lo, &hi) == 1);
    CHECK(lo == 39 && hi == 60);
    /* n = 1000, from exact big-integer sums of C(1000, k):
     * 95%: x(469)..x(532), coverage 0.95371;
     * 99%: x(459)..x(542), coverage 0.99136;
     * 50%: x(489)..x(512), coverage 0.53295 */
    CHECK(dlb_median_ci_ranks(1000, 0.95, &lo, &hi) == 1);
    CHECK(lo == 468 && hi == 531);
    CHECK(dlb_median_ci_ranks(1000, 0.99, &lo, &hi) == 1);
    CHECK(lo == 458 && hi == 541);
    CHECK(dlb_median_ci_ranks(1000, 0.50, &lo, &hi) == 1);
    CHECK(lo == 488 && hi == 511);
    /* n = 100000 (the log-space path; 2^-n underflows): exact big-integer
     * sums give x(49690)..x(50311), coverage 0.950444; the normal
     * approximation agrees: 50000 - 1.96 * sqrt(100000) / 2 = 49690.1 */
    CHECK(dlb_median_ci_ranks(100000, 0.95, &lo, &hi) == 1);
    CHECK(lo == 49689 && hi == 50310);
    /* conf <= 0 shrinks the interval to the median itself (odd n) or the
     * two middle values (even n); conf >= 1 can never be met */
    CHECK(dlb_median_ci_ranks(5, 0.0, &lo, &hi) == 1);
    CHECK(lo == 2 && hi == 2);
    CHECK(dlb_median_ci_ranks(4, 0.0, &lo, &hi) == 1);
    CHECK(lo == 1 && hi == 2);
    CHECK(dlb_median_ci_ranks(100, 1.0, &lo, &hi) == 0);
    CHECK(dlb_median_ci_ranks(100, NAN, &lo, &hi) == 0);
    CHECK(dlb_median_ci_ranks(100, 0.95, NULL, &hi) == 0);
}

static void test_large_n(void)
{
    enum { N = 100000 };
    static double x[N];
    /* i/1000 reversed: sorted[k] = k/1000 */
    for (size_t i = 0; i < N; i++)
        x[i] = (double)(N - 1 - i) / 1000.0;
    struct dlb_stats st;
    CHECK(dlb_stats_compute(x, N, &st) == DLB_OK);
    /* median: h = 99999 * 0.5 = 49999.5 -> (49.999 + 50.000) / 2 */
    CHECK_NEAR(st.median, 49.9995, 1e-12);
    /* ranks 49689 and 50310 (0-based), see the ranks test */
    CHECK(st.ci_exact == 1);
    CHECK_NEAR(st.ci_lo, 49.689, 1e-12);
    CHECK_NEAR(st.ci_hi, 50.310, 1e-12);
    /* p99: h = 99999 * 0.99 = 98999.01 -> 98.999 + 0.01 * 0.001 */
    CHECK_NEAR(st.p99, 98.99901, 1e-12);
}

static void test_one_and_two_samples(void)
{
    const double one[] = {4.25};
    struct dlb_stats st;
    CHECK(dlb_stats_compute(one, 1, &st) == DLB_OK);
    CHECK(st.n == 1);
    CHECK(st.median == 4.25 && st.mean == 4.25);
    CHECK(st.min == 4.25 && st.max == 4.25);
    CHECK(st.p5 == 4.25 && st.p95 == 4.25 && st.p99 == 4.25);
    CHECK(st.stddev == 0.0); /* n - 1 = 0: defined as 0, not NaN */
    CHECK(st.cv == 0.0);
    CHECK(st.ci_exact == 0);
    CHECK(st.ci_lo == 4.25 && st.ci_hi == 4.25);
    CHECK(st.ci_rel_halfwidth == 0.0);

    const double two[] = {3, 1};
    CHECK(dlb_stats_compute(two, 2, &st) == DLB_OK);
    CHECK_NEAR(st.median, 2.0, 1e-15);
    CHECK_NEAR(st.stddev, sqrt(2.0), 1e-15); /* (1 + 1) / (2 - 1) = 2 */
    CHECK_NEAR(st.p5, 1.1, 1e-15);            /* h = 0.05 -> 1 + 0.05*2 */
    CHECK(st.ci_exact == 0);
    CHECK(st.ci_lo == 1.0 && st.ci_hi == 3.0);
    CHECK_NEAR(st.ci_rel_halfwidth, 0.5, 1e-15); /* (3-1)/2/2 */
}

static void test_zero_median_and_offset(void)
{
    struct dlb_stats st;
    /* all zero: no spread, so the relative figures are 0, not 0/0 */
    const double zeros[] = {0, 0, 0, 0, 0, 0, 0};
    CHECK(dlb_stats_compute(zeros, 7, &st) == DLB_OK);
    CHECK(st.cv == 0.0 && st.ci_rel_halfwidth == 0.0);
    /* n = 7: CI x(1)..x(7) = [0, 1] around a median of 0: unbounded */
    const double x[] = {0, 0, 0, 0, 0, 1, 1};
    CHECK(dlb_stats_compute(x, 7, &st) == DLB_OK);
    CHECK(st.median == 0.0);
    CHECK(st.ci_exact == 1 && st.ci_lo == 0.0 && st.ci_hi == 1.0);
    CHECK(isinf(st.ci_rel_halfwidth));

    /* a large offset must not swamp a small spread: still sqrt(2.5) */
    const double off[] = {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4, 1e9 + 5};
    CHECK(dlb_stats_compute(off, 5, &st) == DLB_OK);
    CHECK_NEAR(st.stddev, sqrt(2.5), 1e-9);
}

static void test_bad_input(void)
{
    struct dlb_stats st, before;
    memset(&st, 0x5a, sizeof st);
    before = st;
    const double x[] = {1, 2, 3};
    CHECK(dlb_stats_compute(NULL, 3, &st) == DLB_ERR_INPUT);
    CHECK(dlb_stats_compute(x, 0, &st) == DLB_ERR_INPUT);
    CHECK(dlb_stats_compute(x, 3, NULL) == DLB_ERR_INPUT);
    const double bad[] = {1, NAN, 3};
    CHECK(dlb_stats_compute(bad, 3, &st) == DLB_ERR_INPUT);
    const double inf[] = {1, INFINITY, 3};
    CHECK(dlb_stats_compute(inf, 3, &st) == DLB_ERR_INPUT);
    CHECK(memcmp(&st, &before, sizeof st) == 0); /* untouched on error */
}

static void test_quantile_and_sort(void)
{
    double v[] = {3, -1, 2, 2, -7, 0};
    dlb_sort_doubles(v, N_OF(v));
    const double want[] = {-7, -1, 0, 2, 2, 3};
    CHECK(memcmp(v, want, sizeof v) == 0);
    CHECK(dlb_quantile_sorted(v, 6, 0.0) == -7.0);
    CHECK(dlb_quantile_sorted(v, 6, 1.0) == 3.0);
    /* q = 0.3: h = 5 * 0.3 = 1.5 -> -1 + 0.5 * (0 - -1) = -0.5 */
    CHECK_NEAR(dlb_quantile_sorted(v, 6, 0.3), -0.5, 1e-15);
    CHECK(isnan(dlb_quantile_sorted(NULL, 6, 0.5)));
    CHECK(isnan(dlb_quantile_sorted(v, 0, 0.5)));
    dlb_sort_doubles(NULL, 0); /* must not crash */
}

static void test_mann_whitney_small(void)
{
    double u = -1;
    const double a[] = {1, 2, 3}, b[] = {4, 5, 6};
    /* ranks of a in the pooled sample: 1, 2, 3; R = 6;
     * U = R - na(na+1)/2 = 6 - 6 = 0. mu = 3*3/2 = 4.5;
     * var = 3*3/12 * (6 + 1) = 5.25 (no ties);
     * z = (|0 - 4.5| - 0.5) / sqrt(5.25) = 4 / 2.29129 = 1.745743;
     * p = 2 * (1 - Phi(1.745743)) = 0.080856 (scipy.stats.mannwhitneyu,
     * method='asymptotic': 0.08085559837005224) */
    double p = dlb_mann_whitney_p(a, 3, b, 3, &u);
    CHECK(u == 0.0);
    CHECK_NEAR(p, 0.08085559837005224, 1e-12);
    /* swapped: U of b = 3*3 - 0 = 9, same two-sided p */
    p = dlb_mann_whitney_p(b, 3, a, 3, &u);
    CHECK(u == 9.0);
    CHECK_NEAR(p, 0.08085559837005224, 1e-12);
    /* u may be NULL */
    CHECK_NEAR(dlb_mann_whitney_p(a, 3, b, 3, NULL), 0.08085559837005224,
               1e-12);
}

static void test_mann_whitney_identical(void)
{
    double u;
    const double a[] = {1, 2, 3};
    /* pooled ties in pairs: midranks 1.5, 3.5, 5.5; R = 10.5;
     * U = 10.5 - 6 = 4.5 = mu, so |U - mu| - 0.5 < 0: p = 1 */
    double p = dlb_mann_whitney_p(a, 3, a, 3, &u);
    CHECK(u == 4.5);
    CHECK(p == 1.0);
    /* every value tied: all five midranks are 3, R = 2*3 = 6,
     * U = 6 - 2*3/2 = 3 = mu; var = 2*3/12 * (6 - (125 - 5)/(5*4)) = 0:
     * the samples cannot be told apart, p = 1 */
    const double c[] = {2, 2}, d[] = {2, 2, 2};
    p = dlb_mann_whitney_p(c, 2, d, 3, &u);
    CHECK(u == 3.0);
    CHECK(p == 1.0);
    /* n = 1 each: a = {1}, b = {2}: U = 0, mu = 0.5, |U - mu| - 0.5 = 0,
     * so no evidence at all: p = 1 */
    const double one[] = {1}, two[] = {2};
    p = dlb_mann_whitney_p(one, 1, two, 1, &u);
    CHECK(u == 0.0);
    CHECK(p == 1.0);
}

static void test_mann_whitney_large(void)
{
    /* a[i] = 10 + (7i mod 13), i < 40; b[i] = 12 + (5i mod 11), i < 50:
     * values 10..22 with heavy ties (tie group sizes 4,3,8,7,7,8,8,8,7,7,7,
     * 8,8; sum t^3 - t = 4788). R_a = 1642, U = 1642 - 40*41/2 = 822;
     * mu = 1000; var = 40*50/12 * (91 - 4788/(90*89)) = 15067.0412;
     * z = (178 - 0.5)/122.74788 = 1.4460535; p = 0.148162
     * (scipy.stats.mannwhitneyu, asymptotic: 0.14816218868559217) */
    double a[40], b[50], u;
    for (int i = 0; i < 40; i++)
        a[i] = 10 + (7 * i) % 13;
    for (int i = 0; i < 50; i++)
        b[i] = 12 + (5 * i) % 11;
    double p = dlb_mann_whitney_p(a, 40, b, 50, &u);
    CHECK(u == 822.0);
    CHECK_NEAR(p, 0.14816218868559217, 1e-10);

    /* a = 1..50, b = 41..90: a beats b only within 41..50, in
     * C(10,2) = 45 pairs, and ties 10 times: U = 45 + 10/2 = 50;
     * the deep tail: scipy gives p = 1.346517288796328e-16 */
    double c[50], d[50];
    for (int i = 0; i < 50; i++) {
        c[i] = 1 + i;
        d[i] = 41 + i;
    }
    p = dlb_mann_whitney_p(c, 50, d, 50, &u);
    CHECK(u == 50.0);
    CHECK(fabs(p / 1.346517288796328e-16 - 1.0) < 1e-6);
}

static void test_mann_whitney_bad_input(void)
{
    const double a[] = {1, 2};
    double u = 0;
    CHECK(isnan(dlb_mann_whitney_p(NULL, 2, a, 2, &u)));
    CHECK(isnan(u));
    CHECK(isnan(dlb_mann_whitney_p(a, 0, a, 2, &u)));
    const double bad[] = {1, NAN};
    CHECK(isnan(dlb_mann_whitney_p(a, 2, bad, 2, &u)));
}

/* Against the published table of t(0.975): the exact forms for 1 and 2
 * degrees of freedom, the expansion beyond. */
static void test_student_t(void)
{
    static const struct { double df, t; } table[] = {
        {1, 12.7062}, {2, 4.3027}, {3, 3.1824}, {4, 2.7764}, {5, 2.5706},
        {6, 2.4469}, {10, 2.2281}, {30, 2.0423}, {100, 1.9840}, {1000, 1.9623}};
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
        CHECK_NEAR(dlb_student_t_975(table[k].df), table[k].t, 1e-3 * table[k].t);
    CHECK(isnan(dlb_student_t_975(0.5)));
    /* the p-value at the table's quantiles is 0.05 */
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
        CHECK_NEAR(dlb_student_t_p(table[k].t, table[k].df), 0.05, 2e-4);
    /* exact forms: Cauchy (df 1), df 2, and the normal limit */
    CHECK_NEAR(dlb_student_t_p(1, 1), 0.5, 1e-12);
    CHECK_NEAR(dlb_student_t_p(3, 1), 1 - 2 / (4 * atan(1.0)) * atan(3), 1e-12);
    CHECK_NEAR(dlb_student_t_p(2, 2), 1 - 2 / sqrt(6), 1e-12);
    CHECK_NEAR(dlb_student_t_p(2.5, 1e7), erfc(2.5 / sqrt(2)), 1e-6);
    CHECK_NEAR(dlb_student_t_p(-2.5, 7.5), dlb_student_t_p(2.5, 7.5), 1e-15);
    CHECK(dlb_student_t_p(0, 3) == 1);
    CHECK(isnan(dlb_student_t_p(1, 0)));
}

int main(void)
{
    test_student_t();
    test_five_samples();
    test_ten_samples_unsorted();
    test_median_ci_ranks();
    test_large_n();
    test_one_and_two_samples();
    test_zero_median_and_offset();
    test_bad_input();
    test_quantile_and_sort();
    test_mann_whitney_small();
    test_mann_whitney_identical();
    test_mann_whitney_large();
    test_mann_whitney_bad_input();
    return check_exit();
}
