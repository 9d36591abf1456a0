/* An f32 convolution of a few channels on the host view (NCHW in and
 * out), in AVX-512: LeNet's conv2 (10 -> 20 channels, 5x5) in inference.
 *
 * oneDNN pads 20 output channels to 32 in its kernels' weights, so at
 * best 62% of each vector's lanes compute. Here a vector holds 4 output
 * pixels of a row times 4 output channels: lane 4j + p is pixel p of
 * channel 4g + j. One 16-byte load broadcast to the four 128-bit chunks
 * gives the input of the 4 pixels at a tap, a weight vector holds the
 * tap's weight of the 4 channels, each repeated 4 times, and every lane
 * computes. A register block is 5 such quads (20 pixels) by 5 channel
 * groups (20 channels): 25 accumulators, 5 weight vectors and the input
 * vector, each weight vector used 5 times per load.
 *
 * It takes its input in the host view, which inference hands it after
 * the first layer's fused pass (cpu_conv1.c writes that in the host view
 * for this reason), and writes its output there too; training keeps
 * oneDNN's nhwc kernels, whose backward passes want that layout. The
 * packed weights are kept beside the weight buffer (bi->packed) until it
 * is written again. Sums run in another order than the ref backend's:
 * they agree to rounding (tests/unit/test_cpu_conv1.c). */
#include "cpu.h"

#include <string.h>

/* Channel groups of 4 per register block, and quads per block. */
#define QG 5
#define QB 5
/* Below this many multiply-adds a pass runs on the calling thread. */
#define QUADS_PAR_MACS (1u << 20)
/* bi->packed_geom of this packing; int8's codes have the top bit clear. */
#define QUADS_GEOM(taps, oc) (0x80000000u | (uint32_t)(taps) << 8 | (oc))

#if defined(__GNUC__) && defined(__x86_64__)
#include "cpu_kernels.h"

int dlb_cpu_conv_quads_fits(const struct dlb_conv2d_desc *d,
                            const struct dlb_buffer *x,
                            const struct dlb_buffer *w,
                            const struct dlb_buffer *b,
                            const struct dlb_buffer *y)
{
    return x->dtype == DLB_F32 && w->dtype == DLB_F32 &&
           (!b || b->dtype == DLB_F32) && y->dtype == DLB_F32 &&
           !dlb_cpu_layout(x) && dlb_conv2d_groups(d) == 1 &&
           d->in_c >= 2 && d->in_c <= 32 &&
           d->out_c % 4 == 0 && d->out_c % 16 != 0 && d->out_c <= 4 * QG &&
           d->stride_h == 1 && d->stride_w == 1 && d->pad_h == 0 &&
           d->pad_w == 0 && d->kh * d->kw <= 49 && d->out_w % 4 == 0 &&
           d->out_h >= 1 && d->out_w >= 4 &&
           __builtin_cpu_supports("avx512f");
}

/* w [out_c][in_c][kh][kw] as [tap][group][16 lanes], lane l of group g
 * holding channel 4g + l / 4, zero for channels beyond out_c; built again
 * only after w was written (at batch 1 the packing costs as much as the
 * layer). */
static dlb_status packed_weights(struct dlb_backend *be,
                                 const struct dlb_conv2d_desc *d,
                                 const struct dlb_buffer *w, const float **out)
{
    struct dlb_cpu_buf *bi = w->impl;
    size_t taps = (size_t)d->in_c * d->kh * d->kw;
    size_t count = taps * QG * 16;
    uint32_t geom = QUADS_GEOM(taps, d->out_c);
    const float *src = w->data;
    if (bi->packed && bi->packed_version == bi->version &&
        bi->packed_geom == geom && bi->packed->count == count) {
        *out = bi->packed->data;
        return DLB_OK;
    }
    dlb_cpu_buffer_free(be, bi->packed);
    bi->packed = NULL;
    dlb_status s = dlb_cpu_buffer_alloc(be, DLB_F32, count, &bi->packed);
    if (s)
        return s;
    float *dst = bi->packed->data;
    memset(dst, 0, count * sizeof *dst);
    for (size_t t = 0; t < taps; t++)
        for (size_t l = 0; l < QG * 16; l++) {
            size_t o = (l / 16) * 4 + (l % 16) / 4;
            if (o < d->out_c)
                dst[t * QG * 16 + l] = src[o * taps + t];
        }
    dlb_cpu_written(bi->packed);
    bi->packed_version = bi->version;
    bi->packed_geom = geom;
    *out = bi->packed->data;
    return DLB_OK;
}

/* P quads: xq[q] is the top-left input of quad q's first pixel, yq[q] its
 * first pixel in channel 0's plane; `plane` the output plane's size. */
