/* Pooling, ReLU, dropout and the loss: checks, then the module's own
 * kernels (cuda_nn.cu, cuda_elementwise.cu) on the stream. */
#include "cuda.h"
#include "cuda_kernels.h"

static dlb_status launched(struct dlb_backend *be, cudaError_t e,
                           const char *op)
{
    return dlb_cuda_check(be, e, op, "kernel launch");
}

dlb_status dlb_cuda_pool_fwd(struct dlb_backend *be,
                             const struct dlb_pool_desc *d,
                             const struct dlb_buffer *x, struct dlb_buffer *y,
                             struct dlb_buffer *ws)
{
    const char *op = "pool_fwd";
    size_t planes = (size_t)d->n * d->c;
    size_t yn = planes * d->out_h * d->out_w;
    int max = d->kind == DLB_POOL_MAX;
    dlb_status s;
    if ((s = dlb_cuda_core->pool_desc_check(be, op, d)) ||
        (s = dlb_cuda_check_float(be, op, "x", x, planes * d->in_h * d->in_w)) ||
        (s = dlb_cuda_check_float(be, op, "y", y, yn)) ||
        (max && ws && (s = dlb_cuda_check_s32(be, op, "ws", ws, yn))))
        return s;
    return launched(be, dlb_cuda_k_pool_fwd(dlb_cuda_of(be)->stream, *d,
                                            x->data, (int)x->dtype, y->data,
                                            (int)y->dtype,
                                            max && ws ? ws->data : NULL),
                    op);
}

dlb_status dlb_cuda_pool_bwd(struct dlb_backend *be,
                             const struct dlb_pool_desc *d,
                             const struct dlb_buffer *dy,
                             const struct dlb_buffer *ws, struct dlb_buffer *dx)
{
    const char *op = "pool_bwd";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    size_t planes = (size_t)d->n * d->c;
    size_t yn = planes * d->out_h * d->out_w;
    int max = d->kind == DLB_POOL_MAX;
    dlb_status s;
    if ((s = dlb_cuda_core->pool_desc_check(be, op, d)) ||
        (s = dlb_cuda_check_float(be, op, "dy", dy, yn)) ||
        (s = dlb_cuda_check_float(be, op, "dx", dx, planes * d->in_h * d->in_w)) ||
        (max && (s = dlb_cuda_check_s32(be, op, "ws", ws, yn))))
        return s;
    return launched(be, dlb_cuda_k_pool_bwd(cu->stream, *d, dy->data,
                                            (int)dy->dtype,
                                            max ? ws->data : NULL, dx->data,
                                            (int)dx->dtype, cu->kerr_dev),
                    op);
}

dlb_status dlb_cuda_relu_fwd(struct dlb_backend *be, size_t count,
                             float relu_max, const struct dlb_buffer *x,
                             struct dlb_buffer *y)
{
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, "relu_fwd", "x", x, count)) ||
        (s = dlb_cuda_check_float(be, "relu_fwd", "y", y, count)))
        return s;
    return launched(be, dlb_cuda_k_relu_fwd(dlb_cuda_of(be)->stream, count,
                                            x->data, (int)x->dtype, y->data,
                                            (int)y->dtype, relu_max),
                    "relu_fwd");
}

dlb_status dlb_cuda_relu_bwd(struct dlb_backend *be, size_t count,
                             float relu_max, const struct dlb_buffer *y,
                             const struct dlb_buffer *dy, struct dlb_buffer *dx)
{
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, "relu_bwd", "y", y, count)) ||
        (s = dlb_cuda_check_float(be, "relu_bwd", "dy", dy, count)) ||
        (s = dlb_cuda_check_float(be, "relu_bwd", "dx", dx, count)))
        return s;
    return launched(be, dlb_cuda_k_relu_bwd(dlb_cuda_of(be)->stream, count,
                                            y->data, (int)y->dtype, dy->data,
                                            (int)dy->dtype, dx->data,
                                            (int)dx->dtype, relu_max),
                    "relu_bwd");
}

