/* The allocation trace recorder of the mempool plugin: the requests and
 * releases of one whole step, written as text that the alloctrace plugin
 * replays (format in plugins/alloctrace/alloctrace.c). */
#ifndef DLB_MEMPOOL_TRACE_H
#define DLB_MEMPOOL_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/plugin.h>

struct dlb_mp_trace;

/* Record step `step` (counted from 1, warm-up included; at least 2, so
 * that setup is never part of it) into `path`. */
dlb_status dlb_mp_trace_new(const char *path, uint64_t step,
                            struct dlb_mp_trace **out);
void dlb_mp_trace_delete(struct dlb_mp_trace *t);

/* Note an event; cheap when the recorded step is not the current one. */
void dlb_mp_trace_alloc(struct dlb_mp_trace *t, const void *p, size_t bytes);
void dlb_mp_trace_free(struct dlb_mp_trace *t, const void *p, size_t bytes);

/* Step `done` has ended: start recording before the chosen step, write the
 * file after it. Logs through `h` and returns the status of the write. */
dlb_status dlb_mp_trace_step_end(struct dlb_mp_trace *t, uint64_t done,
                                 const struct dlb_host *h);

#endif
