/* The bisection's search (core/history/bisect.c) on simulated commits:
 * each commit has a true step time, a run measures it with noise, and
 * the search must name the planted commit wherever it is, follow a range
 * that slows, recovers and slows again, go around a commit that does not
 * build, say so when BAD is not slower, and stop within its limits. */
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "history/bisect.h"
#include "util/rng.h"

struct sim {
    double truth[32];
    int broken[32];          /* does not build */
    size_t n;
    double noise;            /* relative sd of a run */
    size_t builds, runs;
};

static long search(struct sim *s, uint64_t seed, struct dlb_bisect *b)
{
    const char *shas[32];
    for (size_t i = 0; i < s->n; i++)
        shas[i] = "c";
    struct dlb_error err;
    CHECK(dlb_bisect_init(b, shas, s->n, DLB_BISECT_ALPHA, DLB_BISECT_RUNS_MIN,
                          DLB_BISECT_RUNS_MAX, &err) == DLB_OK);
    struct dlb_rng r;
    dlb_rng_seed(&r, seed);
    size_t which[32], n;
    s->builds = s->runs = 0;
    for (int guard = 0; guard < 10000; guard++) {
        enum dlb_bisect_step step = dlb_bisect_next(b, which, &n);
        if (step == DLB_BISECT_DONE)
            break;
        if (step == DLB_BISECT_BUILD) {
            s->builds++;
            dlb_bisect_built(b, which[0], !s->broken[which[0]]);
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            s->runs++;
            double f = s->truth[which[k]] * exp(s->noise * dlb_rng_normal(&r));
            CHECK(dlb_bisect_add(b, which[k], f, &err) == DLB_OK);
        }
    }
    struct dlb_bisect_pair pairs[32];
    long culprit = -1;
    dlb_bisect_pairs(b, pairs, &culprit);
    return culprit;
}

static void plant(struct sim *s, size_t n, size_t at, double step)
{
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        s->truth[i] = 1e-3 * (i >= at ? 1 + step : 1);
        s->broken[i] = 0;
    }
}

static void every_position_is_found(void)
{
    struct sim s = {.noise = 0.01};
    int found = 0, worst_builds = 0, undecided = 0;
    for (size_t at = 1; at < 17; at++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            struct dlb_bisect b;
            plant(&s, 17, at, 0.05);
            long c = search(&s, seed * 100 + at, &b);
            /* Named, even where a pair elsewhere stayed undecided (the
             * report lists it). */
            found += c == (long)at;
            undecided += b.state == DLB_BISECT_UNDECIDED;
            if ((int)s.builds > worst_builds)
                worst_builds = (int)s.builds;
            dlb_bisect_free(&b);
        }
    fprintf(stderr, "a 5%% step at each of 16 positions, 3 seeds: found %d of 48, at most "
            "%d builds, %d with a pair left undecided\n", found, worst_builds, undecided);
    CHECK(found == 48);
    /* GOOD, BAD and a binary search's log2(16) = 4 midpoints, with one
     * more where the noise sent a midpoint to the far side. */
    CHECK(worst_builds <= 7);
}

static void a_slowdown_a_fix_and_another_slowdown(void)
{
    struct sim s = {.noise = 0.005};
    plant(&s, 17, 4, 0.10);
    for (size_t i = 11; i < 17; i++)
        s.truth[i] = 1e-3;          /* fixed at 11 */
    for (size_t i = 14; i < 17; i++)
        s.truth[i] = 1.2e-3;        /* slower again at 14 */
    struct dlb_bisect b;
    long c = search(&s, 7, &b);
    CHECK(c == 4);
    struct dlb_bisect_pair p[32];
    long culprit;
    size_t n = dlb_bisect_pairs(&b, p, &culprit);
    int fix = 0, again = 0;
    for (size_t k = 0; k < n; k++) {
        fix |= p[k].b == 11 && p[k].a == 10 && p[k].cmp.verdict == DLB_PAIR_DIFFERENT &&
               p[k].cmp.ratio < 1;
        again |= p[k].b == 14 && p[k].a == 13 && p[k].cmp.verdict == DLB_PAIR_DIFFERENT &&
                 p[k].cmp.ratio > 1;
    }
    CHECK(fix && again);
    dlb_bisect_free(&b);
}

static void around_a_commit_that_does_not_build(void)
{
    struct sim s = {.noise = 0.005};
    plant(&s, 17, 9, 0.10);
    s.broken[8] = 1;
    struct dlb_bisect b;
    long c = search(&s, 3, &b);
    CHECK(c == 9);
    CHECK(b.c[8].built == -1);
    dlb_bisect_free(&b);
    /* The culprit itself does not build: its child is named, with the
     * untested commit between it and the parent. */
    plant(&s, 17, 9, 0.10);
    s.broken[9] = 1;
    c = search(&s, 4, &b);
    CHECK(c == 10);
    dlb_bisect_free(&b);
}

static void not_reproduced_and_limits(void)
{
    struct sim s = {.noise = 0.005};
    plant(&s, 9, 100, 0);
    struct dlb_bisect b;
    CHECK(search(&s, 5, &b) == -1);
    CHECK(b.state == DLB_BISECT_NOT_REPRODUCED);
    dlb_bisect_free(&b);
    /* Faster, not slower: nothing to look for either. */
    plant(&s, 9, 3, -0.2);
    CHECK(search(&s, 6, &b) == -1 && b.state == DLB_BISECT_NOT_REPRODUCED);
    dlb_bisect_free(&b);
    /* A change buried in noise: undecided after runs_max runs a side. */
    s.noise = 0.2;
    plant(&s, 9, 3, 0.01);
    CHECK(search(&s, 8, &b) == -1);
    CHECK(b.state == DLB_BISECT_UNDECIDED || b.state == DLB_BISECT_NOT_REPRODUCED);
    CHECK(b.c[0].n_fig <= DLB_BISECT_RUNS_MAX);
    dlb_bisect_free(&b);
}

static void pair_comparison(void)
{
    double a[5] = {1.00, 1.01, 0.99, 1.00, 1.005}, b[5], c[5];
    for (int i = 0; i < 5; i++) {
        b[i] = a[i] * 1.10;
        c[i] = a[(i + 2) % 5];
    }
    struct dlb_pair_cmp r;
    dlb_pair_compare(a, 5, b, 5, 0.01, 0.01, 0.02, 0.05, &r);
    CHECK(r.verdict == DLB_PAIR_DIFFERENT && r.lo < 1.10 && r.hi > 1.10 && r.p < 0.01);
    dlb_pair_compare(a, 5, c, 5, 0.01, 0.01, 0.02, 0.05, &r);
    CHECK(r.verdict == DLB_PAIR_SAME && r.lo < 1 && r.hi > 1);
    dlb_pair_compare(a, 1, b, 5, 0.01, 0.01, 0.02, 0.05, &r);
    CHECK(r.verdict == DLB_PAIR_UNDECIDED);
}

int main(void)
{
    pair_comparison();
    every_position_is_found();
    a_slowdown_a_fix_and_another_slowdown();
    around_a_commit_that_does_not_build();
    not_reproduced_and_limits();
    return check_exit();
}
