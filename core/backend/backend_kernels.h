/* Kernels from functions with the tensors as arguments: for backend
 * implementations only.
 *
 * A backend's kernels (struct dlb_kernel) take an operation descriptor.
 * Most of the built-in backends' functions were written for one kind and
 * propagation with its tensors as arguments (a convolution's forward
 * takes the descriptor, x, w, b and y); the lists below name those
 * functions by family, state each one's type once (dlb_kfn_<name>), and
 * make from dlb_<backend>_<name> a kernel entry whose run unpacks the
 * operation into those arguments. A backend lists the families it has in
 * its header (declaring the functions) and in its kernel list (making the
 * entries); a kernel written against struct dlb_op directly needs none of
 * this.
 *
 * To add an operation: its kind and the table of its tensors in
 * <dlbench/backend.h>, its check in op_check.c, and a kernel in each
 * backend that computes it: either a function here (a family entry, its
 * type, DLB_KCALL_<name> and DLB_KKIND_<name>) or a kernel taking the
 * descriptor. */
#ifndef DLB_CORE_BACKEND_KERNELS_H
#define DLB_CORE_BACKEND_KERNELS_H

#include <dlbench/backend.h>

#include "backend_impl.h"

/* The reference CNN's layers, loss, update and element-wise work. */
#define DLB_KFN_CNN(X, be)                                                     \
    X(be, conv2d_fwd)                                                          \
    X(be, conv2d_bwd_data) X(be, conv2d_bwd_weights) X(be, pool_fwd)           \
        X(be, pool_bwd) X(be, relu_fwd) X(be, relu_bwd) X(be, dropout_fwd)     \
            X(be, dropout_bwd) X(be, batchnorm_fwd_train)                      \
                X(be, batchnorm_fwd_infer) X(be, batchnorm_bwd)                \
                    X(be, linear_fwd) X(be, linear_bwd) X(be, logsoftmax_fwd)  \
                        X(be, nll_loss) X(be, logsoftmax_nll_bwd)              \
                            X(be, sgd_update) X(be, cast) X(be, scale)         \
                                X(be, check_finite) X(be, fill)
/* Affine int8 (de)quantisation. */
#define DLB_KFN_QUANTIZE(X, be) X(be, quantize) X(be, dequantize)
/* Sums over replicas: multi-device backends. */
#define DLB_KFN_ALLREDUCE(X, be) X(be, allreduce_sum)
/* int8 inference. */
#define DLB_KFN_INT8(X, be)                                                    \
    X(be, conv2d_int8_fwd) X(be, linear_int8_fwd) X(be, pool_int8_fwd)
/* Linear layers with CSR weights. */
#define DLB_KFN_SPARSE(X, be) X(be, csr_linear_fwd)
/* The gradient scaler's passes on the device. */
#define DLB_KFN_SCALER(X, be) X(be, unscale_check) X(be, sgd_update_if_finite)
/* Batch norm with the ReLU after it. */
#define DLB_KFN_BN_RELU(X, be)                                                 \
    X(be, batchnorm_relu_fwd_train) X(be, batchnorm_relu_bwd)

typedef dlb_status
dlb_kfn_conv2d_fwd(struct dlb_backend *, const struct dlb_conv2d_desc *,
                   const struct dlb_buffer *x, const struct dlb_buffer *w,
                   const struct dlb_buffer *b, struct dlb_buffer *y);
typedef dlb_status dlb_kfn_conv2d_bwd_data(struct dlb_backend *,
                                           const struct dlb_conv2d_desc *,
                                           const struct dlb_buffer *w,
                                           const struct dlb_buffer *dy,
                                           struct dlb_buffer *dx);
typedef dlb_status dlb_kfn_conv2d_bwd_weights(struct dlb_backend *,
                                              const struct dlb_conv2d_desc *,
                                              const struct dlb_buffer *x,
                                              const struct dlb_buffer *dy,
                                              struct dlb_buffer *dw,
                                              struct dlb_buffer *db);