/* Both passes multiply by the same mask / (1 - p). */
static dlb_status dropout(struct dlb_backend *be, const char *op,
                          const struct dlb_dropout_desc *d,
                          const struct dlb_buffer *in, struct dlb_buffer *out)
{
    size_t count = (size_t)d->n * d->c * d->hw;
    double keep_scale = d->p < 1.0f ? 1.0 / (1.0 - (double)d->p) : 0.0;
    uint32_t hw = d->mode == DLB_DROPOUT_CHANNEL ? (d->hw ? d->hw : 1) : 1;
    dlb_status s;
    if (!(d->p >= 0.0f && d->p <= 1.0f))
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: p = %g is not in "
                             "[0, 1]", op, (double)d->p);
    if ((s = dlb_cuda_check_float(be, op, "input", in, count)) ||
        (s = dlb_cuda_check_float(be, op, "output", out, count)))
        return s;
    /* Under a graph capture the seed is read from the graph's slot, which
     * each replay sets (cuda_graph.c). */
    const uint64_t *seed_at = NULL;
    if ((s = dlb_cuda_graph_seed_slot(be, d->seed, &seed_at)))
        return s;
    return launched(be, dlb_cuda_k_dropout(dlb_cuda_of(be)->stream, count,
                                           in->data, (int)in->dtype, out->data,
                                           (int)out->dtype, d->seed, seed_at,
                                           dlb_dropout_threshold(d->p),
                                           keep_scale, hw),
                    op);
}

dlb_status dlb_cuda_dropout_fwd(struct dlb_backend *be,
                                const struct dlb_dropout_desc *d,
                                const struct dlb_buffer *x, struct dlb_buffer *y)
{
    return dropout(be, "dropout_fwd", d, x, y);
}

dlb_status dlb_cuda_dropout_bwd(struct dlb_backend *be,
                                const struct dlb_dropout_desc *d,
                                const struct dlb_buffer *dy,
                                struct dlb_buffer *dx)
{
    return dropout(be, "dropout_bwd", d, dy, dx);
}

dlb_status dlb_cuda_logsoftmax_fwd(struct dlb_backend *be,
                                   const struct dlb_loss_desc *d,
                                   const struct dlb_buffer *x,
                                   struct dlb_buffer *y)
{
    size_t count = (size_t)d->n * d->classes;
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, "logsoftmax_fwd", "x", x, count)) ||
        (s = dlb_cuda_check_float(be, "logsoftmax_fwd", "y", y, count)))
        return s;
    return launched(be, dlb_cuda_k_logsoftmax(dlb_cuda_of(be)->stream, d->n,
                                              d->classes, x->data,
                                              (int)x->dtype, y->data,
                                              (int)y->dtype),
                    "logsoftmax_fwd");
}

dlb_status dlb_cuda_nll_loss(struct dlb_backend *be,
                             const struct dlb_loss_desc *d,
                             const struct dlb_buffer *y,
                             const struct dlb_buffer *labels,
                             struct dlb_buffer *loss)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, "nll_loss", "y", y,
                                  (size_t)d->n * d->classes)) ||
        (s = dlb_cuda_check_s32(be, "nll_loss", "labels", labels, d->n)) ||
        (s = dlb_cuda_check_float(be, "nll_loss", "loss", loss, 1)))
        return s;
    return launched(be, dlb_cuda_k_nll(cu->stream, d->n, d->classes, y->data,
                                       (int)y->dtype, labels->data,
                                       loss->data, (int)loss->dtype,
                                       cu->kerr_dev),
                    "nll_loss");
}

dlb_status dlb_cuda_logsoftmax_nll_bwd(struct dlb_backend *be,
                                       const struct dlb_loss_desc *d,
                                       const struct dlb_buffer *y,
                                       const struct dlb_buffer *labels,
                                       float scale, struct dlb_buffer *dx)
{
    const char *op = "logsoftmax_nll_bwd";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    size_t count = (size_t)d->n * d->classes;
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, op, "y", y, count)) ||
        (s = dlb_cuda_check_s32(be, op, "labels", labels, d->n)) ||
        (s = dlb_cuda_check_float(be, op, "dx", dx, count)))
        return s;
    return launched(be, dlb_cuda_k_nll_bwd(cu->stream, d->n, d->classes,
                                           y->data, (int)y->dtype,
                                           labels->data,
                                           (double)scale / (d->n ? d->n : 1),
                                           dx->data, (int)dx->dtype,
                                           cu->kerr_dev),
                    op);
}
