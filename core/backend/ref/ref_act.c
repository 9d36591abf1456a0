/* ReLU (ReLU6 with relu_max) and dropout. The dropout mask comes from
 * dlb_dropout_keep in the public header, so forward, backward and every
 * backend agree. */
#include "ref.h"

#include <stdlib.h>

/* ReLU, clipped above at relu_max when it is positive (ReLU6). */
dlb_status dlb_ref_relu_fwd(struct dlb_backend *be, size_t count,
                            float relu_max, const struct dlb_buffer *x,
                            struct dlb_buffer *y)
{
    double *t[2] = { 0 }, hi = (double)relu_max;
    dlb_status s;
    if (!(s = dlb_ref_get(be, "relu_fwd", "x", x, count, &t[0])) &&
        !(s = dlb_ref_new(be, "relu_fwd", "y", y, count, &t[1]))) {
        for (size_t i = 0; i < count; i++) {
            double v = t[0][i] > 0.0 ? t[0][i] : 0.0;
            t[1][i] = hi > 0.0 && v > hi ? hi : v;
        }
        dlb_ref_put(y, t[1], count);
    }
    dlb_ref_free_all(t, 2);
    return s;
}

/* The gradient passes where the forward was the identity: 0 < y, and
 * y < relu_max when clipped (a clipped value's gradient is 0, as
 * PyTorch's hardtanh has it). */
dlb_status dlb_ref_relu_bwd(struct dlb_backend *be, size_t count,
                            float relu_max, const struct dlb_buffer *y,
                            const struct dlb_buffer *dy, struct dlb_buffer *dx)
{
    double *t[3] = { 0 }, hi = (double)relu_max;
    dlb_status s;
    if (!(s = dlb_ref_get(be, "relu_bwd", "y", y, count, &t[0])) &&
        !(s = dlb_ref_get(be, "relu_bwd", "dy", dy, count, &t[1])) &&
        !(s = dlb_ref_new(be, "relu_bwd", "dx", dx, count, &t[2]))) {
        for (size_t i = 0; i < count; i++) {
            int pass = t[0][i] > 0.0 && !(hi > 0.0 && t[0][i] >= hi);
            t[2][i] = pass ? t[1][i] : 0.0;
        }
        dlb_ref_put(dx, t[2], count);
    }
    dlb_ref_free_all(t, 3);
    return s;
}

/* Both passes multiply by the same mask/(1-p), so one function does both. */
static dlb_status dropout_apply(struct dlb_backend *be, const char *op,
                                const struct dlb_dropout_desc *d,
                                const struct dlb_buffer *in,
                                struct dlb_buffer *out)
{
    size_t count = (size_t)d->n * d->c * d->hw;
    uint32_t thr = dlb_dropout_threshold(d->p);
    double keep_scale = d->p < 1.0f ? 1.0 / (1.0 - (double)d->p) : 0.0;
    double *t = NULL;
    dlb_status s;
    if (!(d->p >= 0.0f && d->p <= 1.0f))
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref %s: p = %g is not "
                                "in [0, 1]", op, (double)d->p);
    /* Check the output buffer too; the array itself is not needed since
     * the input's array is scaled in place. */
    if ((s = dlb_ref_new(be, op, "output", out, count, &t)))
        return s;
    free(t);
    if ((s = dlb_ref_get(be, op, "input", in, count, &t)))
        return s;
    for (size_t i = 0; i < count; i++) {
        uint64_t idx = d->mode == DLB_DROPOUT_CHANNEL ? i / (d->hw ? d->hw : 1)
                                                      : i;
        t[i] = dlb_dropout_keep(d->seed, idx, thr) ? t[i] * keep_scale : 0.0;
    }
    dlb_ref_put(out, t, count);
    free(t);
    return DLB_OK;
}

dlb_status dlb_ref_dropout_fwd(struct dlb_backend *be,
                               const struct dlb_dropout_desc *d,
                               const struct dlb_buffer *x, struct dlb_buffer *y)
{
    return dropout_apply(be, "dropout_fwd", d, x, y);
}

dlb_status dlb_ref_dropout_bwd(struct dlb_backend *be,
                               const struct dlb_dropout_desc *d,
                               const struct dlb_buffer *dy,
                               struct dlb_buffer *dx)
{
    return dropout_apply(be, "dropout_bwd", d, dy, dx);
}
