/* Convolution on oneDNN: forward, backward data and backward weights.
 * Each primitive is created with the weights' layout left to oneDNN and
 * the activations' chosen by dlb_cpu_conv_act_tag: on plain NCHW tensors
 * oneDNN falls back to a GEMM-based kernel about 1.6x slower than its
 * direct kernels.
 * Outputs stay in the primitive's layout (the buffer carries it) and
 * inputs already in it are read as they are, so a training step has no
 * activation reorders between layers. Weights are reordered once per
 * write of their buffer (dlb_cpu_shadow); weight gradients go back to the
 * host view for the SGD update. Buffers of mixed float types are accepted
 * (compute_type). A grouped convolution (depthwise too) is one primitive
 * with oneDNN's grouped weights (dlb_cpu_conv_w_dims). */
#include "cpu.h"

#include <string.h>

/* A forward's post-ops: the sum onto what the output holds (CONV2D_ADD),
 * then the ReLU (CONV2D_RELU, CONV2D_ADD): none, or max(v, 0) clipped at
 * relu_max when that is positive. wino: oneDNN's Winograd algorithm, for
 * inference (WINO_INFER) or training (WINO_TRAIN), not the shared direct
 * primitives (0). */
enum { WINO_INFER = 1, WINO_TRAIN = 2 };
struct conv_post {
    int relu;
    float relu_max;
    int sum;
    int wino;
};
static const struct conv_post NO_POST; /* the direct kernels, no post-op */

/* The key: kind, the descriptor (its groups too), the element types of
 * x, w, b, y (for the backward passes: dx, w, db, dy; 0xff for an absent
 * one), and the post-op. */
static struct dlb_cpu_key conv_key(enum dlb_cpu_op op,
                                   const struct dlb_conv2d_desc *d,
                                   const struct dlb_buffer *const t[4],
                                   struct conv_post post)
{
    struct dlb_cpu_key k;
    memset(&k, 0, sizeof k);
    k.op = op;
    uint32_t v[] = { d->n, d->in_c, d->in_h, d->in_w, d->out_c, d->kh, d->kw,
                     d->stride_h, d->stride_w, d->pad_h, d->pad_w };
    memcpy(k.w, v, sizeof v);
    for (int i = 0; i < 4; i++)
        k.w[11 + i] = t[i] ? (uint32_t)t[i]->dtype : 0xffu;
    k.w[15] = dlb_conv2d_groups(d);
    k.w[16] = (uint32_t)post.relu;
    memcpy(&k.w[17], &post.relu_max, sizeof post.relu_max);
    k.w[18] = (uint32_t)post.sum;
    k.w[19] = (uint32_t)post.wino;
    return k;
}

/* The memory descriptors of a convolution: plain (the buffers' host
 * views, in their own types) and "any" (oneDNN's choice, in the types the
 * primitive runs on) for x, w, y, and the forward hint's (all in the
 * compute type); the bias is plain. */
struct conv_mds {
    dlb_dnnl_md x, w, b, y;       /* plain */
    dlb_dnnl_md xa, wa, ya;       /* any */
    dlb_dnnl_md xh, wh, yh;       /* any, the forward hint's */
};

/* The activations' layout: oneDNN's choice (nChw16c) unless a channel
 * count is not a multiple of 8, as LeNet's 10 and 20: padded to 16 and
 * 32 they cost 1.6x the memory traffic in every op after, and the blocked
 * kernels compute on the padding (2.5x the FLOPs in conv2); nhwc has no
 * padding and its kernels (brgconv, jit) were faster there, 8.5 against
 * 10.7 ms for conv2's three passes at batch 256 on one core. Multiples of
 * 8 are oneDNN's choice too: MobileNetV2's 24-channel layers in nhwc took
 * 7-11 ms each at batch 32 and made the blocked layers around them
 * reorder, against 3-5 ms blocked (the whole network 159 against 122 ms).
 * So is an image's few input channels (a stem's 3): oneDNN reads them as
 * they are and writes its output blocked, where nhwc made the next layer
 * reorder it. One input channel is the host view in either. */
