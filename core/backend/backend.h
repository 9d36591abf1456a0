/* Opening backends by name and calling them: the core's side of
 * <dlbench/backend.h>. Backend implementations include backend_impl.h. */
#ifndef DLB_CORE_BACKEND_H
#define DLB_CORE_BACKEND_H

#include <stddef.h>
#include <dlbench/backend.h>

/* Open the backend called `name` ("ref", "cpu", "cuda"). On failure *out is
 * NULL and `reason` says why: DLB_ERR_UNSUPPORTED for a backend this build
 * or machine lacks (the configuration is skipped), DLB_ERR_INPUT for an
 * unknown name (with a suggestion). */
dlb_status dlb_backend_open(const char *name,
                            const struct dlb_backend_config *cfg,
                            struct dlb_backend **out, char *reason, size_t len);
/* The backends this dlbench knows, NULL-terminated. */
const char *const *dlb_backend_names(void);
/* 1 when backend `name` is built in; else 0 with the reason. */
int dlb_backend_available(const char *name, char *reason, size_t len);

/* Release the backend; NULL is fine. */
void dlb_backend_close(struct dlb_backend *be);

/* Whether backend `name` has capability `cap` on this machine, asked of a
 * short-lived handle: a plugin's probe runs in the configuration's process
 * before the workload opens its backend, and the device itself is the only
 * one that knows its reason (the parent never asks: it initialises no
 * oneDNN). The reason in `reason` when not. Opening the cpu backend pins
 * the calling thread; its CPU mask is restored, so that what runs before
 * the workload (the roofline lookup) still sees every allowed CPU. */
dlb_status dlb_backend_probe_cap(const char *name, enum dlb_backend_cap cap,
                                 char *reason, size_t len);
/* Whether backend `name` computes in `dtype`, through the capability the
 * type needs (dlb_backend_probe_cap): F32 always; DLB_ERR_UNSUPPORTED for
 * a type no capability names; DLB_ERR_INTERNAL for a NULL name. */
dlb_status dlb_backend_probe_dtype(const char *name, enum dlb_dtype dtype,
                                   char *reason, size_t len);

/* Where backend `name` keeps its buffers: 1 in device memory the host
 * cannot touch (a GPU backend, built as a module), 0 in host memory (ref,
 * cpu, and names this dlbench does not know). Answered without loading
 * anything. */
int dlb_backend_device_memory(const char *name);
/* Memory of the backend's device outside any buffer, for a memory pool's
 * segments (backend_raw.c): malloc for host backends; the module's device
 * allocator (cudaMalloc) for GPU backends, which needs no open handle.
 * DLB_ERR_UNSUPPORTED with the reason where the device is missing,
 * DLB_ERR_NOMEM when it is full. raw_free takes the same byte count. */
dlb_status dlb_backend_raw_alloc(const char *name, int device, size_t bytes,
                                 void **out, char *reason, size_t len);
void dlb_backend_raw_free(const char *name, int device, void *p,
                          size_t bytes);

/* 1 when d and e are the pair CONV2D_DW fuses: d a 1x1 convolution
 * (stride 1, no padding, one group), e the depthwise 3x3 one over its
 * output (padding 1, stride 1 or 2). */
int dlb_conv2d_dw_pair(const struct dlb_conv2d_desc *d,
                       const struct dlb_conv2d_desc *e);

const char *dlb_backend_name(const struct dlb_backend *be);
const struct dlb_backend_ops *dlb_backend_ops_of(const struct dlb_backend *be);

/* Run an operation (<dlbench/backend.h>'s struct dlb_op): checked once
 * for every backend (op_check.c: a descriptor that does not add up is
 * DLB_ERR_INTERNAL naming it), then computed by the first of the
 * backend's kernels that applies; none is DLB_ERR_UNSUPPORTED with the
 * reason (dlb_backend_last_error). With the backend's profile on
 * (dlb_backend_config.profile) each run is timed, the device waited for,
 * and counted per layer, kind, propagation and kernel. */
dlb_status dlb_backend_run(struct dlb_backend *be, const struct dlb_op *op);

/* The kernel that would run `op`, or NULL: whether the backend computes
 * it (a model asks before it fuses layers). Checks nothing. */
const struct dlb_kernel *dlb_backend_kernel_for(struct dlb_backend *be,
                                                const struct dlb_op *op);

/* Whether the backend has any kernel of `kind` (int8 layers, CSR linear
 * layers: the features a plugin asks about before it plans on them). */
int dlb_backend_has_kind(const struct dlb_backend *be, enum dlb_op_kind kind);

/* "conv2d", "batchnorm_relu" ...; "fwd_train", "bwd_data" ... */
const char *dlb_op_kind_name(enum dlb_op_kind k);
const char *dlb_prop_name(enum dlb_prop p);

/* The profile since the last reset: one entry per layer label, kind,
 * propagation and kernel, in the order first run. */
struct dlb_op_profile {
    const char *label;        /* a copy of the op's label, or NULL */
    enum dlb_op_kind kind;
    enum dlb_prop prop;
    const char *kernel;       /* the kernel's name */
    unsigned long long calls;
    double seconds;
};
size_t dlb_backend_profile(const struct dlb_backend *be,
                           const struct dlb_op_profile **out);
void dlb_backend_profile_reset(struct dlb_backend *be);
/* Whether the backend was opened with its profile on. */
int dlb_backend_profiling(const struct dlb_backend *be);

/* Fast convolution algorithms (Winograd, FFT) multiply less than the
 * direct convolution a step's FLOP count assumes, so that step's GFLOP/s
 * are effective figures (direct FLOPs over time) that can pass the
 * machine's peak. A kernel that runs one notes it (backend_impl.h's
 * dlb_backend_note_fewer_flops); the child asks after sampling which
 * one ran first since the reset: "winograd", "fft", or NULL for none. */
const char *dlb_backend_fewer_flops(const struct dlb_backend *be);
void dlb_backend_fewer_flops_reset(struct dlb_backend *be);

/* Why the last failing operation failed ("" when it gave no reason). */
const char *dlb_backend_last_error(const struct dlb_backend *be);

/* Element type, element count and size in bytes of a buffer. */
enum dlb_dtype dlb_buffer_dtype(const struct dlb_buffer *b);
size_t dlb_buffer_count(const struct dlb_buffer *b);
size_t dlb_buffer_bytes(const struct dlb_buffer *b);

/* Record that `op` is missing from the table; returns UNSUPPORTED. */
dlb_status dlb_backend_missing(struct dlb_backend *be, const char *op);

/* Call a device entry that returns a status through the table; a NULL
 * entry gives DLB_ERR_UNSUPPORTED naming it: DLB_BE_CALL(be, copy, ...).
 * The void entries (buffer_free, timer_destroy) are required: call them
 * through dlb_backend_ops_of(be). Computations are dlb_backend_run's. */
#define DLB_BE_CALL(be, op, ...)                                            \
    (dlb_backend_ops_of(be)->op                                             \
         ? dlb_backend_ops_of(be)->op((be), __VA_ARGS__)                    \
         : dlb_backend_missing((be), #op))
/* The same for an operation without arguments: DLB_BE_CALL0(be, synchronize). */
#define DLB_BE_CALL0(be, op)                                                \
    (dlb_backend_ops_of(be)->op ? dlb_backend_ops_of(be)->op(be)            \
                                : dlb_backend_missing((be), #op))

#endif
