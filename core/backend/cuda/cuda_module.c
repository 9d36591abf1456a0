/* The module's one exported symbol, and opening the backend: device,
 * stream, cuDNN and cuBLASLt handles, the small pinned areas, and the
 * options. The algorithm choice and TF32 come from the configuration
 * (dlb_backend_config.cudnn_search and tf32, API 1.3: the suite keys
 * cudnn.algo and cuda.tf32, which every record shows); where the caller
 * leaves them DLB_OPT_UNSET (programs that open the backend without a
 * suite: the GPU tests, tools) the environment decides:
 *   DLBENCH_CUDNN_ALGO = heuristic (default) | search
 *   DLBENCH_CUDA_TF32  = 0 (default: f32 is f32) | 1 (TF32 tensor cores
 *                        for f32 convolutions and GEMMs)
 *   DLBENCH_CUDA_ALLOC = cudamalloc (default: cudaMalloc and cudaFree on
 *                        every request, the design's baseline; cudaFree
 *                        waits for the device) | async (cudaMallocAsync on
 *                        the stream from CUDA's own pool, kept between
 *                        steps, as frameworks' caching allocators do);
 *                        ignored when the configuration's mempool plugin
 *                        gives the buffers (dlb_backend_config.device_alloc)
 * The allocator stays an environment variable: the mempool plugin is the
 * suite's way to change the allocator. */
#include "cuda.h"
#include "cuda_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct dlb_backend_core *dlb_cuda_core;

static dlb_status read_options(struct dlb_cuda *cu,
                               const struct dlb_backend_config *cfg,
                               char *reason, size_t len)
{
    const char *algo = getenv("DLBENCH_CUDNN_ALGO");
    const char *tf32 = getenv("DLBENCH_CUDA_TF32");
    const char *alloc = getenv("DLBENCH_CUDA_ALLOC");
    /* The configuration's choice wins: the environment is only read for
     * what it leaves unset. */
    if (cfg->cudnn_search != DLB_OPT_UNSET)
        algo = cfg->cudnn_search == DLB_OPT_ON ? "search" : "heuristic";
    if (cfg->tf32 != DLB_OPT_UNSET)
        tf32 = cfg->tf32 == DLB_OPT_ON ? "1" : "0";
    if (!algo || !*algo || !strcmp(algo, "heuristic"))
        cu->algo_mode = DLB_CUDA_ALGO_HEURISTIC;
    else if (!strcmp(algo, "search"))
        cu->algo_mode = DLB_CUDA_ALGO_SEARCH;
    else {
        snprintf(reason, len, "DLBENCH_CUDNN_ALGO='%s': expected heuristic or "
                 "search", algo);
        return DLB_ERR_INPUT;
    }
    if (!tf32 || !*tf32 || !strcmp(tf32, "0"))
        cu->tf32 = 0;
    else if (!strcmp(tf32, "1"))
        cu->tf32 = 1;
    else {
        snprintf(reason, len, "DLBENCH_CUDA_TF32='%s': expected 0 or 1", tf32);
        return DLB_ERR_INPUT;
    }
    if (!alloc || !*alloc || !strcmp(alloc, "cudamalloc"))
        cu->alloc_async = 0;
    else if (!strcmp(alloc, "async"))
        cu->alloc_async = 1;
    else {
        snprintf(reason, len, "DLBENCH_CUDA_ALLOC='%s': expected cudamalloc or "
                 "async", alloc);
        return DLB_ERR_INPUT;
    }
    return DLB_OK;
}

/* The device, and whether this build carries code it can run. */
static dlb_status pick_device(struct dlb_cuda *cu, int want, char *reason,
                              size_t len)
{
    int count = 0;
    cudaError_t e;
    if (!dlb_cuda_device_count(&count, reason, len))
        return DLB_ERR_UNSUPPORTED;
    if (want < 0 || want >= count) {
        snprintf(reason, len, "cuda: device %d asked for, %d present", want,
                 count);
        return DLB_ERR_UNSUPPORTED;
    }
    cu->device = want;
    if ((e = cudaSetDevice(want)) != cudaSuccess ||
        (e = cudaGetDeviceProperties(&cu->prop, want)) != cudaSuccess) {
        snprintf(reason, len, "cuda: device %d: %s", want, cudaGetErrorString(e));
        return DLB_ERR_RUNTIME;
    }
    if ((e = dlb_cuda_k_image_check()) != cudaSuccess) {
        snprintf(reason, len, "cuda: this build has no code for %s (sm_%d%d): "
                 "%s; rebuild with --with-cuda-arch naming it", cu->prop.name,
                 cu->prop.major, cu->prop.minor, cudaGetErrorString(e));
        (void)cudaGetLastError();
        return DLB_ERR_UNSUPPORTED;
    }
    return DLB_OK;
}

