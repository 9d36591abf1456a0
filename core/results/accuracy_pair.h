/* The accuracy change of one record against another scored on the same
 * test set: the selection's verdicts (a configuration against its
 * workload's baseline) and `dlbench compare` (a configuration in a new
 * run against the same one in a base run) judge it alike. Paired by seed
 * (seeds.h: the "seeds" entries, else the record's one accuracy from its
 * configuration's seed), with the test set's sampling error paired image
 * by image where both records say which images each seed got right
 * (test_correct), else each side's binomial (stats_paired.h). */
#ifndef DLB_CORE_ACCURACY_PAIR_H
#define DLB_CORE_ACCURACY_PAIR_H

#include <stddef.h>
#include <jansson.h>

#include "stats/stats_paired.h"

/* `it` minus `base` (points, + is better) into *out. Returns the number of
 * seed pairs; 0 when either record has no accuracy (*out then all NAN).
 * With no seed in common, the two means as one pair, and *common = 0
 * (else 1; may be NULL). */
size_t dlb_accuracy_pair(json_t *it, json_t *base, struct dlb_paired_diff *out,
                         int *common);

#endif
