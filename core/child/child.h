/* The configuration's own process: a fresh exec of dlbench told which
 * configuration to run (see runner.c). It probes and initialises the
 * plugins, sets up the workload, measures it and writes one JSON record to
 * the record descriptor. Nothing here is shared with the parent, so a
 * crash, hang or OOM costs this configuration only. */
#ifndef DLB_CORE_CHILD_H
#define DLB_CORE_CHILD_H

#include "options/options.h"

/* Returns the process exit status (0 when a record was written). */
int dlb_child_main(const struct dlb_options *opts);

#endif
