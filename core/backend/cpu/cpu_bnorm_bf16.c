/* Batch norm on bf16 data in nChw16c or nhwc, the layouts in which the
 * convolutions of a bf16 network hand their outputs over (the AMX
 * kernels on Sapphire Rapids write nhwc for 64 and 128 channels): own
 * AVX-512 loops that read and write the bf16 tensors directly. oneDNN 2.6's bf16
 * batch-norm kernels ran 2-5x slower than its f32 ones here, and the f32
 * route (convert into scratch, the f32 kernel, convert back) moves about
 * 2.7x the bytes of these loops: its conversions were a quarter of the
 * primitive time of vgg-small's bf16 training step at batch 256 (oneDNN
 * verbose), more than the batch norm itself.
 *
 * Arithmetic is f32 per element, as in the f32 route; statistics sum in
 * f32 along a row of one image and in double across rows, around a shift
 * per channel (its first value) so that a large mean does not swamp the
 * variance. Each thread sums a fixed share of the images into its own
 * partials, added in thread order afterwards: the result does not depend
 * on timing. Stores round to nearest even as dlb_cpu_store_f32 does.
 *
 * With the ReLU after it fused (relu set), forward stores max(y, 0) and
 * backward recomputes which y were positive from x, the saved statistics
 * and beta, with the same f32 operations forward ran (relu_scale), so the
 * mask is forward's bit for bit and neither the ReLU's passes nor a read
 * of y cost memory traffic: vgg-small's ReLUs moved about 160 MB a bf16
 * training step at batch 256 (5.8 ms in oneDNN's eltwise kernels). */
#include "cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define LANES 16

int dlb_cpu_bn16_applies(const dlb_dnnl_md *md, uint32_t c)
{
#if defined(__GNUC__) && defined(__x86_64__)
    int code = dlb_cpu_layout_code(md);
    return md->data_type == dnnl_bf16 && c % LANES == 0 &&
           (code == 1 || code == 3) && __builtin_cpu_supports("avx512f");
#else
    (void)md;
    (void)c;
    return 0;
#endif
}

#if defined(__GNUC__) && defined(__x86_64__)
#include "cpu_bf16_avx512.h"

#define AVX512 DLB_CPU_AVX512
#define load16 dlb_cpu_bf16_load16
#define store16 dlb_cpu_bf16_store16

/* The shape of a pass: n images of cb blocks of hw pixels of 16 lanes;
 * ps elements from one pixel's 16 lanes to the next pixel's: 16 in
 * nChw16c, c in nhwc. An image's slice (25 KB for vgg-small's 64 x 14 x
 * 14 in bf16) stays in cache across its blocks, so the strided walk of
 * nhwc costs no more memory traffic than the contiguous one. */
struct shape {
    size_t n, cb, hw, ps;
    int nhwc;
};

/* Where image n's block b starts. */
static size_t at(const struct shape *g, size_t n, size_t b)
{
    return g->nhwc ? n * g->hw * g->cb * LANES + b * LANES
                   : (n * g->cb + b) * g->hw * LANES;
}

static int max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* The ReLU's mask of the fused forward: lanes where (v * rs + rb) > 0,
 * v = x - mean; all lanes when rs is NULL (no ReLU). */
AVX512 static __mmask16 relu_mask(__m512 v, const float *rs, const float *rb)
{
    if (!rs)
        return (__mmask16)0xffff;
    __m512 p = _mm512_fmadd_ps(v, _mm512_loadu_ps(rs), _mm512_loadu_ps(rb));
    return _mm512_cmp_ps_mask(p, _mm512_setzero_ps(), _CMP_GT_OQ);
}

/* Per channel: s0 = sum (a - ka), s1 = sum (a - ka)^2 when b is NULL,
 * else s0 = sum b' and s1 = sum b' (a - ka), b' = b where relu_mask
 * passes (rs, rb: the fused ReLU's scale and shift, or NULL), else 0.
 * part holds 2c doubles per thread; the sums land in sum0 and sum1. */
