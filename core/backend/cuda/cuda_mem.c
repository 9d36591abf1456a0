/* Device memory, copies, the stream's synchronisation, CUDA-event timers,
 * scratch areas, and the mapping of CUDA, cuDNN and cuBLAS errors to
 * statuses. Buffers come from cudaMalloc on every request, the baseline
 * the design names, or with DLBENCH_CUDA_ALLOC=async from CUDA's
 * stream-ordered pool; when the caller gives device_alloc (the mempool
 * plugin's pool over this module's raw segments), from there. */
#include "cuda.h"
#include "cuda_kernels.h"
#include "../dtype.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

dlb_status dlb_cuda_fail(struct dlb_backend *be, dlb_status s,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->reason, sizeof be->reason, fmt, ap);
    va_end(ap);
    return s;
}

dlb_status dlb_cuda_check(struct dlb_backend *be, cudaError_t e,
                          const char *op, const char *what)
{
    if (e == cudaSuccess)
        return DLB_OK;
    (void)cudaGetLastError(); /* a failed allocation is not sticky */
    if (e == cudaErrorMemoryAllocation) {
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda %s: %s: out of device "
                             "memory (%.0f MiB of %.0f MiB free)", op, what,
                             (double)free_b / 1048576.0,
                             (double)total_b / 1048576.0);
    }
    return dlb_cuda_fail(be, DLB_ERR_RUNTIME, "cuda %s: %s: %s (%s)", op, what,
                         cudaGetErrorString(e), cudaGetErrorName(e));
}

dlb_status dlb_cuda_dnn_check(struct dlb_backend *be, cudnnStatus_t st,
                              const char *op, const char *what)
{
    dlb_status s;
    switch (st) {
    case CUDNN_STATUS_SUCCESS: return DLB_OK;
    case CUDNN_STATUS_ALLOC_FAILED: s = DLB_ERR_NOMEM; break;
    case CUDNN_STATUS_NOT_SUPPORTED: s = DLB_ERR_UNSUPPORTED; break;
    default: s = DLB_ERR_RUNTIME; break;
    }
    return dlb_cuda_fail(be, s, "cuda %s: %s: cuDNN %s", op, what,
                         cudnnGetErrorString(st));
}

dlb_status dlb_cuda_lt_check(struct dlb_backend *be, cublasStatus_t st,
                             const char *op, const char *what)
{
    dlb_status s;
    switch (st) {
    case CUBLAS_STATUS_SUCCESS: return DLB_OK;
    case CUBLAS_STATUS_ALLOC_FAILED: s = DLB_ERR_NOMEM; break;
    case CUBLAS_STATUS_NOT_SUPPORTED: s = DLB_ERR_UNSUPPORTED; break;
    default: s = DLB_ERR_RUNTIME; break;
    }
    return dlb_cuda_fail(be, s, "cuda %s: %s: cuBLASLt status %d", op, what,
                         (int)st);
}

