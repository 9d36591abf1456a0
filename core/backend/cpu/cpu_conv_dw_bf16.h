/* The expansion and its depthwise convolution as one pass in bf16
 * (cpu_conv_dw_bf16.c), as cpu_conv_dw_f32.h in f32: x, both weights
 * and y bf16 in the layouts oneDNN's AVX512_BF16 kernels choose (x and y
 * nChw16c, the 1x1's weights OIhw8i16o2i: input channels in pairs, the
 * depthwise ones Goihw16g), the biases f32, as a bf16 network keeps
 * them. The 1x1 sums its pairs with vdpbf16ps in f32, and its output is
 * rounded to bf16 as the two layers apart store it; the depthwise
 * convolution sums in f32 and rounds once. */
#ifndef DLB_CPU_CONV_DW_BF16_H
#define DLB_CPU_CONV_DW_BF16_H

#include <stddef.h>
#include <stdint.h>

struct dlb_cpu_dw_bf16 {
    const uint16_t *x;  /* [n][icb][ih][iw][16] */
    const uint16_t *w1; /* [ocb][icb][8 in pairs][16 out][2] */
    const float *b1;    /* [oc] or NULL */
    const uint16_t *w2; /* [ocb][3][3][16] */
    const float *b2;    /* [oc] or NULL */
    uint16_t *y;        /* [n][ocb][oh][ow][16] */
    int n, ic, icb, ih, iw; /* input channels, and their blocks of 16 */
    int oc, ocb;        /* expanded channels, and their blocks of 16 */
    int oh, ow, stride;
    float lo1, hi1, lo2, hi2; /* as in struct dlb_cpu_dw_f32 */
};

/* 1 where the CPU runs the kernel (AVX-512F and AVX512_BF16). */
int dlb_cpu_dw_bf16_available(void);
/* Floats of ring buffer one thread uses (64-byte multiples). */
size_t dlb_cpu_dw_bf16_ring_floats(const struct dlb_cpu_dw_bf16 *a);
/* Run it on up to `threads` OpenMP threads; `ring` holds `threads` times
 * dlb_cpu_dw_bf16_ring_floats, 64-byte aligned. */
void dlb_cpu_dw_bf16_run(const struct dlb_cpu_dw_bf16 *a, float *ring,
                         int threads);

#endif
