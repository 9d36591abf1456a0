/* int8 inference, as the quantised model means it (backend.h, API 1.1):
 * an F32 input quantised as quantize does, integer accumulation of
 * (qx - x_zp) * qw, then the float multiplier, ReLU and requantisation of
 * int8.h. Plain loops: the oracle the cpu
 * backend's oneDNN int8 kernels are tested against. */
#include "ref.h"
#include "../int8.h"

#include <stdlib.h>

/* Element i of an S8 or U8 buffer. */
static int32_t qat(const struct dlb_buffer *b, size_t i)
{
    return b->dtype == DLB_U8 ? ((const unsigned char *)b->data)[i]
                              : ((const signed char *)b->data)[i];
}

/* x's int8 values: an F32 x quantised as quantize does. */
static int32_t *x_values(struct dlb_backend *be, const char *op,
                         const struct dlb_int8_desc *q,
                         const struct dlb_buffer *x, size_t n)
{
    int32_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        dlb_backend_fail(be, DLB_ERR_NOMEM, "ref %s: out of memory", op);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = x->dtype == DLB_F32
                   ? dlb_int8_quantize(((const float *)x->data)[i], q->x_scale,
                                       q->x_zero_point,
                                       dlb_int8_lo(q->x_type),
                                       dlb_int8_hi(q->x_type))
                   : qat(x, i);
    return v;
}

static float wscale(const struct dlb_buffer *s, uint32_t o)
{
    return ((const float *)s->data)[s->count == 1 ? 0 : o];
}

/* Store the accumulator of output element i (channel o). */
static void put(const struct dlb_int8_desc *q, const struct dlb_buffer *ws,
                const struct dlb_buffer *b, struct dlb_buffer *y, size_t i,
                uint32_t o, int64_t acc)
{
    int int8_out = y->dtype != DLB_F32;
    float m = dlb_int8_multiplier(q, wscale(ws, o), int8_out);
    int32_t bias = b ? ((const int32_t *)b->data)[o] : 0;
    float v = dlb_int8_value(acc, bias, m, q->relu);
    if (!int8_out)
        ((float *)y->data)[i] = v;
    else if (y->dtype == DLB_U8)
        ((unsigned char *)y->data)[i] =
            (unsigned char)dlb_int8_requantize(v, q->y_zero_point, 0, 255);
    else
        ((signed char *)y->data)[i] =
            (signed char)dlb_int8_requantize(v, q->y_zero_point, -128, 127);
}

dlb_status dlb_ref_conv2d_int8_fwd(struct dlb_backend *be,
                                   const struct dlb_conv2d_desc *d,
                                   const struct dlb_int8_desc *q,
                                   const struct dlb_buffer *x,
                                   const struct dlb_buffer *w,
                                   const struct dlb_buffer *w_scale,
                                   const struct dlb_buffer *b,
                                   struct dlb_buffer *y)
{
    const char *op = "conv2d_int8_fwd";
    struct dlb_int8_args a = { x, w, w_scale, b, y, dlb_conv2d_x_count(d),
                               dlb_conv2d_w_count(d), dlb_conv2d_y_count(d),
                               d->out_c };
    dlb_status s;
    int32_t *xv;
    if ((s = dlb_conv2d_desc_check(be, op, d)) ||
        (s = dlb_int8_check(be, op, q, &a)))
        return s;
    if (!(xv = x_values(be, op, q, x, a.x_count)))
        return DLB_ERR_NOMEM;
    uint32_t icg = d->in_c / dlb_conv2d_groups(d); /* inputs per group */
    uint32_t ocg = d->out_c / dlb_conv2d_groups(d);
    for (uint32_t n = 0; n < d->n; n++)
    for (uint32_t k = 0; k < d->out_c; k++)
    for (uint32_t i = 0; i < d->out_h; i++)
    for (uint32_t j = 0; j < d->out_w; j++) {
        int64_t acc = 0;
        uint32_t c0 = k / ocg * icg; /* k's group of input channels */
        for (uint32_t c = c0; c < c0 + icg; c++)
        for (uint32_t r = 0; r < d->kh; r++) {
            long ih = (long)i * d->stride_h + r - (long)d->pad_h;
            if (ih < 0 || ih >= (long)d->in_h)
                continue; /* padding: the real value 0, qx = x_zp */
            for (uint32_t t = 0; t < d->kw; t++) {
                long iw = (long)j * d->stride_w + t - (long)d->pad_w;
                if (iw < 0 || iw >= (long)d->in_w)
                    continue;
                size_t xi = (((size_t)n * d->in_c + c) * d->in_h + (size_t)ih)
                            * d->in_w + (size_t)iw;
                size_t wi = (((size_t)k * icg + c - c0) * d->kh + r) * d->kw + t;
                acc += (int64_t)(xv[xi] - q->x_zero_point) * qat(w, wi);
            }
        }
        put(q, w_scale, b, y,
            (((size_t)n * d->out_c + k) * d->out_h + i) * d->out_w + j, k, acc);
    }
    free(xv);
    return DLB_OK;
}

