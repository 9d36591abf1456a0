/* Batch normalisation through cuDNN's spatial mode (per channel over n, h,
 * w), x viewed as [n][c][hw][1]. It computes in f32: activations of
 * another type are cast in and out, the statistics are f32 as backend.h
 * says. cuDNN saves the batch mean and 1/sqrt(var + eps) for backward and
 * keeps the running variance unbiased, which is the contract. */
#include "cuda.h"

static dlb_status check_param(struct dlb_backend *be, const char *op,
                              const char *arg, const struct dlb_buffer *b,
                              uint32_t c)
{
    dlb_status s = dlb_cuda_check_float(be, op, arg, b, c);
    if (s == DLB_OK && b->dtype != DLB_F32)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: %s must be f32 "
                             "(backend.h), not a 16-bit type", op, arg);
    return s;
}

/* Shape checks and the two descriptors for this call. */
static dlb_status setup(struct dlb_backend *be, const char *op,
                        const struct dlb_batchnorm_desc *d)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    size_t count = (size_t)d->n * d->c * d->hw;
    dlb_status s;
    if ((s = dlb_cuda_check_int(be, op, count)) ||
        (s = dlb_cuda_check_int(be, op, d->hw)))
        return s;
    if (d->n == 0 || d->c == 0 || d->hw == 0)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: empty batch", op);
    if ((s = dlb_cuda_dnn_check(be, cudnnSetTensor4dDescriptor(
                                        cu->bn_x, CUDNN_TENSOR_NCHW,
                                        CUDNN_DATA_FLOAT, (int)d->n, (int)d->c,
                                        (int)d->hw, 1),
                                op, "x descriptor")))
        return s;
    return dlb_cuda_dnn_check(be, cudnnSetTensor4dDescriptor(
                                      cu->bn_p, CUDNN_TENSOR_NCHW,
                                      CUDNN_DATA_FLOAT, 1, (int)d->c, 1, 1),
                              op, "parameter descriptor");
}

dlb_status dlb_cuda_batchnorm_fwd_train(struct dlb_backend *be,
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
    struct dlb_cuda *cu = dlb_cuda_of(be);
    size_t count = (size_t)d->n * d->c * d->hw;
    struct dlb_cuda_view vx, vy;
    const float one = 1.0f, zero = 0.0f;
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, op, "x", x, count)) ||
        (s = dlb_cuda_check_float(be, op, "y", y, count)) ||
        (s = check_param(be, op, "gamma", gamma, d->c)) ||
        (s = check_param(be, op, "beta", beta, d->c)) ||
        (s = check_param(be, op, "running_mean", running_mean, d->c)) ||
        (s = check_param(be, op, "running_var", running_var, d->c)) ||
        (s = check_param(be, op, "save_mean", save_mean, d->c)) ||
        (s = check_param(be, op, "save_invstd", save_invstd, d->c)) ||
        (s = setup(be, op, d)))
        return s;
    /* cuDNN divides by n*hw - 1 for the unbiased running variance; ref
     * falls back to the biased one for a single value. */
    if ((size_t)d->n * d->hw < 2)
        return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda %s: batch "
                             "statistics over a single value (n*hw = 1)", op);
    if ((s = dlb_cuda_view_in(be, x, count, DLB_F32, 0, &vx)) ||
        (s = dlb_cuda_view_out(be, y, count, DLB_F32, 1, &vy)) ||
        (s = dlb_cuda_dnn_check(be, cudnnBatchNormalizationForwardTraining(
                 cu->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, cu->bn_x, vx.p,
                 cu->bn_x, vy.p, cu->bn_p, gamma->data, beta->data,
                 (double)d->momentum, running_mean->data, running_var->data,
                 (double)d->eps, save_mean->data, save_invstd->data),
                                op, "cudnnBatchNormalizationForwardTraining")))
        return s;
    return dlb_cuda_view_done(be, &vy);
}

dlb_status dlb_cuda_batchnorm_fwd_infer(struct dlb_backend *be,
                                        const struct dlb_batchnorm_desc *d,
                                        const struct dlb_buffer *x,
                                        const struct dlb_buffer *gamma,
                                        const struct dlb_buffer *beta,
                                        const struct dlb_buffer *running_mean,
                                        const struct dlb_buffer *running_var,
                                        struct dlb_buffer *y)
{
    const char *op = "batchnorm_fwd_infer";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    size_t count = (size_t)d->n * d->c * d->hw;
    struct dlb_cuda_view vx, vy;
    const float one = 1.0f, zero = 0.0f;
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, op, "x", x, count)) ||
        (s = dlb_cuda_check_float(be, op, "y", y, count)) ||
        (s = check_param(be, op, "gamma", gamma, d->c)) ||
        (s = check_param(be, op, "beta", beta, d->c)) ||
        (s = check_param(be, op, "running_mean", running_mean, d->c)) ||
        (s = check_param(be, op, "running_var", running_var, d->c)) ||
        (s = setup(be, op, d)) ||
        (s = dlb_cuda_view_in(be, x, count, DLB_F32, 0, &vx)) ||
        (s = dlb_cuda_view_out(be, y, count, DLB_F32, 1, &vy)) ||
        (s = dlb_cuda_dnn_check(be, cudnnBatchNormalizationForwardInference(
                 cu->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, cu->bn_x, vx.p,
                 cu->bn_x, vy.p, cu->bn_p, gamma->data, beta->data,
                 running_mean->data, running_var->data, (double)d->eps),
                                op, "cudnnBatchNormalizationForwardInference")))
        return s;
    return dlb_cuda_view_done(be, &vy);
}

dlb_status dlb_cuda_batchnorm_bwd(struct dlb_backend *be,
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
    struct dlb_cuda *cu = dlb_cuda_of(be);
    size_t count = (size_t)d->n * d->c * d->hw;
    struct dlb_cuda_view vx, vdy, vdx;
    const float one = 1.0f, zero = 0.0f;
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, op, "x", x, count)) ||
        (s = dlb_cuda_check_float(be, op, "dy", dy, count)) ||
        (s = dlb_cuda_check_float(be, op, "dx", dx, count)) ||
        (s = check_param(be, op, "gamma", gamma, d->c)) ||
        (s = check_param(be, op, "save_mean", save_mean, d->c)) ||
        (s = check_param(be, op, "save_invstd", save_invstd, d->c)) ||
        (s = check_param(be, op, "dgamma", dgamma, d->c)) ||
        (s = check_param(be, op, "dbeta", dbeta, d->c)) ||
        (s = setup(be, op, d)) ||
        (s = dlb_cuda_view_in(be, x, count, DLB_F32, 0, &vx)) ||
        (s = dlb_cuda_view_in(be, dy, count, DLB_F32, 1, &vdy)) ||
        (s = dlb_cuda_view_out(be, dx, count, DLB_F32, 2, &vdx)) ||
        (s = dlb_cuda_dnn_check(be, cudnnBatchNormalizationBackward(
                 cu->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero,
                 cu->bn_x, vx.p, cu->bn_x, vdy.p, cu->bn_x, vdx.p, cu->bn_p,
                 gamma->data, dgamma->data, dbeta->data, (double)d->eps,
                 save_mean->data, save_invstd->data),
                                op, "cudnnBatchNormalizationBackward")))
        return s;
    return dlb_cuda_view_done(be, &vdx);
}
