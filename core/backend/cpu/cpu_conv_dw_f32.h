/* An inverted residual block's expansion and depthwise convolution as one
 * pass in f32 (cpu_conv_dw_f32.c): the 1x1 convolution writes a few rows
 * of the expanded tensor into a buffer of its thread, the depthwise 3x3
 * convolution (pad 1, stride 1 or 2) reads them from there. Tensors in
 * oneDNN's AVX-512 layouts, so that it runs between oneDNN's layers
 * without a reorder: x and y nChw16c, the 1x1's weights OIhw16i16o, the
 * depthwise ones Goihw16g; padded channels hold zeros and are written as
 * zeros. */
#ifndef DLB_CPU_CONV_DW_F32_H
#define DLB_CPU_CONV_DW_F32_H

#include <stddef.h>

struct dlb_cpu_dw_f32 {
    const float *x;  /* [n][icb][ih][iw][16] */
    const float *w1; /* [ocb][icb][16 in][16 out] */
    const float *b1; /* [oc] or NULL */
    const float *w2; /* [ocb][3][3][16] */
    const float *b2; /* [oc] or NULL */
    float *y;        /* [n][ocb][oh][ow][16] */
    int n, ic, icb, ih, iw; /* input channels, and their blocks of 16 */
    int oc, ocb;     /* expanded channels, and their blocks of 16 */
    int oh, ow, stride;
    /* each layer's activation: max(lo, min(hi, v)), lo -inf for none,
     * hi +inf for a ReLU without a clip */
    float lo1, hi1, lo2, hi2;
};

/* 1 where the CPU runs the kernel (AVX-512F). */
int dlb_cpu_dw_f32_available(void);
/* Floats of ring buffer one thread uses (64-byte multiples). */
size_t dlb_cpu_dw_f32_ring_floats(const struct dlb_cpu_dw_f32 *a);
/* Run it on up to `threads` OpenMP threads; `ring` holds `threads` times
 * dlb_cpu_dw_f32_ring_floats, 64-byte aligned. */
void dlb_cpu_dw_f32_run(const struct dlb_cpu_dw_f32 *a, float *ring,
                        int threads);

#endif