dnnl_format_tag_t dlb_cpu_conv_act_tag(const struct dlb_conv2d_desc *d,
                                       dnnl_data_type_t ct)
{
    const unsigned amx = (unsigned)dnnl_cpu_isa_avx512_core_amx;
    if ((d->in_c > 4 && d->in_c % 8) || d->out_c % 8)
        return dnnl_acdb;
    /* bf16 on AMX: nhwc throughout. oneDNN's AMX kernels take nhwc, but
     * left to choose it gives a first layer (one input channel) nChw16c,
     * so its output was reordered into nhwc (and the gradients back) four
     * times a vgg-small step, 1.6 ms at batch 256; and a depthwise layer
     * (jit_dw, which takes either) nChw16c too, so MobileNetV2's inference
     * reordered at each of them, and its 1x1+depthwise pairs ran as
     * oneDNN's reference fusion of the two kernels: in nhwc they run
     * apart, 73.0 against 80.6 ms at batch 32 (batch norm, ReLU and
     * pooling take either layout). */
    if (ct == dnnl_bf16 && ((unsigned)dnnl_get_effective_cpu_isa() & amx) == amx)
        return dnnl_acdb;
    return dnnl_format_tag_any;
}

/* A depthwise convolution's backward data pass in bf16 with a stride:
 * oneDNN's depthwise kernel takes bf16 at stride 1 only, and the one it
 * falls back on (brgconv_strided on nhwc) took 62 ms for MobileNetV2's
 * 144-channel 56x56 layer at batch 32, where the f32 depthwise kernel
 * takes 3.2 ms. So it computes in f32: the bf16 gradient and weights are
 * converted on the way in, the result into the bf16 buffer on the way out
 * (MobileNetV2 bf16 training at batch 32: 664 -> 429 ms a step). */
static int dw_strided_bf16(enum dlb_cpu_op kind,
                           const struct dlb_conv2d_desc *d,
                           const struct dlb_buffer *const t[4])
{
    uint32_t g = dlb_conv2d_groups(d);
    return kind == DLB_CPU_CONV_BWD_DATA && g > 1 && g == d->in_c &&
           g == d->out_c && (d->stride_h > 1 || d->stride_w > 1) &&
           t[1]->dtype == DLB_BF16;
}

/* The type a convolution computes in: bf16 when its weights are (forward,
 * backward data) or when any of its tensors is (backward weights), else
 * f32. Tensors it reads in another type are converted on the way in (in
 * the same reorder as a layout change); tensors it writes keep their own
 * type, as oneDNN's bf16 kernels write f32 or bf16. */
static dnnl_data_type_t compute_type(enum dlb_cpu_op kind,
                                     const struct dlb_conv2d_desc *d,
                                     const struct dlb_buffer *const t[4])
{
    if (dw_strided_bf16(kind, d, t))
        return dnnl_f32;
    if (kind != DLB_CPU_CONV_BWD_WEIGHTS)
        return dlb_cpu_dnnl_type(t[1]->dtype);
    return t[0]->dtype == DLB_BF16 || t[1]->dtype == DLB_BF16 ||
                   t[3]->dtype == DLB_BF16
               ? dnnl_bf16 : dnnl_f32;
}

/* The weights' dims: [out_c][in_c][kh][kw], or with g > 1 groups oneDNN's
 * grouped form [g][out_c / g][in_c / g][kh][kw] (goihw), whose dense
 * layout is the host view's [out_c][in_c / g][kh][kw]. Returns ndims. */
int dlb_cpu_conv_w_dims(const struct dlb_conv2d_desc *d, dnnl_dims_t wd)
{
    uint32_t g = dlb_conv2d_groups(d);
    if (g == 1) {
        dnnl_dims_t w4 = { d->out_c, d->in_c, d->kh, d->kw };
        memcpy(wd, w4, sizeof w4);
        return 4;
    }
    dnnl_dims_t w5 = { g, d->out_c / g, d->in_c / g, d->kh, d->kw };
    memcpy(wd, w5, sizeof w5);
    return 5;
}

