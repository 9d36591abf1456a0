/* The quantisation of fp32 activations to u8/s8 (backend.h's quantize:
 * round half to even of x / scale in double, plus the zero point,
 * clamped), for an int8 layer whose input is fp32: the sum of a residual
 * add, the images. It is a pass over every activation of the layers it
 * feeds (ResNet-20's nine post-add convolutions read 22 million floats a
 * step at batch 256); the scalar loop took 1.8 ns a value, 40 of the int8
 * step's 97 ms. With AVX-512F 16 values go through at once: widened to
 * double, multiplied by the reciprocal, rounded half to even; a group
 * with any value out of range, a NaN, or within 1e-9 of a half is done by
 * the scalar code, which decides those as dlb_int8_quantize_fast does, so
 * the bytes are the same either way. */
#include "cpu.h"
#include "../int8.h"

#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define QUANTISE_AVX512 1

/* Values [0, n - n % 16) of `in` quantised; the caller does the rest. */
__attribute__((target("avx512f"))) static size_t
quantise_avx512(const float *in, unsigned char *out, size_t n, double inv,
                float scale, int32_t zp, int32_t lo, int32_t hi)
{
    const __m512d vinv = _mm512_set1_pd(inv);
    const __m512d dlo = _mm512_set1_pd((double)(lo - zp));
    const __m512d dhi = _mm512_set1_pd((double)(hi - zp));
    const __m512d near = _mm512_set1_pd(0.5 - 1e-9);
    const __m512i vzp = _mm512_set1_epi32(zp);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(in + i);
        __m512d q0 = _mm512_mul_pd(
            _mm512_cvtps_pd(_mm512_castps512_ps256(x)), vinv);
        __m512d q1 = _mm512_mul_pd(
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(
                _mm512_castps_pd(x), 1))), vinv);
        __m512d r0 = _mm512_roundscale_pd(q0, _MM_FROUND_TO_NEAREST_INT |
                                                  _MM_FROUND_NO_EXC);
        __m512d r1 = _mm512_roundscale_pd(q1, _MM_FROUND_TO_NEAREST_INT |
                                                  _MM_FROUND_NO_EXC);
        /* in range (false for a NaN) and not near a half */
        __mmask8 ok0 = _mm512_cmp_pd_mask(q0, dlo, _CMP_GE_OQ) &
                       _mm512_cmp_pd_mask(q0, dhi, _CMP_LE_OQ) &
                       _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(q0, r0)),
                                          near, _CMP_LE_OQ);
        __mmask8 ok1 = _mm512_cmp_pd_mask(q1, dlo, _CMP_GE_OQ) &
                       _mm512_cmp_pd_mask(q1, dhi, _CMP_LE_OQ) &
                       _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(q1, r1)),
                                          near, _CMP_LE_OQ);
        if ((ok0 & ok1) != 0xff) {
            for (size_t k = i; k < i + 16; k++)
                out[k] = (unsigned char)dlb_int8_quantize_fast(
                    in[k], inv, scale, zp, lo, hi);
            continue;
        }
        __m512i v = _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm512_cvtpd_epi32(r0)),
            _mm512_cvtpd_epi32(r1), 1);
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm512_cvtepi32_epi8(_mm512_add_epi32(v, vzp)));
    }
    return i;
}
#endif

void dlb_cpu_quantise_run(const struct dlb_int8_desc *q, const float *in,
                          unsigned char *out, size_t n)
{
    /* locals: the byte stores may alias anything, so fields read through
     * q would be loaded again for every value */
    const float scale = q->x_scale;
    const double inv = 1.0 / (double)scale;
    const int32_t zp = q->x_zero_point, lo = dlb_int8_lo(q->x_type);
    const int32_t hi = dlb_int8_hi(q->x_type);
    size_t i = 0;
#ifdef QUANTISE_AVX512
    if (n >= 16 && __builtin_cpu_supports("avx512f"))
        i = quantise_avx512(in, out, n, inv, scale, zp, lo, hi);
#endif
    for (; i < n; i++)
        out[i] = (unsigned char)dlb_int8_quantize_fast(in[i], inv, scale, zp,
                                                       lo, hi);
}

dlb_status dlb_cpu_int8_quantised(struct dlb_backend *be,
                                  const struct dlb_int8_desc *q,
                                  const struct dlb_buffer *x, size_t count,
                                  int keep_layout, struct dlb_buffer *tmp,
                                  struct dlb_cpu_buf *impl)
{
    /* A blocked x without padding (a residual add's nhwc sum) is
     * quantised where it lies, and the int8 copy carries its layout: made
     * plain, it cost a reorder of x to the host view, one of the int8
     * copy back into the convolution's nhwc, and one of x again into nhwc
     * where the next add reads it as its shortcut (a third of ResNet-20's
     * int8 step). Padding is left out: quantised zeros are the zero
     * point, not zeros. */
    size_t phys = count;
    dlb_status s = DLB_OK;
    if (keep_layout && dlb_cpu_layout(x))
        s = dlb_cpu_physical(be, x, count, &phys);
    const dlb_dnnl_md *l = s ? NULL : dlb_cpu_layout(x);
    int keep = keep_layout && l && phys == count;
    if (!s && !keep)
        s = DLB_CPU_PLAIN(be, x);
    unsigned char *out = s ? NULL : dlb_cpu_scratch(be, DLB_CPU_SLOT_INT8,
                                                    count ? count : 1);
    if (s || !out)
        return s ? s : DLB_ERR_NOMEM;
    const float *in = x->data;
    size_t chunks = (count + 4095) / 4096;
    DLB_OMP("omp parallel for schedule(static) if(count > DLB_CPU_PAR_MIN)")
    for (size_t c = 0; c < chunks; c++)
        dlb_cpu_quantise_run(q, in + c * 4096, out + c * 4096,
                     count - c * 4096 < 4096 ? count - c * 4096 : 4096);
    dlb_cpu_scratch_buffer(q->x_type, count, out, tmp, impl);
    if (keep) {
        if (dlb_dnnl_md_retype(&impl->md, l, dlb_cpu_dnnl_type(q->x_type)) !=
            dnnl_success)
            return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu quantize: "
                                    "bad layout");
        impl->blocked = 1;
    }
    return DLB_OK;
}