typedef dlb_status dlb_kfn_pool_fwd(struct dlb_backend *,
                                    const struct dlb_pool_desc *,
                                    const struct dlb_buffer *x,
                                    struct dlb_buffer *y,
                                    struct dlb_buffer *ws);
typedef dlb_status dlb_kfn_pool_bwd(struct dlb_backend *,
                                    const struct dlb_pool_desc *,
                                    const struct dlb_buffer *dy,
                                    const struct dlb_buffer *ws,
                                    struct dlb_buffer *dx);
/* relu_max: the upper clip (ReLU6: 6), 0 for none (backend.h's RELU). */
typedef dlb_status dlb_kfn_relu_fwd(struct dlb_backend *, size_t count,
                                    float relu_max,
                                    const struct dlb_buffer *x,
                                    struct dlb_buffer *y);
typedef dlb_status dlb_kfn_relu_bwd(struct dlb_backend *, size_t count,
                                    float relu_max,
                                    const struct dlb_buffer *y,
                                    const struct dlb_buffer *dy,
                                    struct dlb_buffer *dx);
typedef dlb_status dlb_kfn_dropout_fwd(struct dlb_backend *,
                                       const struct dlb_dropout_desc *,
                                       const struct dlb_buffer *x,
                                       struct dlb_buffer *y);
typedef dlb_status dlb_kfn_dropout_bwd(struct dlb_backend *,
                                       const struct dlb_dropout_desc *,
                                       const struct dlb_buffer *dy,
                                       struct dlb_buffer *dx);
typedef dlb_status dlb_kfn_batchnorm_fwd_train(
    struct dlb_backend *, const struct dlb_batchnorm_desc *,
    const struct dlb_buffer *x, const struct dlb_buffer *gamma,
    const struct dlb_buffer *beta, struct dlb_buffer *running_mean,
    struct dlb_buffer *running_var, struct dlb_buffer *save_mean,
    struct dlb_buffer *save_invstd, struct dlb_buffer *y);
typedef dlb_status dlb_kfn_batchnorm_fwd_infer(
    struct dlb_backend *, const struct dlb_batchnorm_desc *,
    const struct dlb_buffer *x, const struct dlb_buffer *gamma,
    const struct dlb_buffer *beta, const struct dlb_buffer *running_mean,
    const struct dlb_buffer *running_var, struct dlb_buffer *y);
typedef dlb_status dlb_kfn_batchnorm_bwd(
    struct dlb_backend *, const struct dlb_batchnorm_desc *,
    const struct dlb_buffer *x, const struct dlb_buffer *dy,
    const struct dlb_buffer *gamma, const struct dlb_buffer *save_mean,
    const struct dlb_buffer *save_invstd, struct dlb_buffer *dx,
    struct dlb_buffer *dgamma, struct dlb_buffer *dbeta);
typedef dlb_kfn_batchnorm_fwd_train dlb_kfn_batchnorm_relu_fwd_train;
typedef dlb_status dlb_kfn_batchnorm_relu_bwd(
    struct dlb_backend *, const struct dlb_batchnorm_desc *,
    const struct dlb_buffer *x, const struct dlb_buffer *y,
    const struct dlb_buffer *dy, const struct dlb_buffer *gamma,
    const struct dlb_buffer *beta, const struct dlb_buffer *save_mean,
    const struct dlb_buffer *save_invstd, struct dlb_buffer *dx,
    struct dlb_buffer *dgamma, struct dlb_buffer *dbeta);
typedef dlb_status
dlb_kfn_linear_fwd(struct dlb_backend *, const struct dlb_linear_desc *,
                   const struct dlb_buffer *x, const struct dlb_buffer *w,
                   const struct dlb_buffer *b, struct dlb_buffer *y);
