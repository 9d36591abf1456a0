/* ReLU on oneDNN's eltwise primitive (JIT-vectorised, in place allowed),
 * ReLU6 and other clipped ReLUs on its clip_v2 (the same kernels), and
 * dropout as an own loop over dlb_dropout_keep, the mask every
 * backend shares bit for bit. */
#include "cpu.h"

#include <string.h>

struct relu_arg {
    int backward;
    size_t count;
    dnnl_data_type_t dt;
    float relu_max;
};

static dlb_status relu_build(struct dlb_backend *be, struct dlb_cpu_prim *p,
                             const void *arg)
{
    const struct relu_arg *a = arg;
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    const char *op = a->backward ? "relu_bwd" : "relu_fwd";
    dnnl_dims_t dims = { (dnnl_dim_t)a->count };
    /* clip_v2 on [0, relu_max]: y = x where 0 < x <= relu_max, 0 below,
     * relu_max above; its backward from y passes dy where 0 < y <
     * relu_max, as backend.h's RELU says. */
    int clip = a->relu_max > 0.0f;
    dnnl_alg_kind_t alg = clip ? dnnl_eltwise_clip_v2_use_dst_for_bwd
                               : dnnl_eltwise_relu_use_dst_for_bwd;
    float beta = clip ? a->relu_max : 0.0f;
    dlb_status s = DLB_OK;
    /* One flat tensor: relu does not care about the shape, and any count
     * then shares one primitive per size. use_dst lets backward read y,
     * the interface's contract. */
    DLB_DNNL(be, op, dlb_cpu_md_plain(&p->md[0], 1, dims, a->dt));
    DLB_DNNL(be, op, dlb_dnnl_eltwise_fwd_pd(
        &p->pd[a->backward ? DLB_CPU_HINT : 0], cpu->engine,
        dnnl_forward_training, alg, &p->md[0], 0.0f, beta));
    if (a->backward)
        DLB_DNNL(be, op, dlb_dnnl_eltwise_bwd_pd(
            &p->pd[0], cpu->engine, alg, &p->md[0], 0.0f, beta,
            p->pd[DLB_CPU_HINT]));
    DLB_DNNL(be, op, dlb_cpu_make(p, 0));
    for (int i = 0; i < 3; i++)
        DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[i], &p->md[0]));
out:
    return s;
}

static dlb_status relu_get(struct dlb_backend *be, int backward, size_t count,
                           enum dlb_dtype t, float relu_max,
                           struct dlb_cpu_prim **out)
{
    struct dlb_cpu_key k;
    struct relu_arg a = { backward, count, dlb_cpu_dnnl_type(t),
                          relu_max > 0.0f ? relu_max : 0.0f };
    memset(&k, 0, sizeof k);
    k.op = backward ? DLB_CPU_RELU_BWD : DLB_CPU_RELU_FWD;
    k.w[0] = (uint32_t)count;
    k.w[1] = (uint32_t)((uint64_t)count >> 32);
    k.w[2] = (uint32_t)t;
    memcpy(&k.w[3], &a.relu_max, sizeof a.relu_max); /* the clip's bits */
    return dlb_cpu_cache_get(be, &k, relu_build, &a, out);
}

static dlb_status same_type(struct dlb_backend *be, const char *op,
                            const struct dlb_buffer *a,
                            const struct dlb_buffer *b)
{
    if (a->dtype != b->dtype)
        return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED, "cpu %s: input and "
                                "output types differ; cast first", op);
    return DLB_OK;
}

dlb_status dlb_cpu_relu_fwd(struct dlb_backend *be, size_t count,
                            float relu_max, const struct dlb_buffer *x,
                            struct dlb_buffer *y)
{
    const char *op = "relu_fwd";
    const dlb_dnnl_md *lay;
    struct dlb_cpu_prim *p;
    dlb_status s;
    if ((s = dlb_cpu_check_float(be, op, "x", x, count)) ||
        (s = dlb_cpu_check_float(be, op, "y", y, count)) ||
        (s = same_type(be, op, x, y)))
        return s;
    if (!count)
        return DLB_OK;
    /* Element-wise: y takes x's layout, padding included (relu(0) = 0,
     * clipped too). */
    if ((s = dlb_cpu_physical(be, x, count, &count)))
        return s;
    lay = dlb_cpu_layout(x);
    if ((s = lay ? dlb_cpu_set_layout(be, y, lay) : dlb_cpu_make_plain(be, y)))
        return s;
    if ((s = relu_get(be, 0, count, x->dtype, relu_max, &p)))
        return s;
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[0], x->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[1], y->data));
    dnnl_exec_arg_t args[2] = { { DNNL_ARG_SRC, p->mem[0] },
                                { DNNL_ARG_DST, p->mem[1] } };
    DLB_DNNL(be, op, dlb_cpu_exec(dlb_backend_ctx(be), p->prim[0], 2, args));
    dlb_cpu_written(y);
