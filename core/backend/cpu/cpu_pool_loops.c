/* The max and average pooling loops of the cpu backend, for every layout
 * it pools in: a tensor is a run of blocks [h][w][B] of B channels each,
 * where B = 1 is the host view's (n, c) plane, 16 and 8 are nChw16c and
 * nChw8c, and B = c is nhwc (one block per image). The interface's
 * max-pool workspace is the S32 index of the maximum within the input
 * plane (first maximum on ties), which oneDNN's workspace is not, so
 * training pools here; blocks run in parallel, and a block of a bf16
 * tensor is converted to float once and pooled from L1. */
#include "cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The in-bounds window rows [r0, r1) of output row i (likewise columns). */
static void window(uint32_t i, uint32_t stride, uint32_t pad, uint32_t k,
                   uint32_t in, long *start, uint32_t *r0, uint32_t *r1)
{
    long s = (long)i * stride - (long)pad;
    *start = s;
    *r0 = s < 0 ? (uint32_t)-s : 0;
    *r1 = s + (long)k > (long)in ? (uint32_t)((long)in - s) : k;
}

/* ---- one plane (B = 1) --------------------------------------------- */

/* The common 2x2, stride 2, no padding case without window bookkeeping:
 * the generic loop costs about 5x more per element. Ties keep the first
 * maximum in row-major window order, as the generic loop. */
static void max_plane_2x2(const struct dlb_pool_desc *d,
                          const float *restrict x, float *restrict y,
                          int32_t *restrict ws)
{
    const int32_t W = (int32_t)d->in_w;
    const uint32_t oh = d->out_h, ow = d->out_w;
    for (uint32_t i = 0; i < oh; i++) {
        const float *r0 = x + (size_t)2 * i * (size_t)W, *r1 = r0 + W;
        float *yr = y + (size_t)i * ow;
        int32_t *wr = ws ? ws + (size_t)i * ow : NULL;
        int32_t base = 2 * (int32_t)i * W;
        for (uint32_t j = 0; j < ow; j++) {
            /* Masks and selects, not branches: on real data the
             * comparisons are random, and mispredicted branches cost
             * several times the loop. */
            float a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j],
                  e = r1[2 * j + 1];
            int32_t mb = -(int32_t)(b > a);
            float top = b > a ? b : a;
            int32_t mc = -(int32_t)(c > top);
            float best = c > top ? c : top;
            int32_t me = -(int32_t)(e > best);
            best = e > best ? e : best;
            int32_t k = (1 & mb & ~mc & ~me) | (W & mc & ~me) | ((W + 1) & me);
            yr[j] = best;
            if (wr)
                wr[j] = base + 2 * (int32_t)j + k;
        }
    }
}

static void max_plane(const struct dlb_pool_desc *d, const float *x, float *y,
                      int32_t *ws)
{
    if (d->kh == 2 && d->kw == 2 && d->stride_h == 2 && d->stride_w == 2 &&
        d->pad_h == 0 && d->pad_w == 0) {
        max_plane_2x2(d, x, y, ws);
        return;
    }
    for (uint32_t i = 0; i < d->out_h; i++) {
        long sh;
        uint32_t r0, r1;
        window(i, d->stride_h, d->pad_h, d->kh, d->in_h, &sh, &r0, &r1);
        for (uint32_t j = 0; j < d->out_w; j++) {
            long sw;
            uint32_t c0, c1;
            window(j, d->stride_w, d->pad_w, d->kw, d->in_w, &sw, &c0, &c1);
            float best = -INFINITY;
            long arg = -1;
            for (uint32_t r = r0; r < r1; r++) {
                size_t row = (size_t)(sh + r) * d->in_w;
                for (uint32_t c = c0; c < c1; c++) {
                    size_t k = row + (size_t)(sw + c);
                    if (arg < 0 || x[k] > best) {
                        best = x[k];
                        arg = (long)k;
                    }
                }
            }
            y[(size_t)i * d->out_w + j] = best;
            if (ws)
                ws[(size_t)i * d->out_w + j] = (int32_t)arg;
        }
    }
}

/* ---- blocks of B channels ------------------------------------------ */

#define MAX_LANES 16

/* One block: x [in_h][in_w][B], y and ws [oh][ow][B]. The first
 * in-window element seeds the maximum and later ones replace it only when
 * greater: the first maximum wins ties, as row-major. Lanes go by 16. */
