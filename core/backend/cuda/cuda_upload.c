/* Page-locked host memory and uploads on a copy stream (API 1.4): a
 * batch's host-to-device copy runs on a stream of its own while the
 * backend's stream computes on the batch before, as a framework's data
 * prefetcher does with a side stream and pinned batches.
 *
 * Four events per upload, all on the device's clock:
 *   base     on the compute stream when the copy is enqueued; the copy
 *            stream waits for it, so the copy never overwrites a
 *            destination that earlier work still reads;
 *   start, end   around the copies, on the copy stream;
 *   reached  on the compute stream at upload_wait: when it got to the
 *            point where it needs the data.
 * base comes before the other three, so every interval is measured from
 * it and none is negative: the stream waited end - reached when that is
 * positive, and not at all otherwise. */
#include "cuda.h"

#include <stdlib.h>

struct dlb_upload {
    cudaEvent_t base, start, end, reached;
    int copied;  /* an upload_async happened */
    int waited;  /* ... and an upload_wait after it */
};

dlb_status dlb_cuda_host_alloc_pinned(struct dlb_backend *be, size_t bytes,
                                      void **out)
{
    *out = NULL;
    return dlb_cuda_check(be, cudaHostAlloc(out, bytes ? bytes : 1,
                                            cudaHostAllocDefault),
                          "host_alloc_pinned", "cudaHostAlloc");
}

void dlb_cuda_host_free_pinned(struct dlb_backend *be, void *p, size_t bytes)
{
    (void)be;
    (void)bytes;
    if (p)
        cudaFreeHost(p);
}

/* The copy stream, made on the first upload and kept with the backend
 * (dlb_cuda_destroy destroys it): one per backend, so copies run in order. */
static dlb_status copy_stream(struct dlb_backend *be)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    if (cu->copy_stream)
        return DLB_OK;
    return dlb_cuda_check(be, cudaStreamCreateWithFlags(&cu->copy_stream,
                                                        cudaStreamNonBlocking),
                          "upload_create", "cudaStreamCreateWithFlags");
}

static void destroy_events(struct dlb_upload *u)
{
    cudaEvent_t *ev[] = {&u->base, &u->start, &u->end, &u->reached};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
        if (*ev[i])
            cudaEventDestroy(*ev[i]);
}

dlb_status dlb_cuda_upload_create(struct dlb_backend *be,
                                  struct dlb_upload **out)
{
    struct dlb_upload *u = calloc(1, sizeof *u);
    dlb_status s;
    *out = NULL;
    if (!u)
        return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda: out of host memory");
    if (!(s = dlb_cuda_not_capturing(be, "upload_create")) &&
        !(s = copy_stream(be)) &&
        !(s = dlb_cuda_check(be, cudaEventCreate(&u->base), "upload_create",
                             "cudaEventCreate")) &&
        !(s = dlb_cuda_check(be, cudaEventCreate(&u->start), "upload_create",
                             "cudaEventCreate")) &&
        !(s = dlb_cuda_check(be, cudaEventCreate(&u->end), "upload_create",
                             "cudaEventCreate")))
        s = dlb_cuda_check(be, cudaEventCreate(&u->reached), "upload_create",
                           "cudaEventCreate");
    if (s != DLB_OK) {
        destroy_events(u);
        free(u);
        return s;
    }
    *out = u;
    return DLB_OK;
}

void dlb_cuda_upload_destroy(struct dlb_backend *be, struct dlb_upload *u)
{
    (void)be;
    if (!u)
        return;
    /* Its copies may still read host memory the caller frees next. */
    if (u->copied)
        cudaEventSynchronize(u->end);
    destroy_events(u);
    free(u);
}

