/* Batch normalisation per channel over (n, h, w), training and inference,
 * with the closed-form backward of the training-mode forward. */
#include "ref.h"

#include <math.h>

static size_t at(const struct dlb_batchnorm_desc *d, uint32_t n, uint32_t c,
                 uint32_t k)
{
    return ((size_t)n * d->c + c) * d->hw + k;
}

dlb_status dlb_ref_batchnorm_fwd_train(struct dlb_backend *be,
                                       const struct dlb_batchnorm_desc *d,
                                       const struct dlb_buffer *x,
                                       const struct dlb_buffer *gamma,
                                       const struct dlb_buffer *beta,
                                       struct dlb_buffer *running_mean,
                                       struct dlb_buffer *running_var,
                                       struct dlb_buffer *save_mean,
                                       struct dlb_buffer *save_invstd,
                                       struct dlb_buffer *y)
{
    const char *op = "batchnorm_fwd_train";
    size_t count = (size_t)d->n * d->c * d->hw;
    double m = (double)d->n * d->hw, mom = d->momentum;
    double *t[8] = { 0 };
    dlb_status s;
    if ((s = dlb_ref_get(be, op, "x", x, count, &t[0])) ||
        (s = dlb_ref_get(be, op, "gamma", gamma, d->c, &t[1])) ||
        (s = dlb_ref_get(be, op, "beta", beta, d->c, &t[2])) ||
        (s = dlb_ref_get(be, op, "running_mean", running_mean, d->c, &t[3])) ||
        (s = dlb_ref_get(be, op, "running_var", running_var, d->c, &t[4])) ||
        (s = dlb_ref_new(be, op, "save_mean", save_mean, d->c, &t[5])) ||
        (s = dlb_ref_new(be, op, "save_invstd", save_invstd, d->c, &t[6])) ||
        (s = dlb_ref_new(be, op, "y", y, count, &t[7])))
        goto out;
    if (m < 1.0) {
        s = dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref %s: empty batch", op);
        goto out;
    }
    for (uint32_t c = 0; c < d->c; c++) {
        double sum = 0.0, sq = 0.0, mean, var, inv;
        for (uint32_t n = 0; n < d->n; n++)
            for (uint32_t k = 0; k < d->hw; k++)
                sum += t[0][at(d, n, c, k)];
        mean = sum / m;
        for (uint32_t n = 0; n < d->n; n++)
            for (uint32_t k = 0; k < d->hw; k++) {
                double e = t[0][at(d, n, c, k)] - mean;
                sq += e * e;
            }
        var = sq / m; /* biased: what the batch is normalised with */
        inv = 1.0 / sqrt(var + d->eps);
        for (uint32_t n = 0; n < d->n; n++)
            for (uint32_t k = 0; k < d->hw; k++) {
                size_t i = at(d, n, c, k);
                t[7][i] = t[1][c] * (t[0][i] - mean) * inv + t[2][c];
            }
        t[5][c] = mean;
        t[6][c] = inv;
        /* The running variance is unbiased, as PyTorch keeps it. */
        t[3][c] = (1.0 - mom) * t[3][c] + mom * mean;
        t[4][c] = (1.0 - mom) * t[4][c] + mom * (m > 1.0 ? sq / (m - 1.0) : var);
    }
    dlb_ref_put(y, t[7], count);
    dlb_ref_put(save_mean, t[5], d->c);
    dlb_ref_put(save_invstd, t[6], d->c);
    dlb_ref_put(running_mean, t[3], d->c);
    dlb_ref_put(running_var, t[4], d->c);
out:
    dlb_ref_free_all(t, 8);
    return s;
}

dlb_status dlb_ref_batchnorm_fwd_infer(struct dlb_backend *be,
                                       const struct dlb_batchnorm_desc *d,
                                       const struct dlb_buffer *x,
                                       const struct dlb_buffer *gamma,
                                       const struct dlb_buffer *beta,
                                       const struct dlb_buffer *running_mean,
                                       const struct dlb_buffer *running_var,
                                       struct dlb_buffer *y)
{
    const char *op = "batchnorm_fwd_infer";
    size_t count = (size_t)d->n * d->c * d->hw;
    double *t[6] = { 0 };
    dlb_status s;
    if ((s = dlb_ref_get(be, op, "x", x, count, &t[0])) ||
        (s = dlb_ref_get(be, op, "gamma", gamma, d->c, &t[1])) ||
        (s = dlb_ref_get(be, op, "beta", beta, d->c, &t[2])) ||
        (s = dlb_ref_get(be, op, "running_mean", running_mean, d->c, &t[3])) ||
        (s = dlb_ref_get(be, op, "running_var", running_var, d->c, &t[4])) ||
        (s = dlb_ref_new(be, op, "y", y, count, &t[5])))
        goto out;
    for (uint32_t n = 0; n < d->n; n++)
        for (uint32_t c = 0; c < d->c; c++) {
            double inv = 1.0 / sqrt(t[4][c] + d->eps);
            for (uint32_t k = 0; k < d->hw; k++) {
                size_t i = at(d, n, c, k);
                t[5][i] = t[1][c] * (t[0][i] - t[3][c]) * inv + t[2][c];
            }
        }
    dlb_ref_put(y, t[5], count);
out:
    dlb_ref_free_all(t, 6);
    return s;
}

