/* Batch normalisation on oneDNN. The interface keeps the saved inverse
 * standard deviation and PyTorch's unbiased running variance, oneDNN the
 * biased variance: the per-channel conversions are own loops over c.
 * Backward computes dgamma and dbeta itself (scale and shift flags): it
 * failed at execution with "invalid arguments" in oneDNN 2.6 until
 * DNNL_ARG_SHIFT was passed too, which backward does not read but checks
 * (oneDNN 3 refuses the call with it: DLB_DNNL_BN_BWD_TAKES_SHIFT); an
 * own channel sum of dy for dbeta was one more pass over dy.
 *
 * A convolution's output arrives blocked (nChw16c): batch norm runs on it
 * as it is, with oneDNN's blocked kernels, which are several times faster
 * than its generic kernel on NCHW, and the output keeps the layout; bf16
 * data in nChw16c goes to the own loops of cpu_bnorm_bf16.c.
 *
 * Batch norm + ReLU (dlb_backend_bn_relu): fused in those own loops; on
 * every other route the two run one after the other, as the model ran
 * them before, so f32 networks see the same kernels. */
#include "cpu.h"

#include <math.h>
#include <string.h>

/* mem slots: 0 src, 1 dst (or diff_src), 2 scale, 3 shift (or diff_scale),
 * 4 mean, 5 variance, 6 diff_dst; 7 and 8 own mean/variance storage;
 * 9 diff_shift. */
enum { M_SRC, M_DST, M_SCALE, M_SHIFT, M_MEAN, M_VAR, M_DDST, M_OWN_MEAN,
       M_OWN_VAR, M_DSHIFT };

struct bn_arg {
    enum dlb_cpu_op kind;
    const struct dlb_batchnorm_desc *d;
    const dlb_dnnl_md *data; /* the layout it runs on */
};

static dlb_status bn_build(struct dlb_backend *be, struct dlb_cpu_prim *p,
                           const void *arg)
{
    const struct bn_arg *a = arg;
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    const char *op = "batchnorm";
    dnnl_dims_t cd = { a->d->c };
    dlb_dnnl_md data = *a->data, chan;
    unsigned flags = dnnl_use_scale | dnnl_use_shift;
    dlb_status s = DLB_OK;
    DLB_DNNL(be, op, dlb_cpu_md_plain(&chan, 1, cd, dnnl_f32));
    if (a->kind == DLB_CPU_BN_FWD_INFER)
        flags |= dnnl_use_global_stats;
    int bwd = a->kind == DLB_CPU_BN_BWD;
    DLB_DNNL(be, op, dlb_dnnl_bnorm_fwd_pd(
        &p->pd[bwd ? DLB_CPU_HINT : 0], cpu->engine,
        a->kind == DLB_CPU_BN_FWD_INFER ? dnnl_forward_inference
                                        : dnnl_forward_training,
        &data, a->d->eps, flags));
    if (bwd)
        DLB_DNNL(be, op, dlb_dnnl_bnorm_bwd_pd(&p->pd[0], cpu->engine,
                                               dnnl_backward, &data, a->d->eps,
                                               flags, p->pd[DLB_CPU_HINT]));
    DLB_DNNL(be, op, dlb_cpu_make(p, 0));
    for (int i = M_SRC; i <= M_DDST; i++)
        DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[i],
                                     i == M_SRC || i == M_DST || i == M_DDST
                                         ? &data : &chan));
    DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[M_DSHIFT], &chan));
    /* Batch statistics in oneDNN's form, owned by the entry. */
    DLB_DNNL(be, op, dlb_dnnl_memory_create(&p->mem[M_OWN_MEAN], &chan,
                                            cpu->engine, DNNL_MEMORY_ALLOCATE));
    DLB_DNNL(be, op, dlb_dnnl_memory_create(&p->mem[M_OWN_VAR], &chan,
                                            cpu->engine, DNNL_MEMORY_ALLOCATE));
out:
    return s;
}

/* The layout batch norm runs on: x's when it is a blocked layout of
 * [n][c][h][w] that oneDNN's fast kernels take, else the host view
 * [n][c][hw][1] (x made plain). *code says which, for the key. */
