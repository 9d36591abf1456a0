/* A first convolution layer in f32 on AVX-512: one input channel, fewer
 * than 16 output channels, no padding (LeNet's conv1: 1 -> 10, 5x5).
 *
 * oneDNN's kernels are built for many channels; with one input channel
 * and ten outputs they ran at 80-120 GFLOP/s here, a third of the peak,
 * and conv1's forward and backward-weights passes took a quarter of
 * LeNet's training step and a third of its inference. Here the output
 * channels of a pixel are the lanes of one vector: forward multiplies a
 * broadcast input value by a tap's weight vector into the accumulators
 * of 12 pixels at a time; backward-weights multiplies a broadcast input
 * value by a pixel's gradient vector into one accumulator per tap. With
 * 10 of 16 lanes used that bounds it at 62% of the FMA peak, twice what
 * oneDNN reached.
 *
 * The output is written in nhwc, the layout oneDNN chooses for these
 * channel counts (dlb_cpu_conv_act_tag), so the ops after it see what
 * they saw before; backward-weights takes its gradient in nhwc and hands
 * anything else back to oneDNN. Sums run in another order than oneDNN's
 * and the ref backend's: the results agree to rounding
 * (tests/unit/test_cpu_conv1.c states the tolerance). Backward-weights
 * sums each thread's share apart and adds the shares in thread order, so
 * a run is repeatable for a given thread count. */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Pixels whose accumulators a forward block keeps in registers. */
#define CONV1_PIX 12

#if defined(__GNUC__) && defined(__x86_64__)
#include "cpu_kernels.h"

int dlb_cpu_conv1_shape(const struct dlb_conv2d_desc *d)
{
    return d->in_c == 1 && dlb_conv2d_groups(d) == 1 && d->out_c >= 1 &&
           d->out_c < 16 &&
           d->pad_h == 0 && d->pad_w == 0 && d->stride_h >= 1 &&
           d->stride_w >= 1 && (size_t)d->kh * d->kw <= CONV1_MAX_TAPS &&
           d->out_h >= 1 && d->out_w >= 1 &&
           (size_t)(d->out_h - 1) * d->stride_h + d->kh <= d->in_h &&
           (size_t)(d->out_w - 1) * d->stride_w + d->kw <= d->in_w &&
           __builtin_cpu_supports("avx512f");
}

int dlb_cpu_all_f32(const struct dlb_buffer *const *b, int n)
{
    for (int i = 0; i < n; i++)
        if (b[i] && b[i]->dtype != DLB_F32)
            return 0;
    return 1;
}

int dlb_cpu_conv1_fwd_fits(const struct dlb_conv2d_desc *d,
                           const struct dlb_buffer *x,
                           const struct dlb_buffer *w,
                           const struct dlb_buffer *b,
                           const struct dlb_buffer *y)
{
    const struct dlb_buffer *t[4] = { x, w, b, y };
    return dlb_cpu_conv1_shape(d) && dlb_cpu_all_f32(t, 4);
}

/* The gradient must already be in nhwc: a reorder into it would cost
 * what the kernel saves. */
int dlb_cpu_conv1_bwd_weights_fits(const struct dlb_conv2d_desc *d,
                                   const struct dlb_buffer *x,
                                   const struct dlb_buffer *dy,
                                   const struct dlb_buffer *dw,
                                   const struct dlb_buffer *db)
{
    const struct dlb_buffer *t[4] = { x, dy, dw, db };
    const dlb_dnnl_md *lay = dlb_cpu_layout(dy);
    int nhwc = lay ? dlb_cpu_layout_code(lay) == 3 : d->out_c == 1;
    return dlb_cpu_conv1_shape(d) && dlb_cpu_all_f32(t, 4) && nhwc &&
           ((d->kh == 5 && d->kw == 5) || (d->kh == 3 && d->kw == 3));
}

void dlb_cpu_conv1_taps(const struct dlb_conv2d_desc *d, const float *w,
                        float (*wt)[16])
{
    size_t taps = (size_t)d->kh * d->kw;
    memset(wt, 0, taps * sizeof *wt);
    for (size_t o = 0; o < d->out_c; o++)
        for (size_t t = 0; t < taps; t++)
            wt[t][o] = w[o * taps + t];
}

/* P pixels of one output row, starting at x (the window's top-left input
 * value of the first pixel), into y: bias plus the taps, in registers. */
