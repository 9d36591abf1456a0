// int8 inference kernels: activations into the s8 form the GEMMs take
// (quantised from f32 on the way, as quantize does), the column matrix of
// a convolution, weight padding and row sums, the dp4a GEMM that serves
// shapes cuBLASLt's IMMA path does not, the epilogue from int32
// accumulators to y, and int8 max pooling. Entry points and the
// arithmetic they share: cuda_int8_kernels.h.
#include "cuda_int8_kernels.h"
#include "cuda_dev.cuh"

#include <math.h>

// quantize's integer (backend.h), as k_quantize and ref compute it: the
// quotient in double, rounded half to even, shifted, clamped; NaN gives 0.
__device__ __forceinline__ int32_t quantize(float x, float scale, int32_t zp,
                                            int is_u8)
{
    double lo = is_u8 ? 0.0 : -128.0, hi = is_u8 ? 255.0 : 127.0;
    double v = rint((double)x / (double)scale) + (double)zp;
    v = v != v ? 0.0 : v < lo ? lo : v > hi ? hi : v;
    return (int32_t)v;
}

// x' of element i: the stored or quantised value less the offset.
__device__ __forceinline__ int32_t xprime(const struct dlb_cuda_int8_src &s,
                                          size_t i)
{
    int32_t q;
    switch (s.tx) {
    case DLB_U8:
        q = ((const uint8_t *)s.x)[i];
        break;
    case DLB_S8:
        q = ((const int8_t *)s.x)[i];
        break;
    default:
        q = quantize(((const float *)s.x)[i], s.scale, s.zero_point, s.is_u8);
    }
    return q - (s.is_u8 ? 128 : 0);
}

__global__ void k_shift(size_t n, struct dlb_cuda_int8_src src, int8_t *out)
{
    DLB_CUDA_FOR(i, n)
        out[i] = (int8_t)xprime(src, i);
}

__global__ void k_im2col(struct dlb_conv2d_desc d, uint32_t n0, size_t total,
                         struct dlb_cuda_int8_src src, int8_t *col,
                         uint32_t ldk)
{
    uint32_t khw = d.kh * d.kw, kall = d.in_c * khw;
    size_t plane = (size_t)d.out_h * d.out_w;
    int8_t pad = (int8_t)(src.zero_point - (src.is_u8 ? 128 : 0));
    DLB_CUDA_FOR(i, total) {
        size_t row = i / ldk;
        uint32_t kk = (uint32_t)(i % ldk);
        int8_t v = 0;
        if (kk < kall) {
            size_t img = row / plane, p = row % plane;
            uint32_t oh = (uint32_t)(p / d.out_w), ow = (uint32_t)(p % d.out_w);
            uint32_t c = kk / khw, r = (kk % khw) / d.kw, t = kk % d.kw;
            long ih = (long)oh * d.stride_h + r - (long)d.pad_h;
            long iw = (long)ow * d.stride_w + t - (long)d.pad_w;
            if (ih < 0 || ih >= (long)d.in_h || iw < 0 || iw >= (long)d.in_w)
                v = pad; // the real value 0: qx = x_zero_point
            else
                v = (int8_t)xprime(src, (((size_t)(n0 + img) * d.in_c + c) *
                                             d.in_h + (size_t)ih) * d.in_w +
                                            (size_t)iw);
        }
        col[i] = v;
    }
}

__global__ void k_pack(uint32_t m, uint32_t k, const int8_t *w, uint32_t k4,
                       size_t total, int8_t *out)
{
    DLB_CUDA_FOR(i, total) {
        size_t o = i / k4;
        uint32_t kk = (uint32_t)(i % k4);
        out[i] = o < m && kk < k ? w[o * k + kk] : (int8_t)0;
    }
}

// One warp per row; integer sums, so the order does not matter.
__global__ void k_rowsum(uint32_t m, uint32_t k, const int8_t *w, int32_t *sum)
{
    size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    unsigned lane = threadIdx.x % 32;
    if (warp >= m)
        return; // the whole warp: blockDim is a multiple of 32
    int32_t acc = 0;
    for (uint32_t i = lane; i < k; i += 32)
        acc += w[warp * k + i];
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (lane == 0)
        sum[warp] = acc;
}

