/* The cuda backend's private declarations: the context, the per-shape
 * caches, and the helpers the op files share.
 *
 * Everything runs on one non-blocking stream in call order; nothing waits
 * for the device except synchronize, copy_to_host and check_finite (the
 * contract of backend.h), buffer_free in the default allocation mode and
 * the rare growth of a scratch area (cudaFree synchronises the device;
 * DLBENCH_CUDA_ALLOC=async frees in stream order instead). Convolutions
 * and batch normalisation go through cuDNN's legacy API, linear layers
 * through cuBLASLt, everything element-wise, pooling and the loss through
 * the module's own kernels (cuda_kernels.h). int8 layers are an s8 GEMM
 * on cuBLASLt (im2col for convolutions) with the module's requantisation
 * (cuda_int8_ops.c); CSR linear layers go through cuSPARSE (cuda_sparse.c).
 *
 * Types: F32, F16 and BF16 buffers everywhere a float is expected; F64 is
 * refused with DLB_ERR_UNSUPPORTED (no GPU code path is worth keeping for
 * it). cuDNN and cuBLASLt need one type per call: an operation computes in
 * one type (conv2d_fwd and bwd_data in w's type; bwd_weights in BF16 or
 * F16 when any of its tensors is, else F32; batch norm in F32) and casts
 * the buffers of another type through scratch areas on the way in and out,
 * as backend.h's mixed-type rule allows. */
#ifndef DLB_CUDA_H
#define DLB_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "../backend_impl.h"
#include "../backend_kernels.h"
#include "../backend_ops.h"
#include "../backend_module.h"

/* The core's helpers, lent at create time (cuda_module.c). */
extern const struct dlb_backend_core *dlb_cuda_core;

/* Scratch areas: operands converted to an operation's compute type. One
 * operation uses at most this many at once; the next may reuse them since
 * the stream runs operations in order. */
#define DLB_CUDA_SCRATCH_SLOTS 6

/* cuBLASLt's workspace (NVIDIA recommends 32 MiB on Hopper). */
#define DLB_CUDA_LT_WORKSPACE ((size_t)32 << 20)
/* The largest cuDNN workspace an algorithm may ask for. */
#define DLB_CUDA_DNN_WORKSPACE_MAX ((size_t)512 << 20)

enum dlb_cuda_algo_mode { DLB_CUDA_ALGO_HEURISTIC, DLB_CUDA_ALGO_SEARCH };

struct dlb_cuda_conv;  /* cuda_conv.c's per-shape descriptors */
struct dlb_cuda_gemm;  /* cuda_linear.c's per-shape matmul plans */
struct dlb_cuda_igemm; /* cuda_int8_gemm.c's per-shape int8 plans */
struct dlb_cuda_sparse; /* cuda_sparse.c's cuSPARSE handle, descriptors */
struct dlb_cuda_algo_cache; /* cuda_algo.c's on-disk choices */

struct dlb_cuda {
    int device;
    struct cudaDeviceProp prop;
    cudaStream_t stream;
    cudaStream_t copy_stream;    /* uploads (cuda_upload.c); made on first use */
    cudnnHandle_t dnn;
    cublasLtHandle_t lt;
    void *lt_ws;                 /* DLB_CUDA_LT_WORKSPACE bytes */
    void *dnn_ws;                /* grows to the largest algorithm's need */
    size_t dnn_ws_bytes;
    void *scratch[DLB_CUDA_SCRATCH_SLOTS];
    size_t scratch_bytes[DLB_CUDA_SCRATCH_SLOTS];
    int *flag_dev;               /* check_finite's answer on the device */
    int *flag_host;              /* ... copied here (pinned) */
    volatile unsigned *kerr;     /* the error word (mapped pinned memory) */
    unsigned *kerr_dev;          /* its device address */
    uint64_t seed;
    /* Options: the suite's (dlb_backend_config, API 1.3), else the
     * environment's (cuda_module.c): */
    enum dlb_cuda_algo_mode algo_mode; /* cudnn.algo, DLBENCH_CUDNN_ALGO */
    int tf32;                          /* cuda.tf32, DLBENCH_CUDA_TF32 */
    int alloc_async;                   /* DLBENCH_CUDA_ALLOC=async */
    cudnnTensorDescriptor_t bn_x, bn_p; /* batch norm's, set per call */
    struct dlb_cuda_conv *convs;
    struct dlb_cuda_gemm *gemms;
    struct dlb_cuda_igemm *igemms;
    struct dlb_cuda_sparse *sparse; /* made on the first CSR layer */
    struct dlb_cuda_algo_cache *algo_cache;
    /* Buffers from the caller's allocator (a memory pool), API 1.2; NULL:
     * cudaMalloc per request (cuda_mem.c). */
    void *(*device_alloc)(void *ctx, size_t bytes);
    void (*device_free)(void *ctx, void *p, size_t bytes);
    void *alloc_ctx;
    /* The gradient scaler's posted flag (cuda_scaler_ops.c): a pinned slot
     * and the event after its copy, made on the first post. */
    int32_t *post_host;
    cudaEvent_t post_event;
    int posted;
    /* Graphs (cuda_graph.c): the graph between graph_begin and graph_end
     * (its memory serves buffer_alloc), whether the stream is capturing,
     * how many graphs exist (scratch areas they may use are retired, not
     * freed, when they grow), and the retired areas. */
    struct dlb_graph *graph_on;
    int capturing;
    unsigned graphs_live;
    struct dlb_cuda_retired *retired;
};

