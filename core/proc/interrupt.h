/* SIGINT, SIGTERM and SIGHUP while a run supervises its configurations:
 * the handler only records the signal and writes a byte to a pipe, so the
 * runner's poll() wakes at once; the run then stops the configuration in
 * progress, reaps it, writes what it has and exits 128 + the signal. A
 * second signal gets the default action, after the configuration's process
 * group is killed: a user pressing Ctrl-C twice wants out now. */
#ifndef DLB_CORE_INTERRUPT_H
#define DLB_CORE_INTERRUPT_H

#include <sys/types.h>

#include "util/error.h"

/* Install the handlers (and ignore SIGXFSZ, so that a file-size limit is a
 * write error with a message, not a silent death). Idempotent. */
dlb_status dlb_interrupt_install(struct dlb_error *err);

/* Put back the dispositions found at install time and close the pipe. */
void dlb_interrupt_restore(void);

/* The signal received since install, or 0. */
int dlb_interrupted(void);

/* The pipe's read end, readable once a signal arrived; -1 when not
 * installed. Poll it beside the child's descriptor. */
int dlb_interrupt_fd(void);

/* The process group of the configuration running now (0: none), which a
 * second signal kills before dlbench dies of it. */
void dlb_interrupt_child(pid_t group);

#endif