dlb_status dlb_cuda_buffer_alloc(struct dlb_backend *be, enum dlb_dtype dtype,
                                 size_t count, struct dlb_buffer **out)
{
    size_t esz = dlb_dtype_size(dtype);
    dlb_status s;
    *out = NULL;
    if (!esz)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda: unknown dtype %d",
                             (int)dtype);
    if (count > SIZE_MAX / esz)
        return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda: %zu elements of %s "
                             "overflow size_t", count, dlb_dtype_name(dtype));
    struct dlb_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda: out of host memory");
    b->dtype = dtype;
    b->count = count;
    b->bytes = count * esz;
    /* cudaMalloc(0) gives NULL; one byte keeps every buffer addressable. */
    struct dlb_cuda *cu = dlb_cuda_of(be);
    size_t want = b->bytes ? b->bytes : 1;
    if (cu->graph_on) {
        /* Between graph_begin and graph_end: the graph's own blocks. */
        s = dlb_cuda_graph_mem_take(be, want, &b->data, &b->impl);
    } else if (cu->device_alloc) {
        b->data = cu->device_alloc(cu->alloc_ctx, want);
        s = b->data ? DLB_OK
                    : dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda buffer_alloc: %s: "
                                    "the memory pool has no device memory "
                                    "left", dlb_dtype_name(dtype));
    } else if (cu->alloc_async) {
        s = dlb_cuda_check(be, cudaMallocAsync(&b->data, want, cu->stream),
                           "buffer_alloc", dlb_dtype_name(dtype));
        if (s == DLB_OK)
            dlb_cuda_mem_count(want, 1);
    } else {
        s = dlb_cuda_check(be, dlb_cuda_mem_alloc(&b->data, want),
                           "buffer_alloc", dlb_dtype_name(dtype));
    }
    if (s != DLB_OK) {
        char why[sizeof be->reason];
        snprintf(why, sizeof why, "%s", be->reason);
        dlb_cuda_fail(be, s, "%s, asking for %zu bytes", why, b->bytes);
        free(b);
        return s;
    }
    *out = b;
    return DLB_OK;
}

void dlb_cuda_buffer_free(struct dlb_backend *be, struct dlb_buffer *b)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    if (!b)
        return;
    /* cudaFree waits for the device, so no kernel still uses the memory;
     * cudaFreeAsync hands it back in stream order, which is as safe with
     * one stream, and so does a pool that keeps the block for this
     * stream (backend.h, device_alloc). */
    size_t had = b->bytes ? b->bytes : 1;
    if (b->impl) {
        /* A graph's block: kept for its replays (cuda_graph_mem.c). */
        dlb_cuda_graph_mem_give(b->impl, b->data);
        free(b);
        return;
    }
    if (dlb_cuda_graph_defer(cu, b))
        return; /* cudaFree under a capture would break it */
    if (cu->device_alloc) {
        cu->device_free(cu->alloc_ctx, b->data, had);
    } else if (cu->alloc_async) {
        dlb_cuda_mem_count(had, 0);
        cudaFreeAsync(b->data, cu->stream);
    } else {
        dlb_cuda_mem_free(b->data, had);
    }
    free(b);
}

static dlb_status range(struct dlb_backend *be, const char *op,
                        const struct dlb_buffer *b, size_t off, size_t bytes)
{
    if (!b || off > b->bytes || bytes > b->bytes - off)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: bytes [%zu, %zu "
                             "+ %zu) outside a buffer of %zu", op, off, off,
                             bytes, b ? b->bytes : 0);
    return DLB_OK;
}

/* From pageable memory, cudaMemcpyAsync returns once the data is staged:
 * the caller may reuse its memory at once, as backend.h requires. */
dlb_status dlb_cuda_copy_from_host(struct dlb_backend *be,
                                   struct dlb_buffer *dst, size_t off,
                                   const void *src, size_t bytes)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s = range(be, "copy_from_host", dst, off, bytes);
    /* A capture would keep the host pointer, not the data. */
    if (!s)
        s = dlb_cuda_not_capturing(be, "copy_from_host");
    if (s || !bytes)
        return s;
    return dlb_cuda_check(be, cudaMemcpyAsync((char *)dst->data + off, src,
                                              bytes, cudaMemcpyHostToDevice,
                                              cu->stream),
                          "copy_from_host", "cudaMemcpyAsync");
}

dlb_status dlb_cuda_copy_to_host(struct dlb_backend *be, void *dst,
                                 const struct dlb_buffer *src, size_t off,
                                 size_t bytes)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s = range(be, "copy_to_host", src, off, bytes);
    if (!s)
        s = dlb_cuda_not_capturing(be, "copy_to_host");
    if (s || !bytes)
        return s;
    s = dlb_cuda_check(be, cudaMemcpyAsync(dst, (const char *)src->data + off,
                                           bytes, cudaMemcpyDeviceToHost,
                                           cu->stream),
                       "copy_to_host", "cudaMemcpyAsync");
    return s ? s : dlb_cuda_wait(be, "copy_to_host");
}

