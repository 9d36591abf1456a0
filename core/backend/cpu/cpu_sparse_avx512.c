/* AVX-512 versions of the CSR kernel's pieces (cpu_sparse.h): 16 x 16
 * transposes in registers (unpack, shuffle, then 128-bit lane shuffles)
 * and a block of 16 rows x 64 images whose sums stay in four vectors per
 * row: one broadcast and four FMAs per nonzero. Compiled with a target
 * attribute, so the rest of the build needs no -m flags; used only where
 * the CPU reports AVX-512F. */
#include "cpu_sparse.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

int dlb_csr_have_avx512(void)
{
    return __builtin_cpu_supports("avx512f");
}

#define AVX512 __attribute__((target("avx512f")))

/* r[k] becomes column k of the 16 x 16 matrix whose rows were r[0..15].
 * Inlined, so that the sixteen rows stay in registers. */
AVX512 __attribute__((always_inline)) static inline void
transpose16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3],
                                     _MM_SHUFFLE(1, 0, 1, 0));
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3],
                                     _MM_SHUFFLE(3, 2, 3, 2));
    }
    /* r[4i+j], lane L: element 4L+j of rows 4i .. 4i+3. */
    for (int j = 0; j < 4; j++) {
        t[j] = _mm512_shuffle_f32x4(r[j], r[j + 4], 0x88);
        t[j + 4] = _mm512_shuffle_f32x4(r[j], r[j + 4], 0xdd);
        t[j + 8] = _mm512_shuffle_f32x4(r[j + 8], r[j + 12], 0x88);
        t[j + 12] = _mm512_shuffle_f32x4(r[j + 8], r[j + 12], 0xdd);
    }
    for (int j = 0; j < 4; j++) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
        r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
        r[j + 4] = _mm512_shuffle_f32x4(t[j + 4], t[j + 12], 0x88);
        r[j + 12] = _mm512_shuffle_f32x4(t[j + 4], t[j + 12], 0xdd);
    }
}

/* s + vals[k] * xt[cols[k]][col .. col+15] */
AVX512 static inline __m512 nz_fma(const struct dlb_csr_job *j,
                                   const float *col, int32_t k, __m512 s)
{
    return _mm512_fmadd_ps(_mm512_set1_ps(j->vals[k]),
                           _mm512_load_ps(col + (size_t)j->cols[k] * j->ld), s);
}

static __mmask16 lanes(uint32_t from, uint32_t limit)
{
    uint32_t k = limit > from ? limit - from : 0;
    return k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << k) - 1u);
}

AVX512 void dlb_csr_transpose_avx512(const struct dlb_csr_job *j,
                                     const float *x, float *xt, uint32_t c0,
                                     size_t s0)
{
    __m512 r[16];
    __mmask16 m = lanes(c0, j->in);
    for (int q = 0; q < 16; q++)
        r[q] = s0 + (size_t)q < j->n
                   ? _mm512_maskz_loadu_ps(m, x + (s0 + (size_t)q) * j->in + c0)
                   : _mm512_setzero_ps();
    transpose16(r);
    for (uint32_t q = 0; q < 16 && c0 + q < j->in; q++)
        _mm512_store_ps(xt + (size_t)(c0 + q) * j->ld + s0, r[q]);
}

AVX512 void dlb_csr_block_avx512(const struct dlb_csr_job *j, const float *xt,
                                 float *y, uint32_t o0, size_t t0, size_t w)
{
    __m512 buf[DLB_CSR_TILE / 16][16]; /* [16 images][16 rows] per vector */
    const size_t ld = j->ld;
    for (uint32_t q = 0; q < 16; q++) {
        uint32_t o = o0 + q;
        if (o >= j->out) {
            for (size_t v = 0; v < w / 16; v++)
                buf[v][q] = _mm512_setzero_ps();
            continue;
        }
        __m512 b = _mm512_set1_ps(j->bias ? j->bias[o] : 0.0f);
        __m512 c0 = b, c1 = b, c2 = b, c3 = b;
        const float *base = xt + t0;
        int32_t k = j->rows[o], end = j->rows[o + 1];
        if (w == DLB_CSR_TILE) {
            for (; k < end; k++) {
                const float *p = base + (size_t)j->cols[k] * ld;
                __m512 v = _mm512_set1_ps(j->vals[k]);
                c0 = _mm512_fmadd_ps(v, _mm512_load_ps(p), c0);
                c1 = _mm512_fmadd_ps(v, _mm512_load_ps(p + 16), c1);
                c2 = _mm512_fmadd_ps(v, _mm512_load_ps(p + 32), c2);
                c3 = _mm512_fmadd_ps(v, _mm512_load_ps(p + 48), c3);
            }
            buf[0][q] = c0, buf[1][q] = c1, buf[2][q] = c2, buf[3][q] = c3;
            continue;
        }
        /* A narrower last tile (or a batch below 64): four partial sums
         * per vector, so that the FMAs do not wait on each other. */
        for (size_t v = 0; v < w / 16; v++) {
            const float *col = base + 16 * v;
            __m512 z = _mm512_setzero_ps(), s0 = b, s1 = z, s2 = z, s3 = z;
            int32_t kk = k;
            for (; kk + 4 <= end; kk += 4) {
                s0 = nz_fma(j, col, kk, s0);
                s1 = nz_fma(j, col, kk + 1, s1);
                s2 = nz_fma(j, col, kk + 2, s2);
                s3 = nz_fma(j, col, kk + 3, s3);
            }
            for (; kk < end; kk++)
                s0 = nz_fma(j, col, kk, s0);
            buf[v][q] = _mm512_add_ps(_mm512_add_ps(s0, s1),
                                      _mm512_add_ps(s2, s3));
        }
    }
    __mmask16 m = lanes(o0, j->out);
    for (size_t v = 0; v < w / 16; v++) {
        transpose16(buf[v]); /* now buf[v][i] = image t0 + 16v + i */
        for (size_t i = 0; i < 16 && t0 + 16 * v + i < j->n; i++)
            _mm512_mask_storeu_ps(y + (t0 + 16 * v + i) * j->out + o0, m,
                                  buf[v][i]);
    }
}

#else

int dlb_csr_have_avx512(void)
{
    return 0;
}

void dlb_csr_transpose_avx512(const struct dlb_csr_job *j, const float *x,
                              float *xt, uint32_t c0, size_t s0)
{
    dlb_csr_transpose_c(j, x, xt, c0, s0);
}

void dlb_csr_block_avx512(const struct dlb_csr_job *j, const float *xt,
                          float *y, uint32_t o0, size_t t0, size_t w)
{
    dlb_csr_block_c(j, xt, y, o0, t0, w);
}

#endif
