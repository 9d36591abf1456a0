/* Batch normalisation on oneDNN. The interface keeps the saved inverse
 * standard deviation and PyTorch's unbiased running variance, oneDNN the
 * biased variance: the per-channel conversions are own loops over c.
 * Backward is created with the scale flag only: with the shift flag
 * oneDNN 2.6 failed at execution ("invalid arguments") on this machine
 * kind; dbeta is then the channel sum of dy, computed here. */
#include "cpu.h"

#include <math.h>
#include <string.h>

/* mem slots: 0 src, 1 dst (or diff_src), 2 scale, 3 shift (or diff_scale),
 * 4 mean, 5 variance, 6 diff_dst; 7 and 8 own mean/variance storage. */
enum { M_SRC, M_DST, M_SCALE, M_SHIFT, M_MEAN, M_VAR, M_DDST, M_OWN_MEAN,
       M_OWN_VAR };

struct bn_arg {
    enum dlb_cpu_op kind;
    const struct dlb_batchnorm_desc *d;
    dnnl_data_type_t dt;
};

static dlb_status bn_build(struct dlb_backend *be, struct dlb_cpu_prim *p,
                           const void *arg)
{
    const struct bn_arg *a = arg;
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    const char *op = "batchnorm";
    dnnl_dims_t dims = { a->d->n, a->d->c, a->d->hw, 1 };
    dnnl_dims_t cd = { a->d->c };
    dnnl_memory_desc_t data, chan;
    dnnl_batch_normalization_desc_t fd, bd;
    unsigned flags = dnnl_use_scale | dnnl_use_shift;
    dlb_status s = DLB_OK;
    DLB_DNNL(be, op, dlb_cpu_md_plain(&data, 4, dims, a->dt));
    DLB_DNNL(be, op, dlb_cpu_md_plain(&chan, 1, cd, dnnl_f32));
    if (a->kind == DLB_CPU_BN_FWD_INFER)
        flags |= dnnl_use_global_stats;
    if (a->kind == DLB_CPU_BN_BWD)
        flags = dnnl_use_scale; /* the oneDNN 2.6 quirk above */
    DLB_DNNL(be, op, dnnl_batch_normalization_forward_desc_init(
        &fd, a->kind == DLB_CPU_BN_FWD_INFER ? dnnl_forward_inference
                                             : dnnl_forward_training,
        &data, a->d->eps, flags));
    if (a->kind != DLB_CPU_BN_BWD) {
        DLB_DNNL(be, op, dlb_cpu_make(cpu, p, 0, &fd, NULL));
    } else {
        DLB_DNNL(be, op, dnnl_primitive_desc_create(&p->pd[DLB_CPU_HINT], &fd,
                                                    NULL, cpu->engine, NULL));
        DLB_DNNL(be, op, dnnl_batch_normalization_backward_desc_init(
            &bd, dnnl_backward, &data, &data, a->d->eps, flags));
        DLB_DNNL(be, op, dlb_cpu_make(cpu, p, 0, &bd, p->pd[DLB_CPU_HINT]));
    }
    for (int i = M_SRC; i <= M_DDST; i++)
        DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[i],
                                     i == M_SRC || i == M_DST || i == M_DDST
                                         ? &data : &chan));
    /* Batch statistics in oneDNN's form, owned by the entry. */
    DLB_DNNL(be, op, dnnl_memory_create(&p->mem[M_OWN_MEAN], &chan, cpu->engine,
                                        DNNL_MEMORY_ALLOCATE));
    DLB_DNNL(be, op, dnnl_memory_create(&p->mem[M_OWN_VAR], &chan, cpu->engine,
                                        DNNL_MEMORY_ALLOCATE));
out:
    return s;
}

static dlb_status bn_get(struct dlb_backend *be, enum dlb_cpu_op kind,
                         const struct dlb_batchnorm_desc *d, enum dlb_dtype t,
                         struct dlb_cpu_prim **out)
{
    struct dlb_cpu_key k;
    struct bn_arg a = { kind, d, dlb_cpu_dnnl_type(t) };
    memset(&k, 0, sizeof k);
    k.op = kind;
    k.w[0] = d->n;
    k.w[1] = d->c;
    k.w[2] = d->hw;
    memcpy(&k.w[3], &d->eps, sizeof d->eps);
    k.w[4] = (uint32_t)t;
    return dlb_cpu_cache_get(be, &k, bn_build, &a, out);
}