static dnnl_status_t conv_mds(enum dlb_cpu_op kind,
                              const struct dlb_conv2d_desc *d,
                              const struct dlb_buffer *const t[4],
                              struct conv_mds *m)
{
    dnnl_dims_t xd = { d->n, d->in_c, d->in_h, d->in_w };
    dnnl_dims_t wd;
    int wn = dlb_cpu_conv_w_dims(d, wd);
    dnnl_dims_t bd = { d->out_c };
    dnnl_dims_t yd = { d->n, d->out_c, d->out_h, d->out_w };
    dnnl_data_type_t xt = dlb_cpu_dnnl_type(t[0]->dtype);
    dnnl_data_type_t wt = dlb_cpu_dnnl_type(t[1]->dtype);
    dnnl_data_type_t yt = dlb_cpu_dnnl_type(t[3]->dtype);
    dnnl_data_type_t ct = compute_type(kind, d, t);
    /* Backward data writes diff_src in its own type, but in f32 where the
     * pass computes in f32 for a bf16 buffer (converted after the run). */
    dnnl_data_type_t dxt = dw_strided_bf16(kind, d, t) ? ct : xt;
    dnnl_format_tag_t at = dlb_cpu_conv_act_tag(d, ct), any = dnnl_format_tag_any;
    dnnl_status_t st;
    memset(m, 0, sizeof *m);
    if ((st = dlb_cpu_md_plain(&m->x, 4, xd, xt)) ||
        (st = dlb_cpu_md_plain(&m->w, wn, wd, wt)) ||
        (st = dlb_cpu_md_plain(&m->y, 4, yd, yt)) ||
        (t[2] && (st = dlb_cpu_md_plain(&m->b, 1, bd,
                                        dlb_cpu_dnnl_type(t[2]->dtype)))) ||
        (st = dlb_dnnl_md_tag(
             &m->xa, 4, xd, kind == DLB_CPU_CONV_BWD_DATA ? dxt : ct, at)) ||
        (st = dlb_dnnl_md_tag(&m->wa, wn, wd,
                              kind == DLB_CPU_CONV_BWD_WEIGHTS ? wt : ct,
                              any)) ||
        (st = dlb_dnnl_md_tag(
             &m->ya, 4, yd, kind == DLB_CPU_CONV_FWD ? yt : ct, at)) ||
        (st = dlb_dnnl_md_tag(&m->xh, 4, xd, ct, at)) ||
        (st = dlb_dnnl_md_tag(&m->wh, wn, wd, ct, any)) ||
        (st = dlb_dnnl_md_tag(&m->yh, 4, yd, ct, at)))
        return st;
    return dnnl_success;
}

/* The algorithm of an entry's primitives. */
static dnnl_alg_kind_t alg_of(struct conv_post post)
{
    return post.wino ? dnnl_convolution_winograd : dnnl_convolution_direct;
}

/* The attributes of an entry's primitives: a forward's post-ops, and for
 * the Winograd kernels the scratchpad in the caller's hands (run_prim).
 * *attr stays NULL when there is nothing to set. */
static dnnl_status_t make_attr(enum dlb_cpu_op kind, struct conv_post post,
                               dnnl_primitive_attr_t *attr)
{
    dnnl_status_t st = dnnl_success;
    int ops = kind == DLB_CPU_CONV_FWD && (post.relu || post.sum);
    *attr = NULL;
    if (!ops && !post.wino)
        return dnnl_success;
    if ((st = dnnl_primitive_attr_create(attr)) ||
        (ops && (st = dlb_dnnl_attr_post(*attr, post.sum, post.relu,
                                         post.relu_max))) ||
        (post.wino && (st = dnnl_primitive_attr_set_scratchpad_mode(
                           *attr, dnnl_scratchpad_mode_user)))) {
        if (*attr)
            dnnl_primitive_attr_destroy(*attr);
        *attr = NULL;
    }
    return st;
}

/* The primitive descriptor of an entry (the forward's with hint = 0; the
 * forward a backward pass names as its hint with hint = 1, in the compute
 * type). The direct forward is created for forward_training: one
 * primitive serves training and inference, so that an evaluation pass
 * creates nothing new, and oneDNN, which chooses the activations' layout
 * per propagation kind, gives a fused inference layer (post-ops) the
 * layout of the layers around it. A Winograd forward for inference is
 * created for forward_inference, which has the F(2x2, 3x3) kernel at
 * small batches and takes its weights transformed once (a reorder into
 * oneDNN's Winograd layout); training's, whose weights change at every
 * step, for forward_training (F(4x4, 3x3), transforming the weights as
 * it runs: with the reorder at every step ResNet-18's last 3x3 layers
 * took 92-100 against 26-29 ms at batch 32). */
