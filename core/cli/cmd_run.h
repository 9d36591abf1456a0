/* `dlbench --suite NAME` and `--resume DIR`: the parent's side of a sweep. */
#ifndef DLB_CORE_CMD_RUN_H
#define DLB_CORE_CMD_RUN_H

#include "options/options.h"

/* Returns the exit status: 0, 1 (a configuration failed or did not run),
 * 2 (bad input), with the error printed. */
int dlb_cmd_run(struct dlb_options *opts);

#endif
