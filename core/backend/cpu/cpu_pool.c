/* The pooling ops: arguments checked, then the channel-blocked layouts a
 * convolution's output arrives in (cpu_pool_blocked.c), else the host
 * view's (n, c) planes, both on the loops of cpu_pool_loops.c. */
#include "cpu.h"

dlb_status dlb_cpu_pool_fwd(struct dlb_backend *be,
                            const struct dlb_pool_desc *d,
                            const struct dlb_buffer *x, struct dlb_buffer *y,
                            struct dlb_buffer *ws)
{
    const char *op = "pool_fwd";
    size_t planes = (size_t)d->n * d->c;
    size_t in_plane = (size_t)d->in_h * d->in_w;
    size_t out_plane = (size_t)d->out_h * d->out_w;
    int max = d->kind == DLB_POOL_MAX;
    dlb_status s;
    if ((s = dlb_pool_desc_check(be, op, d)) ||
        (s = dlb_cpu_check_float(be, op, "x", x, planes * in_plane)) ||
        (s = dlb_cpu_check_float(be, op, "y", y, planes * out_plane)) ||
        (max && ws && (s = dlb_cpu_check_s32(be, op, "ws", ws,
                                             planes * out_plane))))
        return s;
    if ((s = DLB_CPU_PLAIN(be, x, y, ws)))
        return s;
    struct dlb_cpu_pool_blocks r = { d, 1, planes, x, y };
    int32_t *wsp = max && ws ? ws->data : NULL;
    if ((s = dlb_cpu_pool_loops_fwd(be, &r, wsp)))
        return s;
    if (wsp)
        dlb_cpu_written(ws);
    return DLB_OK;
}

dlb_status dlb_cpu_pool_bwd(struct dlb_backend *be,
                            const struct dlb_pool_desc *d,
                            const struct dlb_buffer *dy,
                            const struct dlb_buffer *ws, struct dlb_buffer *dx)
{
    const char *op = "pool_bwd";
    size_t planes = (size_t)d->n * d->c;
    size_t in_plane = (size_t)d->in_h * d->in_w;
    size_t out_plane = (size_t)d->out_h * d->out_w;
    int max = d->kind == DLB_POOL_MAX;
    dlb_status s;
    if ((s = dlb_pool_desc_check(be, op, d)) ||
        (s = dlb_cpu_check_float(be, op, "dy", dy, planes * out_plane)) ||
        (s = dlb_cpu_check_float(be, op, "dx", dx, planes * in_plane)) ||
        (max && (s = dlb_cpu_check_s32(be, op, "ws", ws, planes * out_plane))))
        return s;
    if ((s = DLB_CPU_PLAIN(be, dy, ws, dx)))
        return s;
    struct dlb_cpu_pool_blocks r = { d, 1, planes, dy, dx };
    return dlb_cpu_pool_loops_bwd(be, &r, max ? ws->data : NULL);
}
