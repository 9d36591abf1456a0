/* Progress of a sweep on standard error: an updating line on a terminal,
 * plain lines otherwise (CI logs). */
#ifndef DLB_CORE_PROGRESS_H
#define DLB_CORE_PROGRESS_H

#include <stddef.h>
#include <jansson.h>

struct dlb_progress {
    size_t total, done;
    double start;
    int tty;
};

void dlb_progress_init(struct dlb_progress *p, size_t total);
/* Configuration `id` starts (k of total, 1-based). */
void dlb_progress_start(struct dlb_progress *p, size_t k, const char *id);
/* It ended with `record`: one summary line. */
void dlb_progress_done(struct dlb_progress *p, size_t k, const char *id, json_t *record);

#endif
