/* int8 convolution (grouped too: oneDNN's grouped s8 weights) and inner
 * product on oneDNN (backend.h, API 1.1): u8 or s8 activations (an f32
 * input quantised first: cpu_int8_cols.c, which also runs one-channel
 * convolutions), s8 weights reordered once per write into the layout
 * (and, for s8 sources, the compensation) the kernel wants, the output
 * multipliers of int8.h as oneDNN's per-channel output scales, the source
 * zero point, a fused ReLU and the requantisation to u8/s8 (or a
 * dequantised f32 output) in one primitive.
 * On CPUs with VNNI oneDNN picks brgconv / brgemm avx512_core_vnni.
 *
 * oneDNN 2.6 has no runtime output scales for these kernels (creating one
 * says unimplemented), so the multipliers are baked into the primitive
 * and take part in the cache key through a hash: a quantised model has
 * one set per layer, so every layer still gets exactly one primitive.
 * oneDNN 3 takes them at execution (dlb_dnnl_attr_int8_out).
 * Activations are nhwc, the layout oneDNN's int8 kernels are written for,
 * and stay in it from one int8 layer to the next. */
#include "cpu.h"
#include "../int8.h"

#include <stdlib.h>
#include <string.h>

/* Slots of the entry's memory objects beyond the io tensors (0..5). */
enum { MEM_BIAS = 6, MEM_SRC_ZP = 7, MEM_DST_ZP = 8, MEM_SCALES = 9 };
#define FLAG_SRC_ZP 1
#define FLAG_DST_ZP 2

struct int8_arg {
    const char *op;
    int conv;
    const struct dlb_conv2d_desc *cd;
    const struct dlb_linear_desc *ld;
    const struct dlb_int8_desc *q;
    const struct dlb_buffer *x, *y;
    const int32_t *bias;    /* S32 [out_c] or NULL */
    int32_t src_zp;         /* the source zero point oneDNN applies */
    const float *mult;      /* out_c multipliers, or 1 (per tensor) */
    size_t n_mult;
    int add;                /* CONV2D_INT8_ADD: summed onto y (F32) */
    int sum_relu;           /* ... and the sum's ReLU, */
    float sum_relu_max;     /* clipped here when positive */
};

/* FNV-1a over the multipliers' bits: 64 bits, so that two layers of one
 * shape with different scales never share a primitive in practice. */
static uint64_t mult_hash(const float *m, size_t n)
{
    const unsigned char *p = (const unsigned char *)m;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n * sizeof *m; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h ^ n;
}

static dnnl_status_t int8_attr(const struct int8_arg *a, int *flags,
                               dnnl_primitive_attr_t *attr)
{
    int int8_out = a->y->dtype != DLB_F32;
    dnnl_dim_t channels = a->conv ? a->cd->out_c : a->ld->out;
    dnnl_status_t st;
    *flags = 0;
    if ((st = dnnl_primitive_attr_create(attr)) ||
        (st = a->add ? dlb_dnnl_attr_int8_sum(*attr, 4, channels,
                                              (dnnl_dim_t)a->n_mult, a->mult,
                                              a->q->relu, a->sum_relu,
                                              a->sum_relu_max)
                     : dlb_dnnl_attr_int8_out(*attr, a->conv ? 4 : 2, channels,
                                              (dnnl_dim_t)a->n_mult, a->mult,
                                              a->q->relu)))
        return st;
    if (a->src_zp) {
        if ((st = dlb_dnnl_attr_zero_point(*attr, DNNL_ARG_SRC)))
            return st;
        *flags |= FLAG_SRC_ZP;
    }
    if (int8_out && a->q->y_zero_point) {
        if ((st = dlb_dnnl_attr_zero_point(*attr, DNNL_ARG_DST)))
            return st;
        *flags |= FLAG_DST_ZP;
    }
    return dnnl_success;
}

/* The primitive descriptor: x, y nhwc (conv) or plain (linear), w any,
 * b plain; the plain x, w, y for the io tensors. */
