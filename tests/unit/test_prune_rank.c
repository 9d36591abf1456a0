/* The prune plugin's ranking (plugins/prune/prune_rank.c), on crafted
 * weights:
 * - counts round to nearest, and a layer keeps at least one unit;
 * - magnitude masks zero exactly round(sparsity * n) weights, even when
 *   magnitudes tie, and every zeroed |w| is at most every kept one (per
 *   tensor, and over tensors for the global method);
 * - filters ranked by L1 and by L2 norm, where the two disagree;
 * - the units kept come back in ascending order. */
#include "check.h"

#include <stdlib.h>

#include "prune_rank.h"

static void test_count(void)
{
    CHECK(dlb_prune_count(0.5, 10, 0) == 5);
    CHECK(dlb_prune_count(0.75, 10, 0) == 8);   /* 7.5 rounds up */
    CHECK(dlb_prune_count(0.9, 10, 0) == 9);
    CHECK(dlb_prune_count(0.0, 10, 0) == 0);
    CHECK(dlb_prune_count(0.99, 10, 1) == 9);   /* one unit stays */
    CHECK(dlb_prune_count(0.96, 10, 0) == 10);
    CHECK(dlb_prune_count(0.5, 0, 0) == 0);
}

static void test_ties(void)
{
    const float w[6] = {3, -1, 2, 0.5f, -4, 1};
    const float *ws[1] = {w};
    size_t n[1] = {6};
    uint8_t m[6], *ms[1] = {m};
    /* |w| sorted: 0.5 (3), 1 (1), 1 (5), 2, 3, 4: the tie at 1 is broken
     * by index, so exactly three go. */
    CHECK(dlb_prune_magnitude(ws, n, 1, 0.5, ms) == 3);
    CHECK(!m[3] && !m[1] && !m[5] && m[0] && m[2] && m[4]);
}

/* Many equal magnitudes: the count is still exact, and the order holds. */
static void test_exact_counts(void)
{
    enum { N = 1000 };
    float a[N], b[N / 2];
    uint8_t ma[N], mb[N / 2];
    srand(7);
    for (int i = 0; i < N; i++)
        a[i] = (float)(rand() % 9 - 4) * 0.25f; /* 9 values, zeros among them */
    for (int i = 0; i < N / 2; i++)
        b[i] = (float)(rand() % 5) * 0.5f;
    const double levels[] = {0.5, 0.75, 0.9};
    for (int l = 0; l < 3; l++) {
        const float *ws[2] = {a, b};
        size_t n[2] = {N, N / 2};
        uint8_t *ms[2] = {ma, mb};
        size_t z = dlb_prune_magnitude(ws, n, 1, levels[l], ms);
        size_t counted = 0;
        float max_zeroed = 0, min_kept = 1e30f;
        for (int i = 0; i < N; i++) {
            counted += !ma[i];
            if (!ma[i] && fabsf(a[i]) > max_zeroed)
                max_zeroed = fabsf(a[i]);
            if (ma[i] && fabsf(a[i]) < min_kept)
                min_kept = fabsf(a[i]);
        }
        CHECK(z == dlb_prune_count(levels[l], N, 0));
        CHECK(counted == z);
        CHECK(max_zeroed <= min_kept);
        /* Global: one count over both tensors, one order over both. */
        z = dlb_prune_magnitude(ws, n, 2, levels[l], ms);
        counted = 0;
        max_zeroed = 0;
        min_kept = 1e30f;
        for (int t = 0; t < 2; t++)
            for (size_t i = 0; i < n[t]; i++) {
                float v = fabsf(ws[t][i]);
                counted += !ms[t][i];
                if (!ms[t][i] && v > max_zeroed)
                    max_zeroed = v;
                if (ms[t][i] && v < min_kept)
                    min_kept = v;
            }
        CHECK(z == dlb_prune_count(levels[l], N + N / 2, 0));
        CHECK(counted == z);
        CHECK(max_zeroed <= min_kept);
    }
}

static void test_units(void)
{
    /* Four filters of three weights, L1 norms 6, 1, 3, 10. */
    const float w[12] = {1, 2, 3, 0, 1, 0, -1, 1, -1, 5, -5, 0};
    uint32_t keep[4];
    CHECK(dlb_prune_rank_units(w, 4, 3, DLB_PRUNE_NORM_L1, 0.5, keep) == 2);
    CHECK(keep[0] == 0 && keep[1] == 3);
    /* A: one large weight (L1 3, L2 3); B: spread (L1 3.5, L2 2.06):
     * L1 removes A, L2 removes B. */
    const float ab[6] = {3, 0, 0, 1, 1, 1.5f};
    CHECK(dlb_prune_rank_units(ab, 2, 3, DLB_PRUNE_NORM_L1, 0.5, keep) == 1);
    CHECK(keep[0] == 1);
    CHECK(dlb_prune_rank_units(ab, 2, 3, DLB_PRUNE_NORM_L2, 0.5, keep) == 1);
    CHECK(keep[0] == 0);
    /* 0.9 of 2 units would be both: one stays. */
    CHECK(dlb_prune_rank_units(ab, 2, 3, DLB_PRUNE_NORM_L2, 0.9, keep) == 1);
    /* Nothing to remove keeps all, in order. */
    CHECK(dlb_prune_rank_units(w, 4, 3, DLB_PRUNE_NORM_L1, 0.0, keep) == 4);
    CHECK(keep[0] == 0 && keep[1] == 1 && keep[2] == 2 && keep[3] == 3);
}

int main(void)
{
    test_count();
    test_ties();
    test_exact_counts();
    test_units();
    return check_exit();
}
