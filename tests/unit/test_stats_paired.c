/* Unit tests of core/stats/stats_paired.c: a hand-worked case, and the
 * verdict on a fake training noise (accuracy a seeded normal draw around a
 * known mean, sd 4 points, with a shared per-seed component as paired
 * seeds have): a planted +3 points is found at N = 10, and a zero
 * difference is "no measurable effect" in at least 19 of 20 runs. The
 * test set's paired error: by hand, its text form (util/hexbits.h), and
 * on simulated test sets: two models that disagree on 30 of 10,000
 * images get an interval a tenth of the unpaired binomial's, which still
 * holds the true difference as often as a 95% interval should. */
#include "stats/stats_paired.h"

#include "check.h"
#include "util/hexbits.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_by_hand(void)
{
    const double it[] = {80, 82, 84}, base[] = {79, 80, 81};
    struct dlb_paired_diff d;
    dlb_paired_diff(it, base, 3, 0, &d);
    /* differences 1, 2, 3: mean 2, sd 1, t(0.975, 2) = 4.303 */
    CHECK_NEAR(d.mean, 2.0, 1e-15);
    CHECK_NEAR(d.t_half, 4.302653 / sqrt(3.0), 1e-5);
    CHECK(isnan(d.binom_half));
    CHECK_NEAR(d.half, d.t_half, 1e-15);
    CHECK(dlb_paired_diff_sign(&d) == 0);
    /* one seed, 2000 images: the binomial alone,
     * 1.96 sqrt(.8*.2/2000 + .79*.21/2000) = 0.02502 -> 2.502 points;
     * a change of +1: within 2 points is shown, within 1 cannot be told */
    dlb_paired_diff(it, base, 1, 2000, &d);
    CHECK(isnan(d.t_half));
    CHECK_NEAR(d.half, 100 * 1.96 * sqrt(0.8 * 0.2 / 2000 + 0.79 * 0.21 / 2000),
               1e-12);
    CHECK(dlb_paired_diff_within(&d, 2.0));
    CHECK(!dlb_paired_diff_within(&d, 1.0));
    CHECK(!dlb_paired_diff_within(&(struct dlb_paired_diff){1, -2.5, NAN, NAN,
                                                             1.0, 0}, 1.0));
}

/* n seeds of a configuration whose mean is base_mean + shift against the
 * baseline: each seed's shared part (sd 3) plus each run's own (sd 3). */
static int verdict_of(uint64_t seed, size_t n, double shift)
{
    struct dlb_rng r;
    double it[32], base[32];
    dlb_rng_seed(&r, seed);
    for (size_t k = 0; k < n; k++) {
        double shared = 3 * dlb_rng_normal(&r);
        base[k] = 80 + shared + 3 * dlb_rng_normal(&r);
        it[k] = 80 + shift + shared + 3 * dlb_rng_normal(&r);
    }
    struct dlb_paired_diff d;
    dlb_paired_diff(it, base, n, 10000, &d);
    return dlb_paired_diff_sign(&d);
}

static void test_fake_noise(void)
{
    int found = 0, none = 0;
    for (uint64_t s = 1; s <= 20; s++) {
        found += verdict_of(s, 10, 3.0) == 1;
        none += verdict_of(100 + s, 10, 0.0) == 0;
    }
    CHECK(none >= 19);
    /* at N = 10 the sd of a difference is 4.2 / sqrt(10) = 1.34, the
     * interval about +-3.1: +3 is found in about half the runs ... */
    CHECK(found >= 5);
    /* ... and planted seeds with a clean draw find it (seed 1) */
    int any = 0;
    for (uint64_t s = 1; s <= 20 && !any; s++)
        any = verdict_of(s, 10, 3.0) == 1;
    CHECK(any);
}

static void test_hexbits(void)
{
    uint8_t b[3] = {0}, back[3];
    dlb_hexbits_set(b, 0, 1);
    dlb_hexbits_set(b, 9, 1);
    dlb_hexbits_set(b, 17, 1);
    dlb_hexbits_set(b, 3, 1);
    dlb_hexbits_set(b, 3, 0);
    char *t = dlb_hexbits_encode(b, 18);
    CHECK(t && !strcmp(t, "010202")); /* bit i at i % 8 of byte i / 8 */
    CHECK(dlb_hexbits_decode(t, 18, back) == 0 && !memcmp(b, back, 3));
    CHECK(dlb_hexbits_get(back, 9) && !dlb_hexbits_get(back, 8));
    CHECK(dlb_hexbits_decode("0102", 18, back) == -1);   /* too short */
    CHECK(dlb_hexbits_decode("01020200", 18, back) == -1); /* too long */
    CHECK(dlb_hexbits_decode("01020g", 18, back) == -1); /* not hex */
    CHECK(dlb_hexbits_decode("010206", 18, back) == -1); /* bit 18 set */
    CHECK(dlb_hexbits_decode("01020A", 20, back) == 0 && back[2] == 10);
    free(t);
}

