/* Shape checks every backend makes on the operation descriptors of
 * <dlbench/backend.h>: a descriptor whose output size does not follow from
 * its input is a caller bug, reported the same way on every device. */
#include "backend.h"
#include "backend_impl.h"

dlb_status dlb_conv2d_desc_check(struct dlb_backend *be, const char *op,
                                 const struct dlb_conv2d_desc *d)
{
    if (d->out_h == 0 || d->out_w == 0 ||
        d->out_h != dlb_conv_out_size(d->in_h, d->kh, d->stride_h, d->pad_h) ||
        d->out_w != dlb_conv_out_size(d->in_w, d->kw, d->stride_w, d->pad_w))
        return dlb_backend_fail(be, DLB_ERR_INTERNAL,
                                "%s %s: output %ux%u does not follow from input "
                                "%ux%u, kernel %ux%u, stride %ux%u, pad %ux%u",
                                dlb_backend_name(be), op, d->out_h, d->out_w,
                                d->in_h, d->in_w, d->kh, d->kw, d->stride_h,
                                d->stride_w, d->pad_h, d->pad_w);
    if (d->in_c % dlb_conv2d_groups(d) || d->out_c % dlb_conv2d_groups(d))
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "%s %s: %u groups do "
                                "not divide %u input and %u output channels",
                                dlb_backend_name(be), op, dlb_conv2d_groups(d),
                                d->in_c, d->out_c);
    return DLB_OK;
}

int dlb_conv2d_dw_pair(const struct dlb_conv2d_desc *d,
                       const struct dlb_conv2d_desc *e)
{
    return d->kh == 1 && d->kw == 1 && d->stride_h == 1 && d->stride_w == 1 &&
           !d->pad_h && !d->pad_w && dlb_conv2d_groups(d) == 1 &&
           e->n == d->n && e->in_c == d->out_c && e->in_h == d->out_h &&
           e->in_w == d->out_w && e->out_c == e->in_c &&
           dlb_conv2d_groups(e) == e->in_c && e->kh == 3 && e->kw == 3 &&
           e->pad_h == 1 && e->pad_w == 1 && e->stride_h == e->stride_w &&
           (e->stride_h == 1 || e->stride_h == 2);
}

dlb_status dlb_pool_desc_check(struct dlb_backend *be, const char *op,
                               const struct dlb_pool_desc *d)
{
    if (d->out_h == 0 || d->out_w == 0 ||
        d->out_h != dlb_conv_out_size(d->in_h, d->kh, d->stride_h, d->pad_h) ||
        d->out_w != dlb_conv_out_size(d->in_w, d->kw, d->stride_w, d->pad_w) ||
        d->pad_h >= d->kh || d->pad_w >= d->kw)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL,
                                "%s %s: output %ux%u does not follow from input "
                                "%ux%u, window %ux%u, stride %ux%u, pad %ux%u "
                                "(pad must be below the window)",
                                dlb_backend_name(be), op, d->out_h, d->out_w,
                                d->in_h, d->in_w, d->kh, d->kw, d->stride_h,
                                d->stride_w, d->pad_h, d->pad_w);
    return DLB_OK;
}