static dnnl_status_t int8_pd(struct dlb_cpu *cpu, const struct int8_arg *a,
                             const_dnnl_primitive_attr_t attr,
                             dlb_dnnl_md *x, dlb_dnnl_md *w, dlb_dnnl_md *y,
                             dlb_dnnl_md *b, dnnl_primitive_desc_t *pd)
{
    dnnl_data_type_t xt = dlb_cpu_dnnl_type(a->x->dtype);
    dnnl_data_type_t yt = dlb_cpu_dnnl_type(a->y->dtype);
    dnnl_format_tag_t any = dnnl_format_tag_any;
    dlb_dnnl_md xa, ya, wa;
    dnnl_status_t st;
    memset(b, 0, sizeof *b);
    if (a->conv) {
        const struct dlb_conv2d_desc *d = a->cd;
        dnnl_dims_t xd = { d->n, d->in_c, d->in_h, d->in_w }, wd;
        dnnl_dims_t bd = { d->out_c };
        int wn = dlb_cpu_conv_w_dims(d, wd); /* grouped: goihw */
        dnnl_dims_t yd = { d->n, d->out_c, d->out_h, d->out_w };
        dnnl_dims_t strides = { d->stride_h, d->stride_w };
        dnnl_dims_t pad = { d->pad_h, d->pad_w };
        if ((st = dlb_cpu_md_plain(x, 4, xd, xt)) ||
            (st = dlb_cpu_md_plain(w, wn, wd, dnnl_s8)) ||
            (st = dlb_cpu_md_plain(y, 4, yd, yt)) ||
            (a->bias && (st = dlb_cpu_md_plain(b, 1, bd, dnnl_s32))) ||
            (st = dlb_dnnl_md_tag(&xa, 4, xd, xt, dnnl_acdb)) ||
            (st = dlb_dnnl_md_tag(&ya, 4, yd, yt, dnnl_acdb)) ||
            (st = dlb_dnnl_md_tag(&wa, wn, wd, dnnl_s8, any)))
            return st;
        return dlb_dnnl_conv_fwd_pd(pd, cpu->engine, dnnl_forward_inference,
                                    dnnl_convolution_direct,
                                    &xa, &wa, a->bias ? b : NULL, &ya,
                                    strides, pad, pad, attr);
    }
    const struct dlb_linear_desc *d = a->ld;
    dnnl_dims_t xd = { d->n, d->in }, wd = { d->out, d->in };
    dnnl_dims_t bd = { d->out }, yd = { d->n, d->out };
    if ((st = dlb_cpu_md_plain(x, 2, xd, xt)) ||
        (st = dlb_cpu_md_plain(w, 2, wd, dnnl_s8)) ||
        (st = dlb_cpu_md_plain(y, 2, yd, yt)) ||
        (a->bias && (st = dlb_cpu_md_plain(b, 1, bd, dnnl_s32))) ||
        (st = dlb_dnnl_md_tag(&wa, 2, wd, dnnl_s8, any)))
        return st;
    return dlb_dnnl_ip_fwd_pd(pd, cpu->engine, dnnl_forward_inference, x,
                              &wa, a->bias ? b : NULL, y, attr);
}

static dlb_status int8_build(struct dlb_backend *be, struct dlb_cpu_prim *p,
                             const void *arg)
{
    const struct int8_arg *a = arg;
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    const char *op = a->op;
    dlb_dnnl_md x, w, y, b, zp, sc;
    dnnl_dims_t one = { 1 }, n_mult = { (dnnl_dim_t)a->n_mult };
    dnnl_primitive_attr_t attr = NULL;
    dlb_status s = DLB_OK;
    DLB_DNNL(be, op, int8_attr(a, &p->flags, &attr));
    DLB_DNNL(be, op, int8_pd(cpu, a, attr, &x, &w, &y, &b, &p->pd[0]));
    DLB_DNNL(be, op, dlb_cpu_make(p, 0));
    struct dlb_cpu_tensor io[3] = {
        { DNNL_ARG_SRC, dnnl_query_src_md, DLB_CPU_IN, x },
        { DNNL_ARG_WEIGHTS, dnnl_query_weights_md, DLB_CPU_IN_WEIGHTS, w },
        { DNNL_ARG_DST, dnnl_query_dst_md, DLB_CPU_OUT, y },
    };
    DLB_DNNL(be, op, dlb_cpu_io_setup(cpu, p, io, 3));
    if (a->bias)
        DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[MEM_BIAS], &b));
    DLB_DNNL(be, op, dlb_cpu_md_plain(&zp, 1, one, dnnl_s32));
    DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[MEM_SRC_ZP], &zp));
    DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[MEM_DST_ZP], &zp));
    if (DLB_DNNL_RUNTIME_SCALES) {
        DLB_DNNL(be, op, dlb_cpu_md_plain(&sc, 1, n_mult, dnnl_f32));
        DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[MEM_SCALES], &sc));
    }
out:
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return s;
}

/* The multipliers of int8.h for every output channel (or the one of a
 * per-tensor scale) into `out`; returns how many. */
static size_t multipliers(const struct dlb_int8_desc *q,
                          const struct dlb_buffer *w_scale,
                          const struct dlb_buffer *y, float *out)
{
    const float *ws = w_scale->data;
    for (size_t o = 0; o < w_scale->count; o++)
        out[o] = dlb_int8_multiplier(q, ws[o], y->dtype != DLB_F32);
    return w_scale->count;
}