typedef dlb_status
dlb_kfn_linear_bwd(struct dlb_backend *, const struct dlb_linear_desc *,
                   const struct dlb_buffer *x, const struct dlb_buffer *w,
                   const struct dlb_buffer *dy, struct dlb_buffer *dx,
                   struct dlb_buffer *dw, struct dlb_buffer *db);
typedef dlb_status dlb_kfn_logsoftmax_fwd(struct dlb_backend *,
                                          const struct dlb_loss_desc *,
                                          const struct dlb_buffer *x,
                                          struct dlb_buffer *y);
typedef dlb_status dlb_kfn_nll_loss(struct dlb_backend *,
                                    const struct dlb_loss_desc *,
                                    const struct dlb_buffer *y,
                                    const struct dlb_buffer *labels,
                                    struct dlb_buffer *loss);
typedef dlb_status dlb_kfn_logsoftmax_nll_bwd(struct dlb_backend *,
                                              const struct dlb_loss_desc *,
                                              const struct dlb_buffer *y,
                                              const struct dlb_buffer *labels,
                                              float scale,
                                              struct dlb_buffer *dx);
typedef dlb_status dlb_kfn_sgd_update(struct dlb_backend *,
                                      const struct dlb_sgd_desc *,
                                      struct dlb_buffer *w,
                                      const struct dlb_buffer *g,
                                      struct dlb_buffer *v);
typedef dlb_status dlb_kfn_cast(struct dlb_backend *, size_t count,
                                const struct dlb_buffer *src,
                                struct dlb_buffer *dst);
typedef dlb_status dlb_kfn_scale(struct dlb_backend *, size_t count,
                                 struct dlb_buffer *buf, float alpha);
typedef dlb_status dlb_kfn_check_finite(struct dlb_backend *, size_t count,
                                        const struct dlb_buffer *buf,
                                        int *found_nonfinite);
typedef dlb_status dlb_kfn_fill(struct dlb_backend *, size_t count,
                                struct dlb_buffer *buf, double value);
typedef dlb_status dlb_kfn_quantize(struct dlb_backend *, size_t count,
                                    const struct dlb_buffer *src,
                                    struct dlb_buffer *dst, float scale,
                                    int32_t zero_point);
typedef dlb_kfn_quantize dlb_kfn_dequantize;
typedef dlb_status dlb_kfn_allreduce_sum(struct dlb_backend *, size_t count,
                                         struct dlb_buffer *buf);
typedef dlb_status
dlb_kfn_conv2d_int8_fwd(struct dlb_backend *, const struct dlb_conv2d_desc *,
                        const struct dlb_int8_desc *,
                        const struct dlb_buffer *x, const struct dlb_buffer *w,
                        const struct dlb_buffer *w_scale,
                        const struct dlb_buffer *b, struct dlb_buffer *y);
typedef dlb_status
dlb_kfn_linear_int8_fwd(struct dlb_backend *, const struct dlb_linear_desc *,
                        const struct dlb_int8_desc *,
                        const struct dlb_buffer *x, const struct dlb_buffer *w,
                        const struct dlb_buffer *w_scale,
                        const struct dlb_buffer *b, struct dlb_buffer *y);
typedef dlb_status dlb_kfn_pool_int8_fwd(struct dlb_backend *,
                                         const struct dlb_pool_desc *,
                                         const struct dlb_buffer *x,
                                         struct dlb_buffer *y);
typedef dlb_status dlb_kfn_csr_linear_fwd(
    struct dlb_backend *, const struct dlb_csr_linear_desc *,
    const struct dlb_buffer *x, const struct dlb_buffer *row_ptr,
    const struct dlb_buffer *col, const struct dlb_buffer *val,
    const struct dlb_buffer *b, struct dlb_buffer *y);
typedef dlb_status dlb_kfn_unscale_check(struct dlb_backend *, size_t count,
                                         struct dlb_buffer *buf,
                                         float inv_scale,
                                         struct dlb_buffer *found);