AVX512 static void channel_sums(const struct shape *g, const uint16_t *a,
                                const float *ka, const uint16_t *b,
                                const float *rs, const float *rb,
                                double *part, int threads, double *sum0,
                                double *sum1)
{
    const size_t c = g->cb * LANES;
    memset(part, 0, (size_t)threads * 2 * c * sizeof *part);
    DLB_OMP("omp parallel num_threads(threads)")
    {
        double *p0 = part + (size_t)thread_num() * 2 * c, *p1 = p0 + c;
        DLB_OMP("omp for schedule(static)")
        for (size_t n = 0; n < g->n; n++)
            for (size_t blk = 0; blk < g->cb; blk++) {
                const uint16_t *ar = a + at(g, n, blk);
                const uint16_t *br = b ? b + at(g, n, blk) : NULL;
                __m512 k = _mm512_loadu_ps(ka + blk * LANES);
                __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
                const float *cs = rs ? rs + blk * LANES : NULL;
                const float *cb = rs ? rb + blk * LANES : NULL;
                for (size_t i = 0; i < g->hw; i++) {
                    __m512 v = _mm512_sub_ps(load16(ar + i * g->ps), k);
                    if (br) {
                        __m512 w = _mm512_maskz_mov_ps(relu_mask(v, cs, cb),
                                                       load16(br + i * g->ps));
                        s0 = _mm512_add_ps(s0, w);
                        s1 = _mm512_fmadd_ps(w, v, s1);
                    } else {
                        s0 = _mm512_add_ps(s0, v);
                        s1 = _mm512_fmadd_ps(v, v, s1);
                    }
                }
                float f0[LANES], f1[LANES];
                _mm512_storeu_ps(f0, s0);
                _mm512_storeu_ps(f1, s1);
                for (size_t l = 0; l < LANES; l++) {
                    p0[blk * LANES + l] += f0[l];
                    p1[blk * LANES + l] += f1[l];
                }
            }
    }
    for (size_t ch = 0; ch < c; ch++) {
        double t0 = 0.0, t1 = 0.0;
        for (int t = 0; t < threads; t++) {
            t0 += part[(size_t)t * 2 * c + ch];
            t1 += part[(size_t)t * 2 * c + c + ch];
        }
        sum0[ch] = t0;
        sum1[ch] = t1;
    }
}

/* y = (x - mean) * scale + shift per channel; max(y, 0) with relu. */
AVX512 static void normalize(const struct shape *g, const uint16_t *x,
                             uint16_t *y, const float *mean,
                             const float *scale, const float *shift, int relu)
{
    DLB_OMP("omp parallel for if(g->n * g->cb * g->hw * LANES > DLB_CPU_PAR_MIN)")
    for (size_t n = 0; n < g->n; n++)
        for (size_t blk = 0; blk < g->cb; blk++) {
            const uint16_t *xr = x + at(g, n, blk);
            uint16_t *yr = y + at(g, n, blk);
            __m512 m = _mm512_loadu_ps(mean + blk * LANES);
            __m512 a = _mm512_loadu_ps(scale + blk * LANES);
            __m512 b = _mm512_loadu_ps(shift + blk * LANES);
            for (size_t i = 0; i < g->hw; i++) {
                __m512 v = _mm512_sub_ps(load16(xr + i * g->ps), m);
                __m512 r = _mm512_fmadd_ps(v, a, b);
                /* max returns its second operand for a NaN, as ReLU's
                 * x > 0 ? x : 0 does */
                if (relu)
                    r = _mm512_max_ps(r, _mm512_setzero_ps());
                store16(yr + i * g->ps, r);
            }
        }
}

/* dx = a dy' + b - k (x - mean) per channel, dy' = dy masked as in
 * channel_sums (rs, rb); dx may be dy. */
