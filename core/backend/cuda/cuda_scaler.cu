// The gradient scaler's kernels: unscale with the inf/NaN check in one
// pass, and the SGD step that the device skips by the flag, so that a
// step with dynamic loss scaling needs no answer from the host.
#include "cuda_kernels.h"
#include "cuda_dev.cuh"

#include <math.h>

// The product in float, as the scale kernel computes it, then checked as
// stored: the host path (scale, then check_finite) sees the same values.
__global__ void k_unscale_check(size_t n, void *p, int t, float inv,
                                int32_t *flag)
{
    int bad = 0;
    DLB_CUDA_FOR(i, n) {
        if (inv != 1.0f)
            dlb_dev_st(p, t, i, dlb_dev_ld(p, t, i) * inv);
        bad |= !isfinite(dlb_dev_ld(p, t, i));
    }
    if (bad)
        *flag = 1; // every writer writes the same value: no atomic needed
}

// Every thread reads the flag once; a skipped step costs one launch.
__global__ void k_sgd_if(size_t n, void *w, int tw, const void *g, int tg,
                         void *v, int tv, float lr, float momentum, float wd,
                         const int32_t *flag)
{
    if (*flag)
        return;
    DLB_CUDA_FOR(i, n)
        dlb_dev_sgd(w, tw, g, tg, v, tv, i, lr, momentum, wd);
}

extern "C" {

#define LAUNCH(n) dlb_cuda_blocks(n), DLB_CUDA_BLOCK, 0, s

cudaError_t dlb_cuda_k_unscale_check(cudaStream_t s, size_t n, void *p, int t,
                                     float inv, int32_t *flag)
{
    k_unscale_check<<<LAUNCH(n)>>>(n, p, t, inv, flag);
    return cudaGetLastError();
}

cudaError_t dlb_cuda_k_sgd_if(cudaStream_t s, size_t n, void *w, int tw,
                              const void *g, int tg, void *v, int tv, float lr,
                              float momentum, float weight_decay,
                              const int32_t *flag)
{
    k_sgd_if<<<LAUNCH(n)>>>(n, w, tw, g, tg, v, tv, lr, momentum, weight_decay,
                            flag);
    return cudaGetLastError();
}

} // extern "C"
