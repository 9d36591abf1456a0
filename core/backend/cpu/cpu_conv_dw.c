/* CONV2D_DW: an inverted residual block's expansion (a 1x1 convolution
 * and its ReLU6) and the depthwise 3x3 convolution after it as one oneDNN
 * primitive, the depthwise one as the 1x1's post-op. The fused kernel
 * computes a few rows of the expanded tensor into a buffer of its own
 * thread and convolves them at once, where the two primitives apart write
 * the whole tensor (MobileNetV2's first, 96x112x112, is 4.8 MB an image)
 * and read it back, half of it on the other core: on 2 cores of a Zen 4,
 * batch 1, that pair took 0.27-1.4 ms depending on the process (0.25-0.28
 * fused), at batch 32 12.7 against 9.1 ms. In fp32, or bf16 for a
 * mixed-precision network's inference where the activations are blocked
 * (AVX512_BF16 without AMX: on AMX they are nhwc, dlb_cpu_conv_act_tag,
 * where oneDNN 3.2 fuses the pair only by running its two kernels in
 * turn, slower than the two apart).
 *
 * oneDNN fuses the pair in one kernel only where the expanded tensor is
 * over twice its threads' L2 caches; below that (on a Sapphire Rapids,
 * MobileNetV2 at batch 1, every pair) it runs the two primitives in turn
 * through a buffer of the whole tensor ("ref_fused_convolution"). There
 * the own kernels take the pair on the layouts oneDNN chose ("dw_avx512"
 * in a profile): cpu_conv_dw_f32.c in f32, cpu_conv_dw_bf16.c in bf16. */
#include "cpu.h"
#include "cpu_conv_dw_bf16.h"
#include "cpu_conv_dw_f32.h"

#include <math.h>
#include <string.h>

/* p->flags: the own kernel runs this entry */
enum { DW_OWN = 1 };

static int of_type(const struct dlb_buffer *b, enum dlb_dtype t)
{
    return !b || b->dtype == t;
}

/* The type the fused kernel computes in: x, both weights and y in one
 * float type, F32, or BF16 where the CPU computes in it (AVX512_BF16 or
 * AMX: oneDNN's bf16 1x1 kernels take the depthwise post-op there); the
 * biases F32, as a bf16 network keeps them. 0xff: none. A tensor not yet
 * given (y, while the model asks whether the kernel applies, model_fuse.c)
 * takes the others' type. */
static unsigned dw_type(const struct dlb_op *o)
{
    const unsigned bf16_isa = (unsigned)dnnl_cpu_isa_avx512_core_bf16;
    const struct dlb_buffer *f = o->x ? o->x : o->w ? o->w : o->w2 ? o->w2 : o->y;
    enum dlb_dtype t = f ? f->dtype : DLB_F32;
    if (!of_type(o->b, DLB_F32) || !of_type(o->b2, DLB_F32) || !of_type(o->x, t) ||
        !of_type(o->w, t) || !of_type(o->w2, t) || !of_type(o->y, t))
        return 0xffu;
    if (t == DLB_F32 ||
        (t == DLB_BF16 &&
         ((unsigned)dnnl_get_effective_cpu_isa() & bf16_isa) == bf16_isa))
        return (unsigned)t;
    return 0xffu;
}

/* One float type (dw_type), channel counts that oneDNN lays out blocked
 * (the fused kernels are written for those), the shapes op_check.c
 * takes. */
int dlb_cpu_conv2d_dw_applies(struct dlb_backend *be, const struct dlb_op *o)
{
    (void)be;
    unsigned t = dw_type(o);
    if (t == 0xffu)
        return 0;
    dnnl_data_type_t ct = dlb_cpu_dnnl_type((enum dlb_dtype)t);
    return dlb_cpu_conv_act_tag(&o->conv, ct) == dnnl_format_tag_any &&
           dlb_cpu_conv_act_tag(&o->dwconv, ct) == dnnl_format_tag_any;
}