static dlb_status make_handles(struct dlb_cuda *cu, char *reason, size_t len)
{
    cudaError_t e;
    cudnnStatus_t ds;
    cublasStatus_t ls;
    const char *what = "cudaStreamCreate";
    if ((e = cudaStreamCreateWithFlags(&cu->stream, cudaStreamNonBlocking)) ||
        (what = "cuBLASLt workspace",
         e = dlb_cuda_mem_alloc(&cu->lt_ws, DLB_CUDA_LT_WORKSPACE)) ||
        (what = "check_finite flag", e = cudaMalloc((void **)&cu->flag_dev,
                                                    sizeof(int))) ||
        (e = cudaHostAlloc((void **)&cu->flag_host, sizeof(int),
                           cudaHostAllocDefault)) ||
        (what = "error word", e = cudaHostAlloc((void **)&cu->kerr,
                                                sizeof(unsigned),
                                                cudaHostAllocMapped)) ||
        (e = cudaHostGetDevicePointer((void **)&cu->kerr_dev, (void *)cu->kerr,
                                      0))) {
        snprintf(reason, len, "cuda: %s: %s", what, cudaGetErrorString(e));
        (void)cudaGetLastError();
        return e == cudaErrorMemoryAllocation ? DLB_ERR_NOMEM : DLB_ERR_RUNTIME;
    }
    *cu->kerr = 0;
    if (cu->alloc_async) {
        /* Keep freed blocks in the pool across synchronisations: without
         * this the pool returns them to the device at every sync. */
        cudaMemPool_t pool;
        uint64_t keep = UINT64_MAX;
        int ok = 0;
        cudaDeviceGetAttribute(&ok, cudaDevAttrMemoryPoolsSupported, cu->device);
        if (!ok || cudaDeviceGetDefaultMemPool(&pool, cu->device) != cudaSuccess ||
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
                                    &keep) != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(reason, len, "cuda: DLBENCH_CUDA_ALLOC=async: %s has no "
                     "usable stream-ordered memory pool", cu->prop.name);
            return DLB_ERR_UNSUPPORTED;
        }
    }
    if ((ds = cudnnCreate(&cu->dnn)) ||
        (ds = cudnnSetStream(cu->dnn, cu->stream)) ||
        (ds = cudnnCreateTensorDescriptor(&cu->bn_x)) ||
        (ds = cudnnCreateTensorDescriptor(&cu->bn_p))) {
        snprintf(reason, len, "cuda: cuDNN: %s", cudnnGetErrorString(ds));
        return ds == CUDNN_STATUS_ALLOC_FAILED ? DLB_ERR_NOMEM : DLB_ERR_RUNTIME;
    }
    if ((ls = cublasLtCreate(&cu->lt))) {
        snprintf(reason, len, "cuda: cublasLtCreate: status %d", (int)ls);
        return DLB_ERR_RUNTIME;
    }
    return DLB_OK;
}

dlb_status dlb_cuda_create(const struct dlb_backend_core *core,
                           const struct dlb_backend_config *cfg,
                           struct dlb_backend **out, char *reason, size_t len)
{
    struct dlb_cuda *cu;
    dlb_status s;
    *out = NULL;
    if (!core || core->struct_size < sizeof *core) {
        snprintf(reason, len, "cuda: the core lends an older helper table: "
                 "rebuild the module with this dlbench");
        return DLB_ERR_INTERNAL;
    }
    dlb_cuda_core = core;
    if (!(cu = calloc(1, sizeof *cu))) {
        snprintf(reason, len, "out of memory opening backend cuda");
        return DLB_ERR_NOMEM;
    }
    /* Handles are built on a scratch handle first: the ops table's destroy
     * needs one to tear down whatever part was made. */
    struct dlb_backend tmp = { .ops = &dlb_cuda_ops, .ctx = cu };
    cu->seed = cfg->seed;
    /* A pool's memory (API 1.2): both entries or neither. */
    if (cfg->device_alloc && cfg->device_free) {
        cu->device_alloc = cfg->device_alloc;
        cu->device_free = cfg->device_free;
        cu->alloc_ctx = cfg->alloc_ctx;
    }
    if ((s = read_options(cu, cfg, reason, len)) ||
        (s = pick_device(cu, cfg->device, reason, len)) ||
        (s = make_handles(cu, reason, len))) {
        dlb_cuda_ops.destroy(&tmp);
        return s;
    }
    if (cu->algo_mode == DLB_CUDA_ALGO_SEARCH)
        dlb_cuda_algo_cache_open(cu);
    if ((s = core->backend_new(&dlb_cuda_ops, cu, out, reason, len)))
        dlb_cuda_ops.destroy(&tmp);
    return s;
}

static const struct dlb_backend_module module = {
    .struct_size = sizeof(struct dlb_backend_module),
    .api_major = DLB_BACKEND_API_MAJOR,
    .api_minor = DLB_BACKEND_API_MINOR,
    .name = "cuda",
    .probe = dlb_cuda_probe,
    .create = dlb_cuda_create,
    .raw_alloc = dlb_cuda_raw_alloc,
    .raw_free = dlb_cuda_raw_free,
};

const struct dlb_backend_module *dlb_backend_module_entry(void);

const struct dlb_backend_module *dlb_backend_module_entry(void)
{
    return &module;
}
