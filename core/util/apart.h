/* Work run in a forked copy of this process, so that nothing it
 * allocates, maps, compiles or faults in stays in the process that
 * measures: the reference training of an inference configuration's
 * weights (ref_weights.h). */
#ifndef DLB_UTIL_APART_H
#define DLB_UTIL_APART_H

#include "util/error.h"

typedef dlb_status (*dlb_apart_fn)(void *ctx, struct dlb_error *err);

/* Whether work can run apart here: the process has no thread but the
 * calling one. fork copies that thread alone; a libgomp pool's threads
 * would be missing from the copy, and its next parallel region would wait
 * for them for ever (what libgomp does after a fork). */
int dlb_apart_possible(void);

/* Run fn(ctx) in a forked copy and wait for it: its status, and its
 * err->msg on failure, come back. A copy killed by a signal, or one that
 * ends without a status, is DLB_ERR_RUNTIME naming what happened. Call
 * only where dlb_apart_possible() said so. */
dlb_status dlb_apart_run(dlb_apart_fn fn, void *ctx, struct dlb_error *err);

#endif
