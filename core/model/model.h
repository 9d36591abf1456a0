/* The reference CNN on a backend: a network instance built from a parsed
 * model file (model_file.h), with its parameters, gradients and momentum
 * buffers on the device, PyTorch's default initialisation, the training
 * step (forward, backward, SGD with momentum) and inference.
 *
 * Memory follows eager frameworks: parameters, gradients and momentum
 * buffers live as long as the model; activations, their gradients and the
 * per-layer workspaces (pooling indices, batchnorm statistics) are
 * allocated from the backend at every step and released as soon as the
 * step no longer needs them, so an allocator under the backend sees the
 * real per-step traffic.
 *
 * Nothing here waits for the device except where the host needs a result
 * (the loss, the predictions): callers that time a step synchronize. */
#ifndef DLB_CORE_MODEL_MODEL_H
#define DLB_CORE_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/backend.h>
#include <dlbench/plugin.h>

#include "data/dataset.h"
#include "util/error.h"
#include "model/model_file.h"

/* One named tensor of the model as checkpoints see it ("conv1.weight"). */
struct dlb_model_tensor {
    const char *name;
    unsigned ndim;
    uint64_t shape[4];
    size_t count;
    struct dlb_buffer *buf;   /* the device buffer holding it */
};

/* Build the model of `spec` on `be`, every tensor of element type `dtype`
 * (F32 normally; F64 for gradient checks on ref). `spec` must outlive the
 * model. Parameters are initialised from `seed` (dlb_model_init). */
dlb_status dlb_model_create(const struct dlb_model_spec *spec,
                            struct dlb_backend *be, enum dlb_dtype dtype,
                            uint64_t seed, struct dlb_model **out,
                            struct dlb_error *err);
void dlb_model_destroy(struct dlb_model *m);

/* Re-initialise as PyTorch's defaults do: conv and linear weights and
 * biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform_ with
 * a = sqrt(5)), batchnorm gamma 1, beta 0, running mean 0, variance 1;
 * momentum buffers zero; the dropout stream restarts. Each layer draws
 * from its own stream of `seed`, so one seed gives bit-identical weights.
 * A spec with weights from its file (an ONNX model's) starts from those
 * instead, whatever the seed. */
dlb_status dlb_model_init(struct dlb_model *m, uint64_t seed,
                          struct dlb_error *err);

/* SGD settings of dlb_model_sgd_step (lr 0.01, momentum 0.9 by default). */
void dlb_model_set_sgd(struct dlb_model *m, float lr, float momentum);

/* Forward and backward over one batch of n images (NCHW floats on the
 * host, normalised) and labels, leaving the gradients of the mean loss,
 * multiplied by `loss_scale` (1 without a gradient scaler), in the
 * gradient buffers. Dropout layers draw a fresh seed each call. When
 * `loss` is not NULL it receives the unscaled loss (this waits for the
 * device). */
dlb_status dlb_model_forward_backward(struct dlb_model *m, const float *images,
                                      const int32_t *labels, uint32_t n,
                                      float loss_scale, double *loss,
                                      struct dlb_error *err);
/* The same on a batch already on the model's backend (an F32 buffer of
 * n images and an S32 buffer of n labels, uploaded by the caller); the
 * model reads them and leaves them to the caller. */
dlb_status dlb_model_forward_backward_dev(struct dlb_model *m,
                                          struct dlb_buffer *images,
                                          struct dlb_buffer *labels,
                                          uint32_t n, float loss_scale,
                                          double *loss, struct dlb_error *err);

/* Divide every gradient by `loss_scale` (skipped when it is 1) and report
 * whether any is inf or NaN (*found_nonfinite may be NULL: no check). */
dlb_status dlb_model_unscale_grads(struct dlb_model *m, float loss_scale,
                                   int *found_nonfinite,
                                   struct dlb_error *err);

/* One SGD-with-momentum update of every learnable tensor. */
dlb_status dlb_model_sgd_step(struct dlb_model *m, struct dlb_error *err);