struct dlb_timer {
    cudaEvent_t start, stop;
};

/* ---- status and failure reasons (cuda_mem.c) ------------------------- */

/* Record why an operation failed and return `s` (the core's
 * dlb_backend_last_error reads it). */
dlb_status dlb_cuda_fail(struct dlb_backend *be, dlb_status s,
                         const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A CUDA runtime error as a status (out of memory: DLB_ERR_NOMEM) with
 * "cuda OP: WHAT: message"; DLB_OK for cudaSuccess. Clears the runtime's
 * last error so that a failed allocation does not poison later calls. */
dlb_status dlb_cuda_check(struct dlb_backend *be, cudaError_t e,
                          const char *op, const char *what);
dlb_status dlb_cuda_dnn_check(struct dlb_backend *be, cudnnStatus_t st,
                              const char *op, const char *what);
dlb_status dlb_cuda_lt_check(struct dlb_backend *be, cublasStatus_t st,
                             const char *op, const char *what);

static inline struct dlb_cuda *dlb_cuda_of(struct dlb_backend *be)
{
    return be->ctx;
}

/* ---- device memory, counted (cuda_raw.c) ------------------------------
 * Every cudaMalloc of the module goes through these, so that the device
 * record can say what the backend held at most; cudaMallocAsync and
 * cudaFreeAsync are counted with dlb_cuda_mem_count. */
cudaError_t dlb_cuda_mem_alloc(void **p, size_t bytes);
void dlb_cuda_mem_free(void *p, size_t bytes);
void dlb_cuda_mem_count(size_t bytes, int taken);
/* Bytes held now and at most, and the device's used memory at its highest
 * seen (cudaMemGetInfo), for the process. */
void dlb_cuda_mem_figures(uint64_t *held, uint64_t *held_peak,
                          uint64_t *used_peak);
/* The module's raw_alloc and raw_free (backend_module.h): segments for a
 * memory pool, without a handle. */
dlb_status dlb_cuda_raw_alloc(int device, size_t bytes, void **out,
                              char *reason, size_t len);
void dlb_cuda_raw_free(int device, void *p, size_t bytes);

/* Wait for the stream and report what kernels flagged (`op` names the
 * caller in the reason). */
dlb_status dlb_cuda_wait(struct dlb_backend *be, const char *op);
/* Device memory of at least `bytes` in scratch slot `slot`, or in the
 * cuDNN workspace; grown (never shrunk) as needed. */
dlb_status dlb_cuda_scratch(struct dlb_backend *be, int slot, size_t bytes,
                            void **out);
dlb_status dlb_cuda_dnn_workspace(struct dlb_backend *be, size_t bytes,
                                  void **out);

/* ---- operand checks and type views (cuda_view.c) --------------------- */

/* `b` is a float buffer (F32, F16, BF16) of at least `count` elements:
 * else DLB_ERR_INTERNAL (NULL, too small) or DLB_ERR_UNSUPPORTED (F64,
 * integer types) naming op and arg. */
dlb_status dlb_cuda_check_float(struct dlb_backend *be, const char *op,
                                const char *arg, const struct dlb_buffer *b,
                                size_t count);
/* `b` is an S32 buffer of at least `count` elements. */
dlb_status dlb_cuda_check_s32(struct dlb_backend *be, const char *op,
                              const char *arg, const struct dlb_buffer *b,
                              size_t count);
/* Counts cuDNN takes as int. */
dlb_status dlb_cuda_check_int(struct dlb_backend *be, const char *op,
                              size_t count);

/* The compute type of an operation over `n` float types: BF16 if any is
 * BF16, F16 if any is F16, else F32; a mix of F16 and BF16 is refused. */
dlb_status dlb_cuda_common_type(struct dlb_backend *be, const char *op,
                                const enum dlb_dtype *types, size_t n,
                                enum dlb_dtype *out);

/* A buffer's data as `type`: the buffer itself when it has that type,
 * else a scratch copy (inputs are cast in at once; outputs are cast out
 * by dlb_cuda_view_done). */
struct dlb_cuda_view {
    void *p;
    struct dlb_buffer *out; /* cast back into this; NULL for inputs */
    size_t count;
    enum dlb_dtype type;
};
dlb_status dlb_cuda_view_in(struct dlb_backend *be, const struct dlb_buffer *b,
                            size_t count, enum dlb_dtype type, int slot,
                            struct dlb_cuda_view *v);
dlb_status dlb_cuda_view_out(struct dlb_backend *be, struct dlb_buffer *b,
                             size_t count, enum dlb_dtype type, int slot,
                             struct dlb_cuda_view *v);
dlb_status dlb_cuda_view_done(struct dlb_backend *be, struct dlb_cuda_view *v);

/* ---- cuDNN helpers (cuda_conv.c, cuda_algo.c) ------------------------ */
cudnnDataType_t dlb_cuda_dnn_type(enum dlb_dtype t);

/* One chosen algorithm of a convolution direction. */
enum dlb_cuda_conv_dir { DLB_CUDA_FWD, DLB_CUDA_BWD_DATA, DLB_CUDA_BWD_FILTER };
struct dlb_cuda_algo {
    int algo;              /* cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t */
    cudnnMathType_t math;
    size_t ws_bytes;
};
/* The descriptors of one convolution shape in one compute type. */
struct dlb_cuda_conv_descs {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv[3]; /* per direction: own math type */
};
/* Choose the algorithm of direction `dir` (heuristic or timed search, the
 * latter with the operands at hand and the choice kept on disk). `a`, `b`
 * and `c` are the direction's three device operands in cuDNN's argument
 * order (fwd: x, w, y; bwd_data: w, dy, dx; bwd_filter: x, dy, dw). */
dlb_status dlb_cuda_algo_choose(struct dlb_backend *be,
                                const struct dlb_conv2d_desc *d,
                                enum dlb_dtype t,
                                struct dlb_cuda_conv_descs *dd,
                                enum dlb_cuda_conv_dir dir, const void *a,
                                const void *b, void *c,
                                struct dlb_cuda_algo *out);
/* Whether the chosen algorithm of direction `dir` multiplies less than
 * the direct convolution (dlb_backend_note_fewer_flops). */
enum dlb_fast_algo dlb_cuda_algo_fewer_flops(enum dlb_cuda_conv_dir dir, int algo);
/* Load the on-disk choices (search mode); free them. */
void dlb_cuda_algo_cache_open(struct dlb_cuda *cu);
void dlb_cuda_algo_cache_free(struct dlb_cuda *cu);

/* ---- operations -------------------------------------------------------- */

/* The device entries, dlb_cuda_<entry>, with the table's signatures
 * (backend_ops.h): destroy, supports, device_info in cuda_backend.c;
 * buffers, copies, timers, synchronize and map/unmap in cuda_mem.c (map
 * gives the buffer's device address, *device = 1; unmap is a no-op);
 * flag_post and flag_wait in cuda_scaler_ops.c; cuda_graph.c;
 * cuda_upload.c (pinned memory and uploads). */
#define DLB_CUDA_DEVICE(X)                                                  \
    DLB_OPS_REQUIRED(X, cuda) DLB_OPS_MAP(X, cuda) DLB_OPS_FLAG(X, cuda)    \
    DLB_OPS_GRAPH(X, cuda) DLB_OPS_PINNED(X, cuda) DLB_OPS_UPLOAD(X, cuda)
DLB_CUDA_DEVICE(DLB_OP_DECLARE)
/* The kernels' functions, dlb_cuda_<name> (backend_kernels.h): one kernel
 * each, on cuDNN, cuBLASLt, cuSPARSE, NCCL and own kernels: cuda_conv.c,
 * cuda_bnorm.c, cuda_linear.c; cuda_nn_ops.c (pooling, relu, dropout,
 * loss); cuda_elementwise_ops.c (sgd, cast, scale, check_finite, fill,
 * (de)quantize, allreduce_sum); cuda_int8_ops.c and cuda_sparse.c;
 * cuda_scaler_ops.c (unscale_check, sgd_update_if_finite). */
#define DLB_CUDA_KFN(X)                                                     \
    DLB_KFN_CNN(X, cuda) DLB_KFN_QUANTIZE(X, cuda)                          \
    DLB_KFN_ALLREDUCE(X, cuda) DLB_KFN_INT8(X, cuda)                        \
    DLB_KFN_SPARSE(X, cuda) DLB_KFN_SCALER(X, cuda)
DLB_CUDA_KFN(DLB_KFN_DECLARE)
/* Kernels written for the descriptor itself: cuda_elementwise_ops.c's add
 * and concat. */
dlb_status dlb_cuda_add(struct dlb_backend *be, const struct dlb_op *op);
dlb_status dlb_cuda_concat(struct dlb_backend *be, const struct dlb_op *op);

/* What the operations keep per shape or per backend, freed with it:
 * cuda_conv.c's descriptors, cuda_linear.c's matmul plans, the scaler's
 * posted flag (cuda_scaler_ops.c), cuda_int8_gemm.c's int8 GEMM plans,
 * cuda_sparse.c's cuSPARSE state. */
void dlb_cuda_conv_cache_free(struct dlb_cuda *cu);
void dlb_cuda_gemm_cache_free(struct dlb_cuda *cu);
void dlb_cuda_scaler_free(struct dlb_cuda *cu);
void dlb_cuda_int8_cache_free(struct dlb_cuda *cu);
void dlb_cuda_sparse_free(struct dlb_cuda *cu);

/* cuda_graph_mem.c: a graph's memory. take: a block of at least `bytes`
 * for a buffer allocated between graph_begin and graph_end (*owner marks
 * the buffer as the graph's); give: a graph buffer freed, its block kept
 * for the next replay. defer: a buffer of other memory freed under a
 * capture, released at graph_end; 0 when nothing is deferred. retire: a
 * scratch area replaced while graphs may still use it, freed with the
 * backend. */
dlb_status dlb_cuda_graph_mem_take(struct dlb_backend *be, size_t bytes,
                                   void **p, void **owner);
void dlb_cuda_graph_mem_give(void *owner, void *p);
int dlb_cuda_graph_defer(struct dlb_cuda *cu, struct dlb_buffer *b);
void dlb_cuda_retire(struct dlb_cuda *cu, void *p, size_t bytes);
void dlb_cuda_retired_free(struct dlb_cuda *cu);
/* A failure naming `op` when the stream is capturing (operations that
 * wait or read results on the host); DLB_OK otherwise. */
dlb_status dlb_cuda_not_capturing(struct dlb_backend *be, const char *op);
/* Where the dropout kernel reads `seed` from: NULL (the argument) unless
 * a capture is on, then the graph's slot for this seed value. */
dlb_status dlb_cuda_graph_seed_slot(struct dlb_backend *be, uint64_t seed,
                                    const uint64_t **slot);

/* cuda_module.c: open the backend (the module's create). */
dlb_status dlb_cuda_create(const struct dlb_backend_core *core,
                           const struct dlb_backend_config *cfg,
                           struct dlb_backend **out, char *reason, size_t len);
/* cuda_probe.c: probe runs the count in a child process; the count is 1
 * with *count > 0 when a device is there, else 0 and the reason ("no CUDA
 * driver: ...", "no CUDA device: ..."). */
int dlb_cuda_probe(char *reason, size_t len);
int dlb_cuda_device_count(int *count, char *reason, size_t len);
/* cuda_backend.c: the operation table */
extern const struct dlb_backend_ops dlb_cuda_ops;

#endif
