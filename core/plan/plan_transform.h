/* A plan check for model transforms (quant, prune): they act on a
 * trained model, which a configuration must then have. */
#ifndef DLB_CORE_PLAN_TRANSFORM_H
#define DLB_CORE_PLAN_TRANSFORM_H

#include "util/error.h"
#include "plan/plan.h"

/* DLB_ERR_INPUT, naming the suite line, when a configuration of the
 * built-in cnn workload enables a plugin with a transform hook but has no
 * trained weights: mode = train with train_steps = 0 measures steps only
 * and never trains to the end, so the transform would never run (mode =
 * infer always has weights: the cached reference ones). */
dlb_status dlb_plan_check_transforms(const struct dlb_plan *p,
                                     struct dlb_error *err);

#endif