static dlb_status bn_layout(struct dlb_backend *be,
                            const struct dlb_batchnorm_desc *d,
                            const struct dlb_buffer *x, dlb_dnnl_md *md,
                            int *code)
{
    const dlb_dnnl_md *lay = dlb_cpu_layout(x);
    dnnl_dims_t dims = { d->n, d->c, d->hw, 1 };
    *code = 0;
    if (lay && lay->ndims == 4 && lay->dims[0] == (dnnl_dim_t)d->n &&
        lay->dims[1] == (dnnl_dim_t)d->c &&
        lay->dims[2] * lay->dims[3] == (dnnl_dim_t)d->hw &&
        (*code = dlb_cpu_layout_code(lay)) != 0) {
        *md = *lay;
        return DLB_OK;
    }
    *code = 0;
    if (dlb_cpu_md_plain(md, 4, dims, dlb_cpu_dnnl_type(x->dtype)))
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu batchnorm: bad "
                                "shape");
    return dlb_cpu_make_plain(be, x);
}

static dlb_status bn_get(struct dlb_backend *be, enum dlb_cpu_op kind,
                         const struct dlb_batchnorm_desc *d,
                         const dlb_dnnl_md *data, int code,
                         struct dlb_cpu_prim **out)
{
    struct dlb_cpu_key k;
    struct bn_arg a = { kind, d, data };
    memset(&k, 0, sizeof k);
    k.op = kind;
    k.w[0] = d->n;
    k.w[1] = d->c;
    k.w[2] = d->hw;
    memcpy(&k.w[3], &d->eps, sizeof d->eps);
    k.w[4] = (uint32_t)data->data_type;
    k.w[5] = (uint32_t)code;
    k.w[6] = (uint32_t)data->dims[2];
    k.w[7] = (uint32_t)data->dims[3];
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

/* Batch norm computes in f32: oneDNN 2.6's bf16 kernels ran 2-5x slower
 * than its f32 ones here, more than the conversions cost. For bf16 data
 * the tensors are converted into scratch and back; *md32 is the f32 twin
 * of md. */
static dlb_status f32_twin(struct dlb_backend *be, const dlb_dnnl_md *md,
                           dlb_dnnl_md *md32)
{
    dnnl_status_t st = dlb_dnnl_md_retype(md32, md, dnnl_f32);
    return st == dnnl_success ? DLB_OK
                              : dlb_cpu_dnnl_fail(be, st, "batchnorm",
                                                  "dlb_dnnl_md_retype");
}

/* src in md (bf16) converted into scratch `slot` as md32 (f32), or src
 * itself for f32 data. */
static dlb_status to_f32(struct dlb_backend *be, const dlb_dnnl_md *md,
                         const dlb_dnnl_md *md32, const void *src,
                         int slot, void **out)
{
    *out = (void *)(uintptr_t)src;
    if (md->data_type == dnnl_f32)
        return DLB_OK;
    if (!(*out = dlb_cpu_scratch(be, slot, dlb_dnnl_md_size(md32))))
        return DLB_ERR_NOMEM;
    return dlb_cpu_reorder_run(be, md, src, md32, *out);
}

/* Where an f32 result for `dst` is computed: dst's data, or scratch. */
static dlb_status f32_out(struct dlb_backend *be, const dlb_dnnl_md *md,
                          const dlb_dnnl_md *md32, void *dst, int slot,
                          void **out)
{
    *out = dst;
    if (md->data_type != dnnl_f32 &&
        !(*out = dlb_cpu_scratch(be, slot, dlb_dnnl_md_size(md32))))
        return DLB_ERR_NOMEM;
    return DLB_OK;
}

static dlb_status from_f32(struct dlb_backend *be, const dlb_dnnl_md *md,
                           const dlb_dnnl_md *md32, const void *src,
                           void *dst)
{
    return md->data_type == dnnl_f32
               ? DLB_OK : dlb_cpu_reorder_run(be, md32, src, md, dst);
}

/* The forward passes: layout, f32 operands, primitive; runs it with the
 * channel arguments `chan` (gamma, beta, then the running mean and
 * variance for inference, or the saved mean and inverse deviation for
 * training) and converts y back. Training returns the batch mean and
 * biased variance in *mean and *var: oneDNN's, or the bf16 loops' in the
 * saved statistics' buffers. */
static dlb_status bn_forward(struct dlb_backend *be, const char *op,
                             enum dlb_cpu_op kind,
                             const struct dlb_batchnorm_desc *d,
                             const struct dlb_buffer *x, struct dlb_buffer *y,
                             const struct dlb_buffer *const *cb,
                             const float **mean, const float **var,
                             int *relu)
{
    struct dlb_cpu_prim *p;
    dlb_dnnl_md md, md32;
    void *xp, *yp;
    dlb_status s;
    int code, n_args = kind == DLB_CPU_BN_FWD_INFER ? 6 : 4;
    if ((s = bn_layout(be, d, x, &md, &code)) ||
        (s = dlb_cpu_set_layout(be, y, code ? &md : NULL)))
        return s;
    int train = kind != DLB_CPU_BN_FWD_INFER;
    if (dlb_cpu_bn16_applies(&md, d->c)) {
        float *m = train ? cb[2]->data : NULL, *v = train ? cb[3]->data : NULL;
        s = dlb_cpu_bn16_fwd(be, d, code == 3, x->data, y->data, cb[0]->data,
                             cb[1]->data, train ? NULL : cb[2]->data,
                             train ? NULL : cb[3]->data, m, v, *relu);
        *relu = 0; /* done */
        *mean = m;
        *var = v;
        dlb_cpu_written(y);
        return s;
    }
    if ((s = f32_twin(be, &md, &md32)) ||
        (s = to_f32(be, &md, &md32, x->data, DLB_CPU_SLOT_F32, &xp)) ||
        (s = f32_out(be, &md, &md32, y->data, DLB_CPU_SLOT_F32_B, &yp)) ||
        (s = bn_get(be, kind, d, &md32, code, &p)))
        return s;
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SRC], xp));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_DST], yp));
    for (int i = 0; i < n_args - 2; i++)
        DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SCALE + i], cb[i]->data));
    dnnl_exec_arg_t args[6] = {
        { DNNL_ARG_SRC, p->mem[M_SRC] }, { DNNL_ARG_DST, p->mem[M_DST] },
        { DNNL_ARG_SCALE, p->mem[M_SCALE] }, { DNNL_ARG_SHIFT, p->mem[M_SHIFT] },
        { DNNL_ARG_MEAN, p->mem[train ? M_OWN_MEAN : M_MEAN] },
        { DNNL_ARG_VARIANCE, p->mem[train ? M_OWN_VAR : M_VAR] },
    };
    DLB_DNNL(be, op, dlb_cpu_exec(dlb_backend_ctx(be), p->prim[0], 6, args));
    *mean = handle(p->mem[M_OWN_MEAN]);
    *var = handle(p->mem[M_OWN_VAR]);
    s = from_f32(be, &md, &md32, yp, y->data);
    dlb_cpu_written(y);
