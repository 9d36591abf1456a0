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

/* Block b's pooling from s (its values as floats, readable up to s_end)
 * into d, with the max-pool workspace written (forward) or read
 * (backward); nonzero when a workspace index is outside the input plane. */
struct ws {
    int32_t *out;
    const int32_t *in;
};
typedef int (*block_fn)(const struct dlb_cpu_pool_blocks *r, struct ws ws,
                        size_t b, const float *s, const float *s_end, float *d);

/* Per-thread float staging of one block of a bf16 tensor; NULL for f32. */
struct stage {
    float *s, *d;
};

static int stage_alloc(struct stage *t, int conv, size_t sn, size_t dn)
{
    t->s = t->d = NULL;
    if (!conv)
        return 1;
    t->s = malloc(sn * sizeof *t->s);
    t->d = malloc(dn * sizeof *t->d);
    return t->s && t->d;
}

/* The blocks of r->src (sn elements each) into those of r->dst (dn each)
 * through `fn`, in parallel; bf16 blocks go through float staging. */
static dlb_status run_blocks(struct dlb_backend *be,
                             const struct dlb_cpu_pool_blocks *r,
                             const char *op, size_t sn, size_t dn,
                             block_fn fn, struct ws ws)
{
    const struct dlb_buffer *src = r->src;
    struct dlb_buffer *dst = r->dst;
    const size_t blocks = r->blocks, work = blocks * (sn > dn ? sn : dn);
    int conv = src->dtype != DLB_F32 || dst->dtype != DLB_F32;
    int nomem = 0, bad = 0;
    DLB_OMP("omp parallel if(work > DLB_CPU_PAR_MIN)")
    {
        struct stage t;
        int ok = stage_alloc(&t, conv, sn, dn);
        if (!ok) {
            DLB_OMP("omp atomic write")
            nomem = 1;
        }
        DLB_OMP("omp for schedule(static)")
        for (size_t b = 0; b < blocks; b++) {
            if (!ok)
                continue;
            const float *sb = conv ? t.s : (const float *)src->data + b * sn;
            float *db = conv ? t.d : (float *)dst->data + b * dn;
            if (conv)
                dlb_cpu_load_f32(src, b * sn, sn, t.s);
            const float *se = conv ? t.s + sn
                                   : (const float *)src->data + blocks * sn;
            if (fn(r, ws, b, sb, se, db)) {
                DLB_OMP("omp atomic write")
                bad = 1;
            }
            if (conv)
                dlb_cpu_store_f32(dst, b * dn, dn, t.d);
        }
        free(t.s);
        free(t.d);
    }
    if (nomem)
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu %s: out of memory", op);
    if (bad)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: a workspace "
                                "index is outside the input plane", op);
    dlb_cpu_written(dst);
    return DLB_OK;
}

static int fwd_block(const struct dlb_cpu_pool_blocks *r, struct ws ws,
                     size_t b, const float *x, const float *x_end, float *y)
{
    const struct dlb_pool_desc *d = r->d;
    size_t out_blk = (size_t)d->out_h * d->out_w * r->B;
    int32_t *w = ws.out ? ws.out + b * out_blk : NULL;
    if (d->kind == DLB_POOL_MAX)
        max_any(d, r->B, x, x_end, y, w);
    else
        avg_block(d, r->B, x, y);
    return 0;
}

static int bwd_block(const struct dlb_cpu_pool_blocks *r, struct ws ws,
                     size_t b, const float *g, const float *g_end, float *dx)
{
    const struct dlb_pool_desc *d = r->d;
    const size_t B = r->B;
    size_t in_plane = (size_t)d->in_h * d->in_w, in_blk = in_plane * B;
    size_t out_blk = (size_t)d->out_h * d->out_w * B;
    int bad = 0;
    (void)g_end;
    memset(dx, 0, in_blk * sizeof *dx);
    if (d->kind != DLB_POOL_MAX) {
        avg_block_bwd(d, B, g, dx);
        return 0;
    }
    const int32_t *w = ws.in + b * out_blk;
    for (size_t k = 0; k < out_blk; k += B)
        for (size_t l = 0; l < B; l++) {
            uint32_t at = (uint32_t)w[k + l]; /* < 0: huge */
            if (at >= in_plane)
                bad = 1;
            else
                dx[(size_t)at * B + l] += g[k + l];
        }
    return bad;
}

dlb_status dlb_cpu_pool_loops_fwd(struct dlb_backend *be,
                                  const struct dlb_cpu_pool_blocks *r,
                                  int32_t *ws)
{
    const struct dlb_pool_desc *d = r->d;
    if (dlb_cpu_pool16_applies(r))
        return dlb_cpu_pool16_fwd(be, r, ws);
    return run_blocks(be, r, "pool_fwd", (size_t)d->in_h * d->in_w * r->B,
                      (size_t)d->out_h * d->out_w * r->B, fwd_block,
                      (struct ws){ ws, NULL });
}

dlb_status dlb_cpu_pool_loops_bwd(struct dlb_backend *be,
                                  const struct dlb_cpu_pool_blocks *r,
                                  const int32_t *ws)
{
    const struct dlb_pool_desc *d = r->d;
    if (dlb_cpu_pool16_applies(r))
        return dlb_cpu_pool16_bwd(be, r, ws);
    return run_blocks(be, r, "pool_bwd", (size_t)d->out_h * d->out_w * r->B,
                      (size_t)d->in_h * d->in_w * r->B, bwd_block,
                      (struct ws){ NULL, ws });
}
