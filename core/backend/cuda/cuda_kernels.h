/* The cuda backend's own kernels, as C entry points that enqueue them on a
 * stream and return the launch status (cudaGetLastError). Included by the
 * C host files and by the .cu files that define them.
 *
 * Buffers are passed as device pointers with their element type (an
 * enum dlb_dtype value: F32, F16 or BF16 for floats); every kernel loads
 * and stores through one conversion helper, so one instantiation serves
 * every type and nvcc compiles a few kernels, not a few per type. Values
 * are computed in float (double where matching ref bit for bit needs it:
 * dropout, quantisation, reductions). Counts are element counts. */
#ifndef DLB_CUDA_KERNELS_H
#define DLB_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include <dlbench/backend.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of the error word that kernels set (a kernel cannot return a
 * status); the backend reports them when it next waits for the stream. */
#define DLB_CUDA_KERR_LABEL 1u   /* nll: a label outside [0, classes) */
#define DLB_CUDA_KERR_POOL_WS 2u /* pool_bwd: a workspace index out of range */
#define DLB_CUDA_KERR_CSR 4u     /* csr_linear_fwd: a broken CSR structure */

/* cudaSuccess when this build carries code the current device can run. */
cudaError_t dlb_cuda_k_image_check(void);

/* ---- element-wise (cuda_elementwise.cu) ------------------------------- */
cudaError_t dlb_cuda_k_cast(cudaStream_t s, size_t n, const void *src, int ts,
                            void *dst, int td);
cudaError_t dlb_cuda_k_scale(cudaStream_t s, size_t n, void *p, int t,
                             float alpha);
/* y = x + g, all of type t; y may be x or g. */
cudaError_t dlb_cuda_k_add(cudaStream_t s, size_t n, const void *x,
                           const void *g, void *y, int t);
/* Every element of size `esz` (1, 2, 4, 8 bytes) = the low bytes of
 * `pattern`. */
cudaError_t dlb_cuda_k_fill(cudaStream_t s, size_t n, void *p, size_t esz,
                            uint64_t pattern);
/* *flag = 1 when an element is inf or NaN; *flag is not cleared. */
cudaError_t dlb_cuda_k_nonfinite(cudaStream_t s, size_t n, const void *p,
                                 int t, int *flag);
/* ReLU, clipped above at relu_max when it is positive (ReLU6: 6);
 * backward passes dy where 0 < y (and y < relu_max when clipped). */
cudaError_t dlb_cuda_k_relu_fwd(cudaStream_t s, size_t n, const void *x,
                                int tx, void *y, int ty, float relu_max);
cudaError_t dlb_cuda_k_relu_bwd(cudaStream_t s, size_t n, const void *y,
                                int ty, const void *dy, int tdy, void *dx,
                                int tdx, float relu_max);
/* out = in * keep_scale where dlb_dropout_keep(seed, index, threshold),
 * else 0; index is i / hw (channel mode) or i (hw = 1). The seed is
 * *seed_at (device memory) when seed_at is not NULL. */
cudaError_t dlb_cuda_k_dropout(cudaStream_t s, size_t n, const void *in,
                               int tin, void *out, int tout, uint64_t seed,
                               const uint64_t *seed_at, uint32_t threshold,
                               double keep_scale, uint32_t hw);
/* dst[k] = v[k] for k < n (n <= DLB_CUDA_GRAPH_SEEDS): a graph's replay
 * seeds, given by value so that no host memory outlives the launch. */
#define DLB_CUDA_GRAPH_SEEDS 32
struct dlb_cuda_seed_set {
    uint64_t v[DLB_CUDA_GRAPH_SEEDS];
    unsigned n;
};
cudaError_t dlb_cuda_k_set_seeds(cudaStream_t s, uint64_t *dst,
                                 struct dlb_cuda_seed_set set);
cudaError_t dlb_cuda_k_sgd(cudaStream_t s, size_t n, void *w, int tw,
                           const void *g, int tg, void *v, int tv, float lr,
                           float momentum, float weight_decay);
/* q: S8 (is_u8 = 0) or U8 (1). */
cudaError_t dlb_cuda_k_quantize(cudaStream_t s, size_t n, const void *src,
                                int ts, void *q, int is_u8, float scale,
                                int32_t zero_point);
cudaError_t dlb_cuda_k_dequantize(cudaStream_t s, size_t n, const void *q,
                                  int is_u8, void *dst, int td, float scale,
                                  int32_t zero_point);
/* y[n][c][hw] += b[c] */
cudaError_t dlb_cuda_k_add_bias(cudaStream_t s, uint32_t n, uint32_t c,
                                size_t hw, void *y, int ty, const void *b,
                                int tb);
/* db[c] = sum over n and hw of dy[n][c][hw] */
cudaError_t dlb_cuda_k_channel_sum(cudaStream_t s, uint32_t n, uint32_t c,
                                   size_t hw, const void *dy, int tdy,
                                   void *db, int tdb);

/* ---- the gradient scaler (cuda_scaler.cu) ---------------------------- */
/* p *= inv (skipped when inv is 1), then *flag = 1 when an element, as
 * stored, is inf or NaN; *flag is not cleared. */
cudaError_t dlb_cuda_k_unscale_check(cudaStream_t s, size_t n, void *p, int t,
                                     float inv, int32_t *flag);
/* dlb_cuda_k_sgd when *flag is 0; nothing otherwise. */
cudaError_t dlb_cuda_k_sgd_if(cudaStream_t s, size_t n, void *w, int tw,
                              const void *g, int tg, void *v, int tv, float lr,
                              float momentum, float weight_decay,
                              const int32_t *flag);

/* ---- pooling and the loss (cuda_nn.cu) ------------------------------- */
/* ws (S32, may be NULL) gets the argmax within the input plane (max). */
cudaError_t dlb_cuda_k_pool_fwd(cudaStream_t s, struct dlb_pool_desc d,
                                const void *x, int tx, void *y, int ty,
                                int32_t *ws);
cudaError_t dlb_cuda_k_pool_bwd(cudaStream_t s, struct dlb_pool_desc d,
                                const void *dy, int tdy, const int32_t *ws,
                                void *dx, int tdx, unsigned *kerr);
cudaError_t dlb_cuda_k_logsoftmax(cudaStream_t s, uint32_t n, uint32_t classes,
                                  const void *x, int tx, void *y, int ty);
/* loss[0] = -mean_i y[i][labels[i]]; a bad label sets kerr's LABEL bit. */
cudaError_t dlb_cuda_k_nll(cudaStream_t s, uint32_t n, uint32_t classes,
                           const void *y, int ty, const int32_t *labels,
                           void *loss, int tl, unsigned *kerr);
/* dx = f * (exp(y) - onehot(label)), f = scale / n */
cudaError_t dlb_cuda_k_nll_bwd(cudaStream_t s, uint32_t n, uint32_t classes,
                               const void *y, int ty, const int32_t *labels,
                               double f, void *dx, int tdx, unsigned *kerr);

#ifdef __cplusplus
}
#endif
#endif