static dlb_status check_all(struct dlb_backend *be, const char *op,
                            const struct dlb_batchnorm_desc *d,
                            const struct dlb_buffer *const *data, int n_data,
                            const struct dlb_buffer *const *chan, int n_chan)
{
    size_t count = (size_t)d->n * d->c * d->hw;
    dlb_status s;
    if (count == 0)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: empty batch", op);
    for (int i = 0; i < n_data; i++) {
        if ((s = dlb_cpu_check_float(be, op, "data", data[i], count)))
            return s;
        if (data[i]->dtype != data[0]->dtype)
            return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED, "cpu %s: data "
                                    "tensors of different types", op);
    }
    for (int i = 0; i < n_chan; i++)
        if (!chan[i] || chan[i]->dtype != DLB_F32 || chan[i]->count < d->c)
            return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: gamma, beta "
                                    "and statistics must be f32 [%u]", op, d->c);
    return DLB_OK;
}

static void *handle(dnnl_memory_t m)
{
    void *p = NULL;
    dnnl_memory_get_data_handle(m, &p);
    return p;
}

dlb_status dlb_cpu_bn_fwd_train(struct dlb_backend *be,
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
    const struct dlb_buffer *data[2] = { x, y };
    const struct dlb_buffer *chan[6] = { gamma, beta, running_mean,
                                         running_var, save_mean, save_invstd };
    struct dlb_cpu_prim *p;
    dlb_status s;
    if ((s = check_all(be, op, d, data, 2, chan, 6)) ||
        (s = bn_get(be, DLB_CPU_BN_FWD_TRAIN, d, x->dtype, &p)))
        return s;
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SRC], x->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_DST], y->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SCALE], gamma->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SHIFT], beta->data));
    dnnl_exec_arg_t args[6] = {
        { DNNL_ARG_SRC, p->mem[M_SRC] }, { DNNL_ARG_DST, p->mem[M_DST] },
        { DNNL_ARG_SCALE, p->mem[M_SCALE] }, { DNNL_ARG_SHIFT, p->mem[M_SHIFT] },
        { DNNL_ARG_MEAN, p->mem[M_OWN_MEAN] },
        { DNNL_ARG_VARIANCE, p->mem[M_OWN_VAR] },
    };
    DLB_DNNL(be, op, dlb_cpu_exec(dlb_backend_ctx(be), p->prim[0], 6, args));
    {
        const float *mean = handle(p->mem[M_OWN_MEAN]);
        const float *var = handle(p->mem[M_OWN_VAR]);
        float *sm = save_mean->data, *si = save_invstd->data;
        float *rm = running_mean->data, *rv = running_var->data;
        double m = (double)d->n * d->hw, mom = d->momentum;
        for (uint32_t c = 0; c < d->c; c++) {
            /* PyTorch keeps the unbiased variance in the running value. */
            double unbiased = m > 1.0 ? (double)var[c] * m / (m - 1.0) : var[c];
            sm[c] = mean[c];
            si[c] = (float)(1.0 / sqrt((double)var[c] + d->eps));
            rm[c] = (float)((1.0 - mom) * rm[c] + mom * mean[c]);
            rv[c] = (float)((1.0 - mom) * rv[c] + mom * unbiased);
        }
    }
    dlb_cpu_written(y);
    dlb_cpu_written(save_mean);
    dlb_cpu_written(save_invstd);
    dlb_cpu_written(running_mean);
    dlb_cpu_written(running_var);
out:
    return s;
}

