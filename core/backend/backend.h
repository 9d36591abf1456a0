/* Opening backends by name and calling them: the core's side of
 * <dlbench/backend.h>. Backend implementations include backend_impl.h. */
#ifndef DLB_CORE_BACKEND_H
#define DLB_CORE_BACKEND_H

#include <stddef.h>
#include <dlbench/backend.h>

/* Open the backend called `name` ("ref", "cpu", "cuda"). On failure *out is
 * NULL and `reason` says why: DLB_ERR_UNSUPPORTED for a backend this build
 * or machine lacks (the configuration is skipped), DLB_ERR_INPUT for an
 * unknown name (with a suggestion). */
dlb_status dlb_backend_open(const char *name,
                            const struct dlb_backend_config *cfg,
                            struct dlb_backend **out, char *reason, size_t len);
/* The backends this dlbench knows, NULL-terminated. */
const char *const *dlb_backend_names(void);
/* 1 when backend `name` is built in; else 0 with the reason. */
int dlb_backend_available(const char *name, char *reason, size_t len);

/* Release the backend; NULL is fine. */
void dlb_backend_close(struct dlb_backend *be);

/* Where backend `name` keeps its buffers: 1 in device memory the host
 * cannot touch (a GPU backend, built as a module), 0 in host memory (ref,
 * cpu, and names this dlbench does not know). Answered without loading
 * anything. */
int dlb_backend_device_memory(const char *name);
/* Memory of the backend's device outside any buffer, for a memory pool's
 * segments (backend_raw.c): malloc for host backends; the module's device
 * allocator (cudaMalloc) for GPU backends, which needs no open handle.
 * DLB_ERR_UNSUPPORTED with the reason where the device is missing,
 * DLB_ERR_NOMEM when it is full. raw_free takes the same byte count. */
dlb_status dlb_backend_raw_alloc(const char *name, int device, size_t bytes,
                                 void **out, char *reason, size_t len);
void dlb_backend_raw_free(const char *name, int device, void *p,
                          size_t bytes);

const char *dlb_backend_name(const struct dlb_backend *be);
const struct dlb_backend_ops *dlb_backend_ops_of(const struct dlb_backend *be);

/* Batch norm fused with the ReLU after it, in the built-in backends that
 * have it (ref, cpu; NULL from the others): an extension of the core's,
 * not an entry of the plugin interface's table, so that backends built
 * against that need nothing new. A model calls it for a training batch
 * norm whose output only a ReLU reads, and skips the ReLU, saving its
 * passes over memory.
 * fwd_train: batchnorm_fwd_train's outputs, with y = relu(bn(x)).
 * bwd: batchnorm_bwd's outputs with the ReLU's gradient applied first: dy
 *   (the gradient of y) passes where y > 0, else 0; a backend may
 *   recompute that mask from x, beta and the saved statistics instead of
 *   reading y. dx may alias dy. */
struct dlb_backend_bn_relu {
    dlb_status (*fwd_train)(struct dlb_backend *be,
                            const struct dlb_batchnorm_desc *d,
                            const struct dlb_buffer *x,
                            const struct dlb_buffer *gamma,
                            const struct dlb_buffer *beta,
                            struct dlb_buffer *running_mean,
                            struct dlb_buffer *running_var,
                            struct dlb_buffer *save_mean,
                            struct dlb_buffer *save_invstd,
                            struct dlb_buffer *y);
    dlb_status (*bwd)(struct dlb_backend *be,
                      const struct dlb_batchnorm_desc *d,
                      const struct dlb_buffer *x, const struct dlb_buffer *y,
                      const struct dlb_buffer *dy,
                      const struct dlb_buffer *gamma,
                      const struct dlb_buffer *beta,
                      const struct dlb_buffer *save_mean,
                      const struct dlb_buffer *save_invstd,
                      struct dlb_buffer *dx, struct dlb_buffer *dgamma,
                      struct dlb_buffer *dbeta);
};
const struct dlb_backend_bn_relu *dlb_backend_bn_relu(const struct dlb_backend *be);
/* The type of entry f, for the implementations' declarations. */
#define DLB_BN_RELU_TYPE(f) __typeof__(*((struct dlb_backend_bn_relu *)0)->f)

