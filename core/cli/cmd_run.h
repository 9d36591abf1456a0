/* `dlbench --suite NAME` and `--resume DIR`: the parent's side of a sweep. */
#ifndef DLB_CORE_CMD_RUN_H
#define DLB_CORE_CMD_RUN_H

#include "options/options.h"

/* Returns the exit status: 0, 1 (a configuration failed or did not run),
 * 2 (bad input), with the error printed. */
int dlb_cmd_run(struct dlb_options *opts);

/* --store DB (core/cli/run_store.c): open the store before the run, so
 * that a wrong one stops it at once; add the finished run to it (0, or
 * -1 with the reason and the way to add it later printed). Without
 * --store both do nothing. */
dlb_status dlb_run_store_check(const struct dlb_options *o, struct dlb_error *err);
int dlb_run_store_add(const struct dlb_options *o, const char *dir);

#endif
