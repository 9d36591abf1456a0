/* Convolution through cuDNN: descriptors created once per shape (groups:
 * cuDNN's group count, the filter holding in_c / groups input channels)
 * and compute type, an algorithm per direction chosen on first use
 * (cuda_algo.c), operands of another type cast through scratch views, and
 * the bias added and reduced by the module's own kernels (any bias type,
 * no staging for it). */
#include "cuda.h"
#include "cuda_kernels.h"

#include <stdlib.h>
#include <string.h>

struct dlb_cuda_conv {
    struct dlb_conv2d_desc d;
    enum dlb_dtype t;
    struct dlb_cuda_conv_descs dd;
    int chosen[3];
    struct dlb_cuda_algo algo[3];
    struct dlb_cuda_conv *next;
};

cudnnDataType_t dlb_cuda_dnn_type(enum dlb_dtype t)
{
    return t == DLB_F16 ? CUDNN_DATA_HALF
         : t == DLB_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

static void destroy_descs(struct dlb_cuda_conv_descs *dd)
{
    if (dd->x) cudnnDestroyTensorDescriptor(dd->x);
    if (dd->y) cudnnDestroyTensorDescriptor(dd->y);
    if (dd->w) cudnnDestroyFilterDescriptor(dd->w);
    for (int i = 0; i < 3; i++)
        if (dd->conv[i])
            cudnnDestroyConvolutionDescriptor(dd->conv[i]);
}

void dlb_cuda_conv_cache_free(struct dlb_cuda *cu)
{
    for (struct dlb_cuda_conv *c = cu->convs, *next; c; c = next) {
        next = c->next;
        destroy_descs(&c->dd);
        free(c);
    }
    cu->convs = NULL;
}

/* Tensor-core math for 16-bit types; for f32, FMA only unless TF32 was
 * allowed. A chosen algorithm may change it per direction (cuda_algo.c). */
static cudnnMathType_t initial_math(const struct dlb_cuda *cu, enum dlb_dtype t)
{
    if (t != DLB_F32)
        return CUDNN_TENSOR_OP_MATH;
    return cu->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

static cudnnStatus_t make_descs(struct dlb_cuda *cu,
                                const struct dlb_conv2d_desc *d,
                                enum dlb_dtype t, struct dlb_cuda_conv_descs *dd)
{
    cudnnDataType_t dt = dlb_cuda_dnn_type(t);
    cudnnStatus_t st;
    if ((st = cudnnCreateTensorDescriptor(&dd->x)) ||
        (st = cudnnCreateTensorDescriptor(&dd->y)) ||
        (st = cudnnCreateFilterDescriptor(&dd->w)) ||
        (st = cudnnSetTensor4dDescriptor(dd->x, CUDNN_TENSOR_NCHW, dt, (int)d->n,
                                         (int)d->in_c, (int)d->in_h,
                                         (int)d->in_w)) ||
        (st = cudnnSetTensor4dDescriptor(dd->y, CUDNN_TENSOR_NCHW, dt, (int)d->n,
                                         (int)d->out_c, (int)d->out_h,
                                         (int)d->out_w)) ||
        (st = cudnnSetFilter4dDescriptor(dd->w, dt, CUDNN_TENSOR_NCHW,
                                         (int)d->out_c,
                                         (int)(d->in_c / dlb_conv2d_groups(d)),
                                         (int)d->kh, (int)d->kw)))
        return st;
    for (int i = 0; i < 3; i++) {
        /* Accumulate in f32 for every storage type (cuDNN's "pseudo"
         * half and bf16 configurations), as frameworks do. */
        if ((st = cudnnCreateConvolutionDescriptor(&dd->conv[i])) ||
            (st = cudnnSetConvolution2dDescriptor(
                 dd->conv[i], (int)d->pad_h, (int)d->pad_w, (int)d->stride_h,
                 (int)d->stride_w, 1, 1, CUDNN_CROSS_CORRELATION,
                 CUDNN_DATA_FLOAT)) ||
            (st = cudnnSetConvolutionMathType(dd->conv[i],
                                              initial_math(cu, t))) ||
            (st = cudnnSetConvolutionGroupCount(dd->conv[i],
                                                (int)dlb_conv2d_groups(d))))
            return st;
    }
    return CUDNN_STATUS_SUCCESS;
}

static dlb_status get_conv(struct dlb_backend *be, const char *op,
                           const struct dlb_conv2d_desc *d, enum dlb_dtype t,
                           struct dlb_cuda_conv **out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    for (struct dlb_cuda_conv *c = cu->convs; c; c = c->next)
        if (c->t == t && !memcmp(&c->d, d, sizeof *d)) {
            *out = c;
            return DLB_OK;
        }
    struct dlb_cuda_conv *c = calloc(1, sizeof *c);
    if (!c)
        return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda %s: out of host memory",
                             op);
    c->d = *d;
    c->t = t;
    if ((s = dlb_cuda_dnn_check(be, make_descs(cu, d, t, &c->dd), op,
                                "descriptors"))) {
        destroy_descs(&c->dd);
        free(c);
        return s;
    }
    c->next = cu->convs;
    cu->convs = c;
    *out = c;
    return DLB_OK;
}

/* The checks every direction makes: shape, sizes within int, and the
 * buffers' types and sizes. */
static dlb_status check_shape(struct dlb_backend *be, const char *op,
                              const struct dlb_conv2d_desc *d)
{
    dlb_status s;
    if ((s = dlb_cuda_core->conv2d_desc_check(be, op, d)) ||
        (s = dlb_cuda_check_int(be, op, dlb_conv2d_x_count(d))) ||
        (s = dlb_cuda_check_int(be, op, dlb_conv2d_y_count(d))) ||
        (s = dlb_cuda_check_int(be, op, dlb_conv2d_w_count(d))))
        return s;
    return DLB_OK;
}

/* Choose the direction's algorithm once, then get its workspace. */
static dlb_status prepare(struct dlb_backend *be, struct dlb_cuda_conv *c,
                          enum dlb_cuda_conv_dir dir, const void *a,
                          const void *b, void *out, void **ws)
{
    dlb_status s;
    if (!c->chosen[dir]) {
        if ((s = dlb_cuda_algo_choose(be, &c->d, c->t, &c->dd, dir, a, b, out,
                                      &c->algo[dir])))
            return s;
        c->chosen[dir] = 1;
    }
    dlb_backend_note_fewer_flops(be, dlb_cuda_algo_fewer_flops(dir, c->algo[dir].algo));
    return dlb_cuda_dnn_workspace(be, c->algo[dir].ws_bytes, ws);
}

dlb_status dlb_cuda_conv2d_fwd(struct dlb_backend *be,
                               const struct dlb_conv2d_desc *d,
                               const struct dlb_buffer *x,
                               const struct dlb_buffer *w,
                               const struct dlb_buffer *b, struct dlb_buffer *y)
{
    const char *op = "conv2d_fwd";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct dlb_cuda_view vx, vy;
    struct dlb_cuda_conv *c = NULL;
    const float one = 1.0f, zero = 0.0f;
    void *ws = NULL;
    dlb_status s;
    if ((s = check_shape(be, op, d)) ||
        (s = dlb_cuda_check_float(be, op, "x", x, dlb_conv2d_x_count(d))) ||
        (s = dlb_cuda_check_float(be, op, "w", w, dlb_conv2d_w_count(d))) ||
        (s = dlb_cuda_check_float(be, op, "y", y, dlb_conv2d_y_count(d))) ||
        (b && (s = dlb_cuda_check_float(be, op, "b", b, d->out_c))))
        return s;
    enum dlb_dtype t = w->dtype; /* backend.h: fwd computes in w's type */
    if ((s = get_conv(be, op, d, t, &c)) ||
        (s = dlb_cuda_view_in(be, x, dlb_conv2d_x_count(d), t, 0, &vx)) ||
        (s = dlb_cuda_view_out(be, y, dlb_conv2d_y_count(d), t, 1, &vy)) ||
        (s = prepare(be, c, DLB_CUDA_FWD, vx.p, w->data, vy.p, &ws)) ||
        (s = dlb_cuda_dnn_check(be, cudnnConvolutionForward(
                 cu->dnn, &one, c->dd.x, vx.p, c->dd.w, w->data,
                 c->dd.conv[DLB_CUDA_FWD],
                 (cudnnConvolutionFwdAlgo_t)c->algo[DLB_CUDA_FWD].algo, ws,
                 c->algo[DLB_CUDA_FWD].ws_bytes, &zero, c->dd.y, vy.p),
                                op, "cudnnConvolutionForward")) ||
        (s = dlb_cuda_view_done(be, &vy)))
        return s;
    if (!b)
        return DLB_OK;
    return dlb_cuda_check(be, dlb_cuda_k_add_bias(cu->stream, d->n, d->out_c,
                                                  (size_t)d->out_h * d->out_w,
                                                  y->data, (int)y->dtype,
                                                  b->data, (int)b->dtype),
                          op, "bias");
}

dlb_status dlb_cuda_conv2d_bwd_data(struct dlb_backend *be,
                                    const struct dlb_conv2d_desc *d,
                                    const struct dlb_buffer *w,
                                    const struct dlb_buffer *dy,
                                    struct dlb_buffer *dx)
{
    const char *op = "conv2d_bwd_data";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct dlb_cuda_view vdy, vdx;
    struct dlb_cuda_conv *c = NULL;
    const float one = 1.0f, zero = 0.0f;
    void *ws = NULL;
    dlb_status s;
    if ((s = check_shape(be, op, d)) ||
        (s = dlb_cuda_check_float(be, op, "w", w, dlb_conv2d_w_count(d))) ||
        (s = dlb_cuda_check_float(be, op, "dy", dy, dlb_conv2d_y_count(d))) ||
        (s = dlb_cuda_check_float(be, op, "dx", dx, dlb_conv2d_x_count(d))))
        return s;
    enum dlb_dtype t = w->dtype;
    if ((s = get_conv(be, op, d, t, &c)) ||
        (s = dlb_cuda_view_in(be, dy, dlb_conv2d_y_count(d), t, 0, &vdy)) ||
        (s = dlb_cuda_view_out(be, dx, dlb_conv2d_x_count(d), t, 1, &vdx)) ||
        (s = prepare(be, c, DLB_CUDA_BWD_DATA, w->data, vdy.p, vdx.p, &ws)) ||
        (s = dlb_cuda_dnn_check(be, cudnnConvolutionBackwardData(
                 cu->dnn, &one, c->dd.w, w->data, c->dd.y, vdy.p,
                 c->dd.conv[DLB_CUDA_BWD_DATA],
                 (cudnnConvolutionBwdDataAlgo_t)c->algo[DLB_CUDA_BWD_DATA].algo,
                 ws, c->algo[DLB_CUDA_BWD_DATA].ws_bytes, &zero, c->dd.x,
                 vdx.p),
                                op, "cudnnConvolutionBackwardData")))
        return s;
    return dlb_cuda_view_done(be, &vdx);
}

dlb_status dlb_cuda_conv2d_bwd_weights(struct dlb_backend *be,
                                       const struct dlb_conv2d_desc *d,
                                       const struct dlb_buffer *x,
                                       const struct dlb_buffer *dy,
                                       struct dlb_buffer *dw,
                                       struct dlb_buffer *db)
{
    const char *op = "conv2d_bwd_weights";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct dlb_cuda_view vx, vdy, vdw;
    struct dlb_cuda_conv *c = NULL;
    const float one = 1.0f, zero = 0.0f;
    void *ws = NULL;
    enum dlb_dtype t;
    dlb_status s;
    if ((s = check_shape(be, op, d)) ||
        (s = dlb_cuda_check_float(be, op, "x", x, dlb_conv2d_x_count(d))) ||
        (s = dlb_cuda_check_float(be, op, "dy", dy, dlb_conv2d_y_count(d))) ||
        (s = dlb_cuda_check_float(be, op, "dw", dw, dlb_conv2d_w_count(d))) ||
        (db && (s = dlb_cuda_check_float(be, op, "db", db, d->out_c))))
        return s;
    enum dlb_dtype types[3] = { x->dtype, dy->dtype, dw->dtype };
    if ((s = dlb_cuda_common_type(be, op, types, 3, &t)) ||
        (s = get_conv(be, op, d, t, &c)) ||
        (s = dlb_cuda_view_in(be, x, dlb_conv2d_x_count(d), t, 0, &vx)) ||
        (s = dlb_cuda_view_in(be, dy, dlb_conv2d_y_count(d), t, 1, &vdy)) ||
        (s = dlb_cuda_view_out(be, dw, dlb_conv2d_w_count(d), t, 2, &vdw)) ||
        (s = prepare(be, c, DLB_CUDA_BWD_FILTER, vx.p, vdy.p, vdw.p, &ws)) ||
        (s = dlb_cuda_dnn_check(be, cudnnConvolutionBackwardFilter(
                 cu->dnn, &one, c->dd.x, vx.p, c->dd.y, vdy.p,
                 c->dd.conv[DLB_CUDA_BWD_FILTER],
                 (cudnnConvolutionBwdFilterAlgo_t)c->algo[DLB_CUDA_BWD_FILTER].algo,
                 ws, c->algo[DLB_CUDA_BWD_FILTER].ws_bytes, &zero, c->dd.w,
                 vdw.p),
                                op, "cudnnConvolutionBackwardFilter")) ||
        (s = dlb_cuda_view_done(be, &vdw)))
        return s;
    if (!db)
        return DLB_OK;
    /* from dy as given: the bias gradient keeps dy's own precision */
    return dlb_cuda_check(be, dlb_cuda_k_channel_sum(cu->stream, d->n, d->out_c,
                                                     (size_t)d->out_h * d->out_w,
                                                     dy->data, (int)dy->dtype,
                                                     db->data, (int)db->dtype),
                          op, "bias gradient");
}
