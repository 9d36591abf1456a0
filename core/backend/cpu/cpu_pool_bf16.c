/* 2x2 max pooling with stride 2 on bf16 data in blocks of 16 lanes
 * (nChw16c, or nhwc with c % 16 == 0): the pooling of vgg-style networks
 * trained in bf16, straight on the bf16 tensors. The general loops of
 * cpu_pool_loops.c convert each block to f32 and back, zero the whole
 * input gradient and scatter into it lane by lane; here forward reads
 * the four pixels of a window and writes the maximum and its index, and
 * backward writes every input pixel once: the gradient where the
 * workspace names it, else 0. Moving bf16 bits, not values, the results
 * are those of the general loops bit for bit (first maximum in row-major
 * window order; a NaN first stays the maximum, a later one is skipped). */
#include "cpu.h"

int dlb_cpu_pool16_applies(const struct dlb_cpu_pool_blocks *r)
{
#if defined(__GNUC__) && defined(__x86_64__)
    const struct dlb_pool_desc *d = r->d;
    return d->kind == DLB_POOL_MAX && d->kh == 2 && d->kw == 2 &&
           d->stride_h == 2 && d->stride_w == 2 && d->pad_h == 0 &&
           d->pad_w == 0 && d->in_h == 2 * d->out_h &&
           d->in_w == 2 * d->out_w && r->B % 16 == 0 &&
           r->src->dtype == DLB_BF16 && r->dst->dtype == DLB_BF16 &&
           __builtin_cpu_supports("avx512f");
#else
    (void)r;
    return 0;
#endif
}

#if defined(__GNUC__) && defined(__x86_64__)
#include "cpu_bf16_avx512.h"

#define AVX512 DLB_CPU_AVX512

/* 16 bf16 values as f32 (exact) and back (exact: they were bf16). */
AVX512 static __m512 widen(const uint16_t *p)
{
    return dlb_cpu_bf16_load16(p);
}

AVX512 static void narrow(uint16_t *p, __m512 v)
{
    __m512i b = _mm512_srli_epi32(_mm512_castps_si512(v), 16);
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(b));
}

AVX512 static void fwd_blocks(const struct dlb_cpu_pool_blocks *r,
                              const uint16_t *x, uint16_t *y, int32_t *ws)
{
    const struct dlb_pool_desc *d = r->d;
    const size_t B = r->B, W = d->in_w, ow = d->out_w;
    const size_t sn = (size_t)d->in_h * W * B, dn = (size_t)d->out_h * ow * B;
    DLB_OMP("omp parallel for schedule(static) if(r->blocks * sn > DLB_CPU_PAR_MIN)")
    for (size_t b = 0; b < r->blocks; b++)
        for (size_t i = 0; i < d->out_h; i++)
            for (size_t j = 0; j < ow; j++) {
                /* the window's pixels in row-major order, in the plane */
                int32_t k0 = (int32_t)(2 * i * W + 2 * j);
                int32_t k[4] = { k0, k0 + 1, k0 + (int32_t)W, k0 + (int32_t)W + 1 };
                size_t o = b * dn + (i * ow + j) * B;
                const uint16_t *xb = x + b * sn;
                for (size_t l = 0; l < B; l += 16) {
                    __m512 best = widen(xb + (size_t)k[0] * B + l);
                    __m512i arg = _mm512_set1_epi32(k[0]);
                    for (int t = 1; t < 4; t++) {
                        __m512 v = widen(xb + (size_t)k[t] * B + l);
                        __mmask16 gt = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ);
                        best = _mm512_mask_mov_ps(best, gt, v);
                        arg = _mm512_mask_mov_epi32(arg, gt,
                                                    _mm512_set1_epi32(k[t]));
                    }
                    narrow(y + o + l, best);
                    if (ws)
                        _mm512_storeu_si512(ws + o + l, arg);
                }
            }
}

/* Nonzero when a workspace index names no pixel of its window. */
AVX512 static int bwd_blocks(const struct dlb_cpu_pool_blocks *r,
                             const uint16_t *dy, uint16_t *dx,
                             const int32_t *ws)
{
    const struct dlb_pool_desc *d = r->d;
    const size_t B = r->B, W = d->in_w, ow = d->out_w;
    const size_t sn = (size_t)d->out_h * ow * B, dn = (size_t)d->in_h * W * B;
    int bad = 0;
    DLB_OMP("omp parallel for schedule(static) reduction(|:bad) if(r->blocks * dn > DLB_CPU_PAR_MIN)")
    for (size_t b = 0; b < r->blocks; b++)
        for (size_t i = 0; i < d->out_h; i++)
            for (size_t j = 0; j < ow; j++) {
                int32_t k0 = (int32_t)(2 * i * W + 2 * j);
                int32_t k[4] = { k0, k0 + 1, k0 + (int32_t)W, k0 + (int32_t)W + 1 };
                size_t o = b * sn + (i * ow + j) * B;
                uint16_t *xb = dx + b * dn;
                for (size_t l = 0; l < B; l += 16) {
                    /* bf16 bits widened to 32-bit lanes, moved, narrowed */
                    __m512i g = _mm512_cvtepu16_epi32(
                        _mm256_loadu_si256((const __m256i *)(dy + o + l)));
                    __m512i a = _mm512_loadu_si512(ws + o + l);
                    __mmask16 hit = 0;
                    for (int t = 0; t < 4; t++) {
                        __mmask16 m = _mm512_cmpeq_epi32_mask(
                            a, _mm512_set1_epi32(k[t]));
                        hit |= m;
                        _mm256_storeu_si256(
                            (__m256i *)(xb + (size_t)k[t] * B + l),
                            _mm512_cvtepi32_epi16(_mm512_maskz_mov_epi32(m, g)));
                    }
                    bad |= hit != (__mmask16)0xffff;
                }
            }
    return bad;
}

dlb_status dlb_cpu_pool16_fwd(struct dlb_backend *be,
                              const struct dlb_cpu_pool_blocks *r, int32_t *ws)
{
    (void)be;
    fwd_blocks(r, r->src->data, r->dst->data, ws);
    dlb_cpu_written(r->dst);
    return DLB_OK;
}

dlb_status dlb_cpu_pool16_bwd(struct dlb_backend *be,
                              const struct dlb_cpu_pool_blocks *r,
                              const int32_t *ws)
{
    int bad = bwd_blocks(r, r->src->data, r->dst->data, ws);
    dlb_cpu_written(r->dst);
    return bad ? dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu pool_bwd: a "
                                  "workspace index is outside its window")
               : DLB_OK;
}
#else
dlb_status dlb_cpu_pool16_fwd(struct dlb_backend *be,
                              const struct dlb_cpu_pool_blocks *r, int32_t *ws)
{
    (void)r;
    (void)ws;
    return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu pool_fwd: the bf16 "
                            "loops need x86-64 (dlb_cpu_pool16_applies is 0)");
}

dlb_status dlb_cpu_pool16_bwd(struct dlb_backend *be,
                              const struct dlb_cpu_pool_blocks *r,
                              const int32_t *ws)
{
    (void)r;
    (void)ws;
    return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu pool_bwd: the bf16 "
                            "loops need x86-64 (dlb_cpu_pool16_applies is 0)");
}
#endif