static struct dlb_cpu_key dw_key(const struct dlb_op *o)
{
    const struct dlb_conv2d_desc *d = &o->conv;
    struct dlb_cpu_key k;
    memset(&k, 0, sizeof k);
    k.op = DLB_CPU_CONV_DW_FWD;
    uint32_t v[] = { d->n, d->in_c, d->in_h, d->in_w, d->out_c,
                     o->dwconv.stride_h, o->b != NULL, o->b2 != NULL,
                     (uint32_t)(o->relu != 0), (uint32_t)(o->relu2 != 0) };
    memcpy(k.w, v, sizeof v);
    memcpy(&k.w[10], &o->relu_max, sizeof o->relu_max);
    memcpy(&k.w[11], &o->relu2_max, sizeof o->relu2_max);
    k.w[12] = dw_type(o);
    return k;
}

static float clip_of(int relu, float max)
{
    return relu && max > 0.0f ? max : 0.0f;
}

/* Whether an own kernel takes the entry: the CPU has the one of type t,
 * oneDNN runs the pair as two primitives, and the layouts it chose are
 * the kernel's (nChw16c activations, Goihw16g depthwise weights; the
 * 1x1's OIhw16i16o in f32, OIhw8i16o2i in bf16). */
static int own_fits(const struct dlb_cpu_prim *p, dnnl_data_type_t t,
                    const dnnl_dim_t *xd, const dnnl_dim_t *wd, int wn,
                    const dnnl_dim_t *w2d, int w2n, const dnnl_dim_t *yd)
{
    const char *impl = "";
    dlb_dnnl_md m[4];
    int have = t == dnnl_f32 ? dlb_cpu_dw_f32_available()
               : t == dnnl_bf16 ? dlb_cpu_dw_bf16_available() : 0;
    if (!have || wn != 4 || w2n != 5 ||
        dnnl_primitive_desc_query(p->pd[0], dnnl_query_impl_info_str, 0,
                                  &impl) != dnnl_success ||
        !impl || strncmp(impl, "ref_fused", 9) != 0)
        return 0;
    if (dlb_dnnl_md_tag(&m[0], 4, xd, t, dnnl_nChw16c) ||
        dlb_dnnl_md_tag(&m[1], 4, wd, t,
                        t == dnnl_f32 ? dnnl_OIhw16i16o : dnnl_OIhw8i16o2i) ||
        dlb_dnnl_md_tag(&m[2], 5, w2d, t, dnnl_Goihw16g) ||
        dlb_dnnl_md_tag(&m[3], 4, yd, t, dnnl_nChw16c))
        return 0;
    for (int i = 0; i < 4; i++)
        if (!dlb_dnnl_md_equal(&p->io_md[i], &m[i]))
            return 0;
    return 1;
}

/* pd[0] the fused forward; io: x, the 1x1's weights, the depthwise
 * weights, y; mem[12] and mem[13] the two biases (plain). Created for
 * forward_training as cpu_conv.c's convolutions are, so that oneDNN picks
 * the layouts the layers around it use. */