AVX512 static void input_grad(const struct shape *g, const uint16_t *x,
                              const uint16_t *dy, uint16_t *dx,
                              const float *mean, const float *a,
                              const float *b, const float *k,
                              const float *rs, const float *rb)
{
    DLB_OMP("omp parallel for if(g->n * g->cb * g->hw * LANES > DLB_CPU_PAR_MIN)")
    for (size_t n = 0; n < g->n; n++)
        for (size_t blk = 0; blk < g->cb; blk++) {
            size_t o = at(g, n, blk);
            __m512 m = _mm512_loadu_ps(mean + blk * LANES);
            __m512 va = _mm512_loadu_ps(a + blk * LANES);
            __m512 vb = _mm512_loadu_ps(b + blk * LANES);
            __m512 vk = _mm512_loadu_ps(k + blk * LANES);
            const float *cs = rs ? rs + blk * LANES : NULL;
            const float *cb = rs ? rb + blk * LANES : NULL;
            for (size_t i = 0; i < g->hw; i++) {
                size_t e = o + i * g->ps;
                __m512 t = _mm512_sub_ps(load16(x + e), m);
                __m512 w = _mm512_maskz_mov_ps(relu_mask(t, cs, cb),
                                               load16(dy + e));
                __m512 r = _mm512_fmadd_ps(va, w, vb);
                store16(dx + e, _mm512_fnmadd_ps(vk, t, r));
            }
        }
}

/* Per-call work space: `floats` floats after the thread partials. */
struct work {
    double *part;
    int threads;
    double *s0, *s1;
    float *f;
};

static dlb_status work_get(struct dlb_backend *be, uint32_t c, size_t floats,
                           struct work *w)
{
    w->threads = max_threads();
    size_t doubles = ((size_t)w->threads * 2 + 2) * c;
    void *p = dlb_cpu_scratch(be, DLB_CPU_SLOT_F32,
                              doubles * sizeof(double) + floats * sizeof(float));
    if (!p)
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu batchnorm: out of "
                                "memory");
    w->part = p;
    w->s0 = w->part + (size_t)w->threads * 2 * c;
    w->s1 = w->s0 + c;
    w->f = (float *)(w->s1 + c);
    return DLB_OK;
}

static struct shape shape_of(const struct dlb_batchnorm_desc *d, int nhwc)
{
    struct shape g = { d->n, d->c / LANES, d->hw, nhwc ? d->c : LANES, nhwc };
    return g;
}

/* The fused ReLU's scale from the inverse deviation saved for backward
 * (as float: forward and backward then start from the same bits). */
static float relu_scale(float gamma, float invstd)
{
    return (float)((double)gamma * invstd);
}

static float invstd_of(float var, float eps)
{
    return (float)(1.0 / sqrt((double)var + eps));
}

dlb_status dlb_cpu_bn16_fwd(struct dlb_backend *be,
                            const struct dlb_batchnorm_desc *d, int nhwc,
                            const void *x,
                            void *y, const float *gamma, const float *beta,
                            const float *use_mean, const float *use_var,
                            float *mean, float *var, int relu)
{
    const struct shape g = shape_of(d, nhwc);
    const uint32_t c = d->c;
    struct work w;
    dlb_status s = work_get(be, c, 3 * (size_t)c, &w);
    if (s != DLB_OK)
        return s;
    float *k = w.f, *scale = k + c, *shift = scale + c;
    const float *mu = use_mean, *vr = use_var; /* inference: running ones */
    if (!use_mean) {
        const uint16_t *x0 = x; /* the first image's first pixel */
        for (uint32_t ch = 0; ch < c; ch++) {
            uint32_t bits = (uint32_t)x0[at(&g, 0, ch / LANES) + ch % LANES]
                            << 16;
            memcpy(&k[ch], &bits, sizeof bits);
            if (!isfinite(k[ch]))
                k[ch] = 0.0f; /* the sums carry the NaN or inf on */
        }
        channel_sums(&g, x, k, NULL, NULL, NULL, w.part, w.threads, w.s0,
                     w.s1);
        double cnt = (double)d->n * d->hw;
        for (uint32_t ch = 0; ch < c; ch++) {
            double m = w.s0[ch] / cnt;
            double v = w.s1[ch] / cnt - m * m;
            mean[ch] = (float)(k[ch] + m);
            var[ch] = (float)(v > 0.0 ? v : 0.0);
        }
        mu = mean;
        vr = var;
    }
    for (uint32_t ch = 0; ch < c; ch++) {
        scale[ch] = relu ? relu_scale(gamma[ch], invstd_of(vr[ch], d->eps))
                         : (float)(gamma[ch] / sqrt((double)vr[ch] + d->eps));
        shift[ch] = beta[ch];
    }
    normalize(&g, x, y, mu, scale, shift, relu);
    return DLB_OK;
}