static dnnl_status_t make_pd(struct dlb_cpu *cpu, enum dlb_cpu_op kind,
                             const struct dlb_conv2d_desc *d,
                             const struct conv_mds *m, int bias,
                             struct conv_post post, int hint,
                             const_dnnl_primitive_desc_t fwd,
                             dnnl_primitive_desc_t *pd)
{
    dnnl_dims_t strides = { d->stride_h, d->stride_w };
    dnnl_dims_t pad = { d->pad_h, d->pad_w };
    dnnl_alg_kind_t alg = alg_of(post);
    dnnl_primitive_attr_t attr = NULL;
    dnnl_status_t st;
    *pd = NULL;
    if (hint)
        return dlb_dnnl_conv_fwd_pd(pd, cpu->engine, dnnl_forward_training,
                                    alg, &m->xh, &m->wh, bias ? &m->b : NULL,
                                    &m->yh, strides, pad, pad, NULL);
    if ((st = make_attr(kind, post, &attr)))
        return st;
    if (kind == DLB_CPU_CONV_FWD)
        st = dlb_dnnl_conv_fwd_pd(pd, cpu->engine,
                                  post.wino == WINO_INFER
                                      ? dnnl_forward_inference
                                      : dnnl_forward_training,
                                  alg, &m->xa, &m->wa, bias ? &m->b : NULL,
                                  &m->ya, strides, pad, pad, attr);
    else if (kind == DLB_CPU_CONV_BWD_DATA)
        st = dlb_dnnl_conv_bwd_data_pd(pd, cpu->engine, alg, &m->xa, &m->wa,
                                       &m->ya, strides, pad, pad, fwd, attr);
    else
        st = dlb_dnnl_conv_bwd_weights_pd(pd, cpu->engine, alg, &m->xa,
                                          &m->wa, bias ? &m->b : NULL, &m->ya,
                                          strides, pad, pad, fwd, attr);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (st)
        *pd = NULL;
    return st;
}

/* Create the entry's primitives; on failure the reason is recorded. */
static dlb_status build(struct dlb_backend *be, const char *op,
                        enum dlb_cpu_op kind, const struct dlb_conv2d_desc *d,
                        const struct dlb_buffer *const t[4],
                        struct conv_post post, struct dlb_cpu_prim *p)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    struct conv_mds m;
    dlb_dnnl_md sp;
    int bias = t[2] != NULL;
    dlb_status s = DLB_OK;
    DLB_DNNL(be, op, conv_mds(kind, d, t, &m));
    if (kind != DLB_CPU_CONV_FWD)
        DLB_DNNL(be, op, make_pd(cpu, kind, d, &m, bias, post, 1, NULL,
                                 &p->pd[DLB_CPU_HINT]));
    DLB_DNNL(be, op, make_pd(cpu, kind, d, &m, bias, post, 0,
                             p->pd[DLB_CPU_HINT], &p->pd[0]));
    DLB_DNNL(be, op, dlb_cpu_make(p, 0));
    if (kind == DLB_CPU_CONV_FWD) {
        struct dlb_cpu_tensor io[3] = {
            { DNNL_ARG_SRC, dnnl_query_src_md, DLB_CPU_IN, m.x },
            { DNNL_ARG_WEIGHTS, dnnl_query_weights_md, DLB_CPU_IN_WEIGHTS, m.w },
            { DNNL_ARG_DST, dnnl_query_dst_md, DLB_CPU_OUT, m.y },
        };
        DLB_DNNL(be, op, dlb_cpu_io_setup(cpu, p, io, 3));
    } else if (kind == DLB_CPU_CONV_BWD_DATA) {
        struct dlb_cpu_tensor io[3] = {
            { DNNL_ARG_DIFF_DST, dnnl_query_diff_dst_md, DLB_CPU_IN, m.y },
            { DNNL_ARG_WEIGHTS, dnnl_query_weights_md, DLB_CPU_IN_WEIGHTS, m.w },
            { DNNL_ARG_DIFF_SRC, dnnl_query_diff_src_md,
              dw_strided_bf16(kind, d, t) && t[0]->dtype != DLB_F32
                  ? DLB_CPU_OUT_RETYPED : DLB_CPU_OUT, m.x },
        };
        DLB_DNNL(be, op, dlb_cpu_io_setup(cpu, p, io, 3));
    } else {
        struct dlb_cpu_tensor io[3] = {
            { DNNL_ARG_SRC, dnnl_query_src_md, DLB_CPU_IN, m.x },
            { DNNL_ARG_DIFF_DST, dnnl_query_diff_dst_md, DLB_CPU_IN, m.y },
            { DNNL_ARG_DIFF_WEIGHTS, dnnl_query_diff_weights_md,
              DLB_CPU_OUT_WEIGHTS, m.w },
        };
        DLB_DNNL(be, op, dlb_cpu_io_setup(cpu, p, io, 3));
    }
    /* the bias (its gradient) is plain [out_c]: no reorder */
    if (bias && kind != DLB_CPU_CONV_BWD_DATA)
        DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[12], &m.b));
    if (post.wino) {
        DLB_DNNL(be, op, dlb_dnnl_pd_md(&sp, p->pd[0],
                                        dnnl_query_scratchpad_md));
        if (dlb_dnnl_md_size(&sp))
            DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[13], &sp));
    }