static dlb_status build(struct dlb_backend *be, struct dlb_cpu_prim *p,
                        const void *arg)
{
    const struct dlb_op *o = arg;
    const struct dlb_conv2d_desc *d = &o->conv, *e = &o->dwconv;
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    const char *op = "conv2d_dw";
    dnnl_dims_t xd = { d->n, d->in_c, d->in_h, d->in_w };
    dnnl_dims_t td = { d->n, d->out_c, d->out_h, d->out_w };
    dnnl_dims_t yd = { e->n, e->out_c, e->out_h, e->out_w };
    dnnl_dims_t bd = { d->out_c }, wd, w2d;
    int wn = dlb_cpu_conv_w_dims(d, wd), w2n = dlb_cpu_conv_w_dims(e, w2d);
    dnnl_dims_t one = { 1, 1 }, zero = { 0, 0 };
    dnnl_format_tag_t any = dnnl_format_tag_any;
    dlb_dnnl_md x, w, b, w2, y, xa, wa, ta;
    dnnl_primitive_attr_t attr = NULL;
    dlb_status s = DLB_OK;
    /* the expanded tensor (the 1x1's output, the depthwise input) in the
     * compute type too: what the two layers apart would write between */
    dnnl_data_type_t t = dlb_cpu_dnnl_type((enum dlb_dtype)dw_type(o));
    DLB_DNNL(be, op, dlb_cpu_md_plain(&x, 4, xd, t));
    DLB_DNNL(be, op, dlb_cpu_md_plain(&w, wn, wd, t));
    DLB_DNNL(be, op, dlb_cpu_md_plain(&b, 1, bd, dnnl_f32));
    DLB_DNNL(be, op, dlb_cpu_md_plain(&w2, w2n, w2d, t));
    DLB_DNNL(be, op, dlb_cpu_md_plain(&y, 4, yd, t));
    DLB_DNNL(be, op, dlb_dnnl_md_tag(&xa, 4, xd, t, any));
    DLB_DNNL(be, op, dlb_dnnl_md_tag(&wa, wn, wd, t, any));
    DLB_DNNL(be, op, dlb_dnnl_md_tag(&ta, 4, td, t, any));
    DLB_DNNL(be, op, dnnl_primitive_attr_create(&attr));
    DLB_DNNL(be, op, dlb_dnnl_attr_post_dw(
        attr, t, o->relu != 0, clip_of(o->relu, o->relu_max),
        (int)e->stride_h, o->b2 != NULL, o->relu2 != 0,
        clip_of(o->relu2, o->relu2_max)));
    DLB_DNNL(be, op, dlb_dnnl_conv_fwd_pd(&p->pd[0], cpu->engine,
                                          dnnl_forward_training, dnnl_convolution_direct,
                                          &xa, &wa,
                                          o->b ? &b : NULL, &ta, one, zero,
                                          zero, attr));
    DLB_DNNL(be, op, dlb_cpu_make(p, 0));
    struct dlb_cpu_tensor io[4] = {
        { DNNL_ARG_SRC, dnnl_query_src_md, DLB_CPU_IN, x },
        { DNNL_ARG_WEIGHTS, dnnl_query_weights_md, DLB_CPU_IN_WEIGHTS, w },
        { DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS, dnnl_query_exec_arg_md,
          DLB_CPU_IN_WEIGHTS, w2 },
        /* the fused primitive's destination is the depthwise output */
        { DNNL_ARG_DST, dnnl_query_dst_md, DLB_CPU_OUT, y },
    };
    DLB_DNNL(be, op, dlb_cpu_io_setup(cpu, p, io, 4));
    DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[12], &b));
    DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[13], &b));
    if (own_fits(p, t, xd, wd, wn, w2d, w2n, yd))
        p->flags |= DW_OWN;
out:
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return s;
}

dlb_status dlb_cpu_conv2d_dw(struct dlb_backend *be, const struct dlb_op *o)
{
    const char *op = "conv2d_dw";
    struct dlb_cpu_key key = dw_key(o);
    struct dlb_cpu_prim *p;
    dlb_status s;
    if ((s = dlb_cpu_cache_get(be, &key, build, o, &p)))
        return s;
    dnnl_exec_arg_t bias[2];
    int nb = 0;
    if (o->b) {
        DLB_DNNL(be, op, dlb_cpu_bind(p->mem[12], o->b->data));
        bias[nb++] = (dnnl_exec_arg_t){ DNNL_ARG_BIAS, p->mem[12] };
    }
    if (o->b2) {
        DLB_DNNL(be, op, dlb_cpu_bind(p->mem[13], o->b2->data));
        bias[nb++] = (dnnl_exec_arg_t){
            DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS, p->mem[13] };
    }
    const struct dlb_buffer *io[4] = { o->x, o->w, o->w2, o->y };
    s = dlb_cpu_io_run(be, p, op, io, nb, bias);
out:
    return s;
}

