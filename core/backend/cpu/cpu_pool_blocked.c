/* Max and average pooling on the layouts a convolution's output arrives
 * in (nChw16c, nChw8c, nhwc): the loops of cpu_pool_loops.c over vectors
 * of channels, so one pass reads the tensor in its own order and the
 * output keeps the layout (no reorder on either side); oneDNN's pooling
 * primitive where no workspace is wanted (inference).
 * The workspace is the S32 index within the input plane, as on the host
 * view, stored in the output's layout. Padding lanes read zeros and
 * write zeros (index 0), as oneDNN expects of padding. */
#include "cpu.h"

#include <string.h>

/* The layout of x as a code of dlb_cpu_layout_code (nChw16c, nChw8c,
 * nhwc), or 0 when it is none of them. */
static int blocked_code(const struct dlb_buffer *x, uint32_t n, uint32_t c,
                        uint32_t h, uint32_t w)
{
    const dlb_dnnl_md *lay = dlb_cpu_layout(x);
    int code;
    /* A host view of 1x1 planes over whole 16-channel blocks is nChw16c
     * too: the global average pool's gradient from the linear layer. */
    if (!lay && h * w == 1 && c % 16 == 0)
        return 1;
    if (!lay || lay->ndims != 4 || lay->dims[0] != (dnnl_dim_t)n ||
        lay->dims[1] != (dnnl_dim_t)c || lay->dims[2] != (dnnl_dim_t)h ||
        lay->dims[3] != (dnnl_dim_t)w)
        return 0;
    code = dlb_cpu_layout_code(lay);
    return code >= 1 && code <= 3 ? code : 0;
}

static dnnl_status_t md_of(int code, uint32_t n, uint32_t c, uint32_t h,
                           uint32_t w, enum dlb_dtype t, dlb_dnnl_md *md)
{
    dnnl_dims_t dims = { n, c, h, w };
    return dlb_dnnl_md_tag(md, 4, dims, dlb_cpu_dnnl_type(t),
                           code == 1   ? dnnl_aBcd16b
                           : code == 2 ? dnnl_aBcd8b
                                       : dnnl_acdb);
}

/* Pooling without a workspace (inference) on oneDNN's pooling primitive:
 * its nhwc kernel ran LeNet's 10-channel pool1 at batch 1024 in about a
 * quarter of the own loop's time and scales over threads; training keeps
 * the own loops, whose workspace is the interface's (oneDNN's is not). */
/* The oneDNN pooling primitive for a->d over layouts a->x and a->y, for
 * the primitive cache; inference int8 pooling builds the same one. */
dlb_status dlb_cpu_pool_build(struct dlb_backend *be, struct dlb_cpu_prim *p,
                              const void *arg)
{
    const struct dlb_cpu_pool_arg *a = arg;
    const struct dlb_pool_desc *d = a->d;
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    const char *op = a->op;
    dnnl_dims_t strides = { d->stride_h, d->stride_w };
    dnnl_dims_t kernel = { d->kh, d->kw };
    dnnl_dims_t pad = { d->pad_h, d->pad_w };
    dnnl_dims_t pad_r;
    dlb_status s = DLB_OK;
    /* oneDNN's right padding makes the output size exact. */
    pad_r[0] = (dnnl_dim_t)(d->out_h - 1) * d->stride_h + d->kh - d->in_h -
               d->pad_h;
    pad_r[1] = (dnnl_dim_t)(d->out_w - 1) * d->stride_w + d->kw - d->in_w -
               d->pad_w;
    DLB_DNNL(be, op, dlb_dnnl_pool_fwd_pd(
        &p->pd[0], cpu->engine, dnnl_forward_inference,
        d->kind == DLB_POOL_MAX ? dnnl_pooling_max
                                : dnnl_pooling_avg_include_padding,
        a->x, a->y, strides, kernel, pad, pad_r));
    DLB_DNNL(be, op, dlb_cpu_make(p, 0));
    DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[0], a->x));
    DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[1], a->y));
out:
    return s;
}

static dlb_status pool_infer(struct dlb_backend *be,
                             const struct dlb_pool_desc *d, int code,
                             const struct dlb_buffer *x, struct dlb_buffer *y,
                             const dlb_dnnl_md *ymd)
{
    struct dlb_cpu_key k;
    struct dlb_cpu_pool_arg a = { "pool_fwd", d, dlb_cpu_layout(x), ymd };
    struct dlb_cpu_prim *p;
    dlb_status s;
    uint32_t v[] = { d->kind, d->n, d->c, d->in_h, d->in_w, d->kh, d->kw,
                     d->stride_h, d->stride_w, d->pad_h, d->pad_w,
                     (uint32_t)code, x->dtype, y->dtype };
    memset(&k, 0, sizeof k);
    k.op = DLB_CPU_POOL_FWD_INFER;
    memcpy(k.w, v, sizeof v);
    if ((s = dlb_cpu_cache_get(be, &k, dlb_cpu_pool_build, &a, &p)) ||
        (s = dlb_cpu_set_layout(be, y, ymd)))
        return s;
    DLB_DNNL(be, "pool_fwd", dlb_cpu_bind(p->mem[0], x->data));
    DLB_DNNL(be, "pool_fwd", dlb_cpu_bind(p->mem[1], y->data));
    dnnl_exec_arg_t args[2] = { { DNNL_ARG_SRC, p->mem[0] },
                                { DNNL_ARG_DST, p->mem[1] } };
    DLB_DNNL(be, "pool_fwd", dlb_cpu_exec(dlb_backend_ctx(be), p->prim[0], 2,
                                          args));
    dlb_cpu_written(y);
out:
    return s;
}

