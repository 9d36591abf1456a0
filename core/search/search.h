/* Search strategies: which configurations of the plan run, and with how
 * much budget. `grid` runs every one; `random:N` a seeded subset of N (the
 * baseline always among them); `halving` runs in rounds (successive
 * halving): screening rounds measure every configuration on a short
 * budget, then the better half on twice the budget, and so on; the last
 * two or so (and the baseline) run at the suite's full budget, and only
 * full-budget records compete in selection.
 *
 * For a speed objective (throughput, latency) the screening rounds measure
 * speed only and skip the training run that gives the quality figures:
 * speed needs few steps to rank, quality needs the whole step budget, and
 * judging accuracy on a cut budget picks the wrong winner. In mode =
 * infer nothing trains, so the accuracy does not depend on the budget:
 * the first screening round evaluates it too (screen_accuracy, on 2,000
 * test images), and those that break the accuracy constraint by more than
 * that subset's sampling error drop out there: every round keeps the
 * better half of the configurations that meet the constraints. When none of the finalists
 * meets the constraints, further full-budget rounds take the next
 * configurations in the screening's ranking. */
#ifndef DLB_CORE_SEARCH_H
#define DLB_CORE_SEARCH_H

#include <stddef.h>
#include <jansson.h>
#include "util/error.h"
#include "plan/plan.h"
#include "plan/plan_search.h"
#include "select/select.h"

/* Halving runs the grid below this many configurations: its screening
 * rounds pay each configuration's start-up and warm-up again, and the
 * final round's finalists (more than two when near-equals tie) and the
 * baseline at the full budget leave nothing to save. Measured: the 3
 * configurations of the infer suite took 2.5x the grid's time, the 8 of
 * the all suite 1.09x. */
#define DLB_HALVING_MIN_CONFIGS 16

/* Halving's screening stops once this many configurations or fewer are
 * left besides the baseline: they and the baseline make the final round.
 * The selection picks the simplest of those it cannot tell from the
 * fastest, so the final round must hold more than the one fastest: the
 * last screening round keeps, in turn, the simplest and the fastest of
 * its ties and one more. Halving down to one left the amp suite's final
 * round a single LeNet row, which tied with the baseline, so the baseline
 * won, where the grid had told it from the fastest. */
#define DLB_HALVING_FINALISTS 3

/* One round: the plan positions to run, in plan order, and the share of the
 * suite's time_cap and train_steps each gets. */
struct dlb_search_round {
    int round;    /* recorded in each record as "round"; -1: not recorded */
    int last;     /* no round follows this one */
    double scale; /* 1 except in halving's screening rounds */
    int measure_only; /* screening for a speed objective: no training run */
    int accuracy;     /* with measure_only: the accuracy all the same (the
                       * first screening round in mode = infer) */
    int once;         /* one process per configuration, whatever the
                       * suite's repetitions (the first round of an
                       * inference screening) */
    size_t *pos;  /* malloc'ed */
    size_t n;
};

/* Round `round` (0, 1, ...) of the search. Halving decides round k from
 * the records of round k-1 in `records` (every record so far, any order),
 * so the same records always give the same rounds: --resume relies on it.
 * *done is set when there is no round `round`. */
dlb_status dlb_search_round(const struct dlb_plan *plan,
                            const struct dlb_search *s,
                            const struct dlb_select_settings *set,
                            json_t *records, int round,
                            struct dlb_search_round *out, int *done,
                            struct dlb_error *err);

/* The records for the result files, in plan order: per configuration the
 * record of the latest round it ran in. A new array. */
json_t *dlb_search_final_records(const struct dlb_plan *plan, json_t *records);

/* The record of configuration `index` for `round` (-1: any round), or NULL. */
json_t *dlb_search_find(json_t *records, size_t index, int round);

/* The search of a plan (its `search` key, already checked). */
struct dlb_search dlb_search_of(const struct dlb_plan *plan);

#endif
