/* The cuda backend's handle: teardown, capabilities, the device record,
 * and the operation table. */
#include "cuda.h"

#include <cusparse.h>
#include <nccl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dlb_cuda_destroy(struct dlb_backend *be)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    if (!cu)
        return;
    if (cu->stream)
        cudaStreamSynchronize(cu->stream);
    dlb_cuda_conv_cache_free(cu);
    dlb_cuda_gemm_cache_free(cu);
    dlb_cuda_int8_cache_free(cu);
    dlb_cuda_sparse_free(cu);
    dlb_cuda_algo_cache_free(cu);
    if (cu->bn_x)
        cudnnDestroyTensorDescriptor(cu->bn_x);
    if (cu->bn_p)
        cudnnDestroyTensorDescriptor(cu->bn_p);
    /* Only what was made: after a failed open there may be no driver to
     * ask at all. */
    for (int i = 0; i < DLB_CUDA_SCRATCH_SLOTS; i++)
        dlb_cuda_mem_free(cu->scratch[i], cu->scratch_bytes[i]);
    dlb_cuda_mem_free(cu->dnn_ws, cu->dnn_ws_bytes);
    dlb_cuda_mem_free(cu->lt_ws, DLB_CUDA_LT_WORKSPACE);
    dlb_cuda_scaler_free(cu);
    dlb_cuda_retired_free(cu); /* graphs were destroyed before */
    if (cu->flag_dev)
        cudaFree(cu->flag_dev);
    if (cu->flag_host)
        cudaFreeHost(cu->flag_host);
    if (cu->kerr)
        cudaFreeHost((void *)cu->kerr);
    if (cu->lt)
        cublasLtDestroy(cu->lt);
    if (cu->dnn)
        cudnnDestroy(cu->dnn);
    if (cu->copy_stream) /* uploads were destroyed before */
        cudaStreamDestroy(cu->copy_stream);
    if (cu->stream)
        cudaStreamDestroy(cu->stream);
    free(cu);
    be->ctx = NULL;
}

dlb_status dlb_cuda_supports(struct dlb_backend *be, enum dlb_backend_cap cap,
                             char *reason, size_t len)
{
    const struct cudaDeviceProp *p = &dlb_cuda_of(be)->prop;
    switch (cap) {
    case DLB_CAP_F16:
    case DLB_CAP_BF16:
        /* The build carries sm_80 and newer code (create checked that this
         * device runs it): tensor cores for both 16-bit types. */
        if (p->major >= 8)
            return DLB_OK;
        snprintf(reason, len, "%s (sm_%d%d) has no bf16 tensor cores; this "
                 "backend needs sm_80 or newer for 16-bit types", p->name,
                 p->major, p->minor);
        return DLB_ERR_UNSUPPORTED;
    case DLB_CAP_INT8:
        /* cuBLASLt's IMMA kernels, or the dp4a fallback (sm_61 and newer):
         * every device this build runs on has both. */
        return DLB_OK;
    case DLB_CAP_MULTI_DEVICE:
        snprintf(reason, len, "cuda drives one GPU per process; several GPUs "
                 "need the dp plugin's NCCL executor, which does not exist yet");
        return DLB_ERR_UNSUPPORTED;
    case DLB_CAP_COUNT:
        break;
    }
    snprintf(reason, len, "unknown capability %d", (int)cap);
    return DLB_ERR_UNSUPPORTED;
}