dlb_status dlb_cpu_bn16_bwd(struct dlb_backend *be,
                            const struct dlb_batchnorm_desc *d, int nhwc,
                            const void *x,
                            const void *dy, void *dx, const float *gamma,
                            const float *mean, const float *invstd,
                            const float *beta, float *dgamma, float *dbeta)
{
    const struct shape g = shape_of(d, nhwc);
    const uint32_t c = d->c;
    struct work w;
    dlb_status s = work_get(be, c, 4 * (size_t)c, &w);
    if (s != DLB_OK)
        return s;
    float *a = w.f, *b = a + c, *k = b + c, *rs = beta ? k + c : NULL;
    for (uint32_t ch = 0; rs && ch < c; ch++)
        rs[ch] = relu_scale(gamma[ch], invstd[ch]);
    channel_sums(&g, x, mean, dy, rs, beta, w.part, w.threads, w.s0, w.s1);
    double cnt = (double)d->n * d->hw;
    for (uint32_t ch = 0; ch < c; ch++) {
        double is = invstd[ch], A = (double)gamma[ch] * is;
        double dg = w.s1[ch] * is, db = w.s0[ch];
        dgamma[ch] = (float)dg;
        dbeta[ch] = (float)db;
        /* dx = A (dy - db/cnt - xhat dg/cnt), xhat = (x - mean) is */
        a[ch] = (float)A;
        b[ch] = (float)(-A * db / cnt);
        k[ch] = (float)(A * is * dg / cnt);
    }
    input_grad(&g, x, dy, dx, mean, a, b, k, rs, beta);
    return DLB_OK;
}
#else
dlb_status dlb_cpu_bn16_fwd(struct dlb_backend *be,
                            const struct dlb_batchnorm_desc *d, int nhwc,
                            const void *x,
                            void *y, const float *gamma, const float *beta,
                            const float *use_mean, const float *use_var,
                            float *mean, float *var, int relu)
{
    (void)d; (void)nhwc; (void)x; (void)y; (void)gamma; (void)beta; (void)use_mean;
    (void)use_var; (void)mean; (void)var; (void)relu;
    return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu batchnorm: the bf16 "
                            "loops need x86-64 (dlb_cpu_bn16_applies is 0)");
}

dlb_status dlb_cpu_bn16_bwd(struct dlb_backend *be,
                            const struct dlb_batchnorm_desc *d, int nhwc,
                            const void *x,
                            const void *dy, void *dx, const float *gamma,
                            const float *mean, const float *invstd,
                            const float *beta, float *dgamma, float *dbeta)
{
    (void)d; (void)nhwc; (void)x; (void)dy; (void)dx; (void)gamma; (void)mean;
    (void)invstd; (void)beta; (void)dgamma; (void)dbeta;
    return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu batchnorm: the bf16 "
                            "loops need x86-64 (dlb_cpu_bn16_applies is 0)");
}
#endif
