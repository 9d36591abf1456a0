/* The gradient scaler on the device (backend.h, API 1.2): unscale and
 * check into a flag that stays on the device, the SGD step skipped by the
 * device when the flag is set, and the flag's value posted to pinned host
 * memory behind an event, so that the host reads it later without
 * draining the stream. */
#include "cuda.h"
#include "cuda_kernels.h"

static dlb_status launched(struct dlb_backend *be, cudaError_t e,
                           const char *op)
{
    return dlb_cuda_check(be, e, op, "kernel launch");
}

dlb_status dlb_cuda_unscale_check(struct dlb_backend *be, size_t count,
                                  struct dlb_buffer *buf, float inv_scale,
                                  struct dlb_buffer *found)
{
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, "unscale_check", "buf", buf, count)) ||
        (s = dlb_cuda_check_s32(be, "unscale_check", "found", found, 1)))
        return s;
    if (!count)
        return DLB_OK;
    return launched(be, dlb_cuda_k_unscale_check(dlb_cuda_of(be)->stream, count,
                                                 buf->data, (int)buf->dtype,
                                                 inv_scale, found->data),
                    "unscale_check");
}

dlb_status dlb_cuda_sgd_update_if_finite(struct dlb_backend *be,
                                         const struct dlb_sgd_desc *d,
                                         struct dlb_buffer *w,
                                         const struct dlb_buffer *g,
                                         struct dlb_buffer *v,
                                         const struct dlb_buffer *found)
{
    static const char op[] = "sgd_update_if_finite";
    dlb_status s;
    if ((s = dlb_cuda_check_float(be, op, "w", w, d->count)) ||
        (s = dlb_cuda_check_float(be, op, "g", g, d->count)) ||
        (s = dlb_cuda_check_float(be, op, "v", v, d->count)) ||
        (s = dlb_cuda_check_s32(be, op, "found", found, 1)))
        return s;
    if (!d->count)
        return DLB_OK;
    return launched(be, dlb_cuda_k_sgd_if(dlb_cuda_of(be)->stream, d->count,
                                          w->data, (int)w->dtype, g->data,
                                          (int)g->dtype, v->data, (int)v->dtype,
                                          d->lr, d->momentum, d->weight_decay,
                                          found->data),
                    op);
}

/* The pinned slot and the event are made on the first post: most
 * configurations never scale a loss. cudaHostAlloc may wait for the
 * device, once. */
static dlb_status post_setup(struct dlb_backend *be, struct dlb_cuda *cu)
{
    dlb_status s;
    if (cu->post_host)
        return DLB_OK;
    if ((s = dlb_cuda_check(be, cudaEventCreateWithFlags(&cu->post_event,
                                                         cudaEventDisableTiming),
                            "flag_post", "cudaEventCreate")))
        return s;
    s = dlb_cuda_check(be, cudaHostAlloc((void **)&cu->post_host,
                                         sizeof *cu->post_host,
                                         cudaHostAllocDefault),
                       "flag_post", "pinned slot");
    if (s != DLB_OK) {
        cudaEventDestroy(cu->post_event);
        cu->post_event = NULL;
        cu->post_host = NULL;
    }
    return s;
}

dlb_status dlb_cuda_flag_post(struct dlb_backend *be,
                              const struct dlb_buffer *found)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    /* Under a capture the event would mark nothing at replay and
     * flag_wait would read a stale flag: post after the launch instead. */
    if ((s = dlb_cuda_check_s32(be, "flag_post", "found", found, 1)) ||
        (s = dlb_cuda_not_capturing(be, "flag_post")) ||
        (s = post_setup(be, cu)) ||
        (s = dlb_cuda_check(be, cudaMemcpyAsync(cu->post_host, found->data,
                                                sizeof *cu->post_host,
                                                cudaMemcpyDeviceToHost,
                                                cu->stream),
                            "flag_post", "copying the flag")) ||
        (s = dlb_cuda_check(be, cudaEventRecord(cu->post_event, cu->stream),
                            "flag_post", "cudaEventRecord")))
        return s;
    cu->posted = 1;
    return DLB_OK;
}

/* Waits for the event only: work enqueued after the post keeps the device
 * busy meanwhile. A kernel's error word is left for the next full wait. */
dlb_status dlb_cuda_flag_wait(struct dlb_backend *be, int32_t *value)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    *value = 0;
    if (!cu->posted)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda flag_wait: no flag "
                             "was posted");
    if ((s = dlb_cuda_check(be, cudaEventSynchronize(cu->post_event),
                            "flag_wait", "waiting for the posted flag")))
        return s;
    cu->posted = 0;
    *value = *cu->post_host;
    return DLB_OK;
}

void dlb_cuda_scaler_free(struct dlb_cuda *cu)
{
    if (cu->post_event)
        cudaEventDestroy(cu->post_event);
    if (cu->post_host)
        cudaFreeHost(cu->post_host);
    cu->post_event = NULL;
    cu->post_host = NULL;
}