out:
    return s;
}

dlb_status dlb_cpu_relu_bwd(struct dlb_backend *be, size_t count,
                            float relu_max, const struct dlb_buffer *y,
                            const struct dlb_buffer *dy, struct dlb_buffer *dx)
{
    const char *op = "relu_bwd";
    const dlb_dnnl_md *lay;
    struct dlb_cpu_prim *p;
    void *dyp = dy->data;
    dlb_status s;
    if ((s = dlb_cpu_check_float(be, op, "y", y, count)) ||
        (s = dlb_cpu_check_float(be, op, "dy", dy, count)) ||
        (s = dlb_cpu_check_float(be, op, "dx", dx, count)) ||
        (s = same_type(be, op, y, dy)) || (s = same_type(be, op, dy, dx)))
        return s;
    if (!count)
        return DLB_OK;
    /* y's layout rules: dy comes over to it (a linear layer's plain dx
     * meets a convolution's blocked output after a flatten). dx may be
     * dy: the view has copied dy out before dx's storage can change. */
    if ((s = dlb_cpu_physical(be, y, count, &count)))
        return s;
    if ((lay = dlb_cpu_layout(y)))
        s = dlb_cpu_view(be, dy, lay, DLB_CPU_SLOT_VIEW_A, &dyp);
    else
        s = DLB_CPU_PLAIN(be, dy);
    if (s || (s = lay ? dlb_cpu_set_layout(be, dx, lay)
                      : dlb_cpu_make_plain(be, dx)))
        return s;
    if ((s = relu_get(be, 1, count, y->dtype, relu_max, &p)))
        return s;
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[0], y->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[1], dyp));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[2], dx->data));
    dnnl_exec_arg_t args[3] = { { DNNL_ARG_DST, p->mem[0] },
                                { DNNL_ARG_DIFF_DST, p->mem[1] },
                                { DNNL_ARG_DIFF_SRC, p->mem[2] } };
    DLB_DNNL(be, op, dlb_cpu_exec(dlb_backend_ctx(be), p->prim[0], 3, args));
    dlb_cpu_written(dx);
out:
    return s;
}

#define DROP_CHUNK 1024

static void gather(const struct dlb_buffer *b, size_t base, size_t stride,
                   size_t n, float *t)
{
    if (stride == 1) {
        dlb_cpu_load_f32(b, base, n, t);
    } else if (b->dtype == DLB_F32) {
        const float *p = (const float *)b->data + base;
        for (size_t i = 0; i < n; i++)
            t[i] = p[i * stride];
    } else {
        for (size_t i = 0; i < n; i++)
            dlb_cpu_load_f32(b, base + i * stride, 1, &t[i]);
    }
}

static void scatter(struct dlb_buffer *b, size_t base, size_t stride,
                    size_t n, const float *t)
{
    if (stride == 1) {
        dlb_cpu_store_f32(b, base, n, t);
    } else if (b->dtype == DLB_F32) {
        float *p = (float *)b->data + base;
        for (size_t i = 0; i < n; i++)
            p[i * stride] = t[i];
    } else {
        for (size_t i = 0; i < n; i++)
            dlb_cpu_store_f32(b, base + i * stride, 1, &t[i]);
    }
}

/* Dropout on a blocked layout, plane by plane: the mask index stays the
 * logical NCHW index, so every layout drops the same elements. The
 * padding channels are written as zeros, as oneDNN expects them. */
