/* Log-softmax, NLL loss and their fused backward: n x classes is tiny next
 * to the network (256 x 10), so plain loops in double, row by row, beat a
 * primitive call and agree with the ref backend to the last bit or two. */
#include "cpu.h"

#include <math.h>
#include <stdlib.h>

static dlb_status label_at(struct dlb_backend *be, const char *op,
                           const struct dlb_loss_desc *d,
                           const struct dlb_buffer *labels, uint32_t n,
                           uint32_t *out)
{
    int32_t v = ((const int32_t *)labels->data)[n];
    if (v < 0 || (uint32_t)v >= d->classes)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: label %d of "
                                "sample %u is not in [0, %u)", op, (int)v, n,
                                d->classes);
    *out = (uint32_t)v;
    return DLB_OK;
}

static float *row_buf(struct dlb_backend *be, const char *op, uint32_t classes)
{
    float *r = malloc((classes ? classes : 1) * sizeof *r);
    if (!r)
        dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu %s: out of memory", op);
    return r;
}

dlb_status dlb_cpu_logsoftmax_fwd(struct dlb_backend *be,
                                  const struct dlb_loss_desc *d,
                                  const struct dlb_buffer *x,
                                  struct dlb_buffer *y)
{
    const char *op = "logsoftmax_fwd";
    size_t count = (size_t)d->n * d->classes;
    dlb_status s;
    float *r;
    if ((s = dlb_cpu_check_float(be, op, "x", x, count)) ||
        (s = dlb_cpu_check_float(be, op, "y", y, count)) ||
        (s = DLB_CPU_PLAIN(be, x, y)))
        return s;
    if (!(r = row_buf(be, op, d->classes)))
        return DLB_ERR_NOMEM;
    for (uint32_t n = 0; n < d->n; n++) {
        size_t off = (size_t)n * d->classes;
        double mx = -INFINITY, sum = 0.0, lse;
        dlb_cpu_load_f32(x, off, d->classes, r);
        for (uint32_t k = 0; k < d->classes; k++)
            mx = r[k] > mx ? r[k] : mx;
        for (uint32_t k = 0; k < d->classes; k++)
            sum += exp((double)r[k] - mx); /* shifted: no overflow */
        lse = mx + log(sum);
        for (uint32_t k = 0; k < d->classes; k++)
            r[k] = (float)((double)r[k] - lse);
        dlb_cpu_store_f32(y, off, d->classes, r);
    }
    free(r);
    dlb_cpu_written(y);
    return DLB_OK;
}

dlb_status dlb_cpu_nll_loss(struct dlb_backend *be,
                            const struct dlb_loss_desc *d,
                            const struct dlb_buffer *y,
                            const struct dlb_buffer *labels,
                            struct dlb_buffer *loss)
{
    const char *op = "nll_loss";
    dlb_status s;
    uint32_t lab = 0;
    double acc = 0.0;
    float v;
    if ((s = dlb_cpu_check_float(be, op, "y", y, (size_t)d->n * d->classes)) ||
        (s = dlb_cpu_check_s32(be, op, "labels", labels, d->n)) ||
        (s = dlb_cpu_check_float(be, op, "loss", loss, 1)) ||
        (s = DLB_CPU_PLAIN(be, y, labels, loss)))
        return s;
    for (uint32_t n = 0; n < d->n; n++) {
        if ((s = label_at(be, op, d, labels, n, &lab)))
            return s;
        dlb_cpu_load_f32(y, (size_t)n * d->classes + lab, 1, &v);
        acc -= v;
    }
    v = (float)(acc / (d->n ? d->n : 1));
    dlb_cpu_store_f32(loss, 0, 1, &v);
    dlb_cpu_written(loss);
    return DLB_OK;
}

dlb_status dlb_cpu_logsoftmax_nll_bwd(struct dlb_backend *be,
                                      const struct dlb_loss_desc *d,
                                      const struct dlb_buffer *y,
                                      const struct dlb_buffer *labels,
                                      float scale, struct dlb_buffer *dx)
{
    const char *op = "logsoftmax_nll_bwd";
    size_t count = (size_t)d->n * d->classes;
    double f = (double)scale / (d->n ? d->n : 1);
    dlb_status s;
    uint32_t lab = 0;
    float *r;
    if ((s = dlb_cpu_check_float(be, op, "y", y, count)) ||
        (s = dlb_cpu_check_s32(be, op, "labels", labels, d->n)) ||
        (s = dlb_cpu_check_float(be, op, "dx", dx, count)) ||
        (s = DLB_CPU_PLAIN(be, y, labels, dx)))
        return s;
    if (!(r = row_buf(be, op, d->classes)))
        return DLB_ERR_NOMEM;
    for (uint32_t n = 0; n < d->n; n++) {
        size_t off = (size_t)n * d->classes;
        if ((s = label_at(be, op, d, labels, n, &lab)))
            break;
        dlb_cpu_load_f32(y, off, d->classes, r);
        for (uint32_t k = 0; k < d->classes; k++)
            r[k] = (float)(f * (exp((double)r[k]) - (k == lab ? 1.0 : 0.0)));
        dlb_cpu_store_f32(dx, off, d->classes, r);
    }
    free(r);
    dlb_cpu_written(dx);
    return s;
}
