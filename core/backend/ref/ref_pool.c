/* Max and average pooling over each (n, c) plane. Max pooling records the
 * argmax (index within the input plane) so backward routes each gradient
 * to the element that won, as common frameworks do. */
#include "ref.h"

#include <math.h>

/* Calls f(in_index) for each in-bounds input of output (i, j). */
#define FOR_WINDOW(d, i, j, idx, body)                                        \
    for (uint32_t r_ = 0; r_ < (d)->kh; r_++) {                               \
        long ih_ = (long)(i) * (d)->stride_h + r_ - (long)(d)->pad_h;         \
        if (ih_ < 0 || ih_ >= (long)(d)->in_h) continue;                      \
        for (uint32_t s_ = 0; s_ < (d)->kw; s_++) {                           \
            long iw_ = (long)(j) * (d)->stride_w + s_ - (long)(d)->pad_w;     \
            if (iw_ < 0 || iw_ >= (long)(d)->in_w) continue;                  \
            size_t idx = (size_t)ih_ * (d)->in_w + (size_t)iw_;               \
            body                                                              \
        }                                                                     \
    }

dlb_status dlb_ref_pool_fwd(struct dlb_backend *be,
                            const struct dlb_pool_desc *d,
                            const struct dlb_buffer *x, struct dlb_buffer *y,
                            struct dlb_buffer *ws)
{
    size_t planes = (size_t)d->n * d->c;
    size_t in_plane = (size_t)d->in_h * d->in_w;
    size_t out_plane = (size_t)d->out_h * d->out_w;
    double *t[2] = { 0 };
    dlb_status s;
    if ((s = dlb_pool_desc_check(be, "pool_fwd", d)) ||
        (s = dlb_ref_get(be, "pool_fwd", "x", x, planes * in_plane, &t[0])) ||
        (s = dlb_ref_new(be, "pool_fwd", "y", y, planes * out_plane, &t[1])) ||
        (d->kind == DLB_POOL_MAX && ws &&
         (s = dlb_ref_check_s32(be, "pool_fwd", "ws", ws, planes * out_plane))))
        goto out;
    for (size_t p = 0; p < planes; p++)
    for (uint32_t i = 0; i < d->out_h; i++)
    for (uint32_t j = 0; j < d->out_w; j++) {
        const double *xp = t[0] + p * in_plane;
        size_t yi = p * out_plane + (size_t)i * d->out_w + j;
        if (d->kind == DLB_POOL_MAX) {
            double best = -INFINITY;
            long arg = -1;
            FOR_WINDOW(d, i, j, k, {
                if (arg < 0 || xp[k] > best) { best = xp[k]; arg = (long)k; }
            })
            t[1][yi] = best;
            if (ws)
                dlb_ref_set_elem(ws, yi, (double)arg);
        } else {
            double sum = 0.0;
            FOR_WINDOW(d, i, j, k, { sum += xp[k]; })
            t[1][yi] = sum / ((double)d->kh * d->kw);
        }
    }
    dlb_ref_put(y, t[1], planes * out_plane);
out:
    dlb_ref_free_all(t, 2);
    return s;
}

dlb_status dlb_ref_pool_bwd(struct dlb_backend *be,
                            const struct dlb_pool_desc *d,
                            const struct dlb_buffer *dy,
                            const struct dlb_buffer *ws, struct dlb_buffer *dx)
{
    size_t planes = (size_t)d->n * d->c;
    size_t in_plane = (size_t)d->in_h * d->in_w;
    size_t out_plane = (size_t)d->out_h * d->out_w;
    double *t[2] = { 0 };
    dlb_status s;
    if ((s = dlb_pool_desc_check(be, "pool_bwd", d)) ||
        (s = dlb_ref_get(be, "pool_bwd", "dy", dy, planes * out_plane, &t[0])) ||
        (s = dlb_ref_new(be, "pool_bwd", "dx", dx, planes * in_plane, &t[1])) ||
        (d->kind == DLB_POOL_MAX &&
         (s = dlb_ref_check_s32(be, "pool_bwd", "ws", ws, planes * out_plane))))
        goto out;
    for (size_t p = 0; p < planes; p++)
    for (uint32_t i = 0; i < d->out_h; i++)
    for (uint32_t j = 0; j < d->out_w; j++) {
        double *dxp = t[1] + p * in_plane;
        size_t yi = p * out_plane + (size_t)i * d->out_w + j;
        if (d->kind == DLB_POOL_MAX) {
            long arg = (long)dlb_ref_elem(ws, yi);
            if (arg < 0 || (size_t)arg >= in_plane) {
                s = dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref pool_bwd: "
                                     "workspace index %ld out of range", arg);
                goto out;
            }
            dxp[arg] += t[0][yi];
        } else {
            double g = t[0][yi] / ((double)d->kh * d->kw);
            FOR_WINDOW(d, i, j, k, { dxp[k] += g; })
        }
    }
    dlb_ref_put(dx, t[1], planes * in_plane);
out:
    dlb_ref_free_all(t, 2);
    return s;
}
