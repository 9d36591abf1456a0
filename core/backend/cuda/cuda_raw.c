/* Device memory the module takes, counted for the whole process: the
 * backend's buffers, scratch areas and workspaces, and the raw segments it
 * lends to a memory pool (the module's raw_alloc, which needs no handle:
 * a pool takes its arena before the workload opens the backend).
 *
 * The device's own count of used memory (cudaMemGetInfo: every process
 * and the runtime's context included) is read whenever the held bytes
 * reach a new high. Used memory grows only when something allocates, so
 * the highs of the module's allocations are where its peak is seen; what
 * cuDNN or cuBLASLt allocate inside their calls is caught at the next
 * high. That is a handful of driver queries per run, not one per
 * request, so the cudaMalloc baseline is not slowed by its own
 * bookkeeping. */
#include "cuda.h"

#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t mem_held, mem_held_peak, mem_used_peak;
static int device_seen; /* raw_alloc found a device once */

/* Caller holds mem_mu. */
static void sample_used(void)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    if (total_b - free_b > mem_used_peak)
        mem_used_peak = total_b - free_b;
}

void dlb_cuda_mem_count(size_t bytes, int taken)
{
    pthread_mutex_lock(&mem_mu);
    if (taken) {
        mem_held += bytes;
        if (mem_held > mem_held_peak) {
            mem_held_peak = mem_held;
            sample_used();
        }
    } else {
        mem_held -= bytes < mem_held ? bytes : mem_held;
    }
    pthread_mutex_unlock(&mem_mu);
}

cudaError_t dlb_cuda_mem_alloc(void **p, size_t bytes)
{
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess)
        dlb_cuda_mem_count(bytes, 1);
    else
        *p = NULL;
    return e;
}

void dlb_cuda_mem_free(void *p, size_t bytes)
{
    if (!p)
        return;
    dlb_cuda_mem_count(bytes, 0);
    cudaFree(p);
}

void dlb_cuda_mem_figures(uint64_t *held, uint64_t *held_peak,
                          uint64_t *used_peak)
{
    pthread_mutex_lock(&mem_mu);
    sample_used(); /* the libraries' own allocations since the last high */
    *held = mem_held;
    *held_peak = mem_held_peak;
    *used_peak = mem_used_peak;
    pthread_mutex_unlock(&mem_mu);
}

dlb_status dlb_cuda_raw_alloc(int device, size_t bytes, void **out,
                              char *reason, size_t len)
{
    int count = 0;
    cudaError_t e;
    *out = NULL;
    if (!device_seen) {
        if (!dlb_cuda_device_count(&count, reason, len))
            return DLB_ERR_UNSUPPORTED;
        if (device < 0 || device >= count) {
            snprintf(reason, len, "cuda: device %d asked for, %d present",
                     device, count);
            return DLB_ERR_UNSUPPORTED;
        }
        device_seen = 1;
    }
    /* The primary context of `device`, which the backend's handles use
     * too: a segment taken here serves every handle of the process. */
    if ((e = cudaSetDevice(device)) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(reason, len, "cuda: device %d: %s", device,
                 cudaGetErrorString(e));
        return DLB_ERR_RUNTIME;
    }
    e = dlb_cuda_mem_alloc(out, bytes ? bytes : 1);
    if (e == cudaSuccess)
        return DLB_OK;
    (void)cudaGetLastError(); /* a failed allocation is not sticky */
    if (e == cudaErrorMemoryAllocation) {
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        snprintf(reason, len, "cuda: out of device memory for a %zu-byte "
                 "segment (%.0f MiB of %.0f MiB free)", bytes,
                 (double)free_b / 1048576.0, (double)total_b / 1048576.0);
        return DLB_ERR_NOMEM;
    }
    snprintf(reason, len, "cuda: cudaMalloc of %zu bytes: %s", bytes,
             cudaGetErrorString(e));
    return DLB_ERR_RUNTIME;
}

/* cudaFree waits for the whole device, so no queued kernel still reads
 * the segment when it goes back. */
void dlb_cuda_raw_free(int device, void *p, size_t bytes)
{
    (void)device;
    dlb_cuda_mem_free(p, bytes ? bytes : 1);
}