static inline void max_block(const struct dlb_pool_desc *d, const size_t B,
                             const float *restrict x, float *restrict y,
                             int32_t *restrict ws)
{
    for (uint32_t i = 0; i < d->out_h; i++) {
        long sh;
        uint32_t r0, r1;
        window(i, d->stride_h, d->pad_h, d->kh, d->in_h, &sh, &r0, &r1);
        for (uint32_t j = 0; j < d->out_w; j++) {
            long sw;
            uint32_t c0, c1;
            window(j, d->stride_w, d->pad_w, d->kw, d->in_w, &sw, &c0, &c1);
            int32_t k0 = (int32_t)((sh + r0) * (long)d->in_w + sw + c0);
            size_t o = ((size_t)i * d->out_w + j) * B;
            for (size_t l0 = 0; l0 < B; l0 += MAX_LANES) {
                const size_t L = B - l0 < MAX_LANES ? B - l0 : MAX_LANES;
                float best[MAX_LANES];
                int32_t arg[MAX_LANES];
                for (size_t l = 0; l < L; l++) {
                    best[l] = x[(size_t)k0 * B + l0 + l];
                    arg[l] = k0;
                }
                for (uint32_t r = r0; r < r1; r++) {
                    for (uint32_t c = c0; c < c1; c++) {
                        int32_t k = (int32_t)((sh + r) * (long)d->in_w + sw + c);
                        const float *xv = x + (size_t)k * B + l0;
                        for (size_t l = 0; l < L; l++) {
                            int gt = xv[l] > best[l];
                            best[l] = gt ? xv[l] : best[l];
                            arg[l] = gt ? k : arg[l];
                        }
                    }
                }
                memcpy(y + o + l0, best, L * sizeof *best);
                if (ws)
                    memcpy(ws + o + l0, arg, L * sizeof *arg);
            }
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

/* max_block with AVX-512: 16 lanes at a time with a masked tail (nhwc's
 * B is the channel count, 10 or 20 in LeNet). At -O2 for the baseline
 * ISA the compiler kept the loop above scalar with a branch per lane,
 * 4-5x slower than the plane's loop; the loop stays for CPUs without
 * AVX-512. */
/* Full-width loads and stores where they stay inside the tensor (loads)
 * or this block (stores): masked ones that cross cache lines, as nhwc's
 * 10-channel pixels do, ran at half the speed here. A store past the
 * pixel is overwritten by the next pixel's, in order, by this thread. */
__attribute__((target("avx512f")))
static void max_block_avx512(const struct dlb_pool_desc *d, size_t B,
                             const float *x, const float *x_end, float *y,
                             int32_t *ws)
{
    size_t out_blk = (size_t)d->out_h * d->out_w * B;
    for (uint32_t i = 0; i < d->out_h; i++) {
        long sh;
        uint32_t r0, r1;
        window(i, d->stride_h, d->pad_h, d->kh, d->in_h, &sh, &r0, &r1);
        for (uint32_t j = 0; j < d->out_w; j++) {
            long sw;
            uint32_t c0, c1;
            window(j, d->stride_w, d->pad_w, d->kw, d->in_w, &sw, &c0, &c1);
            int32_t k0 = (int32_t)((sh + r0) * (long)d->in_w + sw + c0);
            size_t o = ((size_t)i * d->out_w + j) * B;
            for (size_t l0 = 0; l0 < B; l0 += 16) {
                __mmask16 m = B - l0 >= 16 ? (__mmask16)0xffff
                                           : (__mmask16)((1u << (B - l0)) - 1);
                const float *p0 = x + (size_t)k0 * B + l0;
                __m512 best = p0 + 16 <= x_end ? _mm512_loadu_ps(p0)
                                               : _mm512_maskz_loadu_ps(m, p0);
                __m512i arg = _mm512_set1_epi32(k0);
                for (uint32_t r = r0; r < r1; r++)
                    for (uint32_t c = c0; c < c1; c++) {
                        int32_t k = (int32_t)((sh + r) * (long)d->in_w + sw + c);
                        const float *p = x + (size_t)k * B + l0;
                        __m512 v = p + 16 <= x_end
                                       ? _mm512_loadu_ps(p)
                                       : _mm512_maskz_loadu_ps(m, p);
                        __mmask16 gt = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ);
                        best = _mm512_mask_mov_ps(best, gt, v);
                        arg = _mm512_mask_mov_epi32(arg, gt, _mm512_set1_epi32(k));
                    }
                if (o + l0 + 16 <= out_blk) {
                    _mm512_storeu_ps(y + o + l0, best);
                    if (ws)
                        _mm512_storeu_si512(ws + o + l0, arg);
                } else {
                    _mm512_mask_storeu_ps(y + o + l0, m, best);
                    if (ws)
                        _mm512_mask_storeu_epi32(ws + o + l0, m, arg);
                }
            }
        }
    }
}
#endif

/* x_end: how far x may be read (the staged block or the whole tensor). */
static void max_any(const struct dlb_pool_desc *d, size_t B, const float *x,
                    const float *x_end, float *y, int32_t *ws)
{
    if (B == 1) {
        max_plane(d, x, y, ws);
        return;
    }
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) {
        max_block_avx512(d, B, x, x_end, y, ws);
        return;
    }
#endif
    (void)x_end;
    max_block(d, B, x, y, ws);
}

/* Average pooling including padding, as oneDNN's avg_include_padding. */
static void avg_block(const struct dlb_pool_desc *d, size_t B,
                      const float *restrict x, float *restrict y)
{
    float inv = 1.0f / (float)(d->kh * d->kw);
    for (uint32_t i = 0; i < d->out_h; i++) {
        long sh;
        uint32_t r0, r1;
        window(i, d->stride_h, d->pad_h, d->kh, d->in_h, &sh, &r0, &r1);
        for (uint32_t j = 0; j < d->out_w; j++) {
            long sw;
            uint32_t c0, c1;
            window(j, d->stride_w, d->pad_w, d->kw, d->in_w, &sw, &c0, &c1);
            float *yv = y + ((size_t)i * d->out_w + j) * B;
            for (size_t l = 0; l < B; l++)
                yv[l] = 0.0f;
            for (uint32_t r = r0; r < r1; r++)
                for (uint32_t c = c0; c < c1; c++) {
                    const float *xv = x + ((size_t)(sh + r) * d->in_w +
                                           (size_t)(sw + c)) * B;
                    for (size_t l = 0; l < B; l++)
                        yv[l] += xv[l];
                }
            for (size_t l = 0; l < B; l++)
                yv[l] *= inv;
        }
    }
}

static void avg_block_bwd(const struct dlb_pool_desc *d, size_t B,
                          const float *restrict dy, float *restrict dx)
{
    float inv = 1.0f / (float)(d->kh * d->kw);
    for (uint32_t i = 0; i < d->out_h; i++) {
        long sh;
        uint32_t r0, r1;
        window(i, d->stride_h, d->pad_h, d->kh, d->in_h, &sh, &r0, &r1);
        for (uint32_t j = 0; j < d->out_w; j++) {
            long sw;
            uint32_t c0, c1;
            window(j, d->stride_w, d->pad_w, d->kw, d->in_w, &sw, &c0, &c1);
            const float *g = dy + ((size_t)i * d->out_w + j) * B;
            for (uint32_t r = r0; r < r1; r++)
                for (uint32_t c = c0; c < c1; c++) {
                    float *xv = dx + ((size_t)(sh + r) * d->in_w +
                                      (size_t)(sw + c)) * B;
                    for (size_t l = 0; l < B; l++)
                        xv[l] += g[l] * inv;
                }
        }
    }
}

/* ---- the parallel drivers ------------------------------------------ */

/* Per-thread float staging of one block of a bf16 tensor; NULL for f32. */
struct stage {
    float *in, *out;
};

static int stage_alloc(struct stage *t, int conv, size_t in, size_t out)
{
    t->in = t->out = NULL;
    if (!conv)
        return 1;
    t->in = malloc(in * sizeof *t->in);
    t->out = malloc(out * sizeof *t->out);
    return t->in && t->out;
}

dlb_status dlb_cpu_pool_loops_fwd(struct dlb_backend *be,
                                  const struct dlb_cpu_pool_blocks *r,
                                  int32_t *ws)
{
    const struct dlb_pool_desc *d = r->d;
    const struct dlb_buffer *x = r->src;
    struct dlb_buffer *y = r->dst;
    const size_t B = r->B, blocks = r->blocks;
    size_t in_blk = (size_t)d->in_h * d->in_w * B;
    size_t out_blk = (size_t)d->out_h * d->out_w * B;
    int conv = x->dtype != DLB_F32 || y->dtype != DLB_F32, nomem = 0;
    int max = d->kind == DLB_POOL_MAX;
    DLB_OMP("omp parallel if(blocks * in_blk > DLB_CPU_PAR_MIN)")
    {
        struct stage t;
        int ok = stage_alloc(&t, conv, in_blk, out_blk);
        if (!ok) {
            DLB_OMP("omp atomic write")
            nomem = 1;
        }
        DLB_OMP("omp for schedule(static)")
        for (size_t b = 0; b < blocks; b++) {
            if (!ok)
                continue;
            const float *xb = conv ? t.in : (const float *)x->data + b * in_blk;
            float *yb = conv ? t.out : (float *)y->data + b * out_blk;
            if (conv)
                dlb_cpu_load_f32(x, b * in_blk, in_blk, t.in);
            const float *xe = conv ? t.in + in_blk
                                   : (const float *)x->data + blocks * in_blk;
            if (max)
                max_any(d, B, xb, xe, yb, ws ? ws + b * out_blk : NULL);
            else
                avg_block(d, B, xb, yb);
            if (conv)
                dlb_cpu_store_f32(y, b * out_blk, out_blk, t.out);
        }
        free(t.in);
        free(t.out);
    }
    if (nomem)
        return dlb_backend_fail(be, DLB_ERR_NOMEM,
                                "cpu pool_fwd: out of memory");
    dlb_cpu_written(y);
    return DLB_OK;
}

dlb_status dlb_cpu_pool_loops_bwd(struct dlb_backend *be,
                                  const struct dlb_cpu_pool_blocks *r,
                                  const int32_t *ws)
{
    const struct dlb_pool_desc *d = r->d;
    const struct dlb_buffer *dy = r->src;
    struct dlb_buffer *dx = r->dst;
    const size_t B = r->B, blocks = r->blocks;
    size_t in_blk = (size_t)d->in_h * d->in_w * B;
    size_t out_blk = (size_t)d->out_h * d->out_w * B;
    size_t in_plane = (size_t)d->in_h * d->in_w;
    int conv = dy->dtype != DLB_F32 || dx->dtype != DLB_F32;
    int max = d->kind == DLB_POOL_MAX, bad = 0, nomem = 0;
    DLB_OMP("omp parallel if(blocks * in_blk > DLB_CPU_PAR_MIN)")
    {
        struct stage t;
        int ok = stage_alloc(&t, conv, in_blk, out_blk);
        if (!ok) {
            DLB_OMP("omp atomic write")
            nomem = 1;
        }
        DLB_OMP("omp for schedule(static)")
        for (size_t b = 0; b < blocks; b++) {
            if (!ok)
                continue;
            const float *g = conv ? t.out : (const float *)dy->data + b * out_blk;
            float *dxb = conv ? t.in : (float *)dx->data + b * in_blk;
            if (conv)
                dlb_cpu_load_f32(dy, b * out_blk, out_blk, t.out);
            memset(dxb, 0, in_blk * sizeof *dxb);
            if (max) {
                const int32_t *w = ws + b * out_blk;
                for (size_t k = 0; k < out_blk; k += B)
                    for (size_t l = 0; l < B; l++) {
                        uint32_t at = (uint32_t)w[k + l]; /* < 0: huge */
                        if (at >= in_plane) {
                            DLB_OMP("omp atomic write")
                            bad = 1;
                            continue;
                        }
                        dxb[(size_t)at * B + l] += g[k + l];
                    }
            } else {
                avg_block_bwd(d, B, g, dxb);
            }
            if (conv)
                dlb_cpu_store_f32(dx, b * in_blk, in_blk, t.in);
        }
        free(t.in);
        free(t.out);
    }
    if (nomem)
        return dlb_backend_fail(be, DLB_ERR_NOMEM,
                                "cpu pool_bwd: out of memory");
    if (bad)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu pool_bwd: a "
                                "workspace index is outside the input plane");
    dlb_cpu_written(dx);
    return DLB_OK;
}
