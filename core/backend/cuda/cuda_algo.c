/* Choosing a cuDNN convolution algorithm per shape and direction.
 *
 * heuristic (the default): cuDNN's own ranking (cudnnGet*Algorithm_v7),
 *   the first algorithm that runs with this descriptor, keeps the math
 *   the configuration allows, and needs at most DLB_CUDA_DNN_WORKSPACE_MAX.
 * search (DLBENCH_CUDNN_ALGO=search, as cudnn.benchmark in common
 *   frameworks): cudnnFind*AlgorithmEx times every candidate once on the
 *   operands at hand; the fastest is kept in the cache file
 *   (cuda_algo_cache.c) keyed by GPU, cuDNN version and shape, and reused
 *   by later runs without timing again.
 *
 * The math type follows the choice (cuDNN decides tensor-core use from
 * algorithm and math type together), except for strict fp32 (TF32 off),
 * where the descriptor keeps CUDNN_FMA_MATH whatever a ranking says. */
#include "cuda.h"
#include "cuda_algo_cache.h"

#include <stdio.h>

#define MAX_CANDS 16

struct cand {
    int algo;
    cudnnStatus_t status;
    size_t memory;
    cudnnMathType_t math;
};

static const char *const dir_names[3] = { "fwd", "bwd_data", "bwd_filter" };

static int strict_fp32(const struct dlb_cuda *cu, enum dlb_dtype t)
{
    return t == DLB_F32 && !cu->tf32;
}

static cudnnMathType_t math_for(const struct dlb_cuda *cu, enum dlb_dtype t,
                                cudnnMathType_t chosen)
{
    return strict_fp32(cu, t) ? CUDNN_FMA_MATH : chosen;
}

/* f32 never runs on f16 conversions (ALLOW_CONVERSION), and on tensor
 * cores (TF32) only when allowed. */