out:
    return s;
}

/* Run an entry on io with its bias (`bias`, bound to mem[12] as
 * `bias_arg`; NULL for none) and a Winograd kernel's scratchpad
 * (mem[13]): the backend's one slot for those, so that their memory is
 * the largest one's, held, not a block allocated and freed at each call
 * (which made a process's peak memory depend on its history). */
static dlb_status run_prim(struct dlb_backend *be, struct dlb_cpu_prim *p,
                           const char *op, const struct dlb_buffer *const io[3],
                           int bias_arg, void *bias)
{
    dnnl_exec_arg_t extra[2];
    int n = 0;
    dnnl_status_t st = dnnl_success;
    if (bias) {
        extra[n++] = (dnnl_exec_arg_t){ bias_arg, p->mem[12] };
        st = dlb_cpu_bind(p->mem[12], bias);
    }
    if (st == dnnl_success && p->mem[13]) {
        size_t bytes = dlb_dnnl_memory_size(p->mem[13]);
        void *sp = dlb_cpu_scratch(be, DLB_CPU_SLOT_ONEDNN, bytes);
        if (!sp)
            return DLB_ERR_NOMEM;
        extra[n++] = (dnnl_exec_arg_t){ DNNL_ARG_SCRATCHPAD, p->mem[13] };
        st = dlb_cpu_bind(p->mem[13], sp);
    }
    if (st != dnnl_success)
        return dlb_cpu_dnnl_fail(be, st, op, "bind(bias or scratchpad)");
    return dlb_cpu_io_run(be, p, op, io, n, extra);
}

struct build_arg {
    const char *op;
    enum dlb_cpu_op kind;
    const struct dlb_conv2d_desc *d;
    const struct dlb_buffer *const *t;
    struct conv_post post;
};

static dlb_status build_cb(struct dlb_backend *be, struct dlb_cpu_prim *p,
                           const void *arg)
{
    const struct build_arg *a = arg;
    return build(be, a->op, a->kind, a->d, a->t, a->post, p);
}

static dlb_status get_post(struct dlb_backend *be, const char *op,
                           enum dlb_cpu_op kind, const struct dlb_conv2d_desc *d,
                           const struct dlb_buffer *const t[4],
                           struct conv_post post, struct dlb_cpu_prim **out)
{
    struct dlb_cpu_key key = conv_key(kind, d, t, post);
    struct build_arg a = { op, kind, d, t, post };
    return dlb_cpu_cache_get(be, &key, build_cb, &a, out);
}

