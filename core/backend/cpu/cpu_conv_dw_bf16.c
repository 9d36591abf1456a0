/* The expansion and its depthwise convolution as one pass, bf16,
 * AVX512_BF16 (cpu_conv_dw_bf16.h). Where oneDNN runs a bf16 pair as its
 * two kernels in turn (ref_fused_convolution: on a Zen 4 every pair of
 * MobileNetV2 at batch 1), this keeps three expanded rows in a ring in
 * L1 as the f32 kernel does (cpu_conv_dw_f32.c; the passes over the rows
 * are cpu_conv_dw_pass.h's, shared with it). Its 1x1 tile takes two
 * input channels an instruction (vdpbf16ps), half the f32 tile's count.
 * Compiled with a target attribute, run only where the CPU has
 * AVX512_BF16. */
#include "cpu_conv_dw_bf16.h"

#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define DW_TARGET "avx512f,avx512bw,avx512bf16"
#include "cpu_conv_dw_simd.h"

int dlb_cpu_dw_bf16_available(void)
{
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bf16");
}

/* bf16 to f32: the 16 bits above 16 zeros. */
AVX512 INLINE __m512 widen16(__m256i h)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* f32 rounded to the nearest bf16 (ties to even). */
AVX512 INLINE __m256i narrow16(__m512 v)
{
    __m256bh h = _mm512_cvtneps_pbh(v);
    __m256i r;
    memcpy(&r, &h, sizeof r);
    return r;
}

/* One input block's share of a tile: 16 channels in pairs, one
 * vdpbf16ps per pair, pixel and block; a block's padded channels are
 * zeros, skipped past the last pair that holds a real one (ni). */
AVX512 INLINE void expand_block(__m512 acc[TILE_P][GROUP], const uint16_t *xp,
                                const uint16_t *wp, size_t wstride, int ni,
                                int P, int B)
{
    for (int k = 0; k < (ni + 1) / 2; k++) {
        __m512bh w[GROUP];
        UNROLL for (int b = 0; b < B; b++)
            w[b] = (__m512bh)_mm512_loadu_si512(wp + b * wstride + k * 32);
        UNROLL for (int p = 0; p < P; p++) {
            uint32_t pair;
            memcpy(&pair, xp + p * 16 + 2 * k, sizeof pair);
            __m512bh x = (__m512bh)_mm512_set1_epi32((int)pair);
            UNROLL for (int b = 0; b < B; b++)
                acc[p][b] = _mm512_dpbf16_ps(acc[p][b], x, w[b]);
        }
    }
}

/* The expanded tensor rounded to bf16, as the two layers apart store
 * it, and kept in the ring as f32. */
AVX512 INLINE __m512 ring16(__m512 v)
{
    return widen16(narrow16(v));
}

AVX512 INLINE __m512 load_w16(const uint16_t *p)
{
    return widen16(_mm256_loadu_si256((const __m256i *)p));
}

AVX512 INLINE void store_y16(uint16_t *p, __m512 v)
{
    _mm256_storeu_si256((__m256i *)p, narrow16(v));
}

#define DW_ARGS struct dlb_cpu_dw_bf16
#define DW_ELEM uint16_t
#include "cpu_conv_dw_pass.h"

size_t dlb_cpu_dw_bf16_ring_floats(const struct dlb_cpu_dw_bf16 *a)
{
    return dw_ring_floats(a);
}

void dlb_cpu_dw_bf16_run(const struct dlb_cpu_dw_bf16 *a, float *ring,
                         int threads)
{
    dw_run(a, ring, threads);
}

#else /* not x86-64 with GCC's intrinsics */

int dlb_cpu_dw_bf16_available(void)
{
    return 0;
}

size_t dlb_cpu_dw_bf16_ring_floats(const struct dlb_cpu_dw_bf16 *a)
{
    (void)a;
    return 0;
}

void dlb_cpu_dw_bf16_run(const struct dlb_cpu_dw_bf16 *a, float *ring,
                         int threads)
{
    (void)a, (void)ring, (void)threads;
}
#endif
