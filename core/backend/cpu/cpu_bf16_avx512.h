/* bf16 <-> f32 on 16 lanes with AVX-512F, for the backend's own loops:
 * a load widens, a store rounds to nearest even (a NaN stays a quiet
 * NaN) exactly as the scalar dlb_cpu_store_f32 and the ref backend do.
 * Callers compile these into functions marked DLB_CPU_AVX512 and call
 * them only where __builtin_cpu_supports("avx512f"). */
#ifndef DLB_CPU_BF16_AVX512_H
#define DLB_CPU_BF16_AVX512_H

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#include <stdint.h>

#define DLB_CPU_AVX512 __attribute__((target("avx512f")))

DLB_CPU_AVX512 static inline __m512 dlb_cpu_bf16_load16(const uint16_t *p)
{
    __m256i h = _mm256_loadu_si256((const __m256i *)p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

DLB_CPU_AVX512 static inline void dlb_cpu_bf16_store16(uint16_t *p, __m512 v)
{
    __m512i b = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16),
                                   _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(b, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))),
        16);
    __mmask16 nan = _mm512_cmpgt_epu32_mask(
        _mm512_and_si512(b, _mm512_set1_epi32(0x7fffffff)),
        _mm512_set1_epi32(0x7f800000));
    r = _mm512_mask_mov_epi32(
        r, nan, _mm512_or_si512(_mm512_srli_epi32(b, 16),
                                _mm512_set1_epi32(0x40)));
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(r));
}
#endif

#endif