static AVX512_INLINE void quads(const struct dlb_conv2d_desc *d,
                                const float *const *xq, const float *wp,
                                const __m512 *bias, float *const *yq,
                                size_t plane, const int P)
{
    size_t hw = (size_t)d->in_h * d->in_w;
    __m512 acc[QB][QG];
    UNROLL
    for (int q = 0; q < P; q++) {
        UNROLL
        for (int g = 0; g < QG; g++)
            acc[q][g] = bias[g];
    }
    for (uint32_t ci = 0; ci < d->in_c; ci++)
        for (uint32_t r = 0; r < d->kh; r++)
            for (uint32_t s = 0; s < d->kw; s++, wp += QG * 16) {
                size_t off = ci * hw + (size_t)r * d->in_w + s;
                __m512 wv[QG];
                UNROLL
                for (int g = 0; g < QG; g++)
                    wv[g] = _mm512_load_ps(wp + g * 16);
                UNROLL
                for (int q = 0; q < P; q++) {
                    __m512 xv =
                        _mm512_broadcast_f32x4(_mm_loadu_ps(xq[q] + off));
                    UNROLL
                    for (int g = 0; g < QG; g++)
                        acc[q][g] = _mm512_fmadd_ps(xv, wv[g], acc[q][g]);
                }
            }
    /* Chunk j of a group's vector is channel 4g + j: stored through a
     * mask at an address shifted back by its lanes, no shuffle. */
    int groups = (int)d->out_c / 4;
    UNROLL
    for (int q = 0; q < P; q++) {
        UNROLL
        for (int g = 0; g < QG; g++) {
            if (g >= groups)
                break;
            UNROLL
            for (int j = 0; j < 4; j++)
                _mm512_mask_storeu_ps(
                    yq[q] + (size_t)(4 * g + j) * plane - 4 * j,
                    (__mmask16)(0xFu << (4 * j)), acc[q][g]);
        }
    }
}

static __m512 AVX512 bias_vector(const struct dlb_conv2d_desc *d,
                                 const float *b, int g)
{
    float v[16];
    for (int l = 0; l < 16; l++) {
        size_t o = (size_t)g * 4 + (size_t)l / 4;
        v[l] = b && o < d->out_c ? b[o] : 0.0f;
    }
    return _mm512_loadu_ps(v);
}

AVX512 static void run(const struct dlb_conv2d_desc *d, const float *x,
                       const float *wp, const float *b, float *y)
{
    size_t plane = (size_t)d->out_h * d->out_w, per_row = d->out_w / 4;
    size_t per_img = d->out_h * per_row, nq = d->n * per_img;
    size_t blocks = (nq + QB - 1) / QB;
    size_t macs = (size_t)d->n * plane * d->out_c * d->in_c * d->kh * d->kw;
    __m512 bias[QG];
    for (int g = 0; g < QG; g++)
        bias[g] = bias_vector(d, b, g);
    DLB_OMP("omp parallel for schedule(static) if(macs >= QUADS_PAR_MACS)")
    for (size_t k = 0; k < blocks; k++) {
        const float *xq[QB];
        float *yq[QB];
        size_t q0 = k * QB, n_q = nq - q0 < QB ? nq - q0 : QB;
        for (size_t q = 0; q < n_q; q++) {
            size_t i = q0 + q, n = i / per_img, rest = i % per_img;
            size_t oh = rest / per_row, ow = rest % per_row * 4;
            xq[q] = x + ((size_t)n * d->in_c * d->in_h + oh) * d->in_w + ow;
            yq[q] = y + (size_t)n * d->out_c * plane + oh * d->out_w + ow;
        }
        if (n_q == QB)
            quads(d, xq, wp, bias, yq, plane, QB);
        else
            for (size_t q = 0; q < n_q; q++)
                quads(d, xq + q, wp, bias, yq + q, plane, 1);
    }
    (void)macs;
}

dlb_status dlb_cpu_conv_quads_fwd(struct dlb_backend *be,
                                  const struct dlb_conv2d_desc *d,
                                  const struct dlb_buffer *x,
                                  const struct dlb_buffer *w,
                                  const struct dlb_buffer *b,
                                  struct dlb_buffer *y)
{
    const float *wp;
    dlb_status s;
    if ((s = DLB_CPU_PLAIN(be, w, b)) ||
        (s = dlb_cpu_set_layout(be, y, NULL)) ||
        (s = packed_weights(be, d, w, &wp)))
        return s;
    run(d, x->data, wp, b ? b->data : NULL, y->data);
    dlb_cpu_written(y);
    return DLB_OK;
}

#else /* not x86-64 with GCC or clang: oneDNN runs it */

int dlb_cpu_conv_quads_fits(const struct dlb_conv2d_desc *d,
                            const struct dlb_buffer *x,
                            const struct dlb_buffer *w,
                            const struct dlb_buffer *b,
                            const struct dlb_buffer *y)
{
    (void)d, (void)x, (void)w, (void)b, (void)y;
    return 0;
}

dlb_status dlb_cpu_conv_quads_fwd(struct dlb_backend *be,
                                  const struct dlb_conv2d_desc *d,
                                  const struct dlb_buffer *x,
                                  const struct dlb_buffer *w,
                                  const struct dlb_buffer *b,
                                  struct dlb_buffer *y)
{
    (void)d, (void)x, (void)w, (void)b, (void)y;
    return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu conv2d_fwd: the quads "
                            "kernel needs x86-64");
}

#endif
