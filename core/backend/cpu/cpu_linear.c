/* Fully connected layers on oneDNN's inner product: y = x w^T + b with
 * w [out][in]. The weights' layout is left to oneDNN and kept as a shadow
 * of the buffer (dlb_cpu_shadow); activations stay row-major. */
#include "cpu.h"

#include <string.h>

struct ip_arg {
    enum dlb_cpu_op kind;
    const struct dlb_linear_desc *d;
    const struct dlb_buffer *const *t; /* x (or dx), w (or dw), b (or db), y */
};

static dlb_status ip_build(struct dlb_backend *be, struct dlb_cpu_prim *p,
                           const void *arg)
{
    const struct ip_arg *a = arg;
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    const char *op = "linear";
    const struct dlb_buffer *const *t = a->t;
    dnnl_dims_t xd = { a->d->n, a->d->in }, wd = { a->d->out, a->d->in };
    dnnl_dims_t bd = { a->d->out }, yd = { a->d->n, a->d->out };
    dnnl_data_type_t xt = dlb_cpu_dnnl_type(t[0]->dtype);
    dnnl_data_type_t wt = dlb_cpu_dnnl_type(t[1]->dtype);
    dnnl_data_type_t yt = dlb_cpu_dnnl_type(t[3]->dtype);
    dlb_dnnl_md x, w, b, y, wa;
    dlb_status s = DLB_OK;
    memset(&b, 0, sizeof b);
    DLB_DNNL(be, op, dlb_cpu_md_plain(&x, 2, xd, xt));
    DLB_DNNL(be, op, dlb_cpu_md_plain(&w, 2, wd, wt));
    DLB_DNNL(be, op, dlb_cpu_md_plain(&y, 2, yd, yt));
    DLB_DNNL(be, op, dlb_dnnl_md_tag(&wa, 2, wd, wt,
                                                  dnnl_format_tag_any));
    if (t[2])
        DLB_DNNL(be, op, dlb_cpu_md_plain(&b, 1, bd,
                                          dlb_cpu_dnnl_type(t[2]->dtype)));
    /* The forward pd: the primitive, or the backward passes' hint. */
    int hint = a->kind == DLB_CPU_IP_FWD ? 0 : DLB_CPU_HINT;
    DLB_DNNL(be, op, dlb_dnnl_ip_fwd_pd(&p->pd[hint], cpu->engine,
                                        dnnl_forward_training, &x, &wa,
                                        t[2] ? &b : NULL, &y, NULL));
    if (a->kind == DLB_CPU_IP_FWD) {
        DLB_DNNL(be, op, dlb_cpu_make(p, 0));
        struct dlb_cpu_tensor io[3] = {
            { DNNL_ARG_SRC, dnnl_query_src_md, DLB_CPU_IN, x },
            { DNNL_ARG_WEIGHTS, dnnl_query_weights_md, DLB_CPU_IN_WEIGHTS, w },
            { DNNL_ARG_DST, dnnl_query_dst_md, DLB_CPU_OUT, y },
        };
        DLB_DNNL(be, op, dlb_cpu_io_setup(cpu, p, io, 3));
    } else {
        if (a->kind == DLB_CPU_IP_BWD_DATA) {
            DLB_DNNL(be, op, dlb_dnnl_ip_bwd_data_pd(
                &p->pd[0], cpu->engine, &x, &wa, &y, p->pd[DLB_CPU_HINT]));
            DLB_DNNL(be, op, dlb_cpu_make(p, 0));
            struct dlb_cpu_tensor io[3] = {
                { DNNL_ARG_DIFF_DST, dnnl_query_diff_dst_md, DLB_CPU_IN, y },
                { DNNL_ARG_WEIGHTS, dnnl_query_weights_md, DLB_CPU_IN_WEIGHTS,
                  w },
                { DNNL_ARG_DIFF_SRC, dnnl_query_diff_src_md, DLB_CPU_OUT, x },
            };
            DLB_DNNL(be, op, dlb_cpu_io_setup(cpu, p, io, 3));
        } else {
            DLB_DNNL(be, op, dlb_dnnl_ip_bwd_weights_pd(
                &p->pd[0], cpu->engine, &x, &wa, t[2] ? &b : NULL, &y,
                p->pd[DLB_CPU_HINT]));
            DLB_DNNL(be, op, dlb_cpu_make(p, 0));
            struct dlb_cpu_tensor io[3] = {
                { DNNL_ARG_SRC, dnnl_query_src_md, DLB_CPU_IN, x },
                { DNNL_ARG_DIFF_DST, dnnl_query_diff_dst_md, DLB_CPU_IN, y },
                { DNNL_ARG_DIFF_WEIGHTS, dnnl_query_diff_weights_md,
                  DLB_CPU_OUT_WEIGHTS, w },
            };
            DLB_DNNL(be, op, dlb_cpu_io_setup(cpu, p, io, 3));
        }
    }
    if (t[2])
        DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[12], &b));