typedef dlb_status dlb_kfn_sgd_update_if_finite(struct dlb_backend *,
                                                const struct dlb_sgd_desc *,
                                                struct dlb_buffer *w,
                                                const struct dlb_buffer *g,
                                                struct dlb_buffer *v,
                                                const struct dlb_buffer *found);

/* Each function's kind, propagations and `applies` (NULL: every
 * operation of its kind), and its arguments from an operation `o`. */
#define DLB_KKIND_conv2d_fwd DLB_OP_CONV2D, DLB_PROPS_FWD, NULL
#define DLB_KCALL_conv2d_fwd(f, be, o) f(be, &o->conv, o->x, o->w, o->b, o->y)
#define DLB_KKIND_conv2d_bwd_data                                              \
    DLB_OP_CONV2D, DLB_PROPS(DLB_PROP_BWD_DATA), NULL
#define DLB_KCALL_conv2d_bwd_data(f, be, o) f(be, &o->conv, o->w, o->dy, o->dx)
#define DLB_KKIND_conv2d_bwd_weights                                           \
    DLB_OP_CONV2D, DLB_PROPS(DLB_PROP_BWD_WEIGHTS), NULL
#define DLB_KCALL_conv2d_bwd_weights(f, be, o)                                 \
    f(be, &o->conv, o->x, o->dy, o->dw, o->db)
#define DLB_KKIND_pool_fwd DLB_OP_POOL, DLB_PROPS_FWD, dlb_kernel_float_x
#define DLB_KCALL_pool_fwd(f, be, o) f(be, &o->pool, o->x, o->y, o->ws)
#define DLB_KKIND_pool_bwd DLB_OP_POOL, DLB_PROPS(DLB_PROP_BWD), NULL
#define DLB_KCALL_pool_bwd(f, be, o) f(be, &o->pool, o->dy, o->ws, o->dx)
#define DLB_KKIND_relu_fwd DLB_OP_RELU, DLB_PROPS_FWD, NULL
#define DLB_KCALL_relu_fwd(f, be, o) f(be, o->count, o->relu_max, o->x, o->y)
#define DLB_KKIND_relu_bwd DLB_OP_RELU, DLB_PROPS(DLB_PROP_BWD), NULL
#define DLB_KCALL_relu_bwd(f, be, o)                                           \
    f(be, o->count, o->relu_max, o->y, o->dy, o->dx)
#define DLB_KKIND_dropout_fwd DLB_OP_DROPOUT, DLB_PROPS_FWD, NULL
#define DLB_KCALL_dropout_fwd(f, be, o) f(be, &o->drop, o->x, o->y)
#define DLB_KKIND_dropout_bwd DLB_OP_DROPOUT, DLB_PROPS(DLB_PROP_BWD), NULL
#define DLB_KCALL_dropout_bwd(f, be, o) f(be, &o->drop, o->dy, o->dx)
#define DLB_KKIND_batchnorm_fwd_train                                          \
    DLB_OP_BATCHNORM, DLB_PROPS(DLB_PROP_FWD_TRAIN), NULL
#define DLB_KCALL_batchnorm_fwd_train(f, be, o)                                \
    f(be, &o->bn, o->x, o->w, o->b, o->mean, o->var, o->save_mean,             \
      o->save_invstd, o->y)
#define DLB_KKIND_batchnorm_fwd_infer                                          \
    DLB_OP_BATCHNORM, DLB_PROPS(DLB_PROP_FWD_INFER), NULL
#define DLB_KCALL_batchnorm_fwd_infer(f, be, o)                                \
    f(be, &o->bn, o->x, o->w, o->b, o->mean, o->var, o->y)
