/* The end of a run: the selection and results.json, then what follows
 * once the result files are on disk: plots, report, best.ini and the
 * summary after the table. */
#ifndef DLB_CORE_POSTRUN_H
#define DLB_CORE_POSTRUN_H

#include <stdio.h>
#include <jansson.h>
#include "util/error.h"
#include "plan/plan.h"
#include "results/selection.h"

struct dlb_postrun {
    const char *dir;
    const char *origin;          /* the suite file as the user named it */
    const struct dlb_plan *plan;
    json_t *context;
    json_t *records;             /* plan order, as in results.json */
    FILE *summary;               /* where the summary lines go */
    FILE *summary_copy;          /* and a copy (table.txt); may be NULL */
    const struct dlb_selection *selection; /* dlb_postrun_results's, or
                                            * NULL when it failed */
};

/* Select the winner into *selection, then write results.json once, with
 * the selection in it ("selection", dlb_selection_write). A selection that
 * fails is reported on stderr and the results are written without one: a
 * measurement is never held back for it; selection->present is then 0.
 * Free *selection with dlb_selection_free in either case. Returns the
 * write's status. */
dlb_status dlb_postrun_results(const char *dir, const struct dlb_plan *plan,
                               json_t *context, json_t *records,
                               struct dlb_selection *selection,
                               struct dlb_error *err);

/* The rest of the sequence, after dlb_postrun_results (pr->selection NULL:
 * its selection failed, and nothing but the summary is written). A step
 * that fails is reported on stderr and the others still run; the result
 * files already written are never lost.
 * *winner is 1 when a configuration was chosen. Returns the first
 * failure's status. */
dlb_status dlb_postrun(const struct dlb_postrun *pr, int *winner);

#endif
