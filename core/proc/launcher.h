/* Configurations that run as several processes (MPI ranks): how many, the
 * launcher that starts them, which rank a process is, how rank 0 hands
 * its record back, and what a launcher's log says when a rank died.
 *
 * A configuration runs as N processes when an enabled plugin with the
 * DLB_PLUGIN_MULTI_PROCESS capability has an integer parameter "ranks"
 * above 1 in it (the dp plugin's engines mpi and nccl). The parent then
 * starts the configuration's child through the launcher, "mpirun -np
 * {ranks}" unless --launcher (or DLBENCH_LAUNCHER) says otherwise
 * ("srun -n {ranks}"): every rank runs `dlbench __child`, and
 * rank 0 writes the record to a file in the run directory, since the
 * record descriptor does not survive a launcher.
 *
 * The launcher is split into an argv and started with execvp, never by a
 * shell; it comes from the user's command line or environment only: the
 * suite loader refuses a `launcher` key in a suite file, since a suite
 * may come from someone else and must not name a program to run. */
#ifndef DLB_CORE_LAUNCHER_H
#define DLB_CORE_LAUNCHER_H

#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#include "util/error.h"
#include "plan/plan.h"

/* Processes configuration c runs as: 1 unless a plugin says more. */
int dlb_launch_ranks(const struct dlb_plan *p, const struct dlb_config *c);

/* The launcher's argv for `ranks` processes, NULL-terminated and
 * malloc'ed (free with dlb_launcher_argv_free). `cmd` is split at blanks
 * (quotes group words) and {ranks} replaced; "" gives the default, mpirun
 * with --oversubscribe (and --allow-run-as-root for root). A command
 * without {ranks} is DLB_ERR_INPUT. */
dlb_status dlb_launcher_argv(const char *cmd, int ranks, char ***out,
                             struct dlb_error *err);
void dlb_launcher_argv_free(char **argv);

/* 1 when this process was started by an MPI launcher, with the variable
 * that says so in *what. */
int dlb_launched(const char **what);
/* This process's rank as its launcher's environment gives it; 0 alone. */
int dlb_launch_env_rank(void);

/* Rank 0 writes `rec` to `path` (a temporary name, then rename); other
 * ranks write nothing. Returns 0 on success. */
int dlb_record_file_write(const char *path, int rank, json_t *rec);
/* The record rank 0 wrote, or NULL. */
json_t *dlb_record_file_read(const char *path);

/* One line from a launcher's log on the first rank that died and how
 * (Open MPI's and Slurm's wording): "rank 1 (host node3) was killed by
 * signal 9 (Killed)". *by_signal is 1 when it was a signal. "" when the
 * log does not say. */
void dlb_launcher_explain(const char *log_path, char *out, size_t len,
                          int *by_signal);

/* End a configuration's process group that ran out of time. A launcher
 * (graceful) first gets SIGTERM and a few seconds to stop its ranks,
 * which live in process groups of their own; then SIGKILL, to it and to
 * the ranks it started on this host, so that none outlives it. */
void dlb_launcher_stop(pid_t pid, int graceful);

#endif
