// Pooling with ref's argmax workspace, and log-softmax / NLL. Pooling is
// the module's own: backend.h's max-pool backward gets the argmax
// workspace but neither x nor y, which cuDNN's backward needs. Backward
// gathers (one thread per input element visits the outputs whose windows
// cover it), so overlapping windows need no atomics and the sum order is
// fixed: the result does not vary from run to run.
#include "cuda_kernels.h"
#include "cuda_dev.cuh"

#include <math.h>

__global__ void k_pool_fwd(struct dlb_pool_desc d, const void *x, int tx,
                           void *y, int ty, int32_t *ws)
{
    size_t out_plane = (size_t)d.out_h * d.out_w;
    size_t in_plane = (size_t)d.in_h * d.in_w;
    size_t total = (size_t)d.n * d.c * out_plane;
    DLB_CUDA_FOR(yi, total) {
        size_t p = yi / out_plane, o = yi % out_plane;
        long i = (long)(o / d.out_w), j = (long)(o % d.out_w);
        size_t base = p * in_plane;
        float best = -INFINITY, sum = 0.0f;
        long arg = -1;
        for (uint32_t r = 0; r < d.kh; r++) {
            long ih = i * d.stride_h + r - (long)d.pad_h;
            if (ih < 0 || ih >= (long)d.in_h)
                continue;
            for (uint32_t c = 0; c < d.kw; c++) {
                long iw = j * d.stride_w + c - (long)d.pad_w;
                if (iw < 0 || iw >= (long)d.in_w)
                    continue;
                long k = ih * (long)d.in_w + iw;
                float v = dlb_dev_ld(x, tx, base + (size_t)k);
                if (d.kind == DLB_POOL_MAX) {
                    if (arg < 0 || v > best) { // ties: the first maximum
                        best = v;
                        arg = k;
                    }
                } else {
                    sum += v;
                }
            }
        }
        if (d.kind == DLB_POOL_MAX) {
            dlb_dev_st(y, ty, yi, best);
            if (ws)
                ws[yi] = (int32_t)arg;
        } else {
            dlb_dev_st(y, ty, yi, sum / (float)(d.kh * d.kw));
        }
    }
}

// First and last output index along one axis whose window covers input
// index `in`: lo = ceil((in + pad - k + 1) / stride), hi = (in + pad) / stride.
__device__ __forceinline__ void covering(long in, uint32_t k, uint32_t stride,
                                         uint32_t pad, uint32_t out, long *lo,
                                         long *hi)
{
    long a = in + (long)pad - (long)k;
    *lo = a < 0 ? 0 : a / (long)stride + 1;
    *hi = (in + (long)pad) / (long)stride;
    if (*hi > (long)out - 1)
        *hi = (long)out - 1;
}

__global__ void k_pool_bwd(struct dlb_pool_desc d, const void *dy, int tdy,
                           const int32_t *ws, void *dx, int tdx)
{
    size_t out_plane = (size_t)d.out_h * d.out_w;
    size_t in_plane = (size_t)d.in_h * d.in_w;
    size_t total = (size_t)d.n * d.c * in_plane;
    float inv = 1.0f / (float)(d.kh * d.kw);
    DLB_CUDA_FOR(xi, total) {
        size_t p = xi / in_plane, k = xi % in_plane;
        long ih = (long)(k / d.in_w), iw = (long)(k % d.in_w);
        long i0, i1, j0, j1;
        float acc = 0.0f;
        covering(ih, d.kh, d.stride_h, d.pad_h, d.out_h, &i0, &i1);
        covering(iw, d.kw, d.stride_w, d.pad_w, d.out_w, &j0, &j1);
        for (long i = i0; i <= i1; i++)
            for (long j = j0; j <= j1; j++) {
                size_t yi = p * out_plane + (size_t)i * d.out_w + (size_t)j;
                if (d.kind == DLB_POOL_AVG)
                    acc += dlb_dev_ld(dy, tdy, yi) * inv;
                else if (ws[yi] == (int32_t)k)
                    acc += dlb_dev_ld(dy, tdy, yi);
            }
        dlb_dev_st(dx, tdx, xi, acc);
    }
}

// ref fails on a workspace index outside the plane; so does this, at the
// next wait for the stream.
__global__ void k_pool_ws_check(size_t n, const int32_t *ws, size_t in_plane,
                                unsigned *kerr)
{
    DLB_CUDA_FOR(i, n)
        if (ws[i] < 0 || (size_t)ws[i] >= in_plane)
            *kerr |= DLB_CUDA_KERR_POOL_WS;
}

