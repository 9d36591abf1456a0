/* Training against soft targets (knowledge distillation) and the logits a
 * model gives, for plugins' model interface (infer's logits and the extra
 * distill.soft_target_step, dlbench/model_api.h).
 * The loss and its gradient at the logits are in distill_loss.h. */
#ifndef DLB_CORE_MODEL_MODEL_DISTILL_H
#define DLB_CORE_MODEL_MODEL_DISTILL_H

#include "model/model.h"

/* The input of the last layer (the logsoftmax) for n images, inference
 * mode (no dropout, batchnorm's running statistics): logits [n][classes]
 * as fp32 on the host. Waits for the device. */
dlb_status dlb_model_logits(struct dlb_model *m, const float *images,
                            uint32_t n, float *logits, struct dlb_error *err);

/* Forward and backward of one training step over n images and labels
 * against the blend of the hard labels and the teacher's logits
 * t [n][classes] (distill_loss.h), leaving the gradients of the blended
 * loss in the gradient buffers. The hard term's gradient at the logits is
 * the backend's, as the baseline step computes it, scaled by 1 - alpha;
 * the soft term's is added on the host; backward starts below the
 * logsoftmax with their sum. So alpha = 0 gives the baseline's gradients
 * bit for bit (t is then not read and may be NULL). *loss (may be NULL)
 * receives the blended loss. fp32 models only: DLB_ERR_UNSUPPORTED
 * otherwise; DLB_ERR_INPUT for T <= 0 or alpha outside [0, 1]. */
dlb_status dlb_model_distill_forward_backward(struct dlb_model *m,
                                              const float *images,
                                              const int32_t *labels,
                                              uint32_t n, const float *t,
                                              float temperature, float alpha,
                                              double *loss,
                                              struct dlb_error *err);

/* One distillation step: the above, then the SGD update. */
dlb_status dlb_model_distill_step(struct dlb_model *m, const float *images,
                                  const int32_t *labels, uint32_t n,
                                  const float *t, float temperature,
                                  float alpha, double *loss,
                                  struct dlb_error *err);

#endif
