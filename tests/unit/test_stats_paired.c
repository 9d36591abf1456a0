/* Unit tests of core/stats/stats_paired.c: a hand-worked case, and the
 * verdict on a fake training noise (accuracy a seeded normal draw around a
 * known mean, sd 4 points, with a shared per-seed component as paired
 * seeds have): a planted +3 points is found at N = 10, and a zero
 * difference is "no measurable effect" in at least 19 of 20 runs. */
#include "stats/stats_paired.h"

#include "check.h"
#include "util/rng.h"

#include <math.h>

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
                                                             1.0}, 1.0));
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

int main(void)
{
    test_by_hand();
    test_fake_noise();
    return check_exit();
}