static AVX512_INLINE void fwd_pixels(const float *x, size_t sw, size_t in_w,
                                     uint32_t kh, uint32_t kw,
                                     const float (*wt)[16], __m512 bias,
                                     __mmask16 m, size_t c, float *y,
                                     const int P)
{
    __m512 acc[CONV1_PIX];
    UNROLL
    for (int j = 0; j < P; j++)
        acc[j] = bias;
    for (uint32_t r = 0; r < kh; r++)
        for (uint32_t s = 0; s < kw; s++) {
            __m512 wv = _mm512_load_ps(wt[r * kw + s]);
            const float *xr = x + r * in_w + s;
            UNROLL
    for (int j = 0; j < P; j++)
                acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(xr[(size_t)j * sw]),
                                         wv, acc[j]);
        }
    UNROLL
    for (int j = 0; j < P; j++)
        _mm512_mask_storeu_ps(y + (size_t)j * c, m, acc[j]);
}

AVX512 static void fwd_row(const struct dlb_conv2d_desc *d, const float *x,
                           const float (*wt)[16], __m512 bias, __mmask16 m,
                           float *y)
{
    size_t sw = d->stride_w, ow = 0, c = d->out_c;
    for (; ow + CONV1_PIX <= d->out_w; ow += CONV1_PIX)
        fwd_pixels(x + ow * sw, sw, d->in_w, d->kh, d->kw, wt, bias, m, c,
                   y + ow * c, CONV1_PIX);
    for (; ow + 4 <= d->out_w; ow += 4)
        fwd_pixels(x + ow * sw, sw, d->in_w, d->kh, d->kw, wt, bias, m, c,
                   y + ow * c, 4);
    for (; ow < d->out_w; ow++)
        fwd_pixels(x + ow * sw, sw, d->in_w, d->kh, d->kw, wt, bias, m, c,
                   y + ow * c, 1);
}

AVX512 static void fwd(const struct dlb_conv2d_desc *d, const float *x,
                       const float *w, const float *b, float *y)
{
    size_t taps = (size_t)d->kh * d->kw, c = d->out_c;
    size_t rows = (size_t)d->n * d->out_h;
    size_t macs = rows * d->out_w * taps * c;
    __attribute__((aligned(64))) float wt[CONV1_MAX_TAPS][16];
    __mmask16 m = (__mmask16)((1u << c) - 1);
    dlb_cpu_conv1_taps(d, w, wt);
    __m512 bias = b ? _mm512_maskz_loadu_ps(m, b) : _mm512_setzero_ps();
    DLB_OMP("omp parallel for schedule(static) if(macs >= CONV1_PAR_MACS)")
    for (size_t i = 0; i < rows; i++) {
        size_t n = i / d->out_h, oh = i % d->out_h;
        const float *xr = x + (n * d->in_h + oh * d->stride_h) * d->in_w;
        fwd_row(d, xr, (const float (*)[16])wt, bias, m,
                y + i * d->out_w * c);
    }
    (void)macs;
}

/* The convolution's output gradient as 2x2 stride-2 max pooling's
 * backward would write it, read straight from the pooling's: dy at the
 * maximum its workspace names, 0 elsewhere (cpu_conv1_pool.c). */
struct pooled {
    const struct dlb_pool_desc *p;
    const float *dy;  /* the pooling's output gradient, nhwc */
    const int32_t *ws; /* its workspace, nhwc */
};

/* One thread's share of rows [r0, r1): the gradient of each tap (and of
 * the bias, acc[KH * KW]) summed over its pixels into part. With pl
 * (POOLED), a pixel's gradient comes from the pooling's instead of dy:
 * the same values in the same order as after pool_bwd, so the sums are
 * the same bits (a pixel no window covers, or whose window's maximum
 * lies elsewhere, adds 0: skipped or masked). */
static AVX512_INLINE void bwd_rows(const struct dlb_conv2d_desc *d,
                                   const float *x, const float *dy,
                                   const struct pooled *pl, size_t r0,
                                   size_t r1, float *part, const int KH,
                                   const int KW, const int POOLED)
{
    size_t c = d->out_c, sw = d->stride_w, in_w = d->in_w;
    __mmask16 m = (__mmask16)((1u << c) - 1);
    __m512 acc[5 * 5 + 1]; /* the largest instance: 5x5 and the bias */
    UNROLL
    for (int t = 0; t <= KH * KW; t++)
        acc[t] = _mm512_setzero_ps();
    for (size_t i = r0; i < r1; i++) {
        size_t n = i / d->out_h, oh = i % d->out_h;
        const float *xr = x + (n * d->in_h + oh * d->stride_h) * in_w;
        const float *g = POOLED ? NULL : dy + i * d->out_w * c;
        size_t width = d->out_w, prow = 0;
        if (POOLED) {
            if (oh >= 2 * (size_t)pl->p->out_h)
                continue;
            width = 2 * (size_t)pl->p->out_w;
            prow = ((n * pl->p->out_h + oh / 2) * pl->p->out_w) * c;
        }
        for (size_t ow = 0; ow < width; ow++) {
            __m512 gv;
            if (POOLED) {
                size_t o = prow + ow / 2 * c;
                __m512i at = _mm512_maskz_loadu_epi32(m, pl->ws + o);
                __mmask16 here = _mm512_mask_cmpeq_epi32_mask(
                    m, at, _mm512_set1_epi32((int32_t)(oh * d->out_w + ow)));
                gv = _mm512_maskz_loadu_ps(here, pl->dy + o);
            } else {
                gv = _mm512_maskz_loadu_ps(m, g + ow * c);
            }
            const float *xp = xr + ow * sw;
            UNROLL
            for (int r = 0; r < KH; r++)
                UNROLL
                for (int s = 0; s < KW; s++)
                    acc[r * KW + s] = _mm512_fmadd_ps(
                        _mm512_set1_ps(xp[(size_t)r * in_w + (size_t)s]), gv,
                        acc[r * KW + s]);
            acc[KH * KW] = _mm512_add_ps(acc[KH * KW], gv);
        }
    }
    UNROLL
    for (int t = 0; t <= KH * KW; t++)
        _mm512_store_ps(part + (size_t)t * 16, acc[t]);
}