// One thread per row: the reference CNN has ten classes.
__global__ void k_logsoftmax(uint32_t n, uint32_t classes, const void *x,
                             int tx, void *y, int ty)
{
    DLB_CUDA_FOR(r, (size_t)n) {
        size_t base = r * classes;
        float mx = -INFINITY, sum = 0.0f;
        for (uint32_t k = 0; k < classes; k++)
            mx = fmaxf(mx, dlb_dev_ld(x, tx, base + k));
        for (uint32_t k = 0; k < classes; k++)
            sum += expf(dlb_dev_ld(x, tx, base + k) - mx); // shifted: no overflow
        float lse = mx + logf(sum);
        for (uint32_t k = 0; k < classes; k++)
            dlb_dev_st(y, ty, base + k, dlb_dev_ld(x, tx, base + k) - lse);
    }
}

// One block: the batch's losses summed in double.
__global__ void k_nll(uint32_t n, uint32_t classes, const void *y, int ty,
                      const int32_t *labels, void *loss, int tl,
                      unsigned *kerr)
{
    __shared__ double part[DLB_CUDA_BLOCK];
    double acc = 0.0;
    for (uint32_t r = threadIdx.x; r < n; r += blockDim.x) {
        int32_t lab = labels[r];
        if (lab < 0 || (uint32_t)lab >= classes) {
            *kerr |= DLB_CUDA_KERR_LABEL;
            acc = NAN;
            continue;
        }
        acc -= dlb_dev_ld(y, ty, (size_t)r * classes + (uint32_t)lab);
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        dlb_dev_st(loss, tl, 0, (float)(part[0] / (n ? n : 1)));
}

__global__ void k_nll_bwd(uint32_t n, uint32_t classes, const void *y, int ty,
                          const int32_t *labels, double f, void *dx, int tdx,
                          unsigned *kerr)
{
    size_t total = (size_t)n * classes;
    DLB_CUDA_FOR(i, total) {
        int32_t lab = labels[i / classes];
        uint32_t k = (uint32_t)(i % classes);
        if (lab < 0 || (uint32_t)lab >= classes)
            *kerr |= DLB_CUDA_KERR_LABEL;
        float p = expf(dlb_dev_ld(y, ty, i));
        dlb_dev_st(dx, tdx, i, (float)(f * (double)(p - (k == (uint32_t)lab))));
    }
}

extern "C" {

#define LAUNCH(n) dlb_cuda_blocks(n), DLB_CUDA_BLOCK, 0, s

cudaError_t dlb_cuda_k_pool_fwd(cudaStream_t s, struct dlb_pool_desc d,
                                const void *x, int tx, void *y, int ty,
                                int32_t *ws)
{
    size_t total = (size_t)d.n * d.c * d.out_h * d.out_w;
    k_pool_fwd<<<LAUNCH(total)>>>(d, x, tx, y, ty, ws);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_pool_bwd(cudaStream_t s, struct dlb_pool_desc d,
                                const void *dy, int tdy, const int32_t *ws,
                                void *dx, int tdx, unsigned *kerr)
{
    size_t in_plane = (size_t)d.in_h * d.in_w;
    size_t total = (size_t)d.n * d.c * in_plane;
    size_t ny = (size_t)d.n * d.c * d.out_h * d.out_w;
    if (d.kind == DLB_POOL_MAX) {
        k_pool_ws_check<<<LAUNCH(ny)>>>(ny, ws, in_plane, kerr);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    k_pool_bwd<<<LAUNCH(total)>>>(d, dy, tdy, ws, dx, tdx);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_logsoftmax(cudaStream_t s, uint32_t n, uint32_t classes,
                                  const void *x, int tx, void *y, int ty)
{
    k_logsoftmax<<<LAUNCH(n)>>>(n, classes, x, tx, y, ty);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_nll(cudaStream_t s, uint32_t n, uint32_t classes,
                           const void *y, int ty, const int32_t *labels,
                           void *loss, int tl, unsigned *kerr)
{
    k_nll<<<1, DLB_CUDA_BLOCK, 0, s>>>(n, classes, y, ty, labels, loss, tl,
                                       kerr);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_nll_bwd(cudaStream_t s, uint32_t n, uint32_t classes,
                               const void *y, int ty, const int32_t *labels,
                               double f, void *dx, int tdx, unsigned *kerr)
{
    size_t total = (size_t)n * classes;
    k_nll_bwd<<<LAUNCH(total)>>>(n, classes, y, ty, labels, f, dx, tdx, kerr);
    return cudaGetLastError();
}

} // extern "C"
