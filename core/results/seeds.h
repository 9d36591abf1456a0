/* Seeds as repetitions of the training (suite key `accuracy_seeds = N`):
 * a configuration's accuracy moves with the seed (initialisation, data
 * order, dropout masks, each replica's stream): LeNet's under dp moved 12
 * points between seeds, so one training says little about whether a
 * setting changes accuracy. Each configuration is trained and scored from
 * the seeds seed, seed + 1, ..., seed + N - 1, the same list for every
 * configuration, so that differences against the baseline are paired.
 *
 * The first seed's figures come from the configuration's measured run;
 * each later seed is a process of its own that trains and scores only,
 * journaled with "seed_rep": k. The results see one record per
 * configuration (per round and repetition) with "seeds": [{"seed",
 * "accuracy", "test_loss", "train_loss_last", "test_correct"} or {"seed",
 * "status", "reason"} for a run that failed], and metrics "accuracy" (the
 * mean over the seeds) and "accuracy_sd" (their standard deviation,
 * points); the record's own "test_correct" moves into its seed's entry. */
#ifndef DLB_CORE_SEEDS_H
#define DLB_CORE_SEEDS_H

#include <jansson.h>

/* A record's "seed_rep", 0 when it has none (the configuration's own run). */
int dlb_seed_rep_of(json_t *rec);

/* Whether configuration `index`'s training from seed + k is still to run
 * in round `round`: its own run is in `records`, ok and scored (it has an
 * accuracy), and neither a record of seed_rep k nor a folded "seeds" entry
 * of that seed exists. */
int dlb_seeds_due(json_t *records, long long index, long long round, int k);

/* `records` with each seed run folded into its configuration's own record
 * (the first repetition's, the kept attempt's: call it after
 * dlb_remeasure_pick): a new array; records without seed runs are shared,
 * those with are copies. NULL without memory. */
json_t *dlb_seeds_fold(json_t *records);

#endif
