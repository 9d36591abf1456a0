/* The gradient scaler's device path (backend API 1.2): the unscaled
 * gradients are checked for inf/NaN into a flag that stays on the device,
 * the SGD step is applied or skipped by the device on that flag, and the
 * host reads the flag later, when it needs it for the next step's loss
 * scale, instead of waiting for the device in the middle of every step.
 * The host path (dlb_model_unscale_grads, then dlb_model_sgd_step when
 * the hook says so) computes the same numbers. */
#ifndef DLB_CORE_MODEL_SCALER_H
#define DLB_CORE_MODEL_SCALER_H

#include "util/error.h"
#include "model/model.h"

/* 1 when the model's backend has the scaler's operations and the model's
 * precision allows them: without master weights the update's rounding
 * pass (dlb_model_set_precision) runs on skipped steps too, which the
 * host path does not do, so that case stays on the host. */
int dlb_model_device_scaler(const struct dlb_model *m);

/* Divide every gradient by `loss_scale` (not when it is 1), check them on
 * the device, apply the SGD step where all are finite, and post the flag.
 * Nothing waits for the device. */
dlb_status dlb_model_scaled_update(struct dlb_model *m, float loss_scale,
                                   struct dlb_error *err);

/* The same in two parts, for a step replayed from a graph: apply enqueues
 * everything but the post (which a capture cannot hold, backend.h), post
 * enqueues the flag's copy after the replay. */
dlb_status dlb_model_scaled_apply(struct dlb_model *m, float loss_scale,
                                  struct dlb_error *err);
dlb_status dlb_model_scaled_post(struct dlb_model *m, struct dlb_error *err);

/* The posted flag: *found_nonfinite = 1 when the step was skipped. Waits
 * for the flag's copy only. DLB_ERR_INTERNAL when nothing was posted. */
dlb_status dlb_model_scaled_result(struct dlb_model *m, int *found_nonfinite,
                                   struct dlb_error *err);

#endif
