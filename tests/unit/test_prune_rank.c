/* The prune plugin's ranking (plugins/prune/prune_rank.c), on crafted
 * weights:
 * - counts round to nearest, and a layer keeps at least one unit;
 * - magnitude masks zero exactly round(sparsity * n) weights, even when
 *   magnitudes tie, and every zeroed |w| is at most every kept one (per
 *   tensor, and over tensors for the global method);
 * - filters ranked by L1 and by L2 norm, where the two disagree;
 * - the units kept come back in ascending order;
 * - a group's units ranked on every member's rows together: a unit weak
 *   in one member but strong in another stays;
 * - the groups of filter pruning (plugins/prune/prune_groups.c) on crafted
 *   graphs: convs meeting at adds merge (transitively), a depthwise conv
 *   follows its producer, and a group is refused, with the layer named,
 *   where its channels meet the network's input at an add, reach a concat
 *   or a grouped conv, or give the class scores. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "prune_groups.h"
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

static void test_group_rank(void)
{
    /* 3 units of 2 weights: unit 0 small in a, large in b */
    const float a[6] = {0.1f, 0.1f, 1, 1, 2, 2}, b[3] = {5, 0.5f, 0.5f};
    const float *w[2] = {a, b};
    size_t per[2] = {2, 1};
    uint32_t keep[3];
    CHECK(dlb_prune_rank_group(w, per, 2, 3, DLB_PRUNE_NORM_L1, 0.34, keep) ==
          2);
    CHECK(keep[0] == 0 && keep[1] == 2); /* 5.2, 2.5, 4.5: unit 1 goes */
    CHECK(dlb_prune_rank_group(w, per, 1, 3, DLB_PRUNE_NORM_L1, 0.34, keep) ==
          2);
    CHECK(keep[0] == 1 && keep[1] == 2); /* a alone: unit 0 goes */
}

/* A layer of kind k reading `from` (-1: the input; -2: the one before). */
static struct dlb_layer_info L(enum dlb_layer_kind k, const char *name,
                               uint32_t ch, uint32_t groups, int from,
                               int from2)
{
    struct dlb_layer_info li;
    memset(&li, 0, sizeof li);
    li.kind = k;
    strncpy(li.name, name, sizeof li.name - 1);
    li.in_c = li.out_c = ch;
    li.groups = k == DLB_LAYER_CONV ? groups : 0;
    li.n_inputs = from2 == -3 ? 1 : 2;
    li.inputs[0] = from;
    li.inputs[1] = from2;
    return li;
}

static void test_groups(void)
{
    const enum dlb_layer_kind CV = DLB_LAYER_CONV, BN = DLB_LAYER_BATCHNORM,
                              ADD = DLB_LAYER_ADD, CAT = DLB_LAYER_CONCAT,
                              LIN = DLB_LAYER_LINEAR,
                              LSM = DLB_LAYER_LOGSOFTMAX;
    /* stem, two residual blocks, a depthwise conv, a head */
    struct dlb_layer_info net[] = {
        L(CV, "stem", 8, 1, -1, -3),       /* 0 */
        L(CV, "b1", 8, 1, 0, -3),          /* 1 */
        L(BN, "b1_bn", 8, 0, 1, -3),       /* 2 */
        L(ADD, "add1", 8, 0, 2, 0),        /* 3 */
        L(CV, "b2", 8, 1, 3, -3),          /* 4 */
        L(ADD, "add2", 8, 0, 4, 3),        /* 5 */
        L(CV, "dw", 8, 8, 5, -3),          /* 6: depthwise */
        L(CV, "pw", 8, 1, 6, -3),          /* 7 */
        L(LIN, "fc", 8, 0, 7, -3),         /* 8 */
        L(LSM, "lsm", 8, 0, 8, -3),        /* 9 */
    };
    struct prune_groups g;
    CHECK(prune_groups_find(net, 10, &g));
    CHECK(g.group[0] == 0 && g.group[1] == 0 && g.group[4] == 0);
    CHECK(g.group[6] == -1 && g.group[7] == 7 && g.group[8] == 8);
    CHECK(g.group[2] == -1 && g.group[3] == -1);
    CHECK(!g.why[0][0] && !g.why[4][0] && !g.why[7][0]);
    CHECK(strstr(g.why[8], "class scores") && strstr(g.why[8], "lsm"));
    prune_groups_free(&g);

    /* an add with the network's input; a concat; a grouped conv */
    struct dlb_layer_info odd[] = {
        L(CV, "a", 4, 1, -1, -3),          /* 0 */
        L(ADD, "in_add", 4, 0, 0, -1),     /* 1: meets the input */
        L(CV, "b", 4, 1, 1, -3),           /* 2 */
        L(CV, "c", 4, 1, 1, -3),           /* 3 */
        L(CAT, "cat", 8, 0, 2, 3),         /* 4 */
        L(CV, "d", 8, 1, 4, -3),           /* 5 */
        L(CV, "grp", 8, 2, 5, -3),         /* 6: groups = 2 */
        L(LIN, "fc", 8, 0, 6, -3),         /* 7 */
        L(LSM, "lsm", 8, 0, 7, -3),        /* 8 */
    };
    CHECK(prune_groups_find(odd, 9, &g));
    CHECK(strstr(g.why[0], "network's input") && strstr(g.why[0], "in_add"));
    CHECK(strstr(g.why[2], "concat 'cat'") && strstr(g.why[3], "concat"));
    CHECK(strstr(g.why[5], "grouped conv 'grp'"));
    CHECK(strstr(g.why[6], "grouped conv 'grp'"));
    CHECK(strstr(g.why[7], "class scores")); /* fc */
    prune_groups_free(&g);
}

int main(void)
{
    test_count();
    test_ties();
    test_exact_counts();
    test_units();
    test_group_rank();
    test_groups();
    return check_exit();
}