static void dropout_mapped(const struct dlb_dropout_desc *d,
                           const struct dlb_cpu_map *m, uint32_t thr,
                           double keep_scale, const struct dlb_buffer *in,
                           struct dlb_buffer *out)
{
    size_t hw = d->hw ? d->hw : 1, planes = (size_t)d->n * m->padded_c;
    int channel = d->mode == DLB_DROPOUT_CHANNEL;
    DLB_OMP("omp parallel for schedule(static) if(planes * hw > DLB_CPU_PAR_MIN)")
    for (size_t p = 0; p < planes; p++) {
        float t[DROP_CHUNK];
        size_t n = p / m->padded_c, c = p % m->padded_c;
        size_t base = n * m->sn + c / m->blk * m->sc + c % m->blk;
        size_t plane = n * d->c + c;
        int keep = c < d->c && dlb_dropout_keep(d->seed, plane, thr);
        for (size_t k = 0; k < hw; k += DROP_CHUNK) {
            size_t len = hw - k < DROP_CHUNK ? hw - k : DROP_CHUNK;
            if (c >= d->c) {
                memset(t, 0, len * sizeof *t);
            } else {
                gather(in, base + k * m->sk, m->sk, len, t);
                for (size_t i = 0; i < len; i++) {
                    if (!channel)
                        keep = dlb_dropout_keep(d->seed, plane * hw + k + i,
                                                thr);
                    t[i] = keep ? (float)((double)t[i] * keep_scale) : 0.0f;
                }
            }
            scatter(out, base + k * m->sk, m->sk, len, t);
        }
    }
}

/* The same on nhwc (f32), pixel by pixel: the plane walk above reads
 * nhwc with a stride of the channel count, which ran slower than the
 * host view's loop; here each image is read once in order. */
