/* Error messages that travel with a status: library code fills one of these
 * and returns; main() prints it and chooses the exit status. */
#ifndef DLB_CORE_ERROR_H
#define DLB_CORE_ERROR_H

#include <dlbench/status.h>

struct dlb_error {
    char msg[1024]; /* one line, no trailing newline; "" when unset */
};

/* Set e->msg from the format (when e is not NULL) and return s. The message
 * should name the file and line, or the value at fault, and what to do. */
dlb_status dlb_errorf(struct dlb_error *e, dlb_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
