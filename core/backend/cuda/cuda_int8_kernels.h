/* The int8 kernels of the cuda backend (cuda_int8.cu), as C entry points
 * that enqueue them on a stream and return the launch status.
 *
 * Every int8 GEMM of the backend multiplies s8 by s8: cuBLASLt's IMMA
 * kernels and the dp4a instruction take no u8 operand with a zero point.
 * So activations enter the GEMM as x' = qx - off, where off is 128 for
 * u8 activations and 0 for s8 (whose zero point is 0), and the epilogue
 * subtracts (x_zero_point - off) * rowsum(w)[o] from the accumulator:
 *   sum (qx - zp) * qw = sum x' * qw - (zp - off) * sum qw,
 * exact in 32-bit integers. A padded input position (the real value 0,
 * qx = zp) enters as zp - off, so the correction is the same everywhere. */
#ifndef DLB_CUDA_INT8_KERNELS_H
#define DLB_CUDA_INT8_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include <dlbench/backend.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the activations reach the GEMM: x's element type (F32, S8, U8),
 * and for an F32 x the quantisation of quantize (backend.h), to u8 when
 * is_u8 else s8; off = is_u8 ? 128 : 0 is subtracted in every case. */
struct dlb_cuda_int8_src {
    const void *x;
    int tx;
    int is_u8;
    float scale;
    int32_t zero_point;
};

/* out[i] = x'[i] for i < count. */
cudaError_t dlb_cuda_k_int8_shift(cudaStream_t s, size_t count,
                                  struct dlb_cuda_int8_src src, int8_t *out);

/* The column matrix of images n0 .. n0 + nimg - 1 of convolution d:
 * col[(img * out_h * out_w + p) * ldk + kk] = x' of kernel position
 * kk = (c * kh + r) * kw + t (w's layout), zp - off outside the image,
 * 0 for kk from in_c * kh * kw up to ldk (padding for the GEMM). */
cudaError_t dlb_cuda_k_int8_im2col(cudaStream_t s, struct dlb_conv2d_desc d,
                                   uint32_t n0, uint32_t nimg,
                                   struct dlb_cuda_int8_src src, int8_t *col,
                                   uint32_t ldk);

/* w [m][k] into out [m4][k4], zero-padded. */
cudaError_t dlb_cuda_k_int8_pack(cudaStream_t s, uint32_t m, uint32_t k,
                                 const int8_t *w, uint32_t m4, uint32_t k4,
                                 int8_t *out);

/* sum[o] = sum over i of w[o * k + i], for o < m. */
cudaError_t dlb_cuda_k_int8_rowsum(cudaStream_t s, uint32_t m, uint32_t k,
                                   const int8_t *w, int32_t *sum);

/* C (m x n, column-major, leading dimension ldc) = A^T B, A k x m (lda),
 * B k x n (ldb), all column-major: c[j * ldc + i] = sum over l of
 * a[i * lda + l] * b[j * ldb + l], with dp4a, in 32-bit integers. Any
 * shape and leading dimension: the fallback of cuBLASLt's IMMA path. */
cudaError_t dlb_cuda_k_int8_gemm_dp4a(cudaStream_t s, uint32_t m, size_t n,
                                      uint32_t k, const int8_t *a,
                                      uint32_t lda, const int8_t *b,
                                      uint32_t ldb, int32_t *c, uint32_t ldc);

/* From the accumulators to y (backend.h's conv2d_int8_fwd): element
 * (j, o) of c, j = img * plane + p, is y[y_off + (img * out_c + o) *
 * plane + p]; acc = c - corr * rowsum[o] (rowsum may be NULL when corr is
 * 0), then the multiplier, bias, ReLU and requantisation of int8.h, float
 * step by float step as ref does them. */
struct dlb_cuda_int8_epi {
    const int32_t *c;
    uint32_t ldc;
    uint32_t out_c;
    size_t cols;            /* images * plane */
    uint32_t plane;         /* out_h * out_w; 1 for linear layers */
    const int32_t *bias;    /* S32 [out_c] or NULL */
    const int32_t *rowsum;  /* S32 [out_c] or NULL */
    int32_t corr;           /* x_zero_point - off */
    const float *w_scale;   /* F32 [out_c] or [1] */
    int per_channel;
    float x_scale, y_scale;
    int32_t y_zero_point;
    int relu;
    void *y;
    int ty;                 /* F32, S8 or U8 */
    size_t y_off;
};
cudaError_t dlb_cuda_k_int8_epilogue(cudaStream_t s,
                                     const struct dlb_cuda_int8_epi *e);

/* Max pooling of S8 (is_u8 0) or U8 planes, padding never winning. */
cudaError_t dlb_cuda_k_int8_pool(cudaStream_t s, struct dlb_pool_desc d,
                                 const void *x, void *y, int is_u8);

#ifdef __cplusplus
}
#endif
#endif