AVX512 static void bwd_share(const struct dlb_conv2d_desc *d, const float *x,
                             const float *dy, const struct pooled *pl,
                             size_t r0, size_t r1, float *part)
{
    if (pl && d->kh == 5)
        bwd_rows(d, x, dy, pl, r0, r1, part, 5, 5, 1);
    else if (pl)
        bwd_rows(d, x, dy, pl, r0, r1, part, 3, 3, 1);
    else if (d->kh == 5)
        bwd_rows(d, x, dy, pl, r0, r1, part, 5, 5, 0);
    else
        bwd_rows(d, x, dy, pl, r0, r1, part, 3, 3, 0);
}

/* Each thread's partial sums in part[thread][tap + 1][16]; the caller
 * adds them in thread order. Returns the number of threads used. The
 * share of rows depends on the thread count only, pooled or not. */
static int bwd(const struct dlb_conv2d_desc *d, const float *x,
               const float *dy, const struct pooled *pl, float *part,
               int max_threads)
{
    size_t taps = (size_t)d->kh * d->kw;
    size_t rows = (size_t)d->n * d->out_h;
    size_t macs = rows * d->out_w * taps * d->out_c;
    int used = 1;
    if (macs < CONV1_PAR_MACS || max_threads < 2) {
        bwd_share(d, x, dy, pl, 0, rows, part);
        return 1;
    }
    DLB_OMP("omp parallel num_threads(max_threads)")
    {
        int t = 0, nt = 1;
#ifdef _OPENMP
        t = omp_get_thread_num();
        nt = omp_get_num_threads();
#endif
        size_t r0 = rows * (size_t)t / (size_t)nt;
        size_t r1 = rows * (size_t)(t + 1) / (size_t)nt;
        bwd_share(d, x, dy, pl, r0, r1, part + (size_t)t * (taps + 1) * 16);
        if (t == 0)
            used = nt;
    }
    return used;
}

dlb_status dlb_cpu_conv1_fwd(struct dlb_backend *be,
                             const struct dlb_conv2d_desc *d,
                             const struct dlb_buffer *x,
                             const struct dlb_buffer *w,
                             const struct dlb_buffer *b, struct dlb_buffer *y)
{
    dnnl_dims_t yd = { d->n, d->out_c, d->out_h, d->out_w };
    dlb_dnnl_md nhwc;
    dlb_status s;
    dnnl_status_t st = dlb_dnnl_md_tag(&nhwc, 4, yd, dnnl_f32, dnnl_acdb);
    if (st != dnnl_success)
        return dlb_cpu_dnnl_fail(be, st, "conv2d_fwd", "md(nhwc)");
    if ((s = DLB_CPU_PLAIN(be, x, w, b)) ||
        (s = dlb_cpu_set_layout(be, y, d->out_c == 1 ? NULL : &nhwc)))
        return s;
    fwd(d, x->data, w->data, b ? b->data : NULL, y->data);
    dlb_cpu_written(y);
    return DLB_OK;
}