// Four bytes k .. k+3 of a row as one word (zero past kend or for a row
// outside the matrix); the byte order only has to match between A and B.
__device__ __forceinline__ int pack4(const int8_t *p, int valid, size_t base,
                                     uint32_t kk, uint32_t kend)
{
    uint32_t v = 0;
    if (valid)
        for (uint32_t q = 0; q < 4; q++)
            if (kk + q < kend)
                v |= (uint32_t)(uint8_t)p[base + kk + q] << (8 * q);
    return (int)v;
}

__device__ __forceinline__ int dot4(int a, int b, int acc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 610
    return __dp4a(a, b, acc);
#else
    for (int q = 0; q < 4; q++)
        acc += (int)(int8_t)(a >> (8 * q)) * (int)(int8_t)(b >> (8 * q));
    return acc;
#endif
}

// 16 x 16 outputs per block of 16 x 16 threads, 64 bytes of k per step
// through shared memory (rows padded to 17 words: no bank conflicts when
// a warp reads one word of 16 rows). Byte loads with bounds checks, so
// any leading dimension and alignment works: this is the fallback path.
#define GT 16
#define GK 16 // words of k per step
__global__ void k_gemm_dp4a(uint32_t m, size_t n, uint32_t k, const int8_t *a,
                            uint32_t lda, const int8_t *b, uint32_t ldb,
                            int32_t *c, uint32_t ldc)
{
    __shared__ int as[GT][GK + 1], bs[GT][GK + 1];
    uint32_t tx = threadIdx.x, ty = threadIdx.y;
    uint32_t i0 = blockIdx.y * GT;
    size_t j0 = (size_t)blockIdx.x * GT;
    uint32_t t = ty * GT + tx, lr = t / GK, lw = t % GK;
    int acc = 0;
    for (uint32_t k0 = 0; k0 < k; k0 += GK * 4) {
        as[lr][lw] = pack4(a, i0 + lr < m, (size_t)(i0 + lr) * lda,
                           k0 + 4 * lw, k);
        bs[lr][lw] = pack4(b, j0 + lr < n, (j0 + lr) * ldb, k0 + 4 * lw, k);
        __syncthreads();
        for (uint32_t w = 0; w < GK; w++)
            acc = dot4(as[tx][w], bs[ty][w], acc);
        __syncthreads();
    }
    if (i0 + tx < m && j0 + ty < n)
        c[(j0 + ty) * ldc + i0 + tx] = acc;
}

// ref's put() (ref_int8.c) with int8.h's helpers, each float step with an
// explicit round-to-nearest intrinsic so that nvcc cannot contract two of
// them into one FMA: the same bits as the host's.
__global__ void k_epilogue(struct dlb_cuda_int8_epi e, size_t total)
{
    size_t per_img = (size_t)e.out_c * e.plane;
    int int8_out = e.ty != DLB_F32;
    float lo = e.ty == DLB_U8 ? 0.0f : -128.0f;
    float hi = e.ty == DLB_U8 ? 255.0f : 127.0f;
    DLB_CUDA_FOR(i, total) {
        size_t img = i / per_img, rem = i % per_img;
        uint32_t o = (uint32_t)(rem / e.plane);
        size_t p = rem % e.plane, j = img * e.plane + p;
        // modulo 2^32, as the GEMM's sums: exact when |acc| < 2^31
        uint32_t acc = (uint32_t)e.c[j * e.ldc + o];
        if (e.rowsum)
            acc -= (uint32_t)e.corr * (uint32_t)e.rowsum[o];
        float m = __fmul_rn(e.x_scale, e.w_scale[e.per_channel ? o : 0]);
        if (int8_out)
            m = __fdiv_rn(m, e.y_scale);
        float bias = e.bias ? __int2float_rn(e.bias[o]) : 0.0f;
        float v = __fmul_rn(__fadd_rn(__int2float_rn((int32_t)acc), bias), m);
        if (e.relu && v < 0.0f)
            v = 0.0f;
        size_t yi = e.y_off + i;
        if (!int8_out) {
            ((float *)e.y)[yi] = v;
            continue;
        }
        float r = __fadd_rn(rintf(v), (float)e.y_zero_point);
        int32_t q = r < lo ? (int32_t)lo : r > hi ? (int32_t)hi : (int32_t)r;
        if (e.ty == DLB_U8)
            ((uint8_t *)e.y)[yi] = (uint8_t)q;
        else
            ((int8_t *)e.y)[yi] = (int8_t)q;
    }
}