static dlb_status run(struct dlb_backend *be, struct int8_arg *a,
                      const struct dlb_buffer *w, const struct dlb_buffer *ws,
                      uint32_t out_c, const uint32_t *shape, size_t n_shape)
{
    struct dlb_cpu_key k;
    struct dlb_cpu_prim *p;
    dlb_status s;
    float *mult = malloc(out_c * sizeof *mult);
    if (!mult)
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu %s: out of memory",
                                a->op);
    if ((s = DLB_CPU_PLAIN(be, ws)))
        goto out;
    a->mult = mult;
    a->n_mult = multipliers(a->q, ws, a->y, mult);
    uint64_t h = mult_hash(mult, a->n_mult);
    memset(&k, 0, sizeof k);
    k.op = a->add ? DLB_CPU_CONV_INT8_ADD
           : a->conv ? DLB_CPU_CONV_INT8 : DLB_CPU_IP_INT8;
    memcpy(k.w, shape, n_shape * sizeof *shape);
    uint32_t clip;
    memcpy(&clip, &a->sum_relu_max, sizeof clip);
    uint32_t v[] = { (uint32_t)a->x->dtype, (uint32_t)a->y->dtype,
                     (a->bias != NULL) | (uint32_t)a->q->relu << 1 |
                         (uint32_t)a->sum_relu << 2,
                     clip, (uint32_t)a->src_zp,
                     a->y->dtype != DLB_F32 ? (uint32_t)a->q->y_zero_point : 0,
                     (uint32_t)h, (uint32_t)(h >> 32) };
    memcpy(k.w + n_shape, v, sizeof v);
    if ((s = dlb_cpu_cache_get(be, &k, int8_build, a, &p)) ||
        (a->add && (s = dlb_cpu_sum_operand(
                       be, p, (struct dlb_buffer *)(uintptr_t)a->y))))
        goto out;
    int32_t zx = a->src_zp, zy = a->q->y_zero_point;
    dnnl_exec_arg_t extra[4];
    int n = 0;
    if (DLB_DNNL_RUNTIME_SCALES) {
        DLB_DNNL(be, a->op, dlb_cpu_bind(p->mem[MEM_SCALES], mult));
        extra[n++] = (dnnl_exec_arg_t){ DLB_DNNL_ARG_SCALES,
                                        p->mem[MEM_SCALES] };
    }
    if (a->bias) {
        DLB_DNNL(be, a->op, dlb_cpu_bind(p->mem[MEM_BIAS], a->bias));
        extra[n++] = (dnnl_exec_arg_t){ DNNL_ARG_BIAS, p->mem[MEM_BIAS] };
    }
    if (p->flags & FLAG_SRC_ZP) {
        DLB_DNNL(be, a->op, dlb_cpu_bind(p->mem[MEM_SRC_ZP], &zx));
        extra[n++] = (dnnl_exec_arg_t){
            DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, p->mem[MEM_SRC_ZP] };
    }
    if (p->flags & FLAG_DST_ZP) {
        DLB_DNNL(be, a->op, dlb_cpu_bind(p->mem[MEM_DST_ZP], &zy));
        extra[n++] = (dnnl_exec_arg_t){
            DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, p->mem[MEM_DST_ZP] };
    }
    const struct dlb_buffer *io[3] = { a->x, w, a->y };
    s = dlb_cpu_io_run(be, p, a->op, io, n, extra);
out:
    free(mult);
    return s;
}

/* CONV2D_INT8, and CONV2D_INT8_ADD with `add` set (the sum and its ReLU
 * as oneDNN post-ops on the f32 output, which holds the other branch
 * in the primitive's layout first). */
