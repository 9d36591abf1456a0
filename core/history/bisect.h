/* Bisection over a commit range, as Chromium's Pinpoint does it: the
 * commits between GOOD and BAD in first-parent order, each measured by
 * whole runs (one figure a run: the geometric mean of the affected
 * configurations' median step times), adjacent measured commits compared
 * run against run, more runs until the comparison is decisive or a limit
 * is reached, and a commit between two that differ measured next.
 *
 * Nothing is assumed about the shape of the history: every pair of
 * neighbouring measured commits is judged on its own, so a range with a
 * slowdown, a fix and another slowdown is followed down to each of them,
 * and the first commit that is slower than its parent is named with the
 * two measured side by side. A pair judged the same is not searched:
 * a change undone before the second of them is not looked for, and the
 * report says so.
 *
 * This file is the search alone, pure and deterministic: the caller
 * builds and runs commits (core/cli/cmd_bisect.c) and feeds the figures
 * in. */
#ifndef DLB_CORE_BISECT_H
#define DLB_CORE_BISECT_H

#include <stddef.h>
#include "util/error.h"

#define DLB_BISECT_ALPHA 0.01
#define DLB_BISECT_RUNS_MIN 3
#define DLB_BISECT_RUNS_MAX 10
/* GOOD and BAD are "the same" when the interval of their ratio lies
 * within this of 1: no slowdown worth a bisection. */
#define DLB_BISECT_SAME 0.02

enum dlb_pair_verdict { DLB_PAIR_UNDECIDED, DLB_PAIR_SAME, DLB_PAIR_DIFFERENT };

/* Two commits' runs compared: ratio of the geometric means (b / a),
 * its 1 - alpha interval, Welch's t test on the logarithms. */
struct dlb_pair_cmp {
    double ratio, lo, hi, p;
    enum dlb_pair_verdict verdict;
};

/* Judge b against a: different when p < alpha_diff and the change is at
 * least `least` on the log scale (a quarter of the GOOD-BAD change); the
 * same when the whole 1 - alpha_same interval of the log ratio lies
 * within `same` of 0 (half of it); undecided otherwise. The interval
 * reported is the 1 - alpha_diff one. Fewer than two runs a side:
 * undecided. */
void dlb_pair_compare(const double *a, size_t na, const double *b, size_t nb,
                      double alpha_diff, double alpha_same, double least, double same,
                      struct dlb_pair_cmp *out);

struct dlb_bisect_commit {
    const char *sha;            /* borrowed */
    int measured;               /* chosen for measurement */
    int built;                  /* 1 built, -1 could not be built, 0 not yet */
    double *fig;                /* one figure per run, seconds */
    size_t n_fig, cap;
};

enum dlb_bisect_state {
    DLB_BISECT_ENDPOINTS,       /* GOOD and BAD not yet told apart */
    DLB_BISECT_SEARCHING,
    DLB_BISECT_FOUND,           /* every differing pair is adjacent */
    DLB_BISECT_NOT_REPRODUCED,  /* GOOD and BAD measured the same, or BAD faster */
    DLB_BISECT_UNDECIDED,       /* a pair stayed undecided at runs_max */
};

struct dlb_bisect {
    struct dlb_bisect_commit *c; /* c[0] GOOD ... c[n-1] BAD */
    size_t n;
    double alpha;
    size_t runs_min, runs_max;
    double delta;               /* |ln(BAD/GOOD)| once told apart */
    enum dlb_bisect_state state;
};

/* n >= 2 commits, GOOD first; shas borrowed. */
dlb_status dlb_bisect_init(struct dlb_bisect *b, const char *const *shas, size_t n,
                           double alpha, size_t runs_min, size_t runs_max,
                           struct dlb_error *err);
void dlb_bisect_free(struct dlb_bisect *b);

enum dlb_bisect_step {
    DLB_BISECT_BUILD,           /* build *which[0], then dlb_bisect_built */
    DLB_BISECT_RUN,             /* one run of each commit in which[] */
    DLB_BISECT_DONE,
};

/* What to do next. which[] has room for n entries. */
enum dlb_bisect_step dlb_bisect_next(struct dlb_bisect *b, size_t *which,
                                     size_t *n_which);
void dlb_bisect_built(struct dlb_bisect *b, size_t i, int ok);
dlb_status dlb_bisect_add(struct dlb_bisect *b, size_t i, double figure,
                          struct dlb_error *err);

/* The measured commits, ascending, and the comparison of each with the
 * next (n_pairs = n_measured - 1). *culprit: the first commit slower than
 * its measured parent with nothing between them, or -1. */
struct dlb_bisect_pair {
    size_t a, b;                /* commit indices */
    struct dlb_pair_cmp cmp;
};
size_t dlb_bisect_pairs(const struct dlb_bisect *b, struct dlb_bisect_pair *out,
                        long *culprit);

#endif
