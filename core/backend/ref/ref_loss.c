/* Log-softmax over classes and the negative log-likelihood loss, averaged
 * over the batch; the backward pass is the fused, stable form. */
#include "ref.h"

#include <math.h>

dlb_status dlb_ref_logsoftmax_fwd(struct dlb_backend *be,
                                  const struct dlb_loss_desc *d,
                                  const struct dlb_buffer *x,
                                  struct dlb_buffer *y)
{
    size_t count = (size_t)d->n * d->classes;
    double *t[2] = { 0 };
    dlb_status s;
    if ((s = dlb_ref_get(be, "logsoftmax_fwd", "x", x, count, &t[0])) ||
        (s = dlb_ref_new(be, "logsoftmax_fwd", "y", y, count, &t[1])))
        goto out;
    for (uint32_t n = 0; n < d->n; n++) {
        const double *row = t[0] + (size_t)n * d->classes;
        double mx = -INFINITY, sum = 0.0, lse;
        for (uint32_t k = 0; k < d->classes; k++)
            mx = row[k] > mx ? row[k] : mx;
        for (uint32_t k = 0; k < d->classes; k++)
            sum += exp(row[k] - mx); /* shifted by the max: no overflow */
        lse = mx + log(sum);
        for (uint32_t k = 0; k < d->classes; k++)
            t[1][(size_t)n * d->classes + k] = row[k] - lse;
    }
    dlb_ref_put(y, t[1], count);
out:
    dlb_ref_free_all(t, 2);
    return s;
}

static dlb_status label_at(struct dlb_backend *be, const char *op,
                           const struct dlb_loss_desc *d,
                           const struct dlb_buffer *labels, uint32_t n,
                           uint32_t *out)
{
    double v = dlb_ref_elem(labels, n);
    if (!(v >= 0.0 && v < (double)d->classes))
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref %s: label %g of "
                                "sample %u is not in [0, %u)", op, v, n,
                                d->classes);
    *out = (uint32_t)v;
    return DLB_OK;
}

dlb_status dlb_ref_nll_loss(struct dlb_backend *be,
                            const struct dlb_loss_desc *d,
                            const struct dlb_buffer *y,
                            const struct dlb_buffer *labels,
                            struct dlb_buffer *loss)
{
    double *t[2] = { 0 };
    dlb_status s;
    uint32_t lab = 0;
    if ((s = dlb_ref_get(be, "nll_loss", "y", y, (size_t)d->n * d->classes,
                         &t[0])) ||
        (s = dlb_ref_check_s32(be, "nll_loss", "labels", labels, d->n)) ||
        (s = dlb_ref_new(be, "nll_loss", "loss", loss, 1, &t[1])))
        goto out;
    for (uint32_t n = 0; n < d->n; n++) {
        if ((s = label_at(be, "nll_loss", d, labels, n, &lab)))
            goto out;
        t[1][0] -= t[0][(size_t)n * d->classes + lab];
    }
    t[1][0] /= d->n ? d->n : 1;
    dlb_ref_put(loss, t[1], 1);
out:
    dlb_ref_free_all(t, 2);
    return s;
}

dlb_status dlb_ref_logsoftmax_nll_bwd(struct dlb_backend *be,
                                      const struct dlb_loss_desc *d,
                                      const struct dlb_buffer *y,
                                      const struct dlb_buffer *labels,
                                      float scale, struct dlb_buffer *dx)
{
    const char *op = "logsoftmax_nll_bwd";
    size_t count = (size_t)d->n * d->classes;
    double *t[2] = { 0 };
    double f = (double)scale / (d->n ? d->n : 1);
    dlb_status s;
    uint32_t lab = 0;
    if ((s = dlb_ref_get(be, op, "y", y, count, &t[0])) ||
        (s = dlb_ref_check_s32(be, op, "labels", labels, d->n)) ||
        (s = dlb_ref_new(be, op, "dx", dx, count, &t[1])))
        goto out;
    for (uint32_t n = 0; n < d->n; n++) {
        if ((s = label_at(be, op, d, labels, n, &lab)))
            goto out;
        for (uint32_t k = 0; k < d->classes; k++) {
            size_t i = (size_t)n * d->classes + k;
            t[1][i] = f * (exp(t[0][i]) - (k == lab ? 1.0 : 0.0));
        }
    }
    dlb_ref_put(dx, t[1], count);
out:
    dlb_ref_free_all(t, 2);
    return s;
}
