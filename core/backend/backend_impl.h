/* For backend implementations only: the handle and buffer layouts, and the
 * helpers that create a handle and record a failure reason. */
#ifndef DLB_CORE_BACKEND_IMPL_H
#define DLB_CORE_BACKEND_IMPL_H

#include <stdarg.h>
#include <stddef.h>
#include <dlbench/backend.h>

/* Convolution algorithms that multiply less than the direct one
 * (backend.h's dlb_backend_fewer_flops). */
enum dlb_fast_algo { DLB_FAST_ALGO_NONE, DLB_FAST_ALGO_WINOGRAD, DLB_FAST_ALGO_FFT };

struct dlb_backend {
    const struct dlb_backend_ops *ops;
    void *ctx;            /* the implementation's state */
    char reason[512];     /* the last failure's reason */
    /* The profile (op_run.c): on when opened with it. */
    int profile;
    struct dlb_op_profile *prof;
    size_t n_prof, cap_prof;
    /* The first fast algorithm run since the reset (op_run.c) */
    enum dlb_fast_algo fewer_flops;
};

/* Noted by a kernel that runs a fast convolution algorithm: inline, since
 * a backend module links nothing of the core (backend_module.h), and an
 * enum, since a module's strings go when it is closed, before the record
 * that names the algorithm is written. */
static inline void dlb_backend_note_fewer_flops(struct dlb_backend *be,
                                                enum dlb_fast_algo a)
{
    if (!be->fewer_flops)
        be->fewer_flops = a;
}

/* Every backend allocates its buffers with this head; `data` is the device
 * address (host memory for CPU backends); `impl` is the backend's own. */
struct dlb_buffer {
    enum dlb_dtype dtype;
    size_t count;
    size_t bytes;
    void *data;
    void *impl;
};

/* Wrap `ops` and `ctx` in a new handle after checking the table's version
 * and required entries; `reason` says which is wrong. */
dlb_status dlb_backend_new(const struct dlb_backend_ops *ops, void *ctx,
                           struct dlb_backend **out, char *reason, size_t len);
void *dlb_backend_ctx(const struct dlb_backend *be);

/* Record why an operation failed and return `s`. */
dlb_status dlb_backend_fail(struct dlb_backend *be, dlb_status s,
                            const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The one check of an operation before any kernel sees it (op_check.c):
 * DLB_ERR_INTERNAL with the reason naming the backend, the kind and the
 * op's label. */
dlb_status dlb_op_check(struct dlb_backend *be, const struct dlb_op *op);

/* Descriptor checks (desc_check.c): a mismatch is DLB_ERR_INTERNAL naming
 * the backend and `op`. */
dlb_status dlb_conv2d_desc_check(struct dlb_backend *be, const char *op,
                                 const struct dlb_conv2d_desc *d);
dlb_status dlb_pool_desc_check(struct dlb_backend *be, const char *op,
                               const struct dlb_pool_desc *d);

/* Element counts of a convolution's input, weights and output. */
static inline size_t dlb_conv2d_x_count(const struct dlb_conv2d_desc *d)
{
    return (size_t)d->n * d->in_c * d->in_h * d->in_w;
}
/* The groups of a convolution, 0 read as 1. */
static inline uint32_t dlb_conv2d_groups(const struct dlb_conv2d_desc *d)
{
    return d->groups > 1 ? d->groups : 1;
}
static inline size_t dlb_conv2d_w_count(const struct dlb_conv2d_desc *d)
{
    return (size_t)d->out_c * (d->in_c / dlb_conv2d_groups(d)) * d->kh * d->kw;
}
static inline size_t dlb_conv2d_y_count(const struct dlb_conv2d_desc *d)
{
    return (size_t)d->n * d->out_c * d->out_h * d->out_w;
}

/* Built-in constructors; each registers itself in backend.c (cpu only
 * when the build found oneDNN). */
dlb_status dlb_backend_ref_create(const struct dlb_backend_config *cfg,
                                  struct dlb_backend **out, char *reason,
                                  size_t len);
dlb_status dlb_backend_cpu_create(const struct dlb_backend_config *cfg,
                                  struct dlb_backend **out, char *reason,
                                  size_t len);

#endif
