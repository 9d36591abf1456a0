/* SGD, casts, scaling, the inf/NaN check, fill, int8 (de)quantisation and
 * the all-reduce of one replica: checks, then the module's own kernels. */
#include "cuda.h"
#include "cuda_kernels.h"
#include "../dtype.h"

#include <string.h>

static dlb_status launched(struct dlb_backend *be, cudaError_t e,
                           const char *op)
{
    return dlb_cuda_check(be, e, op, "kernel launch");
}

dlb_status dlb_cuda_sgd_update(struct dlb_backend *be,
                               const struct dlb_sgd_desc *d,
                               struct dlb_buffer *w, const struct dlb_buffer *g,
                               struct dlb_buffer *v)
{
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, "sgd_update", "w", w, d->count)) ||
        (s = dlb_cuda_check_float(be, "sgd_update", "g", g, d->count)) ||
        (s = dlb_cuda_check_float(be, "sgd_update", "v", v, d->count)))
        return s;
    return launched(be, dlb_cuda_k_sgd(dlb_cuda_of(be)->stream, d->count,
                                       w->data, (int)w->dtype, g->data,
                                       (int)g->dtype, v->data, (int)v->dtype,
                                       d->lr, d->momentum, d->weight_decay),
                    "sgd_update");
}

dlb_status dlb_cuda_cast(struct dlb_backend *be, size_t count,
                         const struct dlb_buffer *src, struct dlb_buffer *dst)
{
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, "cast", "src", src, count)) ||
        (s = dlb_cuda_check_float(be, "cast", "dst", dst, count)))
        return s;
    return launched(be, dlb_cuda_k_cast(dlb_cuda_of(be)->stream, count,
                                        src->data, (int)src->dtype, dst->data,
                                        (int)dst->dtype),
                    "cast");
}

dlb_status dlb_cuda_scale(struct dlb_backend *be, size_t count,
                          struct dlb_buffer *buf, float alpha)
{
    dlb_status s = dlb_cuda_check_float(be, "scale", "buf", buf, count);
    if (s)
        return s;
    return launched(be, dlb_cuda_k_scale(dlb_cuda_of(be)->stream, count,
                                         buf->data, (int)buf->dtype, alpha),
                    "scale");
}

dlb_status dlb_cuda_add(struct dlb_backend *be, const struct dlb_op *op)
{
    dlb_status s = dlb_cuda_check_float(be, "add", "y", op->y, op->count);
    if (s)
        return s;
    return launched(be, dlb_cuda_k_add(dlb_cuda_of(be)->stream, op->count,
                                       op->x->data, op->g->data, op->y->data,
                                       (int)op->y->dtype),
                    "add");
}

/* CONCAT: one strided copy on the stream, each image's c * hw elements
 * between a dense run and a row of c_total * hw (input and output are of
 * one type: a byte copy). */
dlb_status dlb_cuda_concat(struct dlb_backend *be, const struct dlb_op *op)
{
    const struct dlb_concat_desc *d = &op->concat;
    int bwd = op->prop == DLB_PROP_BWD;
    const struct dlb_buffer *src = bwd ? op->dy : op->x;
    struct dlb_buffer *dst = bwd ? op->dx : op->y;
    size_t part = (size_t)d->n * d->c * d->hw;
    size_t all = (size_t)d->n * d->c_total * d->hw;
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, "concat", bwd ? "dy" : "x", src,
                                  bwd ? all : part)) ||
        (s = dlb_cuda_check_float(be, "concat", bwd ? "dx" : "y", dst,
                                  bwd ? part : all)))
        return s;
    size_t esz = dlb_dtype_size(src->dtype);
    size_t row = (size_t)d->c * d->hw * esz;
    size_t pitch = (size_t)d->c_total * d->hw * esz;
    size_t at = (size_t)d->offset * d->hw * esz;
    if (!d->n || !row)
        return DLB_OK;
    const char *from = (const char *)src->data + (bwd ? at : 0);
    char *to = (char *)dst->data + (bwd ? 0 : at);
    return dlb_cuda_check(be, cudaMemcpy2DAsync(to, bwd ? row : pitch, from,
                                                bwd ? pitch : row, row, d->n,
                                                cudaMemcpyDeviceToDevice,
                                                dlb_cuda_of(be)->stream),
                          "concat", "strided copy");
}

/* The host needs the answer (backend.h), so this is one of the three
 * places that wait for the stream. */