out:
    return s;
}

static dlb_status ip_get(struct dlb_backend *be, enum dlb_cpu_op kind,
                         const struct dlb_linear_desc *d,
                         const struct dlb_buffer *const t[4],
                         struct dlb_cpu_prim **out)
{
    struct dlb_cpu_key k;
    struct ip_arg a = { kind, d, t };
    memset(&k, 0, sizeof k);
    k.op = kind;
    k.w[0] = d->n;
    k.w[1] = d->in;
    k.w[2] = d->out;
    for (int i = 0; i < 4; i++)
        k.w[3 + i] = t[i] ? (uint32_t)t[i]->dtype : 0xffu;
    return dlb_cpu_cache_get(be, &k, ip_build, &a, out);
}

static dlb_status check(struct dlb_backend *be, const char *op,
                        const struct dlb_linear_desc *d,
                        const struct dlb_buffer *const t[4])
{
    static const char *names[4] = { "x", "w", "b", "y" };
    size_t counts[4] = { (size_t)d->n * d->in, (size_t)d->out * d->in, d->out,
                         (size_t)d->n * d->out };
    dlb_status s;
    if (!d->n || !d->in || !d->out)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: empty shape "
                                "%ux%u->%u", op, d->n, d->in, d->out);
    for (int i = 0; i < 4; i++)
        if (t[i] && (s = dlb_cpu_check_float(be, op, names[i], t[i],
                                             counts[i])))
            return s;
    return DLB_OK;
}

dlb_status dlb_cpu_linear_fwd(struct dlb_backend *be,
                              const struct dlb_linear_desc *d,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *w,
                              const struct dlb_buffer *b, struct dlb_buffer *y)
{
    const char *op = "linear_fwd";
    const struct dlb_buffer *t[4] = { x, w, b, y };
    struct dlb_cpu_prim *p;
    dlb_status s;
    if (!x || !w || !y)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: x, w and y are "
                                "required", op);
    if ((s = check(be, op, d, t)) ||
        (s = ip_get(be, DLB_CPU_IP_FWD, d, t, &p)))
        return s;
    dnnl_exec_arg_t bias = { DNNL_ARG_BIAS, p->mem[12] };
    if (b)
        DLB_DNNL(be, op, dlb_cpu_bind(p->mem[12], b->data));
    const struct dlb_buffer *io[3] = { x, w, y };
    s = dlb_cpu_io_run(be, p, op, io, b ? 1 : 0, &bias);
out:
    return s;
}

dlb_status dlb_cpu_linear_bwd(struct dlb_backend *be,
                              const struct dlb_linear_desc *d,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *w,
                              const struct dlb_buffer *dy, struct dlb_buffer *dx,
                              struct dlb_buffer *dw, struct dlb_buffer *db)
{
    const char *op = "linear_bwd";
    const struct dlb_buffer *tw[4] = { x, dw, db, dy };
    const struct dlb_buffer *tx[4] = { dx, w, NULL, dy };
    struct dlb_cpu_prim *p;
    dlb_status s;
    if (!x || !w || !dy || !dw)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: x, w, dy and dw "
                                "are required", op);
    if ((s = check(be, op, d, tw)) || (dx && (s = check(be, op, d, tx))))
        return s;
    /* dw first: dx never aliases x or dy, so the order is free. */
    if ((s = ip_get(be, DLB_CPU_IP_BWD_WEIGHTS, d, tw, &p)))
        return s;
    dnnl_exec_arg_t bias = { DNNL_ARG_DIFF_BIAS, p->mem[12] };
    if (db)
        DLB_DNNL(be, op, dlb_cpu_bind(p->mem[12], db->data));
    const struct dlb_buffer *iow[3] = { x, dy, dw };
    if ((s = dlb_cpu_io_run(be, p, op, iow, db ? 1 : 0, &bias)))
        return s;
    if (db)
        dlb_cpu_written(db);
    if (dx) {
        if ((s = ip_get(be, DLB_CPU_IP_BWD_DATA, d, tx, &p)))
            return s;
        const struct dlb_buffer *iox[3] = { dy, w, dx };
        s = dlb_cpu_io_run(be, p, op, iox, 0, NULL);
    }
out:
    return s;
}
