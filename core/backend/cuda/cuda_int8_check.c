/* The argument checks of the cuda backend's int8 convolution and linear
 * layer: the core's dlb_int8_check (int8.c), restated with the module's
 * failure reasons, since a module links nothing of the core. */
#include "cuda_int8.h"

#include <math.h>

#include "../dtype.h"

static int is_int8(enum dlb_dtype t)
{
    return t == DLB_S8 || t == DLB_U8;
}

static int zp_ok(enum dlb_dtype t, int32_t zp)
{
    return t == DLB_U8 ? zp >= 0 && zp <= 255 : zp == 0;
}

static dlb_status bad(struct dlb_backend *be, const char *op, const char *what)
{
    return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: %s", op, what);
}

static dlb_status sized(struct dlb_backend *be, const char *op,
                        const char *arg, const struct dlb_buffer *b,
                        size_t count)
{
    if (b->count < count)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: %s holds %zu "
                             "elements, needs %zu", op, arg, b->count, count);
    return DLB_OK;
}

dlb_status dlb_cuda_int8_check(struct dlb_backend *be, const char *op,
                               const struct dlb_int8_desc *q,
                               const struct dlb_int8_args *a)
{
    dlb_status s;
    if (!q || !a->x || !a->w || !a->w_scale || !a->y)
        return bad(be, op, "the descriptor, x, w, w_scale and y are required");
    if (a->x->dtype == DLB_F16 || a->x->dtype == DLB_BF16)
        return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda %s: x is %s; an "
                             "int8 layer quantises f32 inputs only", op,
                             dlb_dtype_name(a->x->dtype));
    if (!is_int8(q->x_type) ||
        (a->x->dtype != q->x_type && a->x->dtype != DLB_F32))
        return bad(be, op, "x_type must be s8 or u8, and x of that type or "
                   "f32");
    if (a->w->dtype != DLB_S8)
        return bad(be, op, "w must be s8");
    if (a->w_scale->dtype != DLB_F32 ||
        (a->w_scale->count != 1 && a->w_scale->count != a->out_c))
        return bad(be, op, "w_scale must be f32 with 1 or out_c elements");
    if (a->b && (a->b->dtype != DLB_S32 || a->b->count < a->out_c))
        return bad(be, op, "b must be s32 with out_c elements");
    if (a->y->dtype != DLB_F32 && !is_int8(a->y->dtype))
        return bad(be, op, "y must be f32, s8 or u8");
    if (!(q->x_scale > 0.0f) || !isfinite(q->x_scale) ||
        !zp_ok(q->x_type, q->x_zero_point))
        return bad(be, op, "x needs a finite scale > 0 and a zero point in "
                   "its type's range (0 for s8)");
    if (is_int8(a->y->dtype) &&
        (!(q->y_scale > 0.0f) || !isfinite(q->y_scale) ||
         !zp_ok(a->y->dtype, q->y_zero_point)))
        return bad(be, op, "an int8 y needs a finite scale > 0 and a zero "
                   "point in its type's range (0 for s8)");
    if ((s = sized(be, op, "x", a->x, a->x_count)) ||
        (s = sized(be, op, "w", a->w, a->w_count)) ||
        (s = sized(be, op, "y", a->y, a->y_count)))
        return s;
    return DLB_OK;
}