/* The forward's descriptor and tensors, checked as every kernel needs. */
static dlb_status fwd_check(struct dlb_backend *be, const char *op,
                            const struct dlb_conv2d_desc *d,
                            const struct dlb_buffer *x,
                            const struct dlb_buffer *w,
                            const struct dlb_buffer *b,
                            const struct dlb_buffer *y)
{
    dlb_status s;
    if ((s = dlb_conv2d_desc_check(be, op, d)) ||
        (s = dlb_cpu_check_float(be, op, "x", x, dlb_conv2d_x_count(d))) ||
        (s = dlb_cpu_check_float(be, op, "w", w, dlb_conv2d_w_count(d))) ||
        (b && (s = dlb_cpu_check_float(be, op, "b", b, d->out_c))))
        return s;
    return dlb_cpu_check_float(be, op, "y", y, dlb_conv2d_y_count(d));
}

/* cpu.h says what it does: CONV2D_ADD's, and CONV2D_INT8_ADD's. */
dlb_status dlb_cpu_sum_operand(struct dlb_backend *be,
                               const struct dlb_cpu_prim *p,
                               struct dlb_buffer *y)
{
    const dlb_dnnl_md *want = &p->io_md[2]; /* DST (build's io order) */
    const dlb_dnnl_md *has = dlb_cpu_layout(y);
    void *from;
    dlb_status s;
    if (has ? dlb_dnnl_md_equal(has, want) : dlb_cpu_md_is_plain(want))
        return DLB_OK;
    if ((s = dlb_cpu_view(be, y, want, DLB_CPU_SLOT_VIEW_A, &from)) ||
        (s = dlb_cpu_set_layout(be, y, want)))
        return s;
    memcpy(y->data, from, dlb_dnnl_md_size(want));
    return DLB_OK;
}

static dlb_status fwd(struct dlb_backend *be, const char *op,
                      const struct dlb_conv2d_desc *d, struct conv_post post,
                      const struct dlb_buffer *x, const struct dlb_buffer *w,
                      const struct dlb_buffer *b, struct dlb_buffer *y)
{
    const struct dlb_buffer *t[4] = { x, w, b, y };
    struct dlb_cpu_prim *p;
    dlb_status s;
    if ((s = fwd_check(be, op, d, x, w, b, y)))
        return s;
    if ((s = get_post(be, op, DLB_CPU_CONV_FWD, d, t, post, &p)) ||
        (post.sum && (s = dlb_cpu_sum_operand(be, p, y))))
        return s;
    const struct dlb_buffer *io[3] = { x, w, y };
    return run_prim(be, p, op, io, DNNL_ARG_BIAS, b ? b->data : NULL);
}

dlb_status dlb_cpu_conv2d_fwd(struct dlb_backend *be,
                              const struct dlb_conv2d_desc *d,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *w,
                              const struct dlb_buffer *b, struct dlb_buffer *y)
{
    return fwd(be, "conv2d_fwd", d, NO_POST, x, w, b, y);
}

/* The post-ops of an inference operation: CONV2D_RELU's ReLU, CONV2D_ADD's
 * sum and its optional ReLU; none for CONV2D. */
static struct conv_post post_of(const struct dlb_op *op)
{
    int relu = op->kind == DLB_OP_CONV2D_RELU ||
               (op->kind == DLB_OP_CONV2D_ADD && op->relu != 0);
    return (struct conv_post){relu, relu && op->relu_max > 0.0f
                                        ? op->relu_max : 0.0f,
                              op->kind == DLB_OP_CONV2D_ADD, 0};
}

static const char *name_of(const struct dlb_op *op)
{
    return op->kind == DLB_OP_CONV2D_RELU      ? "conv2d_relu"
           : op->kind == DLB_OP_CONV2D_ADD     ? "conv2d_add"
           : op->prop == DLB_PROP_BWD_DATA     ? "conv2d_bwd_data"
           : op->prop == DLB_PROP_BWD_WEIGHTS  ? "conv2d_bwd_weights"
                                               : "conv2d_fwd";
}

dlb_status dlb_cpu_conv2d_post(struct dlb_backend *be, const struct dlb_op *op)
{
    return fwd(be, name_of(op), &op->conv, post_of(op), op->x, op->w, op->b,
               op->y);
}