out:
    return s;
}

/* Training forward; *relu set: with the ReLU after it, which it leaves
 * set when the caller must still apply it (the route fused none). */
static dlb_status bn_train(struct dlb_backend *be, const char *op,
                           const struct dlb_batchnorm_desc *d,
                           const struct dlb_buffer *x,
                           const struct dlb_buffer *gamma,
                           const struct dlb_buffer *beta,
                           struct dlb_buffer *running_mean,
                           struct dlb_buffer *running_var,
                           struct dlb_buffer *save_mean,
                           struct dlb_buffer *save_invstd,
                           struct dlb_buffer *y, int *relu)
{
    const struct dlb_buffer *data[2] = { x, y };
    const struct dlb_buffer *chan[6] = { gamma, beta, running_mean,
                                         running_var, save_mean, save_invstd };
    const struct dlb_buffer *fwd[4] = { gamma, beta, save_mean, save_invstd };
    const float *mean, *var;
    dlb_status s;
    if ((s = check_all(be, op, d, data, 2, chan, 6)) ||
        (s = DLB_CPU_PLAIN(be, gamma, beta, running_mean, running_var,
                           save_mean, save_invstd)) ||
        (s = bn_forward(be, op, DLB_CPU_BN_FWD_TRAIN, d, x, y, fwd, &mean,
                        &var, relu)))
        return s;
    {
        /* mean and var may be save_mean's and save_invstd's storage: each
         * channel is read before it is written. */
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
    dlb_cpu_written(save_mean);
    dlb_cpu_written(save_invstd);
    dlb_cpu_written(running_mean);
    dlb_cpu_written(running_var);
    return DLB_OK;
}

dlb_status dlb_cpu_batchnorm_fwd_train(struct dlb_backend *be,
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
    int relu = 0;
    return bn_train(be, "batchnorm_fwd_train", d, x, gamma, beta,
                    running_mean, running_var, save_mean, save_invstd, y,
                    &relu);
}

dlb_status dlb_cpu_batchnorm_relu_fwd_train(struct dlb_backend *be,
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
    int relu = 1;
    dlb_status s = bn_train(be, "batchnorm_relu_fwd_train", d, x, gamma, beta,
                            running_mean, running_var, save_mean, save_invstd,
                            y, &relu);
    if (s == DLB_OK && relu)
        s = dlb_cpu_relu_fwd(be, (size_t)d->n * d->c * d->hw, 0.0f, y, y);
    return s;
}

dlb_status dlb_cpu_batchnorm_fwd_infer(struct dlb_backend *be,
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
    const float *mean, *var;
    dlb_status s;
    if ((s = check_all(be, op, d, data, 2, chan, 4)) ||
        (s = DLB_CPU_PLAIN(be, gamma, beta, running_mean, running_var)))
        return s;
    int relu = 0;
    return bn_forward(be, op, DLB_CPU_BN_FWD_INFER, d, x, y, chan, &mean, &var,
                      &relu);
}

/* Backward; beta given: of batch norm + ReLU, on the bf16 loops only
 * (bn_bwd_fuses), y the fused forward's output. */
static dlb_status bn_backward(struct dlb_backend *be, const char *op,
                              const struct dlb_batchnorm_desc *d,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *dy,
                              const struct dlb_buffer *gamma,
                              const struct dlb_buffer *beta,
                              const struct dlb_buffer *save_mean,
                              const struct dlb_buffer *save_invstd,
                              struct dlb_buffer *dx,
                              struct dlb_buffer *dgamma,
                              struct dlb_buffer *dbeta)
{
    const struct dlb_buffer *data[3] = { x, dy, dx };
    const struct dlb_buffer *chan[5] = { gamma, save_mean, save_invstd, dgamma,
                                         dbeta };
    struct dlb_cpu_prim *p;
    dlb_dnnl_md md, md32;
    void *dyp = dy->data, *xp, *dy32, *dxp;
    dlb_status s;
    int code;
    if ((s = check_all(be, op, d, data, 3, chan, 5)) ||
        (s = DLB_CPU_PLAIN(be, gamma, save_mean, save_invstd, dgamma, dbeta)) ||
        (s = bn_layout(be, d, x, &md, &code)))
        return s;
    /* dy comes over to x's layout before dx (which may be dy) is set. */
    s = code ? dlb_cpu_view(be, dy, &md, DLB_CPU_SLOT_VIEW_A, &dyp)
             : dlb_cpu_make_plain(be, dy);
    if (s || (s = dlb_cpu_set_layout(be, dx, code ? &md : NULL)))
        return s;
    if (dlb_cpu_bn16_applies(&md, d->c)) {
        s = dlb_cpu_bn16_bwd(be, d, code == 3, x->data, dyp, dx->data, gamma->data,
                             save_mean->data, save_invstd->data,
                             beta ? beta->data : NULL, dgamma->data,
                             dbeta->data);
        dlb_cpu_written(dx);
        dlb_cpu_written(dgamma);
        dlb_cpu_written(dbeta);
        return s;
    }
    if ((s = f32_twin(be, &md, &md32)) ||
        (s = to_f32(be, &md, &md32, x->data, DLB_CPU_SLOT_F32, &xp)) ||
        (s = to_f32(be, &md, &md32, dyp, DLB_CPU_SLOT_F32_B, &dy32)) ||
        (s = f32_out(be, &md, &md32, dx->data, DLB_CPU_SLOT_F32_C, &dxp)) ||
        (s = bn_get(be, DLB_CPU_BN_BWD, d, &md32, code, &p)))
        return s;
    {
        /* oneDNN wants the variance; the interface saved 1/sqrt(var+eps). */
        float *var = handle(p->mem[M_OWN_VAR]);
        const float *inv = save_invstd->data;
        for (uint32_t c = 0; c < d->c; c++)
            var[c] = (float)(1.0 / ((double)inv[c] * inv[c]) - d->eps);
    }
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SRC], xp));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_DDST], dy32));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_DST], dxp));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SCALE], gamma->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_SHIFT], dgamma->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_DSHIFT], dbeta->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[M_MEAN], save_mean->data));
    dnnl_exec_arg_t args[9] = {
        { DNNL_ARG_SRC, p->mem[M_SRC] },
        { DNNL_ARG_MEAN, p->mem[M_MEAN] },
        { DNNL_ARG_VARIANCE, p->mem[M_OWN_VAR] },
        { DNNL_ARG_DIFF_DST, p->mem[M_DDST] },
        { DNNL_ARG_SCALE, p->mem[M_SCALE] },
        { DNNL_ARG_DIFF_SRC, p->mem[M_DST] },
        { DNNL_ARG_DIFF_SCALE, p->mem[M_SHIFT] },
        { DNNL_ARG_DIFF_SHIFT, p->mem[M_DSHIFT] },
        /* Last: not read, passed only where needed (cpu_dnnl_api.h). */
        { DNNL_ARG_SHIFT, p->mem[M_OWN_MEAN] },
    };
    DLB_DNNL(be, op, dlb_cpu_exec(dlb_backend_ctx(be), p->prim[0],
                                  8 + DLB_DNNL_BN_BWD_TAKES_SHIFT, args));
    s = from_f32(be, &md, &md32, dxp, dx->data);
    dlb_cpu_written(dx);
    dlb_cpu_written(dgamma);
    dlb_cpu_written(dbeta);