static void dropout_nhwc(const struct dlb_dropout_desc *d,
                         const struct dlb_cpu_map *m, uint32_t thr,
                         double keep_scale, const float *in, float *out)
{
    size_t hw = d->hw ? d->hw : 1, C = d->c;
    int channel = d->mode == DLB_DROPOUT_CHANNEL;
    DLB_OMP("omp parallel for schedule(static) if((size_t)d->n * C * hw > DLB_CPU_PAR_MIN)")
    for (uint32_t n = 0; n < d->n; n++) {
        float scale[DROP_CHUNK];
        for (size_t c = 0; c < C; c++)
            scale[c] = channel && !dlb_dropout_keep(d->seed, n * C + c, thr)
                           ? 0.0f : 1.0f;
        for (size_t k = 0; k < hw; k++) {
            const float *x = in + n * m->sn + k * m->sk;
            float *y = out + n * m->sn + k * m->sk;
            for (size_t c = 0; c < C; c++) {
                int keep = channel ? scale[c] != 0.0f
                                   : dlb_dropout_keep(d->seed,
                                                      (n * C + c) * hw + k, thr);
                y[c] = keep ? (float)((double)x[c] * keep_scale) : 0.0f;
            }
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

/* Whole-channel dropout on nhwc f32 with AVX-512, eight channels of a
 * pixel at a time: the scalar loop's per-element branch and double
 * product kept it from vectorising, and it took 4% of LeNet's training
 * step. The product is still taken in double and rounded once, so the
 * values match the scalar loop's and the ref backend's bit for bit;
 * dropped lanes are masked to +0, even where x is inf or NaN. */
__attribute__((target("avx512f,avx512vl")))
static void dropout_nhwc_channel_avx512(const struct dlb_dropout_desc *d,
                                        const struct dlb_cpu_map *m,
                                        uint32_t thr, double keep_scale,
                                        const float *in, float *out)
{
    size_t hw = d->hw ? d->hw : 1, C = d->c;
    size_t groups = (C + 7) / 8;
    DLB_OMP("omp parallel for schedule(static) if((size_t)d->n * C * hw > DLB_CPU_PAR_MIN)")
    for (uint32_t n = 0; n < d->n; n++) {
        __mmask8 keep[DROP_CHUNK / 8 + 1], load[DROP_CHUNK / 8 + 1];
        __m512d ks = _mm512_set1_pd(keep_scale);
        for (size_t g = 0; g < groups; g++) {
            size_t c0 = g * 8, w = C - c0 < 8 ? C - c0 : 8;
            keep[g] = 0;
            load[g] = (__mmask8)((1u << w) - 1);
            for (size_t c = 0; c < w; c++)
                if (dlb_dropout_keep(d->seed, n * C + c0 + c, thr))
                    keep[g] |= (__mmask8)(1u << c);
        }
        for (size_t k = 0; k < hw; k++) {
            const float *x = in + n * m->sn + k * m->sk;
            float *y = out + n * m->sn + k * m->sk;
            for (size_t g = 0; g < groups; g++) {
                __m256 v = _mm256_maskz_loadu_ps(load[g], x + g * 8);
                __m256 r = _mm512_cvtpd_ps(
                    _mm512_mul_pd(_mm512_cvtps_pd(v), ks));
                _mm256_mask_storeu_ps(y + g * 8, load[g],
                                      _mm256_maskz_mov_ps(keep[g], r));
            }
        }
    }
}
#endif

/* Both passes multiply by the same mask/(1-p), so one function does both.
 * The scale is applied in double and rounded once, as the ref backend. */
static dlb_status dropout_apply(struct dlb_backend *be, const char *op,
                                const struct dlb_dropout_desc *d,
                                const struct dlb_buffer *in,
                                struct dlb_buffer *out)
{
    size_t count = (size_t)d->n * d->c * d->hw;
    size_t hw = d->hw ? d->hw : 1;
    size_t nc = (count + DROP_CHUNK - 1) / DROP_CHUNK;
    uint32_t thr = dlb_dropout_threshold(d->p);
    double keep_scale = d->p < 1.0f ? 1.0 / (1.0 - (double)d->p) : 0.0;
    int channel = d->mode == DLB_DROPOUT_CHANNEL;
    const dlb_dnnl_md *lay;
    struct dlb_cpu_map map;
    dlb_status s;
    if (!(d->p >= 0.0f && d->p <= 1.0f))
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: p = %g is not "
                                "in [0, 1]", op, (double)d->p);
    if ((s = dlb_cpu_check_float(be, op, "input", in, count)) ||
        (s = dlb_cpu_check_float(be, op, "output", out, count)))
        return s;
    lay = dlb_cpu_layout(in);
    if (lay && dlb_cpu_map_of(lay, d->n, d->c, d->hw, &map)) {
        if ((s = dlb_cpu_set_layout(be, out, lay)))
            return s;
        if (map.blk == 1 && map.sc == 1 && d->c <= DROP_CHUNK &&
            in->dtype == DLB_F32 && out->dtype == DLB_F32) {
#if defined(__GNUC__) && defined(__x86_64__)
            if (channel && __builtin_cpu_supports("avx512f") &&
                __builtin_cpu_supports("avx512vl")) {
                dropout_nhwc_channel_avx512(d, &map, thr, keep_scale,
                                            in->data, out->data);
                dlb_cpu_written(out);
                return DLB_OK;
            }
#endif
            dropout_nhwc(d, &map, thr, keep_scale, in->data, out->data);
        }
        else
            dropout_mapped(d, &map, thr, keep_scale, in, out);
        dlb_cpu_written(out);
        return DLB_OK;
    }
    if ((s = DLB_CPU_PLAIN(be, in, out)))
        return s;
    DLB_OMP("omp parallel for schedule(static) if(count > DLB_CPU_PAR_MIN)")
    for (size_t c = 0; c < nc; c++) {
        float t[DROP_CHUNK];
        size_t off = c * DROP_CHUNK, left = count - off;
        size_t n = left < DROP_CHUNK ? left : DROP_CHUNK;
        dlb_cpu_load_f32(in, off, n, t);
        if (channel) {
            /* One hash per plane, not per element. */
            size_t i = 0;
            while (i < n) {
                size_t plane = (off + i) / hw;
                size_t end = (plane + 1) * hw - off;
                int keep = dlb_dropout_keep(d->seed, plane, thr);
                end = end < n ? end : n;
                for (; i < end; i++) /* dropped: +0, even for inf/NaN */
                    t[i] = keep ? (float)((double)t[i] * keep_scale) : 0.0f;
            }
        } else {
            for (size_t i = 0; i < n; i++)
                t[i] = dlb_dropout_keep(d->seed, off + i, thr)
                           ? (float)((double)t[i] * keep_scale) : 0.0f;
        }
        dlb_cpu_store_f32(out, off, n, t);
    }
    dlb_cpu_written(out);
    return DLB_OK;
}

dlb_status dlb_cpu_dropout_fwd(struct dlb_backend *be,
                               const struct dlb_dropout_desc *d,
                               const struct dlb_buffer *x, struct dlb_buffer *y)
{
    return dropout_apply(be, "dropout_fwd", d, x, y);
}

dlb_status dlb_cpu_dropout_bwd(struct dlb_backend *be,
                               const struct dlb_dropout_desc *d,
                               const struct dlb_buffer *dy,
                               struct dlb_buffer *dx)
{
    return dropout_apply(be, "dropout_bwd", d, dy, dx);
}
