/* The "stats" object of a record (core/results/results.h) from computed
 * statistics: written by the child, and again by the parent for a record
 * merged from repetitions (core/results/repeat.h). */
#ifndef DLB_CORE_STATS_JSON_H
#define DLB_CORE_STATS_JSON_H

#include <jansson.h>
#include "stats/stats.h"

/* A new object; a figure that is not finite (a CV with a zero mean) is
 * null, since jansson refuses inf and NaN. */
json_t *dlb_stats_json(const struct dlb_stats *st);

#endif
