/* Runs one configuration in its own process and classifies how it ended:
 * a record it wrote, or crashed (signal), timeout, oom, failed (exit). */
#ifndef DLB_CORE_RUNNER_H
#define DLB_CORE_RUNNER_H

#include <jansson.h>
#include "error.h"

/* Exit status a child uses when it could not even allocate its record. */
#define DLB_CHILD_EXIT_OOM 3

struct dlb_child_spec {
    char **argv;              /* argv[0] is ignored: the running binary is used */
    double timeout_s;         /* kill after this long; 0 = never */
    const char *log_path;     /* the child's stdout and stderr go here */
};

/* Run it. *record is the child's record with "status" set (and "reason"
 * when not ok) whatever happened, plus "wall_s". Returns non-OK only when
 * the child could not be started at all. */
dlb_status dlb_runner_run(const struct dlb_child_spec *spec, json_t **record,
                          struct dlb_error *err);

/* The path of the running executable (malloc'ed). */
char *dlb_self_exe(void);

#endif