dlb_status dlb_ref_batchnorm_bwd(struct dlb_backend *be,
                                 const struct dlb_batchnorm_desc *d,
                                 const struct dlb_buffer *x,
                                 const struct dlb_buffer *dy,
                                 const struct dlb_buffer *gamma,
                                 const struct dlb_buffer *save_mean,
                                 const struct dlb_buffer *save_invstd,
                                 struct dlb_buffer *dx,
                                 struct dlb_buffer *dgamma,
                                 struct dlb_buffer *dbeta)
{
    const char *op = "batchnorm_bwd";
    size_t count = (size_t)d->n * d->c * d->hw;
    double m = (double)d->n * d->hw;
    double *t[8] = { 0 };
    dlb_status s;
    if ((s = dlb_ref_get(be, op, "x", x, count, &t[0])) ||
        (s = dlb_ref_get(be, op, "dy", dy, count, &t[1])) ||
        (s = dlb_ref_get(be, op, "gamma", gamma, d->c, &t[2])) ||
        (s = dlb_ref_get(be, op, "save_mean", save_mean, d->c, &t[3])) ||
        (s = dlb_ref_get(be, op, "save_invstd", save_invstd, d->c, &t[4])) ||
        (s = dlb_ref_new(be, op, "dx", dx, count, &t[5])) ||
        (s = dlb_ref_new(be, op, "dgamma", dgamma, d->c, &t[6])) ||
        (s = dlb_ref_new(be, op, "dbeta", dbeta, d->c, &t[7])))
        goto out;
    for (uint32_t c = 0; c < d->c; c++) {
        double mean = t[3][c], inv = t[4][c], sdy = 0.0, sdyx = 0.0;
        for (uint32_t n = 0; n < d->n; n++)
            for (uint32_t k = 0; k < d->hw; k++) {
                size_t i = at(d, n, c, k);
                sdy += t[1][i];
                sdyx += t[1][i] * (t[0][i] - mean) * inv;
            }
        t[6][c] = sdyx;
        t[7][c] = sdy;
        /* dx = gamma*inv/m * (m*dy - sum(dy) - xhat*sum(dy*xhat)) */
        for (uint32_t n = 0; n < d->n; n++)
            for (uint32_t k = 0; k < d->hw; k++) {
                size_t i = at(d, n, c, k);
                double xhat = (t[0][i] - mean) * inv;
                t[5][i] = t[2][c] * inv / m * (m * t[1][i] - sdy - xhat * sdyx);
            }
    }
    dlb_ref_put(dx, t[5], count);
    dlb_ref_put(dgamma, t[6], d->c);
    dlb_ref_put(dbeta, t[7], d->c);
out:
    dlb_ref_free_all(t, 8);
    return s;
}

/* Batch norm then ReLU, as the two operations run one after the other:
 * the reference the fused kernels are held to. */
dlb_status dlb_ref_batchnorm_relu_fwd_train(struct dlb_backend *be,
                                            const struct dlb_batchnorm_desc *d,
                                            const struct dlb_buffer *x,
                                            const struct dlb_buffer *gamma,
                                            const struct dlb_buffer *beta,
                                            struct dlb_buffer *running_mean,
                                            struct dlb_buffer *running_var,
                                            struct dlb_buffer *save_mean,
                                            struct dlb_buffer *save_invstd,
                                            struct dlb_buffer *y)
{
    dlb_status s = dlb_ref_batchnorm_fwd_train(be, d, x, gamma, beta,
                                               running_mean, running_var,
                                               save_mean, save_invstd, y);
    return s ? s : dlb_ref_relu_fwd(be, (size_t)d->n * d->c * d->hw, 0.0f, y,
                                    y);
}

/* The ReLU's gradient into dx, then batch norm's backward in place. */
dlb_status dlb_ref_batchnorm_relu_bwd(struct dlb_backend *be,
                                      const struct dlb_batchnorm_desc *d,
                                      const struct dlb_buffer *x,
                                      const struct dlb_buffer *y,
                                      const struct dlb_buffer *dy,
                                      const struct dlb_buffer *gamma,
                                      const struct dlb_buffer *beta,
                                      const struct dlb_buffer *save_mean,
                                      const struct dlb_buffer *save_invstd,
                                      struct dlb_buffer *dx,
                                      struct dlb_buffer *dgamma,
                                      struct dlb_buffer *dbeta)
{
    dlb_status s;
    (void)beta; /* the mask is read from y */
    if ((s = dlb_ref_relu_bwd(be, (size_t)d->n * d->c * d->hw, 0.0f, y, dy,
                              dx)))
        return s;
    return dlb_ref_batchnorm_bwd(be, d, x, dx, gamma, save_mean, save_invstd,
                                 dx, dgamma, dbeta);
}
