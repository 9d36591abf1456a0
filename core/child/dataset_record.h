/* The record's "dataset" member (doc/results-schema.md), as the built-in
 * workload opens its data. */
#ifndef DLB_CORE_DATASET_RECORD_H
#define DLB_CORE_DATASET_RECORD_H

#include <jansson.h>

#include "data/dataset.h"

/* Into *member (made when NULL): the data as described, their shape, and
 * the count of each split opened so far; `why` (may be NULL or empty) why
 * dataset = auto chose synthetic data. */
void dlb_dataset_record(json_t **member, const struct dlb_dataset *d, int train,
                        const char *why);

#endif
