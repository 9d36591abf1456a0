/* What follows a run once results.json and results.csv are on disk:
 * selection, plots, report, best.ini and the summary after the table. */
#ifndef DLB_CORE_POSTRUN_H
#define DLB_CORE_POSTRUN_H

#include <stdio.h>
#include <jansson.h>
#include "error.h"
#include "plan.h"

struct dlb_postrun {
    const char *dir;
    const char *origin;          /* the suite file as the user named it */
    const struct dlb_plan *plan;
    json_t *context;
    json_t *records;             /* plan order, as in results.json */
    FILE *summary;               /* where the summary lines go */
    FILE *summary_copy;          /* and a copy (table.txt); may be NULL */
};

/* Run the sequence. A step that fails is reported on stderr and the
 * others still run; the result files already written are never lost.
 * *winner is 1 when a configuration was chosen. Returns the first
 * failure's status. */
dlb_status dlb_postrun(const struct dlb_postrun *pr, int *winner);

#endif