/* A convolution, 2x2 stride-2 max pooling and optionally a ReLU after it
 * in one pass, in the built-in backends that have it (cpu, for the shapes
 * `applies` accepts; NULL from the others): an extension of the core's
 * like dlb_backend_bn_relu. The convolution's output is never written,
 * only its pooled maxima: for LeNet's conv1 at batch 1024 that is 24 MB a
 * pass that pooling read back.
 * applies: 1 when fwd takes these descriptors with all float tensors of
 *   type t; p pools c's output (p->in_* are c's out_*).
 * fwd: y = [relu](maxpool(conv(x, w) + b)), b may be NULL; ws, when not
 *   NULL (training, without the ReLU), receives the pooling's workspace
 *   as pool_fwd writes it, so that pool_bwd runs on it as usual.
 * bwd_weights: conv2d_bwd_weights of a convolution whose training fwd
 *   wrote ws, from the pooling's output gradient dy (p's output shape)
 *   and ws instead of the convolution's output gradient, which pool_bwd
 *   would have written (dy at each window's maximum, 0 elsewhere): the
 *   same values, without that pass where it can (the cpu backend: dy
 *   and ws in the layout its training fwd left; else it runs pool_bwd
 *   into a buffer of its own, then conv2d_bwd_weights); for a first
 *   layer, whose input needs no gradient.
 * conv_fwd_infer: conv2d_fwd for an inference pass, on kernels that may
 *   round otherwise than the ones training runs (a model's training
 *   passes keep one kernel per layer, so that a pipeline's stages compute
 *   what one worker computes bit for bit). */
struct dlb_backend_conv_pool {
    int (*applies)(const struct dlb_conv2d_desc *c,
                   const struct dlb_pool_desc *p, enum dlb_dtype t);
    dlb_status (*fwd)(struct dlb_backend *be, const struct dlb_conv2d_desc *c,
                      const struct dlb_pool_desc *p, int relu,
                      const struct dlb_buffer *x, const struct dlb_buffer *w,
                      const struct dlb_buffer *b, struct dlb_buffer *y,
                      struct dlb_buffer *ws);
    dlb_status (*bwd_weights)(struct dlb_backend *be,
                              const struct dlb_conv2d_desc *c,
                              const struct dlb_pool_desc *p,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *dy,
                              const struct dlb_buffer *ws,
                              struct dlb_buffer *dw, struct dlb_buffer *db);
    dlb_status (*conv_fwd_infer)(struct dlb_backend *be,
                                 const struct dlb_conv2d_desc *d,
                                 const struct dlb_buffer *x,
                                 const struct dlb_buffer *w,
                                 const struct dlb_buffer *b,
                                 struct dlb_buffer *y);
};
const struct dlb_backend_conv_pool *dlb_backend_conv_pool(const struct dlb_backend *be);

/* Why the last failing operation failed ("" when it gave no reason). */
const char *dlb_backend_last_error(const struct dlb_backend *be);

/* Element type, element count and size in bytes of a buffer. */
enum dlb_dtype dlb_buffer_dtype(const struct dlb_buffer *b);
size_t dlb_buffer_count(const struct dlb_buffer *b);
size_t dlb_buffer_bytes(const struct dlb_buffer *b);

/* Record that `op` is missing from the table; returns UNSUPPORTED. */
dlb_status dlb_backend_missing(struct dlb_backend *be, const char *op);

/* Call an operation that returns a status through the table; a NULL entry
 * gives DLB_ERR_UNSUPPORTED naming it: DLB_BE_CALL(be, relu_fwd, n, x, y).
 * The void entries (buffer_free, timer_destroy) are required: call them
 * through dlb_backend_ops_of(be). */
#define DLB_BE_CALL(be, op, ...)                                            \
    (dlb_backend_ops_of(be)->op                                             \
         ? dlb_backend_ops_of(be)->op((be), __VA_ARGS__)                    \
         : dlb_backend_missing((be), #op))
/* The same for an operation without arguments: DLB_BE_CALL0(be, synchronize). */
#define DLB_BE_CALL0(be, op)                                                \
    (dlb_backend_ops_of(be)->op ? dlb_backend_ops_of(be)->op(be)            \
                                : dlb_backend_missing((be), #op))

#endif
