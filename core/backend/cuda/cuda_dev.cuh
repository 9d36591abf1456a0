/* Device helpers the kernels share: loads and stores in any float type
 * through float, the bf16 rounding of the core (dtype.c) and the dropout
 * mask of backend.h, with __device__ added. */
#ifndef DLB_CUDA_DEV_CUH
#define DLB_CUDA_DEV_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include <dlbench/backend.h>

#define DLB_CUDA_BLOCK 256

/* Blocks for n elements with a grid-stride loop: enough to fill the
 * device, never more than CUDA's grid limit. */
static inline unsigned dlb_cuda_blocks(size_t n)
{
    size_t b = (n + DLB_CUDA_BLOCK - 1) / DLB_CUDA_BLOCK;
    if (b > 65535u * 16u)
        b = 65535u * 16u;
    return b ? (unsigned)b : 1u;
}

#define DLB_CUDA_FOR(i, n)                                                  \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (size_t)gridDim.x * blockDim.x)

__device__ __forceinline__ float dlb_dev_ld(const void *p, int t, size_t i)
{
    switch (t) {
    case DLB_F16:
        return __half2float(((const __half *)p)[i]);
    case DLB_BF16:
        return __uint_as_float((unsigned)((const uint16_t *)p)[i] << 16);
    default:
        return ((const float *)p)[i];
    }
}

/* dlb_f32_to_bf16: round to nearest even, overflow to infinity, NaN kept
 * quiet with its sign, bit for bit as the host does it. */
__device__ __forceinline__ uint16_t dlb_dev_bf16(float f)
{
    uint32_t x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x0040u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

__device__ __forceinline__ void dlb_dev_st(void *p, int t, size_t i, float v)
{
    switch (t) {
    case DLB_F16:
        ((__half *)p)[i] = __float2half_rn(v); /* IEEE: RNE, overflow inf */
        break;
    case DLB_BF16:
        ((uint16_t *)p)[i] = dlb_dev_bf16(v);
        break;
    default:
        ((float *)p)[i] = v;
    }
}

/* One element of SGD with momentum (backend.h's dlb_sgd_desc), shared by
 * sgd_update and the gradient scaler's sgd_update_if_finite so that both
 * round the same way. */
__device__ __forceinline__ void dlb_dev_sgd(void *w, int tw, const void *g,
                                            int tg, void *v, int tv, size_t i,
                                            float lr, float momentum, float wd)
{
    float wi = dlb_dev_ld(w, tw, i);
    float grad = dlb_dev_ld(g, tg, i) + wd * wi;
    float vi = momentum * dlb_dev_ld(v, tv, i) + grad;
    dlb_dev_st(v, tv, i, vi);
    dlb_dev_st(w, tw, i, wi - lr * vi);
}

/* backend.h's dlb_dropout_keep, line for line. */
__device__ __forceinline__ int dlb_dev_dropout_keep(uint64_t seed,
                                                    uint64_t index,
                                                    uint32_t threshold)
{
    uint64_t z = seed + (index + 1u) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (uint32_t)(z >> 40) >= threshold;
}

#endif