static dlb_status conv_int8(struct dlb_backend *be, const char *op,
                            const struct dlb_conv2d_desc *d,
                            const struct dlb_int8_desc *q,
                            const struct dlb_buffer *x,
                            const struct dlb_buffer *w,
                            const struct dlb_buffer *w_scale,
                            const struct dlb_buffer *b, struct dlb_buffer *y,
                            const struct dlb_op *add)
{
    struct dlb_int8_args chk = { x, w, w_scale, b, y, dlb_conv2d_x_count(d),
                                 dlb_conv2d_w_count(d), dlb_conv2d_y_count(d),
                                 d->out_c };
    struct int8_arg a = { op, 1, d, NULL, q, x, y, NULL, q->x_zero_point,
                          NULL, 0, add != NULL, add && add->relu,
                          add && add->relu ? add->relu_max : 0.0f };
    uint32_t shape[] = { d->n, d->in_c, d->in_h, d->in_w, d->out_c, d->kh,
                         d->kw, d->stride_h, d->stride_w, d->pad_h, d->pad_w,
                         dlb_conv2d_groups(d) };
    struct dlb_buffer xq;
    struct dlb_cpu_buf xqi;
    dlb_status s;
    if ((s = dlb_conv2d_desc_check(be, op, d)) ||
        (s = dlb_int8_check(be, op, q, &chk)) || (s = DLB_CPU_PLAIN(be, b)))
        return s;
    if (dlb_cpu_int8_cols_fit(d) && !add)
        return dlb_cpu_conv2d_int8_cols(be, d, q, x, w, w_scale, b, y);
    if (x->dtype == DLB_F32) {
        if ((s = dlb_cpu_int8_quantised(be, q, x, chk.x_count, 1, &xq,
                                        &xqi)))
            return s;
        a.x = &xq;
    }
    a.bias = b ? b->data : NULL;
    /* the shape and run()'s eight words of types and settings */
    _Static_assert(sizeof shape / sizeof *shape + 8 <= DLB_CPU_KEY_WORDS,
                   "the int8 convolution's key outgrows dlb_cpu_key");
    return run(be, &a, w, w_scale, d->out_c, shape,
               sizeof shape / sizeof *shape);
}

dlb_status dlb_cpu_conv2d_int8_fwd(struct dlb_backend *be,
                                   const struct dlb_conv2d_desc *d,
                                   const struct dlb_int8_desc *q,
                                   const struct dlb_buffer *x,
                                   const struct dlb_buffer *w,
                                   const struct dlb_buffer *w_scale,
                                   const struct dlb_buffer *b,
                                   struct dlb_buffer *y)
{
    return conv_int8(be, "conv2d_int8_fwd", d, q, x, w, w_scale, b, y, NULL);
}

/* A one-channel first layer runs on cpu_int8_cols.c's rows, which have
 * no sum: a residual add never follows one. */
int dlb_cpu_conv2d_int8_add_applies(struct dlb_backend *be,
                                    const struct dlb_op *op)
{
    (void)be;
    return !dlb_cpu_int8_cols_fit(&op->conv);
}

dlb_status dlb_cpu_conv2d_int8_add(struct dlb_backend *be,
                                   const struct dlb_op *op)
{
    return conv_int8(be, "conv2d_int8_add", &op->conv, &op->q, op->x, op->w,
                     op->w_scale, op->b, op->y, op);
}

dlb_status dlb_cpu_linear_int8_fwd(struct dlb_backend *be,
                                   const struct dlb_linear_desc *d,
                                   const struct dlb_int8_desc *q,
                                   const struct dlb_buffer *x,
                                   const struct dlb_buffer *w,
                                   const struct dlb_buffer *w_scale,
                                   const struct dlb_buffer *b,
                                   struct dlb_buffer *y)
{
    const char *op = "linear_int8_fwd";
    struct dlb_int8_args chk = { x, w, w_scale, b, y, (size_t)d->n * d->in,
                                 (size_t)d->out * d->in, (size_t)d->n * d->out,
                                 d->out };
    struct int8_arg a = { op, 0, NULL, d, q, x, y, NULL, 0, NULL, 0, 0, 0,
                          0.0f };
    uint32_t shape[] = { d->n, d->in, d->out };
    int32_t *folded = NULL;
    struct dlb_buffer xq;
    struct dlb_cpu_buf xqi;
    dlb_status s;
    if (!d->n || !d->in || !d->out)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: empty shape "
                                "%ux%u->%u", op, d->n, d->in, d->out);
    if ((s = dlb_int8_check(be, op, q, &chk)) || (s = DLB_CPU_PLAIN(be, w, b)))
        return s;
    if (x->dtype == DLB_F32) {
        if ((s = dlb_cpu_int8_quantised(be, q, x, chk.x_count, 0, &xq,
                                        &xqi)))
            return s;
        a.x = &xq;
    }
    a.bias = b ? b->data : NULL;
    /* oneDNN 2.6's inner product has no source zero point: it goes into
     * the bias, b - zp * sum_i w[o][i], exact in int32. */
    if (q->x_zero_point) {
        if (!(folded = malloc(d->out * sizeof *folded)))
            return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu %s: out of memory",
                                    op);
        for (uint32_t o = 0; o < d->out; o++) {
            const signed char *row = (const signed char *)w->data +
                                     (size_t)o * d->in;
            int32_t sum = 0;
            for (uint32_t i = 0; i < d->in; i++)
                sum += row[i];
            folded[o] = (a.bias ? a.bias[o] : 0) - q->x_zero_point * sum;
        }
        a.bias = folded;
    }
    s = run(be, &a, w, w_scale, d->out, shape, 3);
    free(folded);
    return s;
}