/* "dw_avx512": where build() found the entry the own kernel's. */
int dlb_cpu_conv2d_dw_own_applies(struct dlb_backend *be, const struct dlb_op *o)
{
    struct dlb_cpu_key key = dw_key(o);
    struct dlb_cpu_prim *p;
    if (!dlb_cpu_conv2d_dw_applies(be, o))
        return 0;
    return !dlb_cpu_cache_get(be, &key, build, o, &p) && (p->flags & DW_OWN);
}

/* An activation's bounds as the kernel takes them. */
static void bounds(int relu, float max, float *lo, float *hi)
{
    *lo = relu ? 0.0f : -INFINITY;
    *hi = relu && max > 0.0f ? max : INFINITY;
}

/* The pair's sizes, as both own kernels take them. */
#define DW_SIZES(d, e)                                                      \
    .n = (int)(d)->n, .ic = (int)(d)->in_c, .icb = (int)((d)->in_c + 15) / 16, \
    .ih = (int)(d)->in_h, .iw = (int)(d)->in_w, .oc = (int)(d)->out_c,      \
    .ocb = (int)((d)->out_c + 15) / 16, .oh = (int)(e)->out_h,              \
    .ow = (int)(e)->out_w, .stride = (int)(e)->stride_h

dlb_status dlb_cpu_conv2d_dw_own(struct dlb_backend *be, const struct dlb_op *o)
{
    const char *op = "conv2d_dw";
    const struct dlb_conv2d_desc *d = &o->conv, *e = &o->dwconv;
    struct dlb_cpu_key key = dw_key(o);
    struct dlb_cpu_prim *p;
    void *ptr[4];
    dlb_status s;
    const struct dlb_buffer *io[4] = { o->x, o->w, o->w2, o->y };
    if ((s = dlb_cpu_cache_get(be, &key, build, o, &p)) ||
        (s = dlb_cpu_io_ptrs(be, p, io, ptr)))
        return s;
    const float *b1 = o->b ? o->b->data : NULL, *b2 = o->b2 ? o->b2->data : NULL;
    struct dlb_cpu_dw_f32 a = {
        .x = ptr[0], .w1 = ptr[1], .b1 = b1, .w2 = ptr[2], .b2 = b2,
        .y = ptr[3], DW_SIZES(d, e) };
    struct dlb_cpu_dw_bf16 h = {
        .x = ptr[0], .w1 = ptr[1], .b1 = b1, .w2 = ptr[2], .b2 = b2,
        .y = ptr[3], DW_SIZES(d, e) };
    int bf16 = dw_type(o) == (unsigned)DLB_BF16;
    bounds(o->relu, o->relu_max, &a.lo1, &a.hi1);
    bounds(o->relu2, o->relu2_max, &a.lo2, &a.hi2);
    h.lo1 = a.lo1, h.hi1 = a.hi1, h.lo2 = a.lo2, h.hi2 = a.hi2;
    /* one ring per thread the backend runs */
    int threads = ((struct dlb_cpu *)dlb_backend_ctx(be))->threads;
    size_t per = bf16 ? dlb_cpu_dw_bf16_ring_floats(&h)
                      : dlb_cpu_dw_f32_ring_floats(&a);
    float *ring = dlb_cpu_scratch(be, DLB_CPU_SLOT_OWN,
                                  (size_t)threads * sizeof(float) * per);
    if (!ring)
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu %s: no memory for "
                                "the kernel's row buffers", op);
    if (bf16)
        dlb_cpu_dw_bf16_run(&h, ring, threads);
    else
        dlb_cpu_dw_f32_run(&a, ring, threads);
    return dlb_cpu_io_done(be, p, op, io);
}
