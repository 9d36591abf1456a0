/* What the own 1x1-and-depthwise kernels share (cpu_conv_dw_f32.c,
 * cpu_conv_dw_bf16.c): the target attribute their file defines as
 * DW_TARGET before including this, the tiles' sizes, and the bias and
 * activation on 16 channels. x86-64 with GCC's intrinsics only. */
#ifndef DLB_CPU_CONV_DW_SIMD_H
#define DLB_CPU_CONV_DW_SIMD_H

#include <immintrin.h>

#define AVX512 __attribute__((target(DW_TARGET)))
#define INLINE __attribute__((always_inline)) static inline
/* the register tiles' loops, whose bounds are constants once inlined */
#define UNROLL _Pragma("GCC unroll 8")

/* Channel blocks a thread expands together (every MobileNetV2 expansion
 * has a multiple of 3 blocks: 96 .. 960 channels) and pixels a register
 * tile holds: 8 x 3 accumulators, 3 weights and a broadcast in 28 of the
 * 32 vector registers. */
enum { GROUP = 3, TILE_P = 8 };

/* 16 channels of a bias from block `ob`; channels at or past `oc` (a
 * block's padding) 0. */
AVX512 INLINE __m512 bias16(const float *b, int ob, int oc)
{
    if (!b)
        return _mm512_setzero_ps();
    int left = oc - ob * 16;
    __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
    return _mm512_maskz_loadu_ps(m, b + (size_t)ob * 16);
}

AVX512 INLINE __m512 act(__m512 v, __m512 lo, __m512 hi)
{
    return _mm512_min_ps(_mm512_max_ps(v, lo), hi);
}

#endif
