// Element-wise kernels: casts, scaling, fill, the inf/NaN check, ReLU,
// dropout, SGD, int8 (de)quantisation, and the per-channel bias add and
// sum of convolutions and linear layers. Each is a grid-stride loop over
// its elements; the C entry points are declared in cuda_kernels.h.
#include "cuda_kernels.h"
#include "cuda_dev.cuh"

#include <math.h>

__global__ void k_cast(size_t n, const void *src, int ts, void *dst, int td)
{
    DLB_CUDA_FOR(i, n)
        dlb_dev_st(dst, td, i, dlb_dev_ld(src, ts, i));
}

// x * alpha in float is the exact product rounded once, as ref's double
// product rounded to float is: the two agree bit for bit.
__global__ void k_scale(size_t n, void *p, int t, float alpha)
{
    DLB_CUDA_FOR(i, n)
        dlb_dev_st(p, t, i, dlb_dev_ld(p, t, i) * alpha);
}

// x + g in float is the exact sum rounded once, as ref's double sum
// rounded to float is. y may be x or g: each element is read before it is
// written, by the same thread.
__global__ void k_add(size_t n, const void *x, const void *g, void *y, int t)
{
    DLB_CUDA_FOR(i, n)
        dlb_dev_st(y, t, i, dlb_dev_ld(x, t, i) + dlb_dev_ld(g, t, i));
}

__global__ void k_fill(size_t n, void *p, size_t esz, uint64_t pattern)
{
    DLB_CUDA_FOR(i, n) {
        switch (esz) {
        case 1: ((uint8_t *)p)[i] = (uint8_t)pattern; break;
        case 2: ((uint16_t *)p)[i] = (uint16_t)pattern; break;
        case 4: ((uint32_t *)p)[i] = (uint32_t)pattern; break;
        default: ((uint64_t *)p)[i] = pattern; break;
        }
    }
}

__global__ void k_nonfinite(size_t n, const void *p, int t, int *flag)
{
    DLB_CUDA_FOR(i, n) {
        if (!isfinite(dlb_dev_ld(p, t, i))) {
            *flag = 1; // any writer writes the same value: no atomic needed
            return;
        }
    }
}

// hi > 0 clips above (ReLU6: 6). Comparisons and the clip are exact, so
// the stored value is ref's.
__global__ void k_relu_fwd(size_t n, const void *x, int tx, void *y, int ty,
                           float hi)
{
    DLB_CUDA_FOR(i, n) {
        float v = dlb_dev_ld(x, tx, i);
        v = v > 0.0f ? v : 0.0f;
        dlb_dev_st(y, ty, i, hi > 0.0f && v > hi ? hi : v);
    }
}

// The gradient passes where 0 < y (and y < hi when clipped).
__global__ void k_relu_bwd(size_t n, const void *y, int ty, const void *dy,
                           int tdy, void *dx, int tdx, float hi)
{
    DLB_CUDA_FOR(i, n) {
        float g = dlb_dev_ld(dy, tdy, i), v = dlb_dev_ld(y, ty, i);
        int pass = v > 0.0f && !(hi > 0.0f && v >= hi);
        dlb_dev_st(dx, tdx, i, pass ? g : 0.0f);
    }
}

// The product in double, rounded once to float: what ref stores.
// seed_at, when not NULL, holds the seed instead (a graph's replays set
// it: the captured argument cannot change).
__global__ void k_dropout(size_t n, const void *in, int tin, void *out,
                          int tout, uint64_t seed, const uint64_t *seed_at,
                          uint32_t threshold, double keep_scale, uint32_t hw)
{
    if (seed_at)
        seed = *seed_at;
    DLB_CUDA_FOR(i, n) {
        uint64_t idx = hw > 1 ? i / hw : i;
        float v = 0.0f;
        if (dlb_dev_dropout_keep(seed, idx, threshold))
            v = (float)((double)dlb_dev_ld(in, tin, i) * keep_scale);
        dlb_dev_st(out, tout, i, v);
    }
}

__global__ void k_sgd(size_t n, void *w, int tw, const void *g, int tg,
                      void *v, int tv, float lr, float momentum, float wd)
{
    DLB_CUDA_FOR(i, n)
        dlb_dev_sgd(w, tw, g, tg, v, tv, i, lr, momentum, wd);
}

// In double, as ref: x / scale rounded half to even (rint), then shifted
// and clamped; the same integer on both sides.
__global__ void k_quantize(size_t n, const void *src, int ts, void *q,
                           int is_u8, float scale, int32_t zp)
{
    double lo = is_u8 ? 0.0 : -128.0, hi = is_u8 ? 255.0 : 127.0;
    DLB_CUDA_FOR(i, n) {
        double v = rint((double)dlb_dev_ld(src, ts, i) / (double)scale) + zp;
        v = v != v ? 0.0 : v < lo ? lo : v > hi ? hi : v; // NaN: 0, as ref
        if (is_u8)
            ((uint8_t *)q)[i] = (uint8_t)v;
        else
            ((int8_t *)q)[i] = (int8_t)v;
    }
}