static int math_allowed(const struct dlb_cuda *cu, enum dlb_dtype t,
                        cudnnMathType_t m)
{
    if (t != DLB_F32)
        return 1;
    if (m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
        return 0;
    return !strict_fp32(cu, t) || m != CUDNN_TENSOR_OP_MATH;
}

/* The workspace algorithm `algo` needs with the descriptor as set. */
static cudnnStatus_t ws_size(struct dlb_cuda *cu, struct dlb_cuda_conv_descs *dd,
                             enum dlb_cuda_conv_dir dir, int algo, size_t *out)
{
    switch (dir) {
    case DLB_CUDA_FWD:
        return cudnnGetConvolutionForwardWorkspaceSize(
            cu->dnn, dd->x, dd->w, dd->conv[dir], dd->y,
            (cudnnConvolutionFwdAlgo_t)algo, out);
    case DLB_CUDA_BWD_DATA:
        return cudnnGetConvolutionBackwardDataWorkspaceSize(
            cu->dnn, dd->w, dd->y, dd->conv[dir], dd->x,
            (cudnnConvolutionBwdDataAlgo_t)algo, out);
    case DLB_CUDA_BWD_FILTER:
        break;
    }
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(
        cu->dnn, dd->x, dd->y, dd->conv[dir], dd->w,
        (cudnnConvolutionBwdFilterAlgo_t)algo, out);
}

/* Fix the descriptor's math for `algo` and read its workspace size. */
static dlb_status settle(struct dlb_backend *be, enum dlb_dtype t,
                         struct dlb_cuda_conv_descs *dd,
                         enum dlb_cuda_conv_dir dir, int algo,
                         cudnnMathType_t math, struct dlb_cuda_algo *out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    out->algo = algo;
    out->math = math_for(cu, t, math);
    if ((s = dlb_cuda_dnn_check(be, cudnnSetConvolutionMathType(dd->conv[dir],
                                                                out->math),
                                dir_names[dir], "cudnnSetConvolutionMathType")))
        return s;
    return dlb_cuda_dnn_check(be, ws_size(cu, dd, dir, algo, &out->ws_bytes),
                              dir_names[dir], "workspace size");
}

#define COPY_CANDS(perf, n, c)                                              \
    for (int i_ = 0; i_ < (n); i_++) {                                      \
        (c)[i_].algo = (int)(perf)[i_].algo;                                \
        (c)[i_].status = (perf)[i_].status;                                 \
        (c)[i_].memory = (perf)[i_].memory;                                 \
        (c)[i_].math = (perf)[i_].mathType;                                 \
    }

/* cuDNN's ranking, best first. */
static cudnnStatus_t rank(struct dlb_cuda *cu, struct dlb_cuda_conv_descs *dd,
                          enum dlb_cuda_conv_dir dir, struct cand *c, int *n)
{
    cudnnStatus_t st;
    *n = 0;
    if (dir == DLB_CUDA_FWD) {
        cudnnConvolutionFwdAlgoPerf_t p[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        st = cudnnGetConvolutionForwardAlgorithm_v7(cu->dnn, dd->x, dd->w,
                                                    dd->conv[dir], dd->y,
                                                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                    n, p);
        COPY_CANDS(p, *n, c)
    } else if (dir == DLB_CUDA_BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t p[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        st = cudnnGetConvolutionBackwardDataAlgorithm_v7(
            cu->dnn, dd->w, dd->y, dd->conv[dir], dd->x,
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, n, p);
        COPY_CANDS(p, *n, c)
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t p[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        st = cudnnGetConvolutionBackwardFilterAlgorithm_v7(
            cu->dnn, dd->x, dd->y, dd->conv[dir], dd->w,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, n, p);
        COPY_CANDS(p, *n, c)
    }
    return st;
}

/* Time every candidate on the operands (fastest first). */
static cudnnStatus_t find(struct dlb_cuda *cu, struct dlb_cuda_conv_descs *dd,
                          enum dlb_cuda_conv_dir dir, const void *a,
                          const void *b, void *c_out, void *ws, size_t ws_bytes,
                          struct cand *c, int *n)
{
    cudnnStatus_t st;
    *n = 0;
    if (dir == DLB_CUDA_FWD) {
        cudnnConvolutionFwdAlgoPerf_t p[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        st = cudnnFindConvolutionForwardAlgorithmEx(
            cu->dnn, dd->x, a, dd->w, b, dd->conv[dir], dd->y, c_out,
            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, n, p, ws, ws_bytes);
        COPY_CANDS(p, *n, c)
    } else if (dir == DLB_CUDA_BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t p[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        st = cudnnFindConvolutionBackwardDataAlgorithmEx(
            cu->dnn, dd->w, a, dd->y, b, dd->conv[dir], dd->x, c_out,
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, n, p, ws, ws_bytes);
        COPY_CANDS(p, *n, c)
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t p[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        st = cudnnFindConvolutionBackwardFilterAlgorithmEx(
            cu->dnn, dd->x, a, dd->y, b, dd->conv[dir], dd->w, c_out,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, n, p, ws, ws_bytes);
        COPY_CANDS(p, *n, c)
    }
    return st;
}

/* The first usable candidate, settled on the descriptor. */
static dlb_status pick(struct dlb_backend *be, enum dlb_dtype t,
                       struct dlb_cuda_conv_descs *dd,
                       enum dlb_cuda_conv_dir dir, const struct cand *c, int n,
                       size_t ws_limit, struct dlb_cuda_algo *out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    for (int i = 0; i < n; i++) {
        if (c[i].status != CUDNN_STATUS_SUCCESS || !math_allowed(cu, t, c[i].math))
            continue;
        if (settle(be, t, dd, dir, c[i].algo, c[i].math, out) != DLB_OK ||
            out->ws_bytes > ws_limit)
            continue;
        return DLB_OK;
    }
    return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda conv2d %s: cuDNN offers "
                         "no algorithm for this shape in %s%s within %zu MiB "
                         "of workspace", dir_names[dir],
                         t == DLB_F32 ? "f32" : t == DLB_F16 ? "f16" : "bf16",
                         strict_fp32(cu, t) ? " with FMA math (TF32 off)" : "",
                         ws_limit >> 20);
}

static dlb_status search(struct dlb_backend *be, const struct dlb_conv2d_desc *d,
                         enum dlb_dtype t, struct dlb_cuda_conv_descs *dd,
                         enum dlb_cuda_conv_dir dir, const void *a,
                         const void *b, void *c_out, struct dlb_cuda_algo *out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct cand c[MAX_CANDS];
    size_t ws_bytes = DLB_CUDA_DNN_WORKSPACE_MAX;
    void *ws = NULL;
    int n = 0;
    dlb_status s;
    if (dlb_cuda_algo_cache_get(cu, d, t, dir, &out->algo, &out->math))
        return settle(be, t, dd, dir, out->algo, out->math, out);
    /* The search's workspace: as much as an algorithm may use, less when
     * the device is short of memory (algorithms that need more are then
     * not timed). */
    while ((s = dlb_cuda_dnn_workspace(be, ws_bytes, &ws)) == DLB_ERR_NOMEM &&
           ws_bytes > ((size_t)16 << 20))
        ws_bytes /= 4;
    if (s != DLB_OK)
        return s;
    if ((s = dlb_cuda_dnn_check(be, find(cu, dd, dir, a, b, c_out, ws, ws_bytes,
                                         c, &n),
                                dir_names[dir], "timing the algorithms")) ||
        (s = pick(be, t, dd, dir, c, n, ws_bytes, out)))
        return s;
    dlb_cuda_algo_cache_put(cu, d, t, dir, out->algo, out->math);
    return DLB_OK;
}

dlb_status dlb_cuda_algo_choose(struct dlb_backend *be,
                                const struct dlb_conv2d_desc *d,
                                enum dlb_dtype t,
                                struct dlb_cuda_conv_descs *dd,
                                enum dlb_cuda_conv_dir dir, const void *a,
                                const void *b, void *c_out,
                                struct dlb_cuda_algo *out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct cand c[MAX_CANDS];
    int n = 0;
    dlb_status s;
    if (cu->algo_mode == DLB_CUDA_ALGO_SEARCH)
        return search(be, d, t, dd, dir, a, b, c_out, out);
    if ((s = dlb_cuda_dnn_check(be, rank(cu, dd, dir, c, &n), dir_names[dir],
                                "algorithm heuristics")))
        return s;
    return pick(be, t, dd, dir, c, n, DLB_CUDA_DNN_WORKSPACE_MAX, out);
}

enum dlb_fast_algo dlb_cuda_algo_fewer_flops(enum dlb_cuda_conv_dir dir, int algo)
{
    if (dir == DLB_CUDA_FWD) {
        switch ((cudnnConvolutionFwdAlgo_t)algo) {
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD:
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
            return DLB_FAST_ALGO_WINOGRAD;
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT:
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING:
            return DLB_FAST_ALGO_FFT;
        default:
            return DLB_FAST_ALGO_NONE;
        }
    }
    if (dir == DLB_CUDA_BWD_DATA) {
        switch ((cudnnConvolutionBwdDataAlgo_t)algo) {
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD:
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED:
            return DLB_FAST_ALGO_WINOGRAD;
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT:
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING:
            return DLB_FAST_ALGO_FFT;
        default:
            return DLB_FAST_ALGO_NONE;
        }
    }
    switch ((cudnnConvolutionBwdFilterAlgo_t)algo) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED:
        return DLB_FAST_ALGO_WINOGRAD;
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT:
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING:
        return DLB_FAST_ALGO_FFT;
    default:
        return DLB_FAST_ALGO_NONE;
    }
}
