/* Runs one configuration in its own process and classifies how it ended:
 * a record it wrote, or crashed (signal), timeout, oom, failed (exit). */
#ifndef DLB_CORE_RUNNER_H
#define DLB_CORE_RUNNER_H

#include <jansson.h>
#include "util/error.h"

/* Exit status a child uses when it could not even allocate its record. */
#define DLB_CHILD_EXIT_OOM 3

struct dlb_child_spec {
    char **argv;              /* argv[0] is ignored: the running binary is used */
    double timeout_s;         /* kill after this long; 0 = never */
    const char *log_path;     /* the child's stdout and stderr go here */
    /* A configuration run as several processes (launcher.h): the
     * launcher's argv, put before the child's, and the file where rank 0
     * writes the record. NULL: one process, record on the descriptor. */
    char **launcher;
    const char *record_path;
    /* Called once the child has been started (may be NULL): the caller's
     * slow bookkeeping, the previous record's fsync, overlaps the child's
     * exec and start-up instead of adding to the sweep. */
    void (*started)(void *ctx);
    void *started_ctx;
    /* More busy threads than CPUs: libgomp's threads spin at every
     * barrier for CPU time their peers need, so the child starts with
     * OMP_WAIT_POLICY=passive (read only when libgomp loads) unless the
     * user set a policy. */
    int omp_passive;
};

/* Run it. *record is the child's record with "status" set (and "reason"
 * when not ok) whatever happened, plus "wall_s". Returns non-OK when the
 * child could not be started at all, or when dlb_interrupted() became
 * true while it ran (core/proc/interrupt.h): then its process group has been
 * stopped and reaped and *record is NULL. */
dlb_status dlb_runner_run(const struct dlb_child_spec *spec, json_t **record,
                          struct dlb_error *err);

/* The path of the running executable (malloc'ed). */
char *dlb_self_exe(void);

#endif
