/* What the cpu backend's own f32 convolution kernels share (cpu_conv1.c,
 * cpu_conv1_pool.c, cpu_conv_quads.c): AVX-512 code generation, compiled
 * on x86-64 only and run only where __builtin_cpu_supports("avx512f"),
 * and the first layer's shape and weight vectors. Include after cpu.h. */
#ifndef DLB_CPU_KERNELS_H
#define DLB_CPU_KERNELS_H

#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))
#define AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline
/* Loops over a block's accumulators, unrolled whole so that they stay in
 * registers (-O2 leaves them as an array on the stack, at half speed). */
#define UNROLL _Pragma("GCC unroll 32")

/* Taps of a first-layer kernel (weights on the stack). */
#define CONV1_MAX_TAPS 64
/* Below this many multiply-adds a pass runs on the calling thread: a
 * parallel region costs more than LeNet's batch-1 conv1 (144k). */
#define CONV1_PAR_MACS (1u << 20)

/* 1 when the first-layer kernels take d: one input channel (one group),
 * fewer than 16 output channels, no padding, at most CONV1_MAX_TAPS taps,
 * on a CPU with AVX-512. */
int dlb_cpu_conv1_shape(const struct dlb_conv2d_desc *d);
/* 1 when every buffer of b that is not NULL is F32. */
int dlb_cpu_all_f32(const struct dlb_buffer *const *b, int n);
/* Weights [out_c][kh][kw] as one vector of out_c lanes per tap, zero in
 * the lanes beyond out_c. */
void dlb_cpu_conv1_taps(const struct dlb_conv2d_desc *d, const float *w,
                        float (*wt)[16]);

#endif