/* Backward-weights from dy, or from the pooling's gradient (pl). */
static dlb_status bwd_weights(struct dlb_backend *be,
                              const struct dlb_conv2d_desc *d,
                              const struct dlb_buffer *x, const float *dy,
                              const struct pooled *pl, struct dlb_buffer *dw,
                              struct dlb_buffer *db)
{
    size_t taps = (size_t)d->kh * d->kw, c = d->out_c;
    int max_threads = 1;
    dlb_status s;
#ifdef _OPENMP
    max_threads = omp_get_max_threads();
#endif
    if ((s = DLB_CPU_PLAIN(be, x)) ||
        (s = dlb_cpu_set_layout(be, dw, NULL)) ||
        (db && (s = dlb_cpu_set_layout(be, db, NULL))))
        return s;
    /* A few KB per thread, freed at once: not a scratch slot, which would
     * stay in (and pin) a memory pool's segment between steps. */
    float *part = aligned_alloc(64, (size_t)max_threads * (taps + 1) * 16 *
                                        sizeof(float));
    if (!part)
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu conv2d_bwd_weights: "
                                "out of memory for %d threads' sums",
                                max_threads);
    int used = bwd(d, x->data, dy, pl, part, max_threads);
    float *gw = dw->data, *gb = db ? db->data : NULL;
    for (size_t o = 0; o < c; o++) {
        for (size_t t = 0; t <= taps; t++) {
            float sum = 0.0f;
            for (int k = 0; k < used; k++)
                sum += part[((size_t)k * (taps + 1) + t) * 16 + o];
            if (t < taps)
                gw[o * taps + t] = sum;
            else if (gb)
                gb[o] = sum;
        }
    }
    free(part);
    dlb_cpu_written(dw);
    if (db)
        dlb_cpu_written(db);
    return DLB_OK;
}

dlb_status dlb_cpu_conv1_bwd_weights(struct dlb_backend *be,
                                     const struct dlb_conv2d_desc *d,
                                     const struct dlb_buffer *x,
                                     const struct dlb_buffer *dy,
                                     struct dlb_buffer *dw,
                                     struct dlb_buffer *db)
{
    return bwd_weights(be, d, x, dy->data, NULL, dw, db);
}

dlb_status dlb_cpu_conv1_bwd_weights_pooled(struct dlb_backend *be,
                                            const struct dlb_conv2d_desc *d,
                                            const struct dlb_pool_desc *p,
                                            const struct dlb_buffer *x,
                                            const struct dlb_buffer *dy,
                                            const struct dlb_buffer *ws,
                                            struct dlb_buffer *dw,
                                            struct dlb_buffer *db)
{
    struct pooled pl = { p, dy->data, ws->data };
    return bwd_weights(be, d, x, NULL, &pl, dw, db);
}

#else /* not x86-64 with GCC or clang: oneDNN runs every convolution */

int dlb_cpu_conv1_fwd_fits(const struct dlb_conv2d_desc *d,
                           const struct dlb_buffer *x,
                           const struct dlb_buffer *w,
                           const struct dlb_buffer *b,
                           const struct dlb_buffer *y)
{
    (void)d, (void)x, (void)w, (void)b, (void)y;
    return 0;
}

int dlb_cpu_conv1_bwd_weights_fits(const struct dlb_conv2d_desc *d,
                                   const struct dlb_buffer *x,
                                   const struct dlb_buffer *dy,
                                   const struct dlb_buffer *dw,
                                   const struct dlb_buffer *db)
{
    (void)d, (void)x, (void)dy, (void)dw, (void)db;
    return 0;
}

dlb_status dlb_cpu_conv1_fwd(struct dlb_backend *be,
                             const struct dlb_conv2d_desc *d,
                             const struct dlb_buffer *x,
                             const struct dlb_buffer *w,
                             const struct dlb_buffer *b, struct dlb_buffer *y)
{
    (void)d, (void)x, (void)w, (void)b, (void)y;
    return dlb_backend_fail(be, DLB_ERR_INTERNAL,
                            "cpu conv2d_fwd: the one-channel kernel needs x86-64");
}

dlb_status dlb_cpu_conv1_bwd_weights_pooled(struct dlb_backend *be,
                                            const struct dlb_conv2d_desc *d,
                                            const struct dlb_pool_desc *p,
                                            const struct dlb_buffer *x,
                                            const struct dlb_buffer *dy,
                                            const struct dlb_buffer *ws,
                                            struct dlb_buffer *dw,
                                            struct dlb_buffer *db)
{
    (void)d, (void)p, (void)x, (void)dy, (void)ws, (void)dw, (void)db;
    return dlb_backend_fail(be, DLB_ERR_INTERNAL,
                            "cpu conv2d_pool_bwd_weights: the one-channel "
                            "kernel needs x86-64");
}

dlb_status dlb_cpu_conv1_bwd_weights(struct dlb_backend *be,
                                     const struct dlb_conv2d_desc *d,
                                     const struct dlb_buffer *x,
                                     const struct dlb_buffer *dy,
                                     struct dlb_buffer *dw,
                                     struct dlb_buffer *db)
{
    (void)d, (void)x, (void)dy, (void)dw, (void)db;
    return dlb_backend_fail(be, DLB_ERR_INTERNAL,
                            "cpu conv2d_bwd_weights: the one-channel kernel "
                            "needs x86-64");
}

#endif