dlb_status dlb_cpu_bn_fwd_infer(struct dlb_backend *be,
                                const struct dlb_batchnorm_desc *d,
                                const struct dlb_buffer *x,
                                const struct dlb_buffer *gamma,
                                const struct dlb_buffer *beta,
                                const struct dlb_buffer *running_mean,
                                const struct dlb_buffer *running_var,
                                struct dlb_buffer *y)
{
    const char *op = "batchnorm_fwd_infer";
    const struct dlb_buffer *data[2] = { x, y };
    const struct dlb_buffer *chan[4] = { gamma, beta, running_mean,
                                         running_var };
    struct dlb_cpu_prim *p;
    dlb_status s;
    if ((s = check_all(be, op, d, data, 2, chan, 4)) ||
        (s = bn_get(be, DLB_CPU_BN_FWD_INFER, d, x->dtype, &p)))
        return s;
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SRC], x->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_DST], y->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SCALE], gamma->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SHIFT], beta->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_MEAN], running_mean->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_VAR], running_var->data));
    dnnl_exec_arg_t args[6] = {
        { DNNL_ARG_SRC, p->mem[M_SRC] }, { DNNL_ARG_DST, p->mem[M_DST] },
        { DNNL_ARG_SCALE, p->mem[M_SCALE] }, { DNNL_ARG_SHIFT, p->mem[M_SHIFT] },
        { DNNL_ARG_MEAN, p->mem[M_MEAN] }, { DNNL_ARG_VARIANCE, p->mem[M_VAR] },
    };
    DLB_DNNL(be, op, dlb_cpu_exec(dlb_backend_ctx(be), p->prim[0], 6, args));
    dlb_cpu_written(y);
out:
    return s;
}

/* dbeta[c] = sum over n and hw of dy, in double per channel. */
static void channel_sums(const struct dlb_batchnorm_desc *d,
                         const struct dlb_buffer *dy, float *out)
{
    size_t hw = d->hw;
    DLB_OMP("omp parallel for schedule(static) if((size_t)d->n * d->c * hw > DLB_CPU_PAR_MIN)")
    for (uint32_t c = 0; c < d->c; c++) {
        float t[1024];
        double sum = 0.0;
        for (uint32_t n = 0; n < d->n; n++) {
            size_t base = ((size_t)n * d->c + c) * hw;
            for (size_t k = 0; k < hw; k += 1024) {
                size_t len = hw - k < 1024 ? hw - k : 1024;
                float part = 0.0f;
                dlb_cpu_load_f32(dy, base + k, len, t);
                for (size_t i = 0; i < len; i++)
                    part += t[i];
                sum += part;
            }
        }
        out[c] = (float)sum;
    }
}

dlb_status dlb_cpu_bn_bwd(struct dlb_backend *be,
                          const struct dlb_batchnorm_desc *d,
                          const struct dlb_buffer *x,
                          const struct dlb_buffer *dy,
                          const struct dlb_buffer *gamma,
                          const struct dlb_buffer *save_mean,
                          const struct dlb_buffer *save_invstd,
                          struct dlb_buffer *dx, struct dlb_buffer *dgamma,
                          struct dlb_buffer *dbeta)
{
    const char *op = "batchnorm_bwd";
    const struct dlb_buffer *data[3] = { x, dy, dx };
    const struct dlb_buffer *chan[5] = { gamma, save_mean, save_invstd, dgamma,
                                         dbeta };
    struct dlb_cpu_prim *p;
    dlb_status s;
    if ((s = check_all(be, op, d, data, 3, chan, 5)) ||
        (s = bn_get(be, DLB_CPU_BN_BWD, d, x->dtype, &p)))
        return s;
    {
        /* oneDNN wants the variance; the interface saved 1/sqrt(var+eps). */
        float *var = handle(p->mem[M_OWN_VAR]);
        const float *inv = save_invstd->data;
        for (uint32_t c = 0; c < d->c; c++)
            var[c] = (float)(1.0 / ((double)inv[c] * inv[c]) - d->eps);
    }
    /* dbeta first: dx may be dy's memory in a caller's in-place use. */
    channel_sums(d, dy, dbeta->data);
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SRC], x->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_DDST], dy->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_DST], dx->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SCALE], gamma->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SHIFT], dgamma->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_MEAN], save_mean->data));
    dnnl_exec_arg_t args[7] = {
        { DNNL_ARG_SRC, p->mem[M_SRC] },
        { DNNL_ARG_MEAN, p->mem[M_MEAN] },
        { DNNL_ARG_VARIANCE, p->mem[M_OWN_VAR] },
        { DNNL_ARG_DIFF_DST, p->mem[M_DDST] },
        { DNNL_ARG_SCALE, p->mem[M_SCALE] },
        { DNNL_ARG_DIFF_SRC, p->mem[M_DST] },
        { DNNL_ARG_DIFF_SCALE, p->mem[M_SHIFT] },
    };
    DLB_DNNL(be, op, dlb_cpu_exec(dlb_backend_ctx(be), p->prim[0], 7, args));
    dlb_cpu_written(dx);
    dlb_cpu_written(dgamma);
    dlb_cpu_written(dbeta);
out:
    return s;
}
