/* `dlbench compare`, `dlbench history` and `dlbench baseline`: reading
 * finished runs against each other. Each returns the exit status. */
#ifndef DLB_CORE_CMD_COMPARE_H
#define DLB_CORE_CMD_COMPARE_H

#include "options/options.h"
#include "compare/compare.h"

/* compare BASE NEW: 0 no regression, 1 a configuration is significantly
 * slower beyond the threshold, 2 bad input (the error printed). */
int dlb_cmd_compare(struct dlb_options *opts);

/* history DIR...: 0, or 2 on bad input. */
int dlb_cmd_history(struct dlb_options *opts);

/* baseline update SUITE RUNDIR | baseline check SUITE RUNDIR: as compare. */
int dlb_cmd_baseline(struct dlb_options *opts);

/* Compare two loaded documents with the options' threshold, normalization
 * and format, print the result, and return compare's exit status. */
int dlb_compare_report(struct dlb_options *opts, json_t *base,
                       const char *base_file, json_t *nw, const char *new_file,
                       int normalize);

#endif
