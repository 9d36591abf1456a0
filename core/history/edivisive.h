/* Change points in one series: E-divisive means (Matteson and James, "A
 * nonparametric approach for multiple change point analysis of
 * multivariate data", JASA 2014) with its permutation test, the method
 * MongoDB's performance CI and Apache Otava run over nightly results.
 *
 * For a segment x[a..b) and a split at t, with A = x[a..t), B = x[t..b),
 * |A| = k, |B| = m, the divergence of the two halves is
 *     Q(t) = k m / (k + m) * ( 2/(k m) sum |A_i - B_j|
 *            - 1/C(k,2) sum |A_i - A_j| - 1/C(m,2) sum |B_i - B_j| )
 * (the energy distance with exponent 1, so no distribution is assumed).
 * The split with the largest Q over every current segment is tested by
 * permuting each segment's values (the series cannot be told from its
 * permutations when nothing changed): p = (1 + permutations whose largest
 * Q reaches the observed one) / (1 + permutations). A significant split is
 * kept and its two halves searched again; the first split that is not
 * significant ends the search.
 *
 * Deterministic: the permutations come from the seed, so a series gives
 * the same change points on every run and every machine. Pure: no I/O, no
 * global state. */
#ifndef DLB_CORE_EDIVISIVE_H
#define DLB_CORE_EDIVISIVE_H

#include <stddef.h>
#include <stdint.h>
#include "util/error.h"

/* The defaults, chosen on synthetic nightly series (doc/history.md, "How
 * well it finds changes", and tests/unit/cp_power.c): at alpha 0.01 and
 * 199 permutations a change point of no change is accepted about 1% of
 * the times one is tested. */
#define DLB_CP_ALPHA 0.01
#define DLB_CP_PERMUTATIONS 199
/* The fewest points a segment may hold: a change is found once this many
 * nights have shown it. */
#define DLB_CP_MIN_SIZE 4

struct dlb_cp_opts {
    double alpha;        /* significance level of the permutation test */
    int permutations;    /* at least ceil(1/alpha) - 1 to reach alpha */
    size_t min_size;     /* fewest points on either side of a split, >= 2 */
    uint64_t seed;       /* of the permutations */
};

/* The defaults above, seed 1. */
void dlb_cp_opts_default(struct dlb_cp_opts *o);

struct dlb_cp {
    size_t at;           /* the first point of the new segment */
    double q;            /* Q of the split */
    double p;            /* the permutation test's p-value */
};

/* The change points of x[0..n), ascending by position, in a malloc'ed
 * array (*out NULL when none). DLB_ERR_INPUT on a value that is not
 * finite or on options out of range; DLB_ERR_NOMEM. */
dlb_status dlb_edivisive(const double *x, size_t n, const struct dlb_cp_opts *o,
                         struct dlb_cp **out, size_t *n_out, struct dlb_error *err);

/* The split of x[0..n) with the largest Q, t in [min_size, n - min_size]:
 * 0 with *t and *q set, -1 when the segment is too short (or memory ran
 * out). For tests and for the dashboard's annotations. */
int dlb_edivisive_best_split(const double *x, size_t n, size_t min_size,
                             size_t *t, double *q);

#endif
