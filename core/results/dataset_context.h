/* The data a run's configurations trained and scored on, for the run's
 * environment and its report. */
#ifndef DLB_CORE_DATASET_CONTEXT_H
#define DLB_CORE_DATASET_CONTEXT_H

#include <jansson.h>

/* The distinct "dataset" objects of `records` (doc/results-schema.md), in
 * order of first appearance, as the context's "datasets" array (replacing
 * any); nothing when no record has one. Only the children open the data
 * at the model's shape, so the environment learns it from their records. */
void dlb_context_add_datasets(json_t *context, json_t *records);

/* One line for a "dataset" object: "synthetic 3x224x224 (seed 42), 1783
 * training and 297 test images", with the corrupt images of a folder. */
void dlb_dataset_line(char *buf, size_t len, json_t *dataset);

#endif
