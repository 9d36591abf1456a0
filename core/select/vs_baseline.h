/* Each configuration against its baseline: the configuration of the same
 * workload (select.h: the suite's workload_axes) that holds the suite
 * baseline's settings. For a suite that sweeps an optimization's settings
 * over batch sizes and models, that is "the same batch and model without
 * the optimization". */
#ifndef DLB_CORE_VS_BASELINE_H
#define DLB_CORE_VS_BASELINE_H

#include <stdio.h>
#include <jansson.h>
#include "plan/plan.h"
#include "results/record.h"

/* Add to every record of plan `p` that has a baseline (other than itself)
 * in `records`: "vs_baseline": {"baseline_id", "speedup" (throughput
 * ratio of medians, with "speedup_ci_lo"/"_hi" from the throughput
 * intervals), "accuracy_drop" (baseline accuracy minus the record's, in
 * points; when both have one and trained on as many images)}. Returns how many records got one. */
size_t dlb_vs_baseline_annotate(const struct dlb_plan *p, json_t *records);

/* The figures as a short table after the main one; nothing when no record
 * has them. */
void dlb_vs_baseline_print(FILE *f, json_t *records);

/* Records with more workers than their baseline (a plugin figure in unit
 * "workers") get "workers" and "scaling_efficiency" in "vs_baseline":
 * throughput / (workers / baseline workers x baseline throughput). This
 * prints them as a short table, ids in a column `id_width` wide; nothing
 * when no record has one (vs_scaling.c). */
void dlb_vs_scaling_print(FILE *f, const struct dlb_record *recs, size_t n,
                          size_t id_width);

#endif