#define DLB_KKIND_batchnorm_bwd DLB_OP_BATCHNORM, DLB_PROPS(DLB_PROP_BWD), NULL
#define DLB_KCALL_batchnorm_bwd(f, be, o)                                      \
    f(be, &o->bn, o->x, o->dy, o->w, o->save_mean, o->save_invstd, o->dx,      \
      o->dw, o->db)
#define DLB_KKIND_batchnorm_relu_fwd_train                                     \
    DLB_OP_BATCHNORM_RELU, DLB_PROPS(DLB_PROP_FWD_TRAIN), NULL
#define DLB_KCALL_batchnorm_relu_fwd_train DLB_KCALL_batchnorm_fwd_train
#define DLB_KKIND_batchnorm_relu_bwd                                           \
    DLB_OP_BATCHNORM_RELU, DLB_PROPS(DLB_PROP_BWD), NULL
#define DLB_KCALL_batchnorm_relu_bwd(f, be, o)                                 \
    f(be, &o->bn, o->x, o->y, o->dy, o->w, o->b, o->save_mean, o->save_invstd, \
      o->dx, o->dw, o->db)
#define DLB_KKIND_linear_fwd DLB_OP_LINEAR, DLB_PROPS_FWD, NULL
#define DLB_KCALL_linear_fwd(f, be, o) f(be, &o->linear, o->x, o->w, o->b, o->y)
#define DLB_KKIND_linear_bwd DLB_OP_LINEAR, DLB_PROPS(DLB_PROP_BWD), NULL
#define DLB_KCALL_linear_bwd(f, be, o)                                         \
    f(be, &o->linear, o->x, o->w, o->dy, o->dx, o->dw, o->db)
#define DLB_KKIND_logsoftmax_fwd DLB_OP_LOGSOFTMAX, DLB_PROPS_FWD, NULL
#define DLB_KCALL_logsoftmax_fwd(f, be, o) f(be, &o->loss, o->x, o->y)
#define DLB_KKIND_nll_loss DLB_OP_NLL_LOSS, DLB_PROPS_FWD, NULL
#define DLB_KCALL_nll_loss(f, be, o) f(be, &o->loss, o->x, o->labels, o->y)
#define DLB_KKIND_logsoftmax_nll_bwd                                           \
    DLB_OP_LOGSOFTMAX_NLL, DLB_PROPS(DLB_PROP_BWD), NULL
#define DLB_KCALL_logsoftmax_nll_bwd(f, be, o)                                 \
    f(be, &o->loss, o->x, o->labels, o->alpha, o->dx)
#define DLB_KKIND_sgd_update DLB_OP_SGD, DLB_PROPS(DLB_PROP_NONE), NULL
#define DLB_KCALL_sgd_update(f, be, o) f(be, &o->sgd, o->param, o->g, o->v)
#define DLB_KKIND_cast DLB_OP_CAST, DLB_PROPS(DLB_PROP_NONE), NULL
#define DLB_KCALL_cast(f, be, o) f(be, o->count, o->x, o->y)
#define DLB_KKIND_scale DLB_OP_SCALE, DLB_PROPS(DLB_PROP_NONE), NULL
#define DLB_KCALL_scale(f, be, o) f(be, o->count, o->y, o->alpha)
#define DLB_KKIND_check_finite                                                 \
    DLB_OP_CHECK_FINITE, DLB_PROPS(DLB_PROP_NONE), NULL
#define DLB_KCALL_check_finite(f, be, o) f(be, o->count, o->x, o->nonfinite)
#define DLB_KKIND_fill DLB_OP_FILL, DLB_PROPS(DLB_PROP_NONE), NULL
#define DLB_KCALL_fill(f, be, o) f(be, o->count, o->y, o->value)
#define DLB_KKIND_quantize DLB_OP_QUANTIZE, DLB_PROPS(DLB_PROP_NONE), NULL
#define DLB_KCALL_quantize(f, be, o)                                           \
    f(be, o->count, o->x, o->y, o->alpha, o->zero_point)