dlb_status dlb_cuda_copy(struct dlb_backend *be, struct dlb_buffer *dst,
                         size_t doff, const struct dlb_buffer *src,
                         size_t soff, size_t bytes)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    char *d;
    const char *sp;
    dlb_status s;
    if ((s = range(be, "copy", dst, doff, bytes)) ||
        (s = range(be, "copy", src, soff, bytes)) || !bytes)
        return s;
    d = (char *)dst->data + doff;
    sp = (const char *)src->data + soff;
    /* cudaMemcpy's overlapping copies are undefined; ref's are memmove. */
    if (d < sp + bytes && sp < d + bytes) {
        void *tmp = NULL;
        if ((s = dlb_cuda_scratch(be, 0, bytes, &tmp)) ||
            (s = dlb_cuda_check(be, cudaMemcpyAsync(tmp, sp, bytes,
                                                    cudaMemcpyDeviceToDevice,
                                                    cu->stream),
                                "copy", "overlapping copy")))
            return s;
        sp = tmp;
    }
    return dlb_cuda_check(be, cudaMemcpyAsync(d, sp, bytes,
                                              cudaMemcpyDeviceToDevice,
                                              cu->stream),
                          "copy", "cudaMemcpyAsync");
}

dlb_status dlb_cuda_wait(struct dlb_backend *be, const char *op)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s = dlb_cuda_not_capturing(be, op);
    unsigned bits;
    if (s != DLB_OK)
        return s;
    s = dlb_cuda_check(be, cudaStreamSynchronize(cu->stream), op,
                       "waiting for the stream");
    if (s != DLB_OK)
        return s;
    bits = *cu->kerr;
    if (!bits)
        return DLB_OK;
    *cu->kerr = 0;
    return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: a kernel reported "
                         "%s%s%s", op,
                         bits & DLB_CUDA_KERR_LABEL
                             ? "a label outside [0, classes) (nll_loss or "
                               "logsoftmax_nll_bwd) "
                             : "",
                         bits & DLB_CUDA_KERR_POOL_WS
                             ? "a max-pool workspace index outside the input "
                               "plane (pool_bwd) "
                             : "",
                         bits & DLB_CUDA_KERR_CSR
                             ? "a CSR structure whose row_ptr does not run "
                               "from 0 to nnz or whose columns do not ascend "
                               "below in (csr_linear_fwd)"
                             : "");
}

dlb_status dlb_cuda_synchronize(struct dlb_backend *be)
{
    return dlb_cuda_wait(be, "synchronize");
}

/* Grow `*p` (of `*have` bytes) to `want`; cudaFree waits for the device,
 * so no enqueued work still reads the old area. */
static dlb_status grow(struct dlb_backend *be, void **p, size_t *have,
                       size_t want, const char *what)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    if (*have >= want && *p)
        return DLB_OK;
    /* A capture records the address; the warm-up run sized the area. */
    if (cu->capturing)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda graph capture: the "
                             "%s would grow from %zu to %zu bytes; the step's "
                             "warm-up (graph_begin with capture 0) did not "
                             "need it", what, *have, want);
    /* A graph may still replay with the old area: keep it until the last
     * graph goes. */
    if (*p && cu->graphs_live)
        dlb_cuda_retire(cu, *p, *have);
    else
        dlb_cuda_mem_free(*p, *have);
    *p = NULL;
    *have = 0;
    want = want ? want : 1;
    /* a little headroom: shapes that grow by a few elements do not
     * reallocate every time */
    want += want / 8;
    if ((s = dlb_cuda_check(be, dlb_cuda_mem_alloc(p, want), "scratch", what)))
        return s;
    *have = want;
    return DLB_OK;
}