out:
    return s;
}

dlb_status dlb_cpu_batchnorm_bwd(struct dlb_backend *be,
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
    return bn_backward(be, "batchnorm_bwd", d, x, dy, gamma, NULL, save_mean,
                       save_invstd, dx, dgamma, dbeta);
}

/* Whether x takes the bf16 loops, which fuse the ReLU (bn_layout's test,
 * without its side effects). */
static int bn_bwd_fuses(const struct dlb_batchnorm_desc *d,
                        const struct dlb_buffer *x)
{
    const dlb_dnnl_md *lay = dlb_cpu_layout(x);
    return lay && lay->ndims == 4 && lay->dims[0] == (dnnl_dim_t)d->n &&
           lay->dims[1] == (dnnl_dim_t)d->c &&
           lay->dims[2] * lay->dims[3] == (dnnl_dim_t)d->hw &&
           dlb_cpu_layout_code(lay) != 0 && dlb_cpu_bn16_applies(lay, d->c);
}

dlb_status dlb_cpu_batchnorm_relu_bwd(struct dlb_backend *be,
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
    const char *op = "batchnorm_relu_bwd";
    const struct dlb_buffer *chan[1] = { beta };
    dlb_status s = check_all(be, op, d, &y, 1, chan, 1);
    if (s == DLB_OK && (s = DLB_CPU_PLAIN(be, beta)) == DLB_OK &&
        bn_bwd_fuses(d, x))
        return bn_backward(be, op, d, x, dy, gamma, beta, save_mean,
                           save_invstd, dx, dgamma, dbeta);
    /* The ReLU's gradient into dx, then batch norm's in place. */
    if (s == DLB_OK)
        s = dlb_cpu_relu_bwd(be, (size_t)d->n * d->c * d->hw, 0.0f, y, dy, dx);
    return s ? s : bn_backward(be, "batchnorm_bwd", d, x, dx, gamma, NULL,
                               save_mean, save_invstd, dx, dgamma, dbeta);
}