/* A record field, cut at its size (a long GPU name must not fail). */
static void set_field(char *dst, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_field(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

/* "13.0" from CUDA's 13000. */
static void cuda_version(char *out, size_t len, int v)
{
    snprintf(out, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* "9.10.2" from cuDNN's and cuBLASLt's 91002 (major * 10000 + ...). */
static void lib_version(char *out, size_t len, size_t v)
{
    snprintf(out, len, "%zu.%zu.%zu", v / 10000, (v / 100) % 100, v % 100);
}

static void set_lib(struct dlb_device_info *out, int i, const char *name,
                    const char *version)
{
    set_field(out->libs[i].name, sizeof out->libs[i].name, "%s", name);
    set_field(out->libs[i].version, sizeof out->libs[i].version, "%s",
              version);
}

/* The name is the device's own; compute capability, SMs and every library
 * version have fields of their own (API 1.2), and the driver field says
 * them all in one line for logs. */
dlb_status dlb_cuda_device_info(struct dlb_backend *be,
                                struct dlb_device_info *out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    const struct cudaDeviceProp *p = &cu->prop;
    int drv = 0, rt = 0, nccl = 0, count = 0;
    size_t free_b = 0, total_b = 0;
    size_t dnn = cudnnGetVersion(), lt = cublasLtGetVersion();
    char d[16], r[16], dv[32], lv[32], nv[32], sv[32];
    int sp[3] = { 0, 0, 0 };
    memset(out, 0, sizeof *out);
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cudaGetDeviceCount(&count);
    if (ncclGetVersion(&nccl) != ncclSuccess)
        nccl = 0;
    cuda_version(d, sizeof d, drv);
    cuda_version(r, sizeof r, rt);
    lib_version(dv, sizeof dv, dnn);
    lib_version(lv, sizeof lv, lt);
    /* NCCL's code is major * 10000 + minor * 100 + patch since 2.9. */
    lib_version(nv, sizeof nv, (size_t)nccl);
    /* cuSPARSE gives its version without a handle, part by part. */
    if (cusparseGetProperty(MAJOR_VERSION, &sp[0]) != CUSPARSE_STATUS_SUCCESS ||
        cusparseGetProperty(MINOR_VERSION, &sp[1]) != CUSPARSE_STATUS_SUCCESS ||
        cusparseGetProperty(PATCH_LEVEL, &sp[2]) != CUSPARSE_STATUS_SUCCESS)
        sv[0] = '\0';
    else
        snprintf(sv, sizeof sv, "%d.%d.%d", sp[0], sp[1], sp[2]);
    set_field(out->name, sizeof out->name, "%s", p->name);
    set_field(out->arch, sizeof out->arch, "%d.%d", p->major, p->minor);
    set_lib(out, 0, "driver", d);
    set_lib(out, 1, "runtime", r);
    set_lib(out, 2, "cudnn", dv);
    set_lib(out, 3, "cublaslt", lv);
    set_lib(out, 4, "nccl", nccl ? nv : "");
    set_lib(out, 5, "cusparse", sv);
    set_field(out->driver, sizeof out->driver,
             "CUDA %s/%s cuDNN %s cuBLASLt %s NCCL %s", d, r, dv, lv,
             nccl ? nv : "none");
    dlb_cuda_mem_figures(&out->mem_held, &out->mem_held_peak,
                         &out->mem_used_peak);
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
        out->mem_total = total_b;
        out->mem_free = free_b;
    } else {
        (void)cudaGetLastError();
        out->mem_total = p->totalGlobalMem;
    }
    out->device_count = count;
    out->compute_units = p->multiProcessorCount;
    return DLB_OK;
}

DLB_CUDA_KFN(DLB_KFN_RUN)

/* One kernel per kind and propagation, each today's cuDNN, cuBLASLt or
 * own-kernel function: a list to grow with kernels for shapes they serve
 * badly. */
static const struct dlb_kernel cuda_kernels[] = {
    DLB_CUDA_KFN(DLB_KFN_KERNEL)
    {"cuda", DLB_OP_ADD, DLB_PROPS(DLB_PROP_NONE), NULL, dlb_cuda_add},
    {"cuda", DLB_OP_CONCAT, DLB_PROPS_FWD | DLB_PROPS(DLB_PROP_BWD), NULL,
     dlb_cuda_concat},
};

const struct dlb_backend_ops dlb_cuda_ops = {
    DLB_OPS_HEAD(cuda),
    DLB_CUDA_DEVICE(DLB_OP_ENTRY)
    .kernels = cuda_kernels,
    .n_kernels = sizeof cuda_kernels / sizeof cuda_kernels[0],
};
