/* The ref backend's handle: capabilities, host-memory buffers, copies,
 * timers from the monotonic clock, and the operation table. */
#define _POSIX_C_SOURCE 200809L
#include "ref.h"
#include "../dtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dlb_timer {
    double start, stop;
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void dlb_ref_destroy(struct dlb_backend *be)
{
    free(dlb_backend_ctx(be));
}

dlb_status dlb_ref_supports(struct dlb_backend *be, enum dlb_backend_cap cap,
                            char *reason, size_t len)
{
    (void)be;
    switch (cap) {
    case DLB_CAP_F16:
    case DLB_CAP_BF16:
        return DLB_OK; /* stored in the type, computed in double */
    case DLB_CAP_INT8:
        return DLB_OK; /* integer loops: the quantised model's meaning */
    case DLB_CAP_MULTI_DEVICE:
        snprintf(reason, len, "ref runs on one device (the host)");
        return DLB_ERR_UNSUPPORTED;
    case DLB_CAP_COUNT:
        break;
    }
    snprintf(reason, len, "unknown capability %d", (int)cap);
    return DLB_ERR_UNSUPPORTED;
}

dlb_status dlb_ref_device_info(struct dlb_backend *be,
                               struct dlb_device_info *out)
{
    (void)be;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "reference C loops (host)");
    out->device_count = 1;
    out->compute_units = 1;
    return DLB_OK;
}

/* Buffer memory comes from the configuration's allocator (a memory pool)
 * or malloc. The block is over-allocated by 63 bytes and the data aligned
 * to 64, as the cpu backend does, so that allocators need not align. */
static void *ref_host_alloc(struct dlb_ref *r, size_t bytes)
{
    return r->host_alloc ? r->host_alloc(r->alloc_ctx, bytes) : malloc(bytes);
}

static void ref_host_free(struct dlb_ref *r, void *p, size_t bytes)
{
    if (r->host_free)
        r->host_free(r->alloc_ctx, p, bytes);
    else
        free(p);
}

static size_t ref_block_bytes(const struct dlb_buffer *b)
{
    return b->bytes + 64;
}

dlb_status dlb_ref_buffer_alloc(struct dlb_backend *be, enum dlb_dtype dtype,
                                size_t count, struct dlb_buffer **out)
{
    struct dlb_ref *r = dlb_backend_ctx(be);
    size_t esz = dlb_dtype_size(dtype);
    *out = NULL;
    if (!esz)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref: unknown dtype %d",
                                (int)dtype);
    if (count > (SIZE_MAX - 64) / esz)
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "ref: %zu elements of %s "
                                "overflow size_t", count, dlb_dtype_name(dtype));
    struct dlb_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "ref: out of memory");
    b->dtype = dtype;
    b->count = count;
    b->bytes = count * esz;
    b->impl = ref_host_alloc(r, ref_block_bytes(b)); /* the block itself */
    if (!b->impl) {
        size_t want = b->bytes;
        free(b);
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "ref: out of memory for "
                                "%zu bytes", want);
    }
    b->data = (void *)(((uintptr_t)b->impl + 63) & ~(uintptr_t)63);
    *out = b;
    return DLB_OK;
}

void dlb_ref_buffer_free(struct dlb_backend *be, struct dlb_buffer *b)
{
    if (b)
        ref_host_free(dlb_backend_ctx(be), b->impl, ref_block_bytes(b));
    free(b);
}

static dlb_status range(struct dlb_backend *be, const char *op,
                        const struct dlb_buffer *b, size_t off, size_t bytes)
{
    if (off > b->bytes || bytes > b->bytes - off)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref %s: bytes [%zu, "
                                "%zu + %zu) outside a buffer of %zu", op, off,
                                off, bytes, b->bytes);
    return DLB_OK;
}

dlb_status dlb_ref_copy_from_host(struct dlb_backend *be,
                                  struct dlb_buffer *dst, size_t off,
                                  const void *src, size_t bytes)
{
    dlb_status s = range(be, "copy_from_host", dst, off, bytes);
    if (!s && bytes)
        memcpy((char *)dst->data + off, src, bytes);
    return s;
}

dlb_status dlb_ref_copy_to_host(struct dlb_backend *be, void *dst,
                                const struct dlb_buffer *src, size_t off,
                                size_t bytes)
{
    dlb_status s = range(be, "copy_to_host", src, off, bytes);
    if (!s && bytes)
        memcpy(dst, (const char *)src->data + off, bytes);
    return s;
}