dlb_status dlb_cuda_scratch(struct dlb_backend *be, int slot, size_t bytes,
                            void **out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    if (slot < 0 || slot >= DLB_CUDA_SCRATCH_SLOTS)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda: scratch slot %d",
                             slot);
    s = grow(be, &cu->scratch[slot], &cu->scratch_bytes[slot], bytes,
             "operand in the compute type");
    *out = cu->scratch[slot];
    return s;
}

dlb_status dlb_cuda_dnn_workspace(struct dlb_backend *be, size_t bytes,
                                  void **out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s = DLB_OK;
    *out = NULL;
    if (!bytes)
        return DLB_OK;
    s = grow(be, &cu->dnn_ws, &cu->dnn_ws_bytes, bytes, "cuDNN workspace");
    *out = cu->dnn_ws;
    return s;
}

dlb_status dlb_cuda_timer_create(struct dlb_backend *be, struct dlb_timer **out)
{
    struct dlb_timer *t = calloc(1, sizeof *t);
    dlb_status s;
    *out = NULL;
    if (!t)
        return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda: out of host memory");
    if ((s = dlb_cuda_check(be, cudaEventCreate(&t->start), "timer_create",
                            "cudaEventCreate")) ||
        (s = dlb_cuda_check(be, cudaEventCreate(&t->stop), "timer_create",
                            "cudaEventCreate"))) {
        if (t->start)
            cudaEventDestroy(t->start);
        free(t);
        return s;
    }
    *out = t;
    return DLB_OK;
}

void dlb_cuda_timer_destroy(struct dlb_backend *be, struct dlb_timer *t)
{
    (void)be;
    if (!t)
        return;
    cudaEventDestroy(t->start);
    cudaEventDestroy(t->stop);
    free(t);
}

/* Under a capture an event record marks a dependency and takes no time
 * at replay: refused rather than read as zero later. */
dlb_status dlb_cuda_timer_start(struct dlb_backend *be, struct dlb_timer *t)
{
    dlb_status s = dlb_cuda_not_capturing(be, "timer_start");
    if (s != DLB_OK)
        return s;
    return dlb_cuda_check(be, cudaEventRecord(t->start, dlb_cuda_of(be)->stream),
                          "timer_start", "cudaEventRecord");
}

dlb_status dlb_cuda_timer_stop(struct dlb_backend *be, struct dlb_timer *t)
{
    dlb_status s = dlb_cuda_not_capturing(be, "timer_stop");
    if (s != DLB_OK)
        return s;
    return dlb_cuda_check(be, cudaEventRecord(t->stop, dlb_cuda_of(be)->stream),
                          "timer_stop", "cudaEventRecord");
}

dlb_status dlb_cuda_timer_elapsed(struct dlb_backend *be, struct dlb_timer *t,
                                  double *seconds)
{
    float ms = 0.0f;
    cudaError_t e = cudaEventElapsedTime(&ms, t->start, t->stop);
    *seconds = 0.0;
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return dlb_cuda_fail(be, DLB_ERR_RUNTIME, "cuda timer_elapsed: the "
                             "marks have not completed (synchronize first)");
    }
    if (e != cudaSuccess)
        return dlb_cuda_check(be, e, "timer_elapsed", "cudaEventElapsedTime");
    *seconds = (double)ms * 1e-3;
    return DLB_OK;
}

/* A buffer's bytes are device memory in its host view's layout already;
 * nothing is derived from them, so unmap has nothing to drop. */
dlb_status dlb_cuda_map(struct dlb_backend *be, struct dlb_buffer *buf,
                        void **ptr, int *device)
{
    if (!buf)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda map: buffer is NULL");
    *ptr = buf->data;
    *device = 1;
    return DLB_OK;
}

dlb_status dlb_cuda_unmap(struct dlb_backend *be, struct dlb_buffer *buf,
                          int written)
{
    (void)be;
    (void)buf;
    (void)written;
    return DLB_OK;
}
