/* train_samples: a training budget in images rather than steps, so that
 * configurations of different batch sizes train on as many images and
 * their accuracies compare (the selection compares accuracy only between
 * configurations that trained on the same number of images). */
#ifndef DLB_CORE_PLAN_BUDGET_H
#define DLB_CORE_PLAN_BUDGET_H

#include "util/error.h"
#include "plan/plan.h"

/* For every configuration with train_samples > 0: train_steps becomes
 * ceil(train_samples / batch). DLB_ERR_INPUT when such a configuration
 * also sets train_steps (one budget, not two: a suite file that gives
 * both; [quick] or --set giving one clears the other) or runs mode =
 * infer (there train_steps names the cached reference weights). */
dlb_status dlb_plan_apply_train_samples(struct dlb_plan *p,
                                        struct dlb_error *err);

/* The images configuration `c` trains on before its accuracy is taken:
 * train_steps x batch in mode = train; 0 when it does not train (mode =
 * infer evaluates the cached reference weights, the same for every
 * configuration of a seed and train_steps). */
double dlb_plan_trained_images(const struct dlb_config *c);

/* Whether two configurations that trained on images_a and images_b at
 * batch_a and batch_b trained alike, so that their accuracies compare:
 * equal up to the rounding of train_samples to whole steps (less than one
 * step of the larger batch). */
int dlb_plan_same_training(double images_a, double batch_a, double images_b,
                           double batch_b);

#endif