dlb_status dlb_ref_copy(struct dlb_backend *be, struct dlb_buffer *dst,
                        size_t doff, const struct dlb_buffer *src,
                        size_t soff, size_t bytes)
{
    dlb_status s;
    if ((s = range(be, "copy", dst, doff, bytes)) ||
        (s = range(be, "copy", src, soff, bytes)))
        return s;
    if (bytes) /* memmove: a copy within one buffer may overlap */
        memmove((char *)dst->data + doff, (const char *)src->data + soff, bytes);
    return DLB_OK;
}

dlb_status dlb_ref_synchronize(struct dlb_backend *be)
{
    (void)be; /* every operation has finished when it returns */
    return DLB_OK;
}

dlb_status dlb_ref_timer_create(struct dlb_backend *be, struct dlb_timer **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? DLB_OK
                : dlb_backend_fail(be, DLB_ERR_NOMEM, "ref: out of memory");
}

void dlb_ref_timer_destroy(struct dlb_backend *be, struct dlb_timer *t)
{
    (void)be;
    free(t);
}

dlb_status dlb_ref_timer_start(struct dlb_backend *be, struct dlb_timer *t)
{
    (void)be;
    t->start = now_seconds();
    return DLB_OK;
}

dlb_status dlb_ref_timer_stop(struct dlb_backend *be, struct dlb_timer *t)
{
    (void)be;
    t->stop = now_seconds();
    return DLB_OK;
}

dlb_status dlb_ref_timer_elapsed(struct dlb_backend *be, struct dlb_timer *t,
                                 double *seconds)
{
    (void)be;
    *seconds = t->stop - t->start;
    return DLB_OK;
}

DLB_REF_KFN(DLB_KFN_RUN)

/* One kernel per kind and propagation: ref is the oracle, plain loops. */
static const struct dlb_kernel ref_kernels[] = {
    DLB_REF_KFN(DLB_KFN_KERNEL)
    {"ref", DLB_OP_ADD, DLB_PROPS(DLB_PROP_NONE), NULL, dlb_ref_add},
    {"ref", DLB_OP_CONCAT, DLB_PROPS_FWD | DLB_PROPS(DLB_PROP_BWD), NULL,
     dlb_ref_concat},
    {"ref", DLB_OP_CONV2D_RELU, DLB_PROPS(DLB_PROP_FWD_INFER), NULL,
     dlb_ref_conv2d_relu},
    {"ref", DLB_OP_ADD_RELU, DLB_PROPS(DLB_PROP_NONE), NULL, dlb_ref_add},
    {"ref", DLB_OP_CONV2D_ADD, DLB_PROPS(DLB_PROP_FWD_INFER), NULL,
     dlb_ref_conv2d_add},
    {"ref", DLB_OP_CONV2D_DW, DLB_PROPS(DLB_PROP_FWD_INFER), NULL,
     dlb_ref_conv2d_dw},
    {"ref", DLB_OP_CONV2D_INT8_ADD, DLB_PROPS(DLB_PROP_FWD_INFER), NULL,
     dlb_ref_conv2d_int8_add},
};

static const struct dlb_backend_ops ref_ops = {
    DLB_OPS_HEAD(ref),
    DLB_REF_DEVICE(DLB_OP_ENTRY)
    .kernels = ref_kernels,
    .n_kernels = sizeof ref_kernels / sizeof ref_kernels[0],
};

dlb_status dlb_backend_ref_create(const struct dlb_backend_config *cfg,
                                  struct dlb_backend **out, char *reason,
                                  size_t len)
{
    struct dlb_ref *ctx = calloc(1, sizeof *ctx);
    dlb_status s;
    *out = NULL;
    if (!ctx) {
        snprintf(reason, len, "out of memory opening backend ref");
        return DLB_ERR_NOMEM;
    }
    ctx->threads = 1; /* plain loops: one thread whatever was asked */
    ctx->seed = cfg->seed;
    if (cfg->host_alloc && cfg->host_free) {
        ctx->host_alloc = cfg->host_alloc;
        ctx->host_free = cfg->host_free;
        ctx->alloc_ctx = cfg->alloc_ctx;
    }
    if ((s = dlb_backend_new(&ref_ops, ctx, out, reason, len)))
        free(ctx);
    return s;
}

