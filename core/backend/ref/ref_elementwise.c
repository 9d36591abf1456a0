/* Element-wise utilities: casts, scaling, the add, the channel
 * concatenation's copies, the inf/NaN check, fill, and per-tensor affine
 * int8 quantisation. */
#include "ref.h"
#include "../dtype.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

dlb_status dlb_ref_cast(struct dlb_backend *be, size_t count,
                        const struct dlb_buffer *src, struct dlb_buffer *dst)
{
    double *t[2] = { 0 };
    dlb_status s;
    /* F32 <-> F16/BF16 must round once from the exact source value; going
     * through double is exact for every float source, and the store rounds
     * double -> f32 -> 16 bits, where the first step is exact when the
     * source was at most f32-precise. */
    if (!(s = dlb_ref_get(be, "cast", "src", src, count, &t[0])) &&
        !(s = dlb_ref_new(be, "cast", "dst", dst, count, &t[1])))
        dlb_ref_put(dst, t[0], count);
    dlb_ref_free_all(t, 2);
    return s;
}

dlb_status dlb_ref_scale(struct dlb_backend *be, size_t count,
                         struct dlb_buffer *buf, float alpha)
{
    double *t = NULL;
    dlb_status s = dlb_ref_get(be, "scale", "buf", buf, count, &t);
    if (!s) {
        for (size_t i = 0; i < count; i++)
            t[i] *= (double)alpha;
        dlb_ref_put(buf, t, count);
    }
    free(t);
    return s;
}

/* ADD: in double, exact for two F32 or F16/BF16 addends; storing rounds
 * once to F32 and then, for the 16-bit types, to the buffer's type, which
 * is what a float sum rounded to the type gives. */
dlb_status dlb_ref_add(struct dlb_backend *be, const struct dlb_op *op)
{
    double *t[2] = { 0 };
    dlb_status s;
    if (!(s = dlb_ref_get(be, "add", "x", op->x, op->count, &t[0])) &&
        !(s = dlb_ref_get(be, "add", "g", op->g, op->count, &t[1]))) {
        for (size_t i = 0; i < op->count; i++)
            t[0][i] += t[1][i];
        dlb_ref_put(op->y, t[0], op->count);
        /* ADD_RELU: the ReLU of the sum as its type holds it */
        if (op->kind == DLB_OP_ADD_RELU)
            s = dlb_ref_relu_fwd(be, op->count, op->relu_max, op->y, op->y);
    }
    dlb_ref_free_all(t, 2);
    return s;
}

/* CONCAT: a copy of each image's channels, byte for byte (input and
 * output are of one type): forward x into y's channels [offset, offset +
 * c), backward those channels of dy into dx. */
dlb_status dlb_ref_concat(struct dlb_backend *be, const struct dlb_op *op)
{
    const struct dlb_concat_desc *d = &op->concat;
    int bwd = op->prop == DLB_PROP_BWD;
    const struct dlb_buffer *src = bwd ? op->dy : op->x;
    struct dlb_buffer *dst = bwd ? op->dx : op->y;
    size_t esz = dlb_dtype_size(src->dtype), part = (size_t)d->c * d->hw;
    size_t all = (size_t)d->c_total * d->hw, at = (size_t)d->offset * d->hw;
    (void)be;
    for (uint32_t n = 0; n < d->n; n++) {
        size_t s_off = bwd ? n * all + at : n * part;
        size_t d_off = bwd ? n * part : n * all + at;
        memcpy((char *)dst->data + d_off * esz,
               (const char *)src->data + s_off * esz, part * esz);
    }
    return DLB_OK;
}

dlb_status dlb_ref_check_finite(struct dlb_backend *be, size_t count,
                                const struct dlb_buffer *buf, int *found)
{
    double *t = NULL;
    dlb_status s = dlb_ref_get(be, "check_finite", "buf", buf, count, &t);
    *found = 0;
    for (size_t i = 0; !s && i < count; i++)
        if (!isfinite(t[i]))
            *found = 1;
    free(t);
    return s;
}

dlb_status dlb_ref_fill(struct dlb_backend *be, size_t count,
                        struct dlb_buffer *buf, double value)
{
    if (!buf || buf->count < count)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref fill: buffer has "
                                "fewer than %zu elements", count);
    for (size_t i = 0; i < count; i++)
        dlb_ref_set_elem(buf, i, value);
    return DLB_OK;
}

static dlb_status check_int8(struct dlb_backend *be, const char *op,
                             const struct dlb_buffer *b, size_t count)
{
    if (!b || (b->dtype != DLB_S8 && b->dtype != DLB_U8) || b->count < count)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref %s: the int8 side "
                                "must be s8 or u8 with %zu elements", op, count);
    return DLB_OK;
}

dlb_status dlb_ref_quantize(struct dlb_backend *be, size_t count,
                            const struct dlb_buffer *src, struct dlb_buffer *dst,
                            float scale, int32_t zero_point)
{
    double lo = dst && dst->dtype == DLB_U8 ? 0.0 : -128.0;
    double hi = dst && dst->dtype == DLB_U8 ? 255.0 : 127.0;
    double *t = NULL;
    dlb_status s;
    if ((s = check_int8(be, "quantize", dst, count)) ||
        (s = dlb_ref_get(be, "quantize", "src", src, count, &t)))
        return s;
    for (size_t i = 0; i < count; i++) {
        /* nearbyint rounds half to even in the default rounding mode */
        double q = nearbyint(t[i] / (double)scale) + zero_point;
        dlb_ref_set_elem(dst, i, q < lo ? lo : q > hi ? hi : q);
    }
    free(t);
    return DLB_OK;
}

dlb_status dlb_ref_dequantize(struct dlb_backend *be, size_t count,
                              const struct dlb_buffer *src,
                              struct dlb_buffer *dst, float scale,
                              int32_t zero_point)
{
    double *t = NULL;
    dlb_status s;
    if ((s = check_int8(be, "dequantize", src, count)) ||
        (s = dlb_ref_new(be, "dequantize", "dst", dst, count, &t)))
        return s;
    for (size_t i = 0; i < count; i++)
        t[i] = (dlb_ref_elem(src, i) - zero_point) * (double)scale;
    dlb_ref_put(dst, t, count);
    free(t);
    return DLB_OK;
}
