/* Reading an allocation trace (format in alloctrace.c). */
#ifndef DLB_ALLOCTRACE_TRACE_FILE_H
#define DLB_ALLOCTRACE_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/status.h>

struct dlb_at_event {
    size_t id;
    int is_alloc;
};

struct dlb_at_trace {
    struct dlb_at_event *ev;
    size_t n;
    size_t *size;    /* per ID */
    size_t n_ids;
    uint64_t bytes, live_peak, largest;
};

/* Find `name` (a path when it holds a '/', else NAME.trace in the trace
 * directories) and parse it. On failure `why` names the file and line. */
dlb_status dlb_at_trace_load(const char *name, struct dlb_at_trace *t,
                             char *why, size_t len);
void dlb_at_trace_free(struct dlb_at_trace *t);

#endif
