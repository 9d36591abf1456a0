/* Repetitions (suite key `repetitions`): each configuration of a round
 * runs in that many processes, in passes over the round (every
 * configuration once, then every one again), so that a machine whose
 * speed changes in phases of seconds, as shared VMs do, measures each
 * configuration in several phases rather than one.
 *
 * The journal keeps one record per process, with "rep": 0, 1, ...; the
 * search and the result files see one record per configuration and round,
 * merged here: the first repetition's record (the only one with quality
 * figures: later ones run measure_only) with the samples of all of them
 * in the order taken, statistics, throughput and GFLOP/s recomputed over
 * those, the wall time summed, and "repetitions" listing each process's
 * median, throughput, sample count and wall time. The merged median is
 * the geometric mean of the processes' medians, each process one vote
 * however many samples it took; the other statistics are the pooled
 * samples'. */
#ifndef DLB_CORE_REPEAT_H
#define DLB_CORE_REPEAT_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "results/record.h"

/* A record's "rep", or -1 when it has none (repetitions = 1). */
int dlb_rep_of(json_t *rec);

/* A record's search round ("round"), -1 when it has none (a grid's). */
long long dlb_round_of(json_t *rec);

/* `records` (a journal's, any order) with the repetitions of each
 * (configuration, round) merged into one record, in place of the first;
 * a group with fewer than `reps` records is left out (the run stopped
 * before its last pass: --resume finishes it), unless one of them is not
 * ok (failed or skipped), which then stands for the group. Records
 * without "rep" are kept as they are. A new array, or NULL without
 * memory. */
json_t *dlb_reps_merge(json_t *records, int reps);

/* A journal's runs as the search and the results see them: of the runs of
 * one key the one remeasure.h picks, the seed runs folded into their
 * configuration's (seeds.h), then the repetitions merged as above. A new
 * array, or NULL without memory. */
json_t *dlb_records_as_configs(json_t *records, int reps);

/* Widen the median interval of each merged record (of `merged`, from
 * dlb_reps_merge) to cover the spread between processes. Samples pooled
 * from several processes are not independent: each process runs in its
 * own speed phase of the machine (on shared VMs, 10-20% apart), so their
 * order-statistic interval is far too narrow, and near-equal
 * configurations would test as different. The spread is estimated as in
 * a one-way analysis of variance on ln(process median): pooled over the
 * records measured with the same budget (a grid's, or one of halving's
 * rounds; its final round and any fallback rounds together), which share
 * the machine and the length of a measurement, so that three processes a
 * configuration still give many degrees of freedom.
 * The interval becomes at least median * exp(+-t(0.975, df) * sd /
 * sqrt(processes)); "ci_processes" in the stats records sd, df and that
 * half-width, and the throughput interval follows. Called by
 * dlb_reps_merge. */
void dlb_reps_widen_ci(json_t *merged);

/* ln(median / scale) of each process of a merged record (its
 * "repetitions"): *mean gets their mean and *ss the sum of their squared
 * deviations from it. Returns how many processes (2 or more), or 0 when
 * it has fewer than two or one without a positive median. */
size_t dlb_reps_log_medians(const struct dlb_record *rec, double scale,
                            double *mean, double *ss);
/* The same over n process medians. */
size_t dlb_reps_log_medians_of(const double *medians, size_t n, double scale,
                               double *mean, double *ss);

/* The order in which pass `rep` of search round `round` visits its `n`
 * configurations: order[k] is the position (0..n-1) of the k-th to run.
 * A fresh random permutation per pass, from `seed` (the suite's), so that
 * a phase of the machine falls on every configuration alike rather than
 * on the same neighbours in every pass, and the same on --resume. */
void dlb_reps_pass_order(uint64_t seed, int round, int rep, size_t n, size_t *order);

/* Whether a record of (index, round) in `records` is not ok: the later
 * repetitions of that configuration do not run. */
int dlb_reps_stopped(json_t *records, size_t index, long long round);

#endif
