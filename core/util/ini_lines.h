/* INI text through inih with its options pinned, reporting the line of
 * every key and every section header. Debian's libinih is built without
 * line numbers in the handler and never reports a section that has no
 * keys; suites and model files need both for their error messages. */
#ifndef DLB_CORE_INI_LINES_H
#define DLB_CORE_INI_LINES_H

#include <stddef.h>
#include <dlbench/status.h>

struct dlb_ini_sink {
    /* A [section] header line; `name` is not NUL-terminated. */
    dlb_status (*section)(void *user, const char *name, size_t len, int line);
    /* A KEY = VALUE line inside `section` ("" before any header). */
    dlb_status (*key)(void *user, const char *section, const char *name,
                      const char *value, int line);
};

/* Parse buf[0, len). A callback's non-OK status stops the parse and is
 * returned as it is (the callback has recorded why). Text inih would
 * mangle or cannot read (a NUL byte, a line longer than max_line - 3
 * characters, a malformed line) gives DLB_ERR_INPUT with *bad_line and
 * `why` set; `what` names the kind of file in the message ("a suite"). */
dlb_status dlb_ini_parse(const char *buf, size_t len, int max_line,
                         const char *what, const struct dlb_ini_sink *sink,
                         void *user, int *bad_line, char *why, size_t why_len);

#endif