/* Inference: forward pass without dropout, batchnorm with its running
 * statistics. `logprobs` (n x classes, may be NULL) receives the output of
 * the last layer (log-probabilities); this waits for the device. */
dlb_status dlb_model_infer(struct dlb_model *m, const float *images,
                           uint32_t n,
                           float *logprobs, struct dlb_error *err);

/* Test-set figures: mean NLL loss and top-1 accuracy in percent over every
 * image of `d` (unaugmented), in batches of `batch`, the last partial batch
 * included. `correct_marks` (may be NULL; dlb_hexbits_bytes(d->n) bytes,
 * util/hexbits.h) receives which images were classified correctly: two
 * models scored on the same images are then compared image by image. */
dlb_status dlb_model_evaluate(struct dlb_model *m, const struct dlb_dataset *d,
                              uint32_t batch, double *loss, double *accuracy,
                              uint8_t *correct_marks, struct dlb_error *err);

/* Mixed precision. `types` (DLB_LAYER_KIND_COUNT entries, NULL: none)
 * gives the type each layer kind computes and outputs in; a layer whose
 * input has another type casts it first, and its input gradient is cast
 * back to the type of the layer before, so any per-kind policy is correct
 * and casts run only where the types change. Parameters, their gradients,
 * momentum, batch-norm statistics and the SGD step stay in the model's
 * type. Conv and linear layers of another type get a weight copy, cast
 * from the master weights once before the next forward pass after each
 * change (once per training step; once for inference). With
 * `master_weights` 0 the weights are rounded to the copy's type after
 * every update instead. */
dlb_status dlb_model_set_precision(struct dlb_model *m,
                                   const enum dlb_dtype *types,
                                   int master_weights, struct dlb_error *err);

/* Say that the weights were written outside the model's own steps (a
 * checkpoint, a transform): the low-precision copies are cast again. */
void dlb_model_weights_changed(struct dlb_model *m);

/* Seconds spent in casts since the model was created (activations,
 * gradients, weight copies), on the backend's timers; waits for the
 * device. */
double dlb_model_cast_seconds(struct dlb_model *m);

/* The tensors a checkpoint holds, in a fixed order (the learnable ones and
 * the batchnorm running statistics; not gradients or momentum). */
size_t dlb_model_n_tensors(const struct dlb_model *m);
const struct dlb_model_tensor *dlb_model_tensor_at(const struct dlb_model *m,
                                                   size_t i);

const struct dlb_model_spec *dlb_model_spec_of(const struct dlb_model *m);
struct dlb_backend *dlb_model_backend(const struct dlb_model *m);
enum dlb_dtype dlb_model_dtype(const struct dlb_model *m);

/* The device buffers of tensor `name` ("conv1.weight"): value, gradient and
 * momentum (the latter two NULL for running statistics). DLB_ERR_INPUT when
 * there is no such tensor. For gradient checks and plugins. */
dlb_status dlb_model_find(struct dlb_model *m, const char *name,
                          struct dlb_buffer **value, struct dlb_buffer **grad,
                          struct dlb_buffer **momentum);

/* ---- what plugins see (model_info.c, model_api.h) ------------------- */
#include <dlbench/model_api.h>

unsigned dlb_model_layer_count(const struct dlb_model *m);
/* DLB_ERR_INPUT when i is out of range. */
dlb_status dlb_model_layer_info(const struct dlb_model *m, unsigned i,
                                struct dlb_layer_info *out);
dlb_status dlb_model_tensor_count(const struct dlb_model *m, const char *name,
                                  size_t *count, struct dlb_error *err);
/* Copy tensor `name` out (write = 0) or in (write = 1) as dense fp32;
 * `count` must be its element count. */
dlb_status dlb_model_tensor_io(struct dlb_model *m, const char *name,
                               float *host, size_t count, int write,
                               struct dlb_error *err);

#endif