#define DLB_KKIND_dequantize DLB_OP_DEQUANTIZE, DLB_PROPS(DLB_PROP_NONE), NULL
#define DLB_KCALL_dequantize DLB_KCALL_quantize
#define DLB_KKIND_allreduce_sum                                                \
    DLB_OP_ALLREDUCE_SUM, DLB_PROPS(DLB_PROP_NONE), NULL
#define DLB_KCALL_allreduce_sum(f, be, o) f(be, o->count, o->y)
#define DLB_KKIND_conv2d_int8_fwd DLB_OP_CONV2D_INT8, DLB_PROPS_FWD, NULL
#define DLB_KCALL_conv2d_int8_fwd(f, be, o)                                    \
    f(be, &o->conv, &o->q, o->x, o->w, o->w_scale, o->b, o->y)
#define DLB_KKIND_linear_int8_fwd DLB_OP_LINEAR_INT8, DLB_PROPS_FWD, NULL
#define DLB_KCALL_linear_int8_fwd(f, be, o)                                    \
    f(be, &o->linear, &o->q, o->x, o->w, o->w_scale, o->b, o->y)
/* int8 max pooling is POOL on S8 or U8 data: dlb_kernel_int8_x applies */
#define DLB_KKIND_pool_int8_fwd DLB_OP_POOL, DLB_PROPS_FWD, dlb_kernel_int8_x
#define DLB_KCALL_pool_int8_fwd(f, be, o) f(be, &o->pool, o->x, o->y)
#define DLB_KKIND_csr_linear_fwd DLB_OP_LINEAR_CSR, DLB_PROPS_FWD, NULL
#define DLB_KCALL_csr_linear_fwd(f, be, o)                                     \
    f(be, &o->csr, o->x, o->row_ptr, o->col, o->val, o->b, o->y)
#define DLB_KKIND_unscale_check                                                \
    DLB_OP_UNSCALE_CHECK, DLB_PROPS(DLB_PROP_NONE), NULL
#define DLB_KCALL_unscale_check(f, be, o)                                      \
    f(be, o->count, o->y, o->alpha, o->found)
#define DLB_KKIND_sgd_update_if_finite                                         \
    DLB_OP_SGD_IF_FINITE, DLB_PROPS(DLB_PROP_NONE), NULL
#define DLB_KCALL_sgd_update_if_finite(f, be, o)                               \
    f(be, &o->sgd, o->param, o->g, o->v, o->found)

/* X for a backend's header: declare dlb_<be>_<name>. */
#define DLB_KFN_DECLARE(be, name) extern dlb_kfn_##name dlb_##be##_##name;

/* X before a backend's kernel list: the run functions,
 * dlb_<be>_<name>_run, unpacking an operation into dlb_<be>_<name>. */
#define DLB_KFN_RUN(be, name)                                                  \
    static dlb_status dlb_##be##_##name##_run(struct dlb_backend *b_,          \
                                              const struct dlb_op *o_)         \
    {                                                                          \
        return DLB_KCALL_##name(dlb_##be##_##name, b_, o_);                    \
    }

/* X in a backend's kernel list: the kernel of dlb_<be>_<name>, named
 * after the backend. */
#define DLB_KFN_KERNEL(be, name)                                               \
    {#be, DLB_KKIND_##name, dlb_##be##_##name##_run},

/* An `applies` for the int8 pooling kernels: x is S8 or U8; inline, since
 * a backend module links nothing of the core. */
static inline int dlb_kernel_int8_x(struct dlb_backend *be,
                                    const struct dlb_op *op)
{
    (void)be;
    return op->x && (op->x->dtype == DLB_S8 || op->x->dtype == DLB_U8);
}
/* ... and for the float ones: x is not. */
static inline int dlb_kernel_float_x(struct dlb_backend *be,
                                     const struct dlb_op *op)
{
    return !dlb_kernel_int8_x(be, op);
}

#endif
