/* What `dlbench run` adds for configurations that run as several
 * processes (launcher.h) and for sharded runs (--shard K/N). */
#ifndef DLB_CORE_RUN_LAUNCH_H
#define DLB_CORE_RUN_LAUNCH_H

#include "options/options.h"
#include "plan/plan.h"
#include "run/runner.h"

/* Before anything runs: refuse a dlbench started by an MPI launcher
 * itself, a launcher command that cannot start the ranks, and --shard
 * with a search that needs every configuration's record. */
dlb_status dlb_run_launch_check(const struct dlb_options *o,
                                const struct dlb_plan *p,
                                struct dlb_error *err);

/* Whether plan position `pos` belongs to this run's shard. */
int dlb_run_in_shard(const struct dlb_options *o, size_t pos);

/* For a configuration that runs as several processes: the launcher argv
 * in spec->launcher, and argv's record descriptor ("--record-fd %FD%")
 * turned into "--record-file DIR/logs/config-INDEX.record.json" (the path
 * in spec->record_path, an old file of that name removed). Nothing for
 * one process. */
dlb_status dlb_run_launch_prepare(const struct dlb_plan *p,
                                  const struct dlb_config *c, const char *dir,
                                  char **argv, struct dlb_child_spec *spec,
                                  struct dlb_error *err);
void dlb_run_launch_release(struct dlb_child_spec *spec);

#endif
