/* Private to the search loop's files: one run of a configuration, and the
 * runs a round adds after its passes (search_more.c). */
#ifndef DLB_CORE_SEARCH_LOOP_IMPL_H
#define DLB_CORE_SEARCH_LOOP_IMPL_H

#include "run/progress.h"
#include "search/search.h"
#include "search/search_loop.h"

/* Which run of a configuration in its round. */
struct dlb_run_kind {
    int rep, reps;       /* repetition rep of reps (repetitions) */
    size_t pass_pos;     /* its place in the pass */
    long long attempt;   /* > 0: measured again (remeasure.h) */
    int seed_rep;        /* > 0: trained and scored from another seed,
                            not measured (seeds.h) */
};

/* Run `kind` of configuration `c` in round `rd`, the k-th run of `prog`,
 * and journal its record. Returns 0 when it was stopped before it ended
 * (--resume runs it), 1 otherwise; a failure counts in *failures. */
int dlb_search_run_one(struct dlb_search_loop *r, const struct dlb_search_round *rd,
                       const struct dlb_config *c, const struct dlb_run_kind *kind,
                       struct dlb_progress *prog, size_t k, int *failures,
                       struct dlb_error *err);

/* A round after its passes: `order` is the last pass's order of rd's
 * configurations, *k the runs so far. */
struct dlb_search_more {
    struct dlb_search_loop *r;
    const struct dlb_search_round *rd;
    int reps;
    const size_t *order;
    struct dlb_progress *prog;
    size_t *k;
    double start;             /* the loop's, for --time-limit */
    int *failures;
    struct dlb_error *err;
};

/* remeasure_doubtful: the doubtful runs again. accuracy_seeds: the
 * training of every configuration from the later seeds. Each returns how
 * many runs could not start (--time-limit, a signal, a full journal). */
size_t dlb_search_remeasure(const struct dlb_search_more *m);
size_t dlb_search_seeds(const struct dlb_search_more *m);

#endif