dlb_status dlb_cuda_upload_async(struct dlb_backend *be, struct dlb_upload *u,
                                 const struct dlb_upload_part *parts, size_t n)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    const char *op = "upload_async";
    dlb_status s = dlb_cuda_not_capturing(be, op);
    if (s != DLB_OK)
        return s;
    if (!u || !cu->copy_stream)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: no upload", op);
    for (size_t i = 0; i < n; i++) {
        const struct dlb_buffer *d = parts[i].dst;
        if (!d || parts[i].dst_off > d->bytes ||
            parts[i].bytes > d->bytes - parts[i].dst_off || !parts[i].src)
            return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: part %zu: "
                                 "bytes [%zu, %zu + %zu) outside a buffer of "
                                 "%zu, or no source", op, i, parts[i].dst_off,
                                 parts[i].dst_off, parts[i].bytes,
                                 d ? d->bytes : 0);
    }
    if ((s = dlb_cuda_check(be, cudaEventRecord(u->base, cu->stream), op,
                            "cudaEventRecord")) ||
        (s = dlb_cuda_check(be, cudaStreamWaitEvent(cu->copy_stream, u->base,
                                                     0),
                            op, "cudaStreamWaitEvent")) ||
        (s = dlb_cuda_check(be, cudaEventRecord(u->start, cu->copy_stream), op,
                            "cudaEventRecord")))
        return s;
    for (size_t i = 0; i < n; i++)
        if (parts[i].bytes &&
            (s = dlb_cuda_check(be, cudaMemcpyAsync(
                                        (char *)parts[i].dst->data +
                                            parts[i].dst_off,
                                        parts[i].src, parts[i].bytes,
                                        cudaMemcpyHostToDevice,
                                        cu->copy_stream),
                                op, "cudaMemcpyAsync")))
            return s;
    s = dlb_cuda_check(be, cudaEventRecord(u->end, cu->copy_stream), op,
                       "cudaEventRecord");
    u->copied = s == DLB_OK;
    u->waited = 0;
    return s;
}

dlb_status dlb_cuda_upload_wait(struct dlb_backend *be, struct dlb_upload *u)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s = dlb_cuda_not_capturing(be, "upload_wait");
    if (s != DLB_OK)
        return s;
    if (!u || !u->copied)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda upload_wait: no "
                             "upload_async to wait for");
    if ((s = dlb_cuda_check(be, cudaEventRecord(u->reached, cu->stream),
                            "upload_wait", "cudaEventRecord")) ||
        (s = dlb_cuda_check(be, cudaStreamWaitEvent(cu->stream, u->end, 0),
                            "upload_wait", "cudaStreamWaitEvent")))
        return s;
    u->waited = 1;
    return DLB_OK;
}

dlb_status dlb_cuda_upload_sync(struct dlb_backend *be, struct dlb_upload *u)
{
    dlb_status s = dlb_cuda_not_capturing(be, "upload_sync");
    if (s != DLB_OK || !u || !u->copied)
        return s;
    return dlb_cuda_check(be, cudaEventSynchronize(u->end), "upload_sync",
                          "cudaEventSynchronize");
}

static dlb_status elapsed(struct dlb_backend *be, cudaEvent_t a, cudaEvent_t b,
                          double *seconds)
{
    float ms = 0.0f;
    dlb_status s = dlb_cuda_check(be, cudaEventElapsedTime(&ms, a, b),
                                  "upload_figures", "cudaEventElapsedTime");
    *seconds = (double)ms * 1e-3;
    return s;
}

dlb_status dlb_cuda_upload_figures(struct dlb_backend *be, struct dlb_upload *u,
                                   double *copy_s, double *stall_s)
{
    double to_end = 0.0, to_reached = 0.0;
    dlb_status s = dlb_cuda_not_capturing(be, "upload_figures");
    *copy_s = *stall_s = 0.0;
    if (s != DLB_OK)
        return s;
    if (!u || !u->waited)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda upload_figures: no "
                             "upload_async and upload_wait to measure");
    if ((s = dlb_cuda_check(be, cudaEventSynchronize(u->end), "upload_figures",
                            "cudaEventSynchronize")) ||
        (s = dlb_cuda_check(be, cudaEventSynchronize(u->reached),
                            "upload_figures", "cudaEventSynchronize")) ||
        (s = elapsed(be, u->start, u->end, copy_s)) ||
        (s = elapsed(be, u->base, u->end, &to_end)) ||
        (s = elapsed(be, u->base, u->reached, &to_reached)))
        return s;
    *stall_s = to_end > to_reached ? to_end - to_reached : 0.0;
    return DLB_OK;
}