dlb_status dlb_cuda_check_finite(struct dlb_backend *be, size_t count,
                                 const struct dlb_buffer *buf, int *found)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    *found = 0;
    if ((s = dlb_cuda_check_float(be, "check_finite", "buf", buf, count)) ||
        (s = dlb_cuda_check(be, cudaMemsetAsync(cu->flag_dev, 0, sizeof(int),
                                                cu->stream),
                            "check_finite", "clearing the flag")) ||
        (s = launched(be, dlb_cuda_k_nonfinite(cu->stream, count, buf->data,
                                               (int)buf->dtype, cu->flag_dev),
                      "check_finite")) ||
        (s = dlb_cuda_check(be, cudaMemcpyAsync(cu->flag_host, cu->flag_dev,
                                                sizeof(int),
                                                cudaMemcpyDeviceToHost,
                                                cu->stream),
                            "check_finite", "reading the flag")) ||
        (s = dlb_cuda_wait(be, "check_finite")))
        return s;
    *found = *cu->flag_host != 0;
    return DLB_OK;
}

/* Out-of-range double to integer conversion is undefined: saturate, NaN
 * to 0, as ref stores it. */
static double clampd(double v, double lo, double hi)
{
    return v != v ? 0.0 : v < lo ? lo : v > hi ? hi : v;
}

/* The element's bits, rounded to the buffer's type as ref rounds them. */
static uint64_t fill_pattern(enum dlb_dtype t, double value)
{
    float f = (float)value;
    uint32_t u32;
    uint64_t u64;
    int32_t i32;
    switch (t) {
    case DLB_F32: memcpy(&u32, &f, 4); return u32;
    case DLB_F64: memcpy(&u64, &value, 8); return u64;
    case DLB_F16: return dlb_f32_to_f16(f);
    case DLB_BF16: return dlb_f32_to_bf16(f);
    case DLB_S32:
        i32 = (int32_t)clampd(value, INT32_MIN, INT32_MAX);
        memcpy(&u32, &i32, 4);
        return u32;
    case DLB_S8: return (uint8_t)(int8_t)clampd(value, -128, 127);
    case DLB_U8: return (uint8_t)clampd(value, 0, 255);
    }
    return 0;
}

dlb_status dlb_cuda_fill(struct dlb_backend *be, size_t count,
                         struct dlb_buffer *buf, double value)
{
    if (!buf || buf->count < count)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda fill: buffer has "
                             "fewer than %zu elements", count);
    return launched(be, dlb_cuda_k_fill(dlb_cuda_of(be)->stream, count,
                                        buf->data, dlb_dtype_size(buf->dtype),
                                        fill_pattern(buf->dtype, value)),
                    "fill");
}

static dlb_status check_int8(struct dlb_backend *be, const char *op,
                             const struct dlb_buffer *b, size_t count)
{
    if (!b || (b->dtype != DLB_S8 && b->dtype != DLB_U8) || b->count < count)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: the int8 side "
                             "must be s8 or u8 with %zu elements", op, count);
    return DLB_OK;
}

dlb_status dlb_cuda_quantize(struct dlb_backend *be, size_t count,
                             const struct dlb_buffer *src,
                             struct dlb_buffer *dst, float scale,
                             int32_t zero_point)
{
    dlb_status s;
    if ((s = check_int8(be, "quantize", dst, count)) ||
        (s = dlb_cuda_check_float(be, "quantize", "src", src, count)))
        return s;
    return launched(be, dlb_cuda_k_quantize(dlb_cuda_of(be)->stream, count,
                                            src->data, (int)src->dtype,
                                            dst->data, dst->dtype == DLB_U8,
                                            scale, zero_point),
                    "quantize");
}

dlb_status dlb_cuda_dequantize(struct dlb_backend *be, size_t count,
                               const struct dlb_buffer *src,
                               struct dlb_buffer *dst, float scale,
                               int32_t zero_point)
{
    dlb_status s;
    if ((s = check_int8(be, "dequantize", src, count)) ||
        (s = dlb_cuda_check_float(be, "dequantize", "dst", dst, count)))
        return s;
    return launched(be, dlb_cuda_k_dequantize(dlb_cuda_of(be)->stream, count,
                                              src->data, src->dtype == DLB_U8,
                                              dst->data, (int)dst->dtype, scale,
                                              zero_point),
                    "dequantize");
}

/* The backend drives one GPU in one process: the sum over its one
 * replica is the buffer itself. Data parallelism over several GPUs needs
 * NCCL communicators across processes, which the dp and mp plugins'
 * engine nccl own (doc/architecture.md says why they are not here). */
dlb_status dlb_cuda_allreduce_sum(struct dlb_backend *be, size_t count,
                                  struct dlb_buffer *buf)
{
    return dlb_cuda_check_float(be, "allreduce_sum", "buf", buf, count);
}
