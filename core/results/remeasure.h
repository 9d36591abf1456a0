/* Re-measuring doubtful runs (suite key `remeasure_doubtful = N`): a run
 * measured while something else kept preempting it, or while the
 * hypervisor took its CPUs (sysmeter.h's "doubtful"), says as much about
 * its neighbours as about the code: one such vgg-small bf16 row read
 * 1.25x where the quiet machine gave 2.48x. The search loop runs such a
 * configuration again, up to N more times, at the end of its round.
 *
 * The journal keeps every run, the later ones with "attempt": 1, 2, ...
 * (the first has none). The search and the result files see one record
 * per run key (configuration, round, repetition), picked here: the first
 * that is not doubtful, else the one disturbed least, carrying
 * "remeasured": {"runs": K, "kept_attempt": A, "doubtful": [{"attempt",
 * "why"}, ...]} so that the report can say what was measured again. */
#ifndef DLB_CORE_REMEASURE_H
#define DLB_CORE_REMEASURE_H

#include <jansson.h>

/* A record's "attempt", 0 when it has none (the first run). */
long long dlb_attempt_of(json_t *rec);

/* Whether the run key (index, round, rep) should run again: it has at
 * least one record, every one ok and doubtful, and fewer than 1 + extra
 * of them. */
int dlb_remeasure_due(json_t *records, long long index, long long round,
                      int rep, int extra);

/* The attempt number the next run of that key gets (its record count). */
long long dlb_remeasure_next_attempt(json_t *records, long long index,
                                     long long round, int rep);

/* `records` with one record per run key, in the place of that key's first
 * record: a new array sharing the records (a picked record that had
 * company is a copy, with "remeasured"); NULL without memory. */
json_t *dlb_remeasure_pick(json_t *records);

#endif