static dlb_status bwd_data(struct dlb_backend *be,
                           const struct dlb_conv2d_desc *d,
                           struct conv_post post, const struct dlb_buffer *w,
                           const struct dlb_buffer *dy, struct dlb_buffer *dx)
{
    const char *op = "conv2d_bwd_data";
    const struct dlb_buffer *t[4] = { dx, w, NULL, dy };
    struct dlb_cpu_prim *p;
    dlb_status s;
    if ((s = dlb_conv2d_desc_check(be, op, d)) ||
        (s = dlb_cpu_check_float(be, op, "w", w, dlb_conv2d_w_count(d))) ||
        (s = dlb_cpu_check_float(be, op, "dy", dy, dlb_conv2d_y_count(d))) ||
        (s = dlb_cpu_check_float(be, op, "dx", dx, dlb_conv2d_x_count(d))) ||
        (s = get_post(be, op, DLB_CPU_CONV_BWD_DATA, d, t, post, &p)))
        return s;
    const struct dlb_buffer *io[3] = { dy, w, dx };
    return run_prim(be, p, op, io, 0, NULL);
}

static dlb_status bwd_weights(struct dlb_backend *be,
                              const struct dlb_conv2d_desc *d,
                              struct conv_post post,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *dy,
                              struct dlb_buffer *dw, struct dlb_buffer *db)
{
    const char *op = "conv2d_bwd_weights";
    const struct dlb_buffer *t[4] = { x, dw, db, dy };
    struct dlb_cpu_prim *p;
    dlb_status s;
    if ((s = dlb_conv2d_desc_check(be, op, d)) ||
        (s = dlb_cpu_check_float(be, op, "x", x, dlb_conv2d_x_count(d))) ||
        (s = dlb_cpu_check_float(be, op, "dy", dy, dlb_conv2d_y_count(d))) ||
        (s = dlb_cpu_check_float(be, op, "dw", dw, dlb_conv2d_w_count(d))) ||
        (db && (s = dlb_cpu_check_float(be, op, "db", db, d->out_c))) ||
        (s = get_post(be, op, DLB_CPU_CONV_BWD_WEIGHTS, d, t, post, &p)))
        return s;
    const struct dlb_buffer *io[3] = { x, dy, dw };
    s = run_prim(be, p, op, io, DNNL_ARG_DIFF_BIAS, db ? db->data : NULL);
    if (!s && db)
        dlb_cpu_written(db);
    return s;
}

dlb_status dlb_cpu_conv2d_bwd_data(struct dlb_backend *be,
                                   const struct dlb_conv2d_desc *d,
                                   const struct dlb_buffer *w,
                                   const struct dlb_buffer *dy,
                                   struct dlb_buffer *dx)
{
    return bwd_data(be, d, NO_POST, w, dy, dx);
}

dlb_status dlb_cpu_conv2d_bwd_weights(struct dlb_backend *be,
                                      const struct dlb_conv2d_desc *d,
                                      const struct dlb_buffer *x,
                                      const struct dlb_buffer *dy,
                                      struct dlb_buffer *dw,
                                      struct dlb_buffer *db)
{
    return bwd_weights(be, d, NO_POST, x, dy, dw, db);
}

/* oneDNN's Winograd kernels for f32 3x3 stride-1 convolutions (oneDNN 2.x
 * on AVX-512 has them, 3.x none on CPUs): in inference F(2x2, 3x3) at
 * small batches and F(4x4, 3x3) at larger ones, their post-ops included;
 * in training F(4x4, 3x3) for the three passes. 1.7-1.9x the direct kernels' speed on ResNet's 3x3
 * layers at batch 1 and 32 in inference, 1.6-2.4x in each training pass
 * at batch 32 (doc/performance.md), within 2e-6 of them relative to the
 * output's norm. Two kinds of layer stay direct, where the transforms and
 * their extra passes cost more than the multiplies they save: fewer than
 * 32 input or output channels (0.08-0.77x at 1-16 input channels;
 * vgg-small's first layer 8x slower), and fewer than 16 M multiply-adds a
 * call (ResNet-20's 2.4 M layers at batch 1 took the network from 0.40 to
 * 0.45 ms). Whether the library has a kernel for a shape and pass is
 * asked once: the answer is cached as an entry, with its primitive or
 * without one. */