__global__ void k_dequantize(size_t n, const void *q, int is_u8, void *dst,
                             int td, float scale, int32_t zp)
{
    DLB_CUDA_FOR(i, n) {
        double v = is_u8 ? (double)((const uint8_t *)q)[i]
                         : (double)((const int8_t *)q)[i];
        dlb_dev_st(dst, td, i, (float)((v - zp) * (double)scale));
    }
}

__global__ void k_add_bias(size_t n, uint32_t c, size_t hw, void *y, int ty,
                           const void *b, int tb)
{
    DLB_CUDA_FOR(i, n)
        dlb_dev_st(y, ty, i, dlb_dev_ld(y, ty, i) +
                                 dlb_dev_ld(b, tb, (i / hw) % c));
}

// One block per channel; each thread sums a stride of the channel's
// elements in double, then the block adds the partial sums.
__global__ void k_channel_sum(uint32_t n, uint32_t c, size_t hw,
                              const void *dy, int tdy, void *db, int tdb)
{
    __shared__ double part[DLB_CUDA_BLOCK];
    uint32_t ch = blockIdx.x;
    size_t per = (size_t)n * hw;
    double acc = 0.0;
    for (size_t k = threadIdx.x; k < per; k += blockDim.x) {
        size_t img = k / hw, off = k % hw;
        acc += dlb_dev_ld(dy, tdy, (img * c + ch) * hw + off);
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        dlb_dev_st(db, tdb, ch, (float)part[0]);
}

extern "C" {

cudaError_t dlb_cuda_k_image_check(void)
{
    cudaFuncAttributes a;
    return cudaFuncGetAttributes(&a, k_cast);
}

#define LAUNCH(n) dlb_cuda_blocks(n), DLB_CUDA_BLOCK, 0, s

cudaError_t dlb_cuda_k_cast(cudaStream_t s, size_t n, const void *src, int ts,
                            void *dst, int td)
{
    k_cast<<<LAUNCH(n)>>>(n, src, ts, dst, td);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_scale(cudaStream_t s, size_t n, void *p, int t,
                             float alpha)
{
    k_scale<<<LAUNCH(n)>>>(n, p, t, alpha);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_add(cudaStream_t s, size_t n, const void *x,
                           const void *g, void *y, int t)
{
    k_add<<<LAUNCH(n)>>>(n, x, g, y, t);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_fill(cudaStream_t s, size_t n, void *p, size_t esz,
                            uint64_t pattern)
{
    k_fill<<<LAUNCH(n)>>>(n, p, esz, pattern);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_nonfinite(cudaStream_t s, size_t n, const void *p,
                                 int t, int *flag)
{
    k_nonfinite<<<LAUNCH(n)>>>(n, p, t, flag);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_relu_fwd(cudaStream_t s, size_t n, const void *x,
                                int tx, void *y, int ty, float relu_max)
{
    k_relu_fwd<<<LAUNCH(n)>>>(n, x, tx, y, ty, relu_max);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_relu_bwd(cudaStream_t s, size_t n, const void *y,
                                int ty, const void *dy, int tdy, void *dx,
                                int tdx, float relu_max)
{
    k_relu_bwd<<<LAUNCH(n)>>>(n, y, ty, dy, tdy, dx, tdx, relu_max);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_dropout(cudaStream_t s, size_t n, const void *in,
                               int tin, void *out, int tout, uint64_t seed,
                               const uint64_t *seed_at, uint32_t threshold,
                               double keep_scale, uint32_t hw)
{
    k_dropout<<<LAUNCH(n)>>>(n, in, tin, out, tout, seed, seed_at, threshold,
                             keep_scale, hw);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_sgd(cudaStream_t s, size_t n, void *w, int tw,
                           const void *g, int tg, void *v, int tv, float lr,
                           float momentum, float weight_decay)
{
    k_sgd<<<LAUNCH(n)>>>(n, w, tw, g, tg, v, tv, lr, momentum, weight_decay);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_quantize(cudaStream_t s, size_t n, const void *src,
                                int ts, void *q, int is_u8, float scale,
                                int32_t zero_point)
{
    k_quantize<<<LAUNCH(n)>>>(n, src, ts, q, is_u8, scale, zero_point);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_dequantize(cudaStream_t s, size_t n, const void *q,
                                  int is_u8, void *dst, int td, float scale,
                                  int32_t zero_point)
{
    k_dequantize<<<LAUNCH(n)>>>(n, q, is_u8, dst, td, scale, zero_point);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_add_bias(cudaStream_t s, uint32_t n, uint32_t c,
                                size_t hw, void *y, int ty, const void *b,
                                int tb)
{
    size_t total = (size_t)n * c * hw;
    k_add_bias<<<LAUNCH(total)>>>(total, c, hw, y, ty, b, tb);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_channel_sum(cudaStream_t s, uint32_t n, uint32_t c,
                                   size_t hw, const void *dy, int tdy,
                                   void *db, int tdb)
{
    k_channel_sum<<<c, DLB_CUDA_BLOCK, 0, s>>>(n, c, hw, dy, tdy, db, tdb);
    return cudaGetLastError();
}

} // extern "C"
