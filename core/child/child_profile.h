/* The operations' profile of a configuration (suite key profile = ops):
 * the backend counts every operation it runs by layer, kind, propagation
 * and kernel (backend.h's dlb_backend_profile); the child keeps what ran
 * during the sampling, and the record's "profile" says, per measured step,
 * each operation's kernel, calls, time and share of the step. */
#ifndef DLB_CORE_CHILD_PROFILE_H
#define DLB_CORE_CHILD_PROFILE_H

#include <jansson.h>

#include "backend/backend.h"

struct dlb_child_profile {
    struct dlb_op_profile *ops;   /* a copy of the backend's entries,
                                     labels owned */
    size_t n;
    int taken;                    /* the sampling's end was seen */
    const char *fewer_flops;      /* the fast convolution algorithm that
                                     ran while sampling (backend.h), or
                                     NULL; with or without the profile */
};

/* At the sampling's start: the backend's counts from zero. */
void dlb_child_profile_begin(struct dlb_backend *be);
/* At its end: a copy of the counts into *p (a profiling backend only). */
void dlb_child_profile_end(struct dlb_backend *be, struct dlb_child_profile *p);
/* {"steps", "per_step_s", "ops": [{"layer", "op", "prop", "kernel",
 * "calls_per_step", "time_per_step_s", "share"}]}: `steps` steps were
 * sampled, of median step time `step_s` (the share's denominator). NULL
 * when nothing was taken. */
json_t *dlb_child_profile_json(const struct dlb_child_profile *p, double steps,
                               double step_s);
void dlb_child_profile_free(struct dlb_child_profile *p);

#endif