/* The operation's pass, its tensors in conv_key's order and its key. */
static enum dlb_cpu_op wino_pass(const struct dlb_op *op,
                                 const struct dlb_buffer *t[4])
{
    switch (op->prop) {
    case DLB_PROP_BWD_DATA:
        t[0] = op->dx, t[1] = op->w, t[2] = NULL, t[3] = op->dy;
        return DLB_CPU_CONV_BWD_DATA;
    case DLB_PROP_BWD_WEIGHTS:
        t[0] = op->x, t[1] = op->dw, t[2] = op->db, t[3] = op->dy;
        return DLB_CPU_CONV_BWD_WEIGHTS;
    default:
        t[0] = op->x, t[1] = op->w, t[2] = op->b, t[3] = op->y;
        return DLB_CPU_CONV_FWD;
    }
}

static struct conv_post wino_post(const struct dlb_op *op)
{
    struct conv_post post = { 0, 0.0f, 0, WINO_TRAIN };
    if (op->prop == DLB_PROP_FWD_INFER) {
        post = post_of(op);
        post.wino = WINO_INFER;
    }
    return post;
}

static int wino_shape(struct dlb_cpu *cpu, const struct dlb_op *op,
                      const struct dlb_buffer *const t[4])
{
    const struct dlb_conv2d_desc *d = &op->conv;
    uint64_t macs = (uint64_t)d->n * d->out_h * d->out_w * d->out_c *
                    d->in_c * 9u;
    for (int i = 0; i < 4; i++)
        if ((i != 2 && !t[i]) || (t[i] && t[i]->dtype != DLB_F32))
            return 0;
    return cpu->winograd && d->kh == 3 && d->kw == 3 && d->stride_h == 1 &&
           d->stride_w == 1 && d->in_c >= 32 && d->out_c >= 32 &&
           macs >= (16u << 20) && dlb_conv2d_groups(d) == 1;
}

int dlb_cpu_conv2d_wino_applies(struct dlb_backend *be, const struct dlb_op *op)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    const struct dlb_buffer *t[4];
    enum dlb_cpu_op kind = wino_pass(op, t);
    struct conv_post post = wino_post(op);
    if (!wino_shape(cpu, op, t))
        return 0;
    struct dlb_cpu_key key = conv_key(kind, &op->conv, t, post);
    struct dlb_cpu_prim *p = dlb_cpu_cache_find(cpu, &key);
    struct conv_mds m;
    dnnl_primitive_desc_t pd = NULL;
    if (p)
        return p->prim[0] != NULL;
    /* a forward asks the library first, which names nothing as failed */
    if (kind != DLB_CPU_CONV_FWD ||
        (conv_mds(kind, &op->conv, t, &m) == dnnl_success &&
         make_pd(cpu, kind, &op->conv, &m, t[2] != NULL, post, 0, NULL,
                 &pd) == dnnl_success)) {
        if (pd)
            dnnl_primitive_desc_destroy(pd);
        /* the entry with its primitives; a failure (no kernel for a
         * backward pass, memory) leaves the direct kernels to run it */
        if (get_post(be, name_of(op), kind, &op->conv, t, post, &p) == DLB_OK)
            return 1;
    }
    if ((p = dlb_cpu_prim_new(&key)))
        dlb_cpu_cache_insert(cpu, p); /* no kernel for this shape */
    return 0;
}

dlb_status dlb_cpu_conv2d_wino(struct dlb_backend *be, const struct dlb_op *op)
{
    struct conv_post post = wino_post(op);
    dlb_backend_note_fewer_flops(be, DLB_FAST_ALGO_WINOGRAD);
    if (op->prop == DLB_PROP_BWD_DATA)
        return bwd_data(be, &op->conv, post, op->w, op->dy, op->dx);
    if (op->prop == DLB_PROP_BWD_WEIGHTS)
        return bwd_weights(be, &op->conv, post, op->x, op->dy, op->dw, op->db);
    return fwd(be, name_of(op), &op->conv, post, op->x, op->w, op->b, op->y);
}
