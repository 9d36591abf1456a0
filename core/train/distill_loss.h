/* The loss of knowledge distillation at the logits (Hinton et al., 2015),
 * as host arithmetic over the n x classes logits of a batch, which is tiny
 * next to the network: the student's logits z, the teacher's t, hard
 * labels y, temperature T and weight alpha:
 *
 *   loss = (1 - alpha) NLL(softmax(z), y)
 *        + alpha T^2 KL(softmax(t / T) || softmax(z / T)),
 *
 * each term a mean over the batch. T^2 keeps the soft term's gradient on
 * the scale of the hard one whatever T is. */
#ifndef DLB_CORE_MODEL_DISTILL_LOSS_H
#define DLB_CORE_MODEL_DISTILL_LOSS_H

#include <stdint.h>

/* Add the soft term's gradient to grad [n][classes]:
 *   grad[i][k] += alpha T (softmax(z_i / T)_k - softmax(t_i / T)_k) / n,
 * and return the mean KL(softmax(t / T) || softmax(z / T)) over the rows.
 * Computed in double, rows shifted by their maximum; NaN for an empty
 * batch. */
double dlb_distill_soft_grad(const float *z, const float *t, uint32_t n,
                             uint32_t classes, double temperature,
                             double alpha, float *grad);

/* The blended loss above, in double: what the gradient of a distillation
 * step is the gradient of (tests differentiate it numerically). */
double dlb_distill_loss(const double *z, const double *t, const int32_t *labels,
                        uint32_t n, uint32_t classes, double temperature,
                        double alpha);

#endif