__global__ void k_pool(struct dlb_pool_desc d, const void *x, void *y,
                       int is_u8)
{
    size_t out_plane = (size_t)d.out_h * d.out_w;
    size_t in_plane = (size_t)d.in_h * d.in_w;
    size_t total = (size_t)d.n * d.c * out_plane;
    DLB_CUDA_FOR(yi, total) {
        size_t p = yi / out_plane, o = yi % out_plane;
        long i = (long)(o / d.out_w), j = (long)(o % d.out_w);
        int32_t best = INT32_MIN;
        for (uint32_t r = 0; r < d.kh; r++) {
            long ih = i * d.stride_h + r - (long)d.pad_h;
            if (ih < 0 || ih >= (long)d.in_h)
                continue; // padding never wins a maximum
            for (uint32_t t = 0; t < d.kw; t++) {
                long iw = j * d.stride_w + t - (long)d.pad_w;
                if (iw < 0 || iw >= (long)d.in_w)
                    continue;
                size_t xi = p * in_plane + (size_t)(ih * (long)d.in_w + iw);
                int32_t v = is_u8 ? (int32_t)((const uint8_t *)x)[xi]
                                  : (int32_t)((const int8_t *)x)[xi];
                best = v > best ? v : best;
            }
        }
        // a window of padding only stores the low byte of INT32_MIN, 0, as ref
        if (is_u8)
            ((uint8_t *)y)[yi] = (uint8_t)best;
        else
            ((int8_t *)y)[yi] = (int8_t)best;
    }
}

extern "C" {

#define LAUNCH(n) dlb_cuda_blocks(n), DLB_CUDA_BLOCK, 0, s

cudaError_t dlb_cuda_k_int8_shift(cudaStream_t s, size_t count,
                                  struct dlb_cuda_int8_src src, int8_t *out)
{
    k_shift<<<LAUNCH(count)>>>(count, src, out);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_int8_im2col(cudaStream_t s, struct dlb_conv2d_desc d,
                                   uint32_t n0, uint32_t nimg,
                                   struct dlb_cuda_int8_src src, int8_t *col,
                                   uint32_t ldk)
{
    size_t total = (size_t)nimg * d.out_h * d.out_w * ldk;
    k_im2col<<<LAUNCH(total)>>>(d, n0, total, src, col, ldk);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_int8_pack(cudaStream_t s, uint32_t m, uint32_t k,
                                 const int8_t *w, uint32_t m4, uint32_t k4,
                                 int8_t *out)
{
    size_t total = (size_t)m4 * k4;
    k_pack<<<LAUNCH(total)>>>(m, k, w, k4, total, out);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_int8_rowsum(cudaStream_t s, uint32_t m, uint32_t k,
                                   const int8_t *w, int32_t *sum)
{
    unsigned rows_per_block = DLB_CUDA_BLOCK / 32;
    unsigned blocks = (m + rows_per_block - 1) / rows_per_block;
    k_rowsum<<<blocks ? blocks : 1, DLB_CUDA_BLOCK, 0, s>>>(m, k, w, sum);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_int8_gemm_dp4a(cudaStream_t s, uint32_t m, size_t n,
                                      uint32_t k, const int8_t *a,
                                      uint32_t lda, const int8_t *b,
                                      uint32_t ldb, int32_t *c, uint32_t ldc)
{
    size_t gx = (n + GT - 1) / GT, gy = ((size_t)m + GT - 1) / GT;
    if (gx > 0x7fffffffu || gy > 65535u)
        return cudaErrorInvalidConfiguration;
    dim3 grid((unsigned)gx, (unsigned)gy), block(GT, GT);
    k_gemm_dp4a<<<grid, block, 0, s>>>(m, n, k, a, lda, b, ldb, c, ldc);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_int8_epilogue(cudaStream_t s,
                                     const struct dlb_cuda_int8_epi *e)
{
    size_t total = e->cols * e->out_c;
    k_epilogue<<<LAUNCH(total)>>>(*e, total);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_int8_pool(cudaStream_t s, struct dlb_pool_desc d,
                                 const void *x, void *y, int is_u8)
{
    size_t total = (size_t)d.n * d.c * d.out_h * d.out_w;
    k_pool<<<LAUNCH(total)>>>(d, x, y, is_u8);
    return cudaGetLastError();
}

} // extern "C"
