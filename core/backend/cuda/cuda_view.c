/* Operand checks and type views: what lets one cuDNN or cuBLASLt call in
 * one compute type serve buffers of mixed types. */
#include "cuda.h"
#include "cuda_kernels.h"
#include "../dtype.h"

#include <limits.h>

static int is_gpu_float(enum dlb_dtype t)
{
    return t == DLB_F32 || t == DLB_F16 || t == DLB_BF16;
}

dlb_status dlb_cuda_check_float(struct dlb_backend *be, const char *op,
                                const char *arg, const struct dlb_buffer *b,
                                size_t count)
{
    if (!b)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: %s is NULL", op,
                             arg);
    if (!is_gpu_float(b->dtype))
        return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda %s: %s is %s; the "
                             "cuda backend computes in f32, f16 or bf16", op,
                             arg, dlb_dtype_name(b->dtype));
    if (b->count < count)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: %s holds %zu "
                             "elements, needs %zu", op, arg, b->count, count);
    return DLB_OK;
}

dlb_status dlb_cuda_check_s32(struct dlb_backend *be, const char *op,
                              const char *arg, const struct dlb_buffer *b,
                              size_t count)
{
    if (!b || b->dtype != DLB_S32 || b->count < count)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: %s must be an s32 "
                             "buffer of %zu elements", op, arg, count);
    return DLB_OK;
}

dlb_status dlb_cuda_check_int(struct dlb_backend *be, const char *op,
                              size_t count)
{
    if (count > (size_t)INT_MAX)
        return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda %s: %zu elements "
                             "exceed what cuDNN and cuBLASLt index (2^31 - 1)",
                             op, count);
    return DLB_OK;
}

dlb_status dlb_cuda_common_type(struct dlb_backend *be, const char *op,
                                const enum dlb_dtype *types, size_t n,
                                enum dlb_dtype *out)
{
    int bf = 0, h = 0;
    for (size_t i = 0; i < n; i++) {
        bf |= types[i] == DLB_BF16;
        h |= types[i] == DLB_F16;
    }
    if (bf && h)
        return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda %s: f16 and bf16 "
                             "operands in one operation", op);
    *out = bf ? DLB_BF16 : h ? DLB_F16 : DLB_F32;
    return DLB_OK;
}

dlb_status dlb_cuda_view_in(struct dlb_backend *be, const struct dlb_buffer *b,
                            size_t count, enum dlb_dtype type, int slot,
                            struct dlb_cuda_view *v)
{
    dlb_status s;
    v->out = NULL;
    v->count = count;
    v->type = type;
    if (b->dtype == type) {
        v->p = b->data;
        return DLB_OK;
    }
    if ((s = dlb_cuda_scratch(be, slot, count * dlb_dtype_size(type), &v->p)))
        return s;
    return dlb_cuda_check(be, dlb_cuda_k_cast(dlb_cuda_of(be)->stream, count,
                                              b->data, (int)b->dtype, v->p,
                                              (int)type),
                          "cast", "to the compute type");
}

dlb_status dlb_cuda_view_out(struct dlb_backend *be, struct dlb_buffer *b,
                             size_t count, enum dlb_dtype type, int slot,
                             struct dlb_cuda_view *v)
{
    v->out = NULL;
    v->count = count;
    v->type = type;
    if (b->dtype == type) {
        v->p = b->data;
        return DLB_OK;
    }
    v->out = b;
    return dlb_cuda_scratch(be, slot, count * dlb_dtype_size(type), &v->p);
}

dlb_status dlb_cuda_view_done(struct dlb_backend *be, struct dlb_cuda_view *v)
{
    if (!v->out)
        return DLB_OK;
    return dlb_cuda_check(be, dlb_cuda_k_cast(dlb_cuda_of(be)->stream, v->count,
                                              v->p, (int)v->type, v->out->data,
                                              (int)v->out->dtype),
                          "cast", "from the compute type");
}