/* The forward's blocked layouts (code) and output descriptors, or 0 when
 * x is in none of them or of a type the loops lack. */
static int fwd_layouts(const struct dlb_op *o, dlb_dnnl_md *ymd, dlb_dnnl_md *wmd)
{
    const struct dlb_pool_desc *d = &o->pool;
    int code = blocked_code(o->x, d->n, d->c, d->in_h, d->in_w);
    int max = d->kind == DLB_POOL_MAX;
    if (!code || (o->x->dtype != DLB_F32 && o->x->dtype != DLB_BF16))
        return 0;
    if (md_of(code, d->n, d->c, d->out_h, d->out_w, o->y->dtype, ymd) ||
        (max && o->ws &&
         md_of(code, d->n, d->c, d->out_h, d->out_w, DLB_S32, wmd)))
        return 0;
    return code;
}

/* Inference on a blocked layout: no workspace wanted, y of x's type. */
static int infer_only(const struct dlb_op *o)
{
    return (o->pool.kind != DLB_POOL_MAX || !o->ws) &&
           dlb_cpu_layout(o->x) && o->x->dtype == o->y->dtype;
}

int dlb_cpu_pool_onednn_applies(struct dlb_backend *be, const struct dlb_op *o)
{
    dlb_dnnl_md ymd, wmd;
    (void)be;
    return fwd_layouts(o, &ymd, &wmd) && infer_only(o);
}

dlb_status dlb_cpu_pool_onednn_fwd(struct dlb_backend *be, const struct dlb_op *o)
{
    dlb_dnnl_md ymd, wmd;
    int code = fwd_layouts(o, &ymd, &wmd);
    return pool_infer(be, &o->pool, code, o->x, o->y, &ymd);
}

int dlb_cpu_pool_blocked_fwd_applies(struct dlb_backend *be,
                                     const struct dlb_op *o)
{
    dlb_dnnl_md ymd, wmd;
    (void)be;
    return fwd_layouts(o, &ymd, &wmd) != 0;
}

dlb_status dlb_cpu_pool_blocked_fwd(struct dlb_backend *be, const struct dlb_op *o)
{
    const struct dlb_pool_desc *d = &o->pool;
    dlb_dnnl_md ymd, wmd;
    int code = fwd_layouts(o, &ymd, &wmd);
    int max = d->kind == DLB_POOL_MAX;
    struct dlb_buffer *y = o->y, *ws = o->ws;
    dlb_status st;
    if ((st = dlb_cpu_set_layout(be, y, &ymd)) ||
        (max && ws && (st = dlb_cpu_set_layout(be, ws, &wmd))))
        return st;
    size_t B = code == 1 ? 16 : code == 2 ? 8 : d->c;
    size_t nb = (size_t)ymd.padded_dims[1] / B;
    struct dlb_cpu_pool_blocks r = { d, B, (size_t)d->n * nb, o->x, y };
    int32_t *wsp = max && ws ? ws->data : NULL;
    if ((st = dlb_cpu_pool_loops_fwd(be, &r, wsp)) == DLB_OK && wsp)
        dlb_cpu_written(ws);
    return st;
}

/* The backward's layout: the workspace's for max pooling, dy's for
 * average; 0 when neither is blocked or the types are not the loops'. */
static int bwd_layouts(const struct dlb_op *o, dlb_dnnl_md *dymd, dlb_dnnl_md *xmd)
{
    const struct dlb_pool_desc *d = &o->pool;
    int max = d->kind == DLB_POOL_MAX;
    const struct dlb_buffer *ref = max ? o->ws : o->dy;
    int code = blocked_code(ref, d->n, d->c, d->out_h, d->out_w);
    if (!code || (o->dy->dtype != DLB_F32 && o->dy->dtype != DLB_BF16))
        return 0;
    if (md_of(code, d->n, d->c, d->out_h, d->out_w, o->dy->dtype, dymd) ||
        md_of(code, d->n, d->c, d->in_h, d->in_w, o->dx->dtype, xmd))
        return 0;
    return code;
}

int dlb_cpu_pool_blocked_bwd_applies(struct dlb_backend *be,
                                     const struct dlb_op *o)
{
    dlb_dnnl_md dymd, xmd;
    (void)be;
    return bwd_layouts(o, &dymd, &xmd) != 0;
}

dlb_status dlb_cpu_pool_blocked_bwd(struct dlb_backend *be, const struct dlb_op *o)
{
    const struct dlb_pool_desc *d = &o->pool;
    int max = d->kind == DLB_POOL_MAX;
    dlb_dnnl_md dymd, xmd;
    int code = bwd_layouts(o, &dymd, &xmd);
    void *dyv = NULL;
    dlb_status st;
    /* dy over to the layout first: dx may share nothing with it, but its
     * storage can move when set. */
    if ((st = dlb_cpu_view(be, o->dy, &dymd, DLB_CPU_SLOT_VIEW_A, &dyv)) ||
        (st = dlb_cpu_set_layout(be, o->dx, &xmd)))
        return st;
    size_t B = code == 1 ? 16 : code == 2 ? 8 : d->c;
    size_t nb = (size_t)xmd.padded_dims[1] / B;
    /* A view of dy in its own type and layout. */
    struct dlb_buffer dyb = *o->dy;
    dyb.data = dyv;
    struct dlb_cpu_pool_blocks r = { d, B, (size_t)d->n * nb, &dyb, o->dx };
    return dlb_cpu_pool_loops_bwd(be, &r, max ? o->ws->data : NULL);
}