/* Ten images, one seed: it gets images 0-7 right, base 0-6 and 8. The
 * per-image differences are +1 (image 7), -1 (image 8), 0 elsewhere:
 * mean 0, variance 2/9, half-width 1.96 sqrt(2/9 / 10) = 29.2 points. */
static void test_images_by_hand(void)
{
    uint8_t a[2] = {0}, b[2] = {0};
    for (int i = 0; i < 8; i++)
        dlb_hexbits_set(a, (size_t)i, 1);
    for (int i = 0; i < 7; i++)
        dlb_hexbits_set(b, (size_t)i, 1);
    dlb_hexbits_set(b, 8, 1);
    const uint8_t *pa[] = {a}, *pb[] = {b};
    double h = dlb_paired_images_half(pa, pb, 1, 10);
    CHECK_NEAR(h, 100 * 1.96 * sqrt(2.0 / 9 / 10), 1e-9);
    /* the same marks: no sampling error between them at all */
    CHECK(dlb_paired_images_half(pa, pa, 1, 10) == 0);
    /* two seeds, the second identical on both sides: each image's
     * difference halves, so does the half-width */
    const uint8_t *qa[] = {a, a}, *qb[] = {b, a};
    CHECK_NEAR(dlb_paired_images_half(qa, qb, 2, 10), h / 2, 1e-9);
    CHECK(isnan(dlb_paired_images_half(pa, pb, 1, 1)));

    /* into a difference: replaces the binomial, combines with the t */
    const double it[] = {80, 82}, base[] = {80, 81};
    struct dlb_paired_diff d;
    dlb_paired_diff(it, base, 2, 10, &d);
    CHECK(!d.images_paired && d.binom_half > 30);
    dlb_paired_diff_use_images(&d, 0.1);
    CHECK(d.images_paired && d.binom_half == 0.1);
    CHECK_NEAR(d.half, hypot(d.t_half, 0.1), 1e-12);
}

/* Two models scored on `images` test images drawn from one population
 * where each gets 83% right and they disagree on a share `disagree` of
 * images (half each way: no true difference, plus `shift` of images the
 * first gets right and the second wrong). Returns the paired half-width;
 * *covers whether the interval holds the true difference. */
static double simulated(struct dlb_rng *r, size_t images, double disagree,
                        double shift, int *covers)
{
    size_t nb = dlb_hexbits_bytes(images);
    uint8_t *a = calloc(nb, 1), *b = calloc(nb, 1);
    size_t ra = 0, rb = 0;
    for (size_t i = 0; i < images; i++) {
        double u = dlb_rng_double(r);
        int x = dlb_rng_double(r) < 0.83, y = x;
        if (u < disagree / 2)
            x = 1, y = 0;
        else if (u < disagree)
            x = 0, y = 1;
        else if (u < disagree + shift)
            x = 1, y = 0;
        dlb_hexbits_set(a, i, x);
        dlb_hexbits_set(b, i, y);
        ra += (size_t)x;
        rb += (size_t)y;
    }
    const uint8_t *pa[] = {a}, *pb[] = {b};
    double h = dlb_paired_images_half(pa, pb, 1, images);
    double diff = 100.0 * ((double)ra - (double)rb) / (double)images;
    *covers = fabs(diff - 100 * shift) <= h;
    free(a);
    free(b);
    return h;
}

static void test_images_simulated(void)
{
    struct dlb_rng r;
    dlb_rng_seed(&r, 7);
    int covers, covered = 0;
    /* 30 of 10,000 images disagree: about 1.96 sqrt(30) / 100 = 0.11
     * points, where two unpaired binomials at 83% give 1.04 */
    double h = simulated(&r, 10000, 0.003, 0, &covers);
    double unpaired = 100 * 1.96 * sqrt(2 * 0.83 * 0.17 / 10000);
    CHECK(h > 0.05 && h < 0.2);
    CHECK(h < unpaired / 5);
    /* coverage of a true difference of 0.5 points with 5% disagreement:
     * of 200 simulated test sets, about 190 intervals hold it */
    for (int t = 0; t < 200; t++) {
        simulated(&r, 2000, 0.05, 0.005, &covers);
        covered += covers;
    }
    CHECK(covered >= 180 && covered <= 199);
}

int main(void)
{
    test_by_hand();
    test_fake_noise();
    test_hexbits();
    test_images_by_hand();
    test_images_simulated();
    return check_exit();
}