static dlb_status int8_into_y(struct dlb_backend *be, const struct dlb_op *op)
{
    return dlb_ref_conv2d_int8_fwd(be, &op->conv, &op->q, op->x, op->w,
                                   op->w_scale, op->b, op->y);
}

/* CONV2D_INT8_ADD: the int8 convolution onto y's contents. */
dlb_status dlb_ref_conv2d_int8_add(struct dlb_backend *be,
                                   const struct dlb_op *op)
{
    return dlb_ref_conv_onto(be, op, "conv2d_int8_add", int8_into_y);
}

dlb_status dlb_ref_linear_int8_fwd(struct dlb_backend *be,
                                   const struct dlb_linear_desc *d,
                                   const struct dlb_int8_desc *q,
                                   const struct dlb_buffer *x,
                                   const struct dlb_buffer *w,
                                   const struct dlb_buffer *w_scale,
                                   const struct dlb_buffer *b,
                                   struct dlb_buffer *y)
{
    const char *op = "linear_int8_fwd";
    struct dlb_int8_args a = { x, w, w_scale, b, y, (size_t)d->n * d->in,
                               (size_t)d->out * d->in, (size_t)d->n * d->out,
                               d->out };
    dlb_status s;
    if (!d->n || !d->in || !d->out)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref %s: empty shape "
                                "%ux%u->%u", op, d->n, d->in, d->out);
    int32_t *xv;
    if ((s = dlb_int8_check(be, op, q, &a)))
        return s;
    if (!(xv = x_values(be, op, q, x, a.x_count)))
        return DLB_ERR_NOMEM;
    for (uint32_t n = 0; n < d->n; n++)
        for (uint32_t o = 0; o < d->out; o++) {
            int64_t acc = 0;
            for (uint32_t i = 0; i < d->in; i++)
                acc += (int64_t)(xv[(size_t)n * d->in + i] - q->x_zero_point) *
                       qat(w, (size_t)o * d->in + i);
            put(q, w_scale, b, y, (size_t)n * d->out + o, o, acc);
        }
    free(xv);
    return DLB_OK;
}

dlb_status dlb_ref_pool_int8_fwd(struct dlb_backend *be,
                                 const struct dlb_pool_desc *d,
                                 const struct dlb_buffer *x,
                                 struct dlb_buffer *y)
{
    const char *op = "pool_int8_fwd";
    size_t xn = (size_t)d->n * d->c * d->in_h * d->in_w;
    size_t yn = (size_t)d->n * d->c * d->out_h * d->out_w;
    dlb_status s;
    if ((s = dlb_pool_desc_check(be, op, d)))
        return s;
    if (d->kind != DLB_POOL_MAX)
        return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED, "ref %s: only max "
                                "pooling keeps int8 data exact", op);
    if (!x || !y || (x->dtype != DLB_S8 && x->dtype != DLB_U8) ||
        y->dtype != x->dtype || x->count < xn || y->count < yn)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref %s: x and y must "
                                "be s8 or u8 of one type with %zu and %zu "
                                "elements", op, xn, yn);
    for (size_t p = 0; p < (size_t)d->n * d->c; p++)
    for (uint32_t i = 0; i < d->out_h; i++)
    for (uint32_t j = 0; j < d->out_w; j++) {
        int32_t best = INT32_MIN;
        for (uint32_t r = 0; r < d->kh; r++) {
            long ih = (long)i * d->stride_h + r - (long)d->pad_h;
            for (uint32_t t = 0; t < d->kw; t++) {
                long iw = (long)j * d->stride_w + t - (long)d->pad_w;
                if (ih < 0 || ih >= (long)d->in_h || iw < 0 ||
                    iw >= (long)d->in_w)
                    continue; /* padding never wins a maximum */
                int32_t v = qat(x, (p * d->in_h + (size_t)ih) * d->in_w +
                                       (size_t)iw);
                best = v > best ? v : best;
            }
        }
        size_t yi = (p * d->out_h + i) * d->out_w + j;
        if (y->dtype == DLB_U8)
            ((unsigned char *)y->data)[yi] = (unsigned char)best;
        else
            ((signed char *)y->data)[yi] = (signed char)best;
    }
    return DLB_OK;
}
