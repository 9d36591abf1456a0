/* E-divisive means (core/history/edivisive.c): the statistic against its
 * definition computed the slow way, steps found where they are planted,
 * nothing found in flat or noisy series more often than alpha says, the
 * same answer from the same seed, bad input refused. */
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "history/edivisive.h"
#include "util/rng.h"

/* Q(t) of edivisive.h, from its definition: O(n^2) per split. */
static double q_slow(const double *x, size_t n, size_t t)
{
    double k = (double)t, m = (double)(n - t), ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < t; i++)
        for (size_t j = t; j < n; j++)
            ab += fabs(x[i] - x[j]);
    for (size_t i = 0; i < t; i++)
        for (size_t j = i + 1; j < t; j++)
            aa += fabs(x[i] - x[j]);
    for (size_t i = t; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            bb += fabs(x[i] - x[j]);
    return k * m / (k + m) * (2 * ab / (k * m) - aa / (k * (k - 1) / 2) -
                              bb / (m * (m - 1) / 2));
}

static void noise(double *x, size_t n, double level, double sd, struct dlb_rng *r)
{
    for (size_t i = 0; i < n; i++)
        x[i] = level + sd * dlb_rng_normal(r);
}

static size_t find(const double *x, size_t n, uint64_t seed, struct dlb_cp **cps)
{
    struct dlb_cp_opts o;
    struct dlb_error err;
    size_t k = 0;
    dlb_cp_opts_default(&o);
    o.seed = seed;
    CHECK(dlb_edivisive(x, n, &o, cps, &k, &err) == DLB_OK);
    return k;
}

static void best_split_is_the_definitions(void)
{
    struct dlb_rng r;
    dlb_rng_seed(&r, 7);
    double x[37];
    noise(x, 37, 0, 1, &r);
    x[5] = x[9]; /* a tie */
    size_t t = 0, want = 0;
    double q = 0, most = -INFINITY;
    CHECK(dlb_edivisive_best_split(x, 37, 3, &t, &q) == 0);
    for (size_t s = 3; s <= 34; s++)
        if (q_slow(x, 37, s) > most) {
            most = q_slow(x, 37, s);
            want = s;
        }
    CHECK(t == want);
    CHECK_NEAR(q, most, 1e-9);
    CHECK(dlb_edivisive_best_split(x, 5, 3, &t, &q) == -1);
}

static void steps_are_found_where_planted(void)
{
    struct dlb_rng r;
    dlb_rng_seed(&r, 11);
    double x[60];
    struct dlb_cp *cps = NULL;
    /* one step of 10 sd at 25 */
    noise(x, 25, 0, 0.01, &r);
    noise(x + 25, 35, 0.1, 0.01, &r);
    CHECK(find(x, 60, 1, &cps) == 1);
    CHECK(cps && cps[0].at == 25 && cps[0].p <= DLB_CP_ALPHA);
    free(cps);
    /* up, then back down: two */
    noise(x, 20, 0, 0.01, &r);
    noise(x + 20, 20, 0.05, 0.01, &r);
    noise(x + 40, 20, 0, 0.01, &r);
    CHECK(find(x, 60, 2, &cps) == 2);
    CHECK(cps && cps[0].at == 20 && cps[1].at == 40);
    free(cps);
    /* fewer than two segments' worth of points: nothing to split */
    noise(x, 4, 0, 0.01, &r);
    noise(x + 4, DLB_CP_MIN_SIZE - 1, 0.1, 0.01, &r);
    CHECK(find(x, 3 + DLB_CP_MIN_SIZE, 3, &cps) == 0);
    CHECK(cps == NULL);
}

static void flat_and_noisy_series_rarely_change(void)
{
    double flat[40];
    struct dlb_cp *cps = NULL;
    for (int i = 0; i < 40; i++)
        flat[i] = 1.5;
    CHECK(find(flat, 40, 1, &cps) == 0);
    /* 300 series of noise alone: each first split is tested at alpha
     * 0.01, so about 3 should find something; more than 10 has a chance
     * below 1e-3 if the test holds its level. */
    struct dlb_rng r;
    dlb_rng_seed(&r, 99);
    int found = 0;
    double x[60];
    for (int s = 0; s < 300; s++) {
        noise(x, 60, 0, 0.007, &r);
        size_t k = find(x, 60, (uint64_t)s + 1, &cps);
        found += k > 0;
        free(cps);
    }
    fprintf(stderr, "noise alone: %d of 300 series with a change point\n", found);
    CHECK(found <= 10);
}

static void the_seed_decides_the_answer(void)
{
    struct dlb_rng r;
    dlb_rng_seed(&r, 5);
    double x[50];
    noise(x, 30, 0, 0.01, &r);
    noise(x + 30, 20, 0.012, 0.01, &r); /* a small step: p near alpha */
    struct dlb_cp *a = NULL, *b = NULL;
    size_t na = find(x, 50, 42, &a), nb = find(x, 50, 42, &b);
    CHECK(na == nb);
    for (size_t i = 0; i < na && i < nb; i++)
        CHECK(a[i].at == b[i].at && a[i].p == b[i].p);
    free(a);
    free(b);
}

static void bad_input_is_refused(void)
{
    double x[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, NAN};
    struct dlb_cp *cps = NULL;
    size_t k = 0;
    struct dlb_cp_opts o;
    struct dlb_error err;
    dlb_cp_opts_default(&o);
    CHECK(dlb_edivisive(x, 10, &o, &cps, &k, &err) == DLB_ERR_INPUT);
    o.min_size = 1;
    CHECK(dlb_edivisive(x, 9, &o, &cps, &k, &err) == DLB_ERR_INPUT);
    dlb_cp_opts_default(&o);
    o.alpha = 0;
    CHECK(dlb_edivisive(x, 9, &o, &cps, &k, &err) == DLB_ERR_INPUT);
}

int main(void)
{
    best_split_is_the_definitions();
    steps_are_found_where_planted();
    flat_and_noisy_series_rarely_change();
    the_seed_decides_the_answer();
    bad_input_is_refused();
    return check_exit();
}
