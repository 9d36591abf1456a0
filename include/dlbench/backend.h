/* dlbench public SDK: the backend interface.
 *
 * A backend is a device that holds buffers and runs the reference CNN's
 * operations: `ref` (plain C, the correctness oracle), `cpu` (oneDNN) and
 * `cuda` (cuDNN, cuBLAS, own kernels). Callers see an opaque handle,
 * `struct dlb_backend`, and a table of operations, `struct dlb_backend_ops`,
 * in the spirit of ggml-backend: the same calls run on every device.
 *
 * Execution model
 * - Every operation is enqueued on the backend's one stream, in call order.
 *   An operation may return before its work is done (CUDA); `synchronize`
 *   waits for all of it. The ref and cpu backends run synchronously.
 * - Buffers are opaque device memory with an element type and a size. The
 *   host reads and writes them only through the copy operations. Their host
 *   view is dense and row-major in the layouts named below (NCHW for
 *   activations, [out][in][kh][kw] for conv weights, [out][in] for linear
 *   weights); a backend that keeps another physical layout must translate in
 *   the copies.
 * - Outputs are overwritten (no accumulation), except where an operation
 *   says it updates in place. Outputs must not alias inputs unless stated.
 * - Float operations accept F32 buffers on every backend. Other float types
 *   (F16, BF16, F64) are accepted where a kernel applies to them; an
 *   operation no kernel applies to returns DLB_ERR_UNSUPPORTED and
 *   dlb_backend_last_error() (core) says why. Buffer sizes that do not
 *   match the descriptor give DLB_ERR_INTERNAL: that is a caller bug, which
 *   the core's one check of every descriptor reports the same way on
 *   every device.
 * - Timers are recorded on the stream (CUDA events on the GPU, the monotonic
 *   clock on the CPU); read the elapsed time after `synchronize`.
 *
 * Dropout masks are not stored: every backend computes them from a
 * counter-based hash of (seed, element index) defined in this header
 * (dlb_dropout_keep), so the forward and backward passes and all backends
 * agree bit for bit without a host-to-device copy of a mask. */
#ifndef DLBENCH_BACKEND_H
#define DLBENCH_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/plugin.h>
#include <dlbench/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A major bump changes existing entries; a minor bump appends entries to
 * the end of struct dlb_backend_ops (struct_size says which are present).
 *
 * Minor history:
 *   1.0  the first interface.
 *   1.1  int8 inference (conv2d_int8_fwd, linear_int8_fwd, pool_int8_fwd),
 *        sparse linear layers (csr_linear_fwd) and buffers in place (map,
 *        unmap).
 *   1.2  device memory from the caller (dlb_backend_config.device_alloc),
 *        the device record's versions and memory figures (the end of
 *        struct dlb_device_info), and the gradient scaler on the device
 *        (unscale_check, sgd_update_if_finite, flag_post, flag_wait).
 *   1.3  backend options from the suite (dlb_backend_config.cudnn_algo,
 *        tf32) and graphs of a whole step (graph_create, graph_begin,
 *        graph_end, graph_launch, graph_destroy).
 *   1.4  page-locked host memory (host_alloc_pinned, host_free_pinned)
 *        and uploads on a copy stream (upload_create, upload_destroy,
 *        upload_async, upload_wait, upload_sync, upload_figures).
 *   2.0  operations as descriptors (struct dlb_op) run by kernel lists
 *        (struct dlb_kernel): the 36 entries of 1.x that computed, and the
 *        core's side tables of fused operations (batch norm + ReLU,
 *        convolution + pooling), are kinds of one entry point.
 *   2.1  dlb_backend_config.winograd (the suite key cpu.winograd).
 *   2.2  the kind CONV2D_INT8_ADD (an int8 convolution summed onto an
 *        fp32 branch; a backend without it runs the layers apart). */
#define DLB_BACKEND_API_MAJOR 2
#define DLB_BACKEND_API_MINOR 2

struct dlb_backend;  /* the device handle (plugin.h) */
struct dlb_op;       /* an operation: its kind, tensors and attributes */
struct dlb_buffer;   /* device memory: element type, count, bytes */
struct dlb_timer;    /* a pair of stream marks */
struct dlb_graph;    /* a captured sequence of operations (API 1.3) */
struct dlb_upload;   /* copies to the device on a copy stream (API 1.4) */

/* Tri-state backend options of API 1.3: UNSET leaves the choice to the
 * backend (its documented environment variable, else its default), so
 * that callers without a suite keep the old behaviour. */
enum dlb_backend_opt { DLB_OPT_UNSET, DLB_OPT_OFF, DLB_OPT_ON };

/* How the core opens a backend. */
struct dlb_backend_config {
    int threads;     /* worker threads on CPU backends; 0 = backend default */
    int device;      /* device index on GPU backends; 0 = first */
    uint64_t seed;   /* the configuration's seed */
    /* Host memory for the buffers of CPU backends (ref, cpu), so that a
     * memory pool can sit under them; both NULL = malloc/free. host_free
     * gets the pointer host_alloc returned and the same byte count. The
     * allocator need not align: the backends over-allocate and align to
     * 64 bytes themselves. GPU backends ignore these. */
    void *(*host_alloc)(void *ctx, size_t bytes);
    void (*host_free)(void *ctx, void *p, size_t bytes);
    void *alloc_ctx;
    /* API 1.2: device memory for the buffers of GPU backends, so that a
     * memory pool can sit under them (with alloc_ctx); both NULL = the
     * backend's own allocator (cudaMalloc and cudaFree per request).
     * device_free gets what device_alloc returned and the same byte
     * count. Blocks are used in the backend's stream order: device_free
     * comes as soon as the host has enqueued the last work on a block,
     * possibly before that work ran, and the allocator may hand the block
     * out again at once to this backend, whose single stream runs the
     * next user after the last (a pool over several streams keeps blocks
     * per stream). 256-byte alignment suffices. CPU backends ignore
     * these. */
    void *(*device_alloc)(void *ctx, size_t bytes);
    void (*device_free)(void *ctx, void *p, size_t bytes);
    /* API 1.3: options of GPU backends, from the suite keys cudnn.algo
     * (ON = timed search, OFF = heuristic) and cuda.tf32 (ON = TF32
     * tensor cores for F32 convolutions and GEMMs). Other backends
     * ignore them; the suite refuses them there. */
    enum dlb_backend_opt cudnn_search;
    enum dlb_backend_opt tf32;
    /* API 2.0: time every operation and name its kernel (suite key
     * profile = ops); the core does it, backends ignore it. */
    int profile;
    /* API 2.1: Winograd kernels for f32 3x3 stride-1 convolutions where
     * the library has them (suite key cpu.winograd); UNSET:
     * $DLBENCH_CPU_WINOGRAD, else on. Only cpu reads it. */
    enum dlb_backend_opt winograd;
};

/* Capabilities a configuration may need. */
enum dlb_backend_cap {
    DLB_CAP_F16, DLB_CAP_BF16, DLB_CAP_INT8, DLB_CAP_MULTI_DEVICE,
    DLB_CAP_COUNT
};

struct dlb_device_info {
    char name[128];        /* "Reference C loops", "NVIDIA H200", CPU model */
    char driver[64];       /* library or driver version, "" when none */
    uint64_t mem_total;    /* bytes; 0 when unknown */
    uint64_t mem_free;     /* bytes; 0 when unknown */
    int device_count;      /* devices this backend can see */
    int compute_units;     /* cores or SMs */
    /* API 1.2; a backend of 1.1 leaves them zero (callers clear the
     * record first). */
    char arch[32];         /* compute capability "9.0" on CUDA GPUs, the
                              instruction set the kernels use on CPUs;
                              "" when unknown */
    struct dlb_device_lib {
        char name[16];     /* "driver", "runtime", "cudnn", "onednn" ... */
        char version[32];  /* "13.0", "9.10.2" */
    } libs[8];             /* the first with an empty name ends the list */
    /* Device memory: what the backend took from the device's allocator
     * (buffers, workspaces, segments lent to a pool), now and at most
     * since the process started, and the device's own count of used
     * memory (every process, the runtime's context included) at the
     * highest the backend saw it. 0 when unknown; CPU backends report 0,
     * their memory shows in the process's RSS. */
    uint64_t mem_held, mem_held_peak;
    uint64_t mem_used_peak;
};

/* ---- Operation descriptors. All sizes are element counts. ---------- */

/* 2-D convolution, cross-correlation as in common frameworks.
 * x [n][in_c][in_h][in_w], w [out_c][in_c / groups][kh][kw], b [out_c] or
 * NULL, y [n][out_c][out_h][out_w] with out_h = (in_h + 2*pad_h - kh) /
 * stride_h + 1 (dlb_conv_out_size). Padding is zeros. With g groups the
 * channels split into g equal groups, output group j reading input group
 * j only (PyTorch's groups; depthwise: g = in_c = out_c); 0 and 1 both
 * mean one group, and g divides in_c and out_c. */
struct dlb_conv2d_desc {
    uint32_t n, in_c, in_h, in_w;
    uint32_t out_c, kh, kw;
    uint32_t stride_h, stride_w, pad_h, pad_w;
    uint32_t out_h, out_w;
    uint32_t groups;
};

/* Channel concatenation, one input at a time: x [n][c][hw] is channels
 * [offset, offset + c) of y [n][c_total][hw]. */
struct dlb_concat_desc {
    uint32_t n, c, c_total, offset, hw;
};

enum dlb_pool_kind { DLB_POOL_MAX, DLB_POOL_AVG };

/* Pooling over each channel plane. Max pooling pads with -infinity; average
 * pooling divides by kh*kw, padding included (PyTorch's count_include_pad).
 * Output size as for convolution. */
struct dlb_pool_desc {
    enum dlb_pool_kind kind;
    uint32_t n, c, in_h, in_w;
    uint32_t kh, kw, stride_h, stride_w, pad_h, pad_w;
    uint32_t out_h, out_w;
};

enum dlb_dropout_mode {
    DLB_DROPOUT_ELEMENT, /* each element is kept or zeroed */
    DLB_DROPOUT_CHANNEL  /* each (n, c) plane is kept or zeroed (dropout2d) */
};

/* Dropout on x [n][c][hw] (a flat tensor is c = features, hw = 1). Kept
 * values are scaled by 1/(1-p); p = 1 zeroes everything. `seed` changes
 * every step: the model draws it from its seeded dlb_rng stream. */
struct dlb_dropout_desc {
    enum dlb_dropout_mode mode;
    uint32_t n, c, hw;
    float p;
    uint64_t seed;
};

/* Batch normalisation over x [n][c][hw] per channel c. */
struct dlb_batchnorm_desc {
    uint32_t n, c, hw;
    float eps;       /* 1e-5 in common frameworks */
    float momentum;  /* running = (1-m)*running + m*batch; 0.1 as PyTorch */
};

/* Fully connected: y [n][out] = x [n][in] * w[out][in]^T + b[out]. */
struct dlb_linear_desc {
    uint32_t n, in, out;
};

/* A linear layer whose weights W [out][in] are a CSR matrix (API 1.1):
 * row o holds the nonzeros of output unit o at positions
 * row_ptr[o] .. row_ptr[o+1]-1 of col (their input index, ascending) and
 * val; row_ptr[0] = 0, row_ptr[out] = nnz. */
struct dlb_csr_linear_desc {
    uint32_t n, in, out;
    uint32_t nnz;
};

/* Log-softmax over classes of x [n][classes]; NLL loss with labels [n]
 * (S32, each in [0, classes)), averaged over the batch. */
struct dlb_loss_desc {
    uint32_t n, classes;
};

/* SGD with momentum as PyTorch (dampening 0, not Nesterov), per element:
 *   g' = g + weight_decay * w;  v = momentum * v + g';  w -= lr * v.
 * With v starting at zero the first step is v = g', as PyTorch's. */
struct dlb_sgd_desc {
    size_t count;
    float lr, momentum, weight_decay;
};

/* int8 inference (API 1.1): the quantisation of one int8 convolution or
 * linear layer. Real values are affine in the stored integers,
 * r = scale * (q - zero_point); activations are S8 (zero point 0) or U8,
 * weights S8 with zero point 0 and a scale per tensor or per output
 * channel (a separate F32 buffer, see conv2d_int8_fwd). */
struct dlb_int8_desc {
    enum dlb_dtype x_type;  /* S8 or U8: x's type, or what an F32 x is
                               quantised to on the way in */
    float x_scale;          /* > 0 */
    int32_t x_zero_point;   /* 0 for S8 x, in [0, 255] for U8 x */
    float y_scale;          /* > 0; read only when y is S8 or U8 */
    int32_t y_zero_point;   /* read only when y is S8 or U8 */
    int relu;               /* 1: ReLU on the real output, then requantise */
};

/* One host-to-device copy of an upload (upload_async, API 1.4). */
struct dlb_upload_part {
    struct dlb_buffer *dst;
    size_t dst_off;         /* bytes */
    const void *src;        /* host memory, page-locked for overlap */
    size_t bytes;
};

/* A dropout seed to replace in a graph's replay (graph_launch). */
struct dlb_graph_seed {
    uint64_t captured, now;
};

/* ---- Operations. --------------------------------------------------------
 * Every computation is one entry point: the core fills a struct dlb_op (a
 * kind, a propagation, the attributes of that kind and its tensors) and
 * calls dlb_backend_run (core/backend/backend.h), which checks the
 * descriptor once for every backend (op_check.c) and runs the first kernel
 * of the backend's list that applies (dlb_backend_ops.kernels), as
 * oneDNN's implementation lists do. Adding an operation is a kind below,
 * its check, and a kernel in each backend's list that has one.
 *
 * The tensors of each kind and propagation (T: the descriptor's type; "?"
 * may be NULL; "inout": read and written in place):
 *
 * CONV2D (conv): cross-correlation as common frameworks, zero padding,
 *   in conv.groups channel groups (grouped and depthwise: the
 *   descriptor's comment; a backend's fast kernels for one group leave
 *   the others to its general one). x [n][in_c][in_h][in_w],
 *   w [out_c][in_c / groups][kh][kw], b [out_c],
 *   y [n][out_c][out_h][out_w].
 *   FWD_TRAIN, FWD_INFER: x, w, b?, y. A kernel may serve inference only
 *     (it may round otherwise than training's: a model's training passes
 *     keep one kernel per layer, so that a pipeline's stages and one
 *     worker compute the same bits).
 *   BWD_DATA: w, dy, dx.  BWD_WEIGHTS: x, dy, dw, db? (db: dy summed over
 *     n, h, w).
 *   Mixed types (the cpu backend): fwd and bwd_data compute in w's type,
 *   bwd_weights in BF16 when any of x, dy, dw is BF16, else F32; inputs of
 *   another type are rounded to the compute type on the way in, outputs
 *   written in their own type (F32 or BF16) from F32 accumulators. Other
 *   backends may have no kernel for mixed types; ref computes any
 *   combination in double.
 * CONV2D_POOL (conv, pool, relu): a convolution and a max pooling of its
 *   output in one pass (the convolution's output is never written).
 *   FWD_TRAIN, FWD_INFER: x, w, b?, y = [relu](maxpool(conv(x, w) + b)),
 *     ws? (training, without the ReLU: the pooling's workspace as POOL
 *     writes it, so that POOL's BWD runs on it).
 *   BWD_WEIGHTS: x, dy (the pooling's output gradient), ws, dw, db?: the
 *     convolution's weight gradient from what POOL's BWD would have made
 *     of dy, for a first layer (no dx).
 * CONV2D_RELU (conv, relu_max): FWD_INFER only: x, w, b?, y =
 *   relu(conv(x, w) + b), clipped at relu_max when it is positive (ReLU6),
 *   as CONV2D then RELU in place would write it; a backend without a
 *   kernel for it leaves the two apart (an inference pass asks first).
 * CONV2D_ADD (conv, relu, relu_max): FWD_INFER only: x, w, b?, y =
 *   [relu](conv(x, w) + b + y): the convolution summed onto what y holds
 *   (a residual block's other branch, whose buffer the caller hands over
 *   when nothing reads it after the add), and with relu the ReLU of the
 *   sum (clipped at relu_max when positive), as CONV2D, ADD and RELU would
 *   write it, in one pass over the block's output instead of three. x must
 *   not alias y.
 * CONV2D_DW (conv, relu, relu_max, dwconv, relu2, relu2_max): FWD_INFER:
 *   x, w, b?, w2, b2?, y = [relu2](dwconv(t, w2) + b2) with t =
 *   [relu](conv(x, w) + b): a 1x1 convolution (stride 1, no padding, one
 *   group) and the depthwise 3x3 one after it (dwconv: groups = channels =
 *   conv.out_c, padding 1, stride 1 or 2, its input conv's output), each
 *   with its ReLU when set (clipped at its max when positive), as
 *   CONV2D_RELU twice would write it; t, an inverted residual block's
 *   expanded tensor, is never written whole.
 * POOL (pool): max pooling pads with -infinity, average pooling divides by
 *   kh*kw, padding included (PyTorch's count_include_pad); output size as
 *   for a convolution; ties pick the first maximum.
 *   FWD_TRAIN, FWD_INFER: x, y, ws? (max pooling: S32 of y's count, the
 *     index of each maximum within its input plane). S8 or U8 x and y (max
 *     pooling, no ws) keep int8 data int8 across the layer: exact, since
 *     the maximum commutes with the monotone quantisation.
 *   BWD: dy, ws, dx.
 * RELU (count, relu_max): FWD_*: x, y (y may alias x) = max(x, 0), and
 *   with relu_max > 0 min(that, relu_max) (ReLU6: 6; a negative or NaN
 *   relu_max is refused).  BWD: y (the forward's output: y > 0 exactly
 *   where x > 0), dy, dx = dy where y > 0 (and y < relu_max when set: the
 *   gradient of a clipped value is 0, as PyTorch's hardtanh), else 0 (dx
 *   may alias dy).
 * ADD_RELU (count, relu_max): NONE: x, g, y as ADD, then the ReLU of the
 *   sum (clipped at relu_max when positive), as ADD then RELU in place
 *   would write it; an inference pass fuses a residual add with the ReLU
 *   after it where the backend has a kernel.
 * CONCAT (concat): FWD_*: x, y: channels [offset, offset + c) of y = x,
 *   the rest of y untouched.  BWD: dy (y's gradient), dx = those channels
 *   of dy. Input and output of one float type; a copy, exact. A
 *   concatenation of k inputs is k operations into one y (and back).
 * DROPOUT (drop): the mask of dlb_dropout_keep(drop.seed, index, ...);
 *   kept values scaled by 1/(1-p). FWD_TRAIN: x, y.  BWD: dy, dx (the same
 *   mask from the same descriptor).
 * BATCHNORM (bn): gamma (w), beta (b), running and saved statistics are
 *   F32 [c].
 *   FWD_TRAIN: x, w, b, mean, var (inout: the running statistics, updated
 *     with the momentum, the variance unbiased by n*hw/(n*hw-1), as
 *     PyTorch), save_mean, save_invstd (the batch's mean and
 *     1/sqrt(var+eps), biased), y.
 *   FWD_INFER: x, w, b, mean, var (the running statistics), y.
 *   BWD: x, dy, w, save_mean, save_invstd, dx, dw (dgamma), db (dbeta).
 * BATCHNORM_RELU (bn): a training batch norm and the ReLU after it.
 *   FWD_TRAIN: BATCHNORM's tensors, y = relu(bn(x)).
 *   BWD: x, y, dy, w, b, save_mean, save_invstd, dx, dw, db: the ReLU's
 *     gradient applied first (a kernel may recompute its mask from x, b
 *     and the saved statistics instead of reading y); dx may alias dy.
 * LINEAR (linear): y [n][out] = x [n][in] w[out][in]^T + b[out].
 *   FWD_*: x, w, b?, y.  BWD: x, w, dy, dx?, dw, db?.
 * LINEAR_CSR (csr): LINEAR's FWD_INFER with w in CSR form: row_ptr (S32,
 *   out + 1), col (S32, nnz: input index, ascending per row), val (F32,
 *   nnz), b?, x, y (F32); equal to the dense result up to the order of the
 *   sums.
 * LOGSOFTMAX (loss): FWD_*: x, y = x - log(sum(exp(x))) per row, stably.
 * NLL_LOSS (loss): FWD_TRAIN: x (log-probabilities), labels (S32 in
 *   [0, classes)), y (F32, one element) = -mean_i x[i][label_i].
 * LOGSOFTMAX_NLL (loss, alpha): BWD: x (the log-probabilities), labels, dx
 *   = alpha * (exp(x) - onehot(label)) / n, alpha being the loss scale.
 * SGD (sgd): momentum as PyTorch (dampening 0, not Nesterov):
 *   g' = g + weight_decay * param; v = momentum * v + g'; param -= lr * v.
 *   NONE: param (inout), g, v (inout).
 * SGD_IF_FINITE (sgd): SGD's tensors and found (S32, one element): the
 *   update runs only where found is 0. Nothing waits.
 * UNSCALE_CHECK (count, alpha): NONE: y (inout) *= alpha (skipped at 1),
 *   then found (S32, one element) = 1 when any element of y is inf or NaN;
 *   never cleared here (fill it with 0 first). Nothing waits.
 * CAST (count): NONE: x, y between F32, F16, BF16, F64, round to nearest
 *   even, overflow to infinity, NaN kept.
 * SCALE (count, alpha): NONE: y (inout) *= alpha.
 * CHECK_FINITE (count): NONE: x; *nonfinite (host) = 1 when any element is
 *   inf or NaN, else 0. It waits for the stream.
 * FILL (count, value): NONE: y = value, rounded to its type.
 * ADD (count): NONE: x, g, y = x + g, all three of one float type, the sum
 *   rounded once to it (as the exact sum would be: ref's double sum is
 *   exact for F32 and rounds through F32 for F16 and BF16); y may alias x
 *   or g. A residual connection's forward, and the gradient of a tensor
 *   that feeds several layers accumulated in backward.
 * QUANTIZE, DEQUANTIZE (count, alpha = scale, zero_point): NONE: x, y,
 *   q = clamp(round_half_even(x / scale) + zero_point) to y's type (S8,
 *   U8); x = (q - zero_point) * scale.
 * ALLREDUCE_SUM (count): NONE: y (inout) summed over all replicas.
 * CONV2D_INT8 (conv, q), LINEAR_INT8 (linear, q): FWD_INFER: x of
 *   q.x_type (or F32, quantised first as QUANTIZE does), w (S8), w_scale
 *   (F32, 1 or out_c/out elements), b? (S32, accumulator units), y (F32
 *   dequantised, or S8/U8 requantised). Per output element, o its channel:
 *   acc = sum of (qx - x_zero_point) * qw over o's group of inputs, exact
 *   in 32-bit integers (padding is the real value 0; a backend may refuse
 *   groups here with DLB_ERR_UNSUPPORTED, as cuda does); M = x_scale *
 *   w_scale[o] (F32 y), or that / y_scale (S8, U8 y), in float, left to
 *   right; v = ((float)acc + (float)b[o]) * M, max(v, 0) when q.relu;
 *   y = v, or clamp(round_half_even(v) + y_zero_point). Integer parts
 *   are exact everywhere; the float steps may differ in the last bit (1
 *   for S8/U8 y, 1e-6 relative for F32). Callers keep |acc| below 2^24.
 * CONV2D_INT8_ADD (conv, q, relu, relu_max): FWD_INFER: as CONV2D_INT8
 *   with an F32 y, summed onto what y holds (a residual block's other
 *   branch, in fp32), and with relu the ReLU of the sum (clipped at
 *   relu_max when positive): y = [relu](v + y), as CONV2D_INT8, ADD and
 *   RELU would write it, in one pass instead of three; the sum rounds
 *   once, in float. x must not alias y. A backend without the kernel
 *   leaves the three apart (an inference pass asks first). */
enum dlb_op_kind {
    DLB_OP_CONV2D, DLB_OP_CONV2D_POOL, DLB_OP_POOL, DLB_OP_RELU,
    DLB_OP_DROPOUT, DLB_OP_BATCHNORM, DLB_OP_BATCHNORM_RELU, DLB_OP_LINEAR,
    DLB_OP_LINEAR_CSR, DLB_OP_LOGSOFTMAX, DLB_OP_NLL_LOSS,
    DLB_OP_LOGSOFTMAX_NLL, DLB_OP_SGD, DLB_OP_SGD_IF_FINITE,
    DLB_OP_UNSCALE_CHECK, DLB_OP_CAST, DLB_OP_SCALE, DLB_OP_CHECK_FINITE,
    DLB_OP_FILL, DLB_OP_QUANTIZE, DLB_OP_DEQUANTIZE, DLB_OP_ALLREDUCE_SUM,
    DLB_OP_CONV2D_INT8, DLB_OP_LINEAR_INT8, DLB_OP_ADD, DLB_OP_CONCAT,
    DLB_OP_CONV2D_RELU, DLB_OP_ADD_RELU, DLB_OP_CONV2D_ADD, DLB_OP_CONV2D_DW,
    DLB_OP_CONV2D_INT8_ADD,
    DLB_OP_KIND_COUNT
};

/* Propagation: which computation of a kind. NONE for the kinds that have
 * one (element-wise, updates, collectives). */
enum dlb_prop {
    DLB_PROP_NONE, DLB_PROP_FWD_TRAIN, DLB_PROP_FWD_INFER, DLB_PROP_BWD,
    DLB_PROP_BWD_DATA, DLB_PROP_BWD_WEIGHTS,
    DLB_PROP_COUNT
};
/* A kernel's propagations as a mask. */
#define DLB_PROPS(p) (1u << (p))
#define DLB_PROPS_FWD (DLB_PROPS(DLB_PROP_FWD_TRAIN) | DLB_PROPS(DLB_PROP_FWD_INFER))

/* One operation: the kind's attributes and tensors (the table above);
 * members a kind does not use stay zero or NULL. A compound literal with
 * designated initialisers reads as the call it is:
 *   dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_RELU,
 *       .prop = DLB_PROP_FWD_TRAIN, .count = n, .x = x, .y = y}); */
struct dlb_op {
    enum dlb_op_kind kind;
    enum dlb_prop prop;
    const char *label;       /* the layer, for messages and the profile */
    struct dlb_conv2d_desc conv;
    struct dlb_pool_desc pool;
    struct dlb_batchnorm_desc bn;
    struct dlb_linear_desc linear;
    struct dlb_csr_linear_desc csr;
    struct dlb_dropout_desc drop;
    struct dlb_loss_desc loss;
    struct dlb_sgd_desc sgd;
    struct dlb_int8_desc q;
    struct dlb_concat_desc concat;
    size_t count;            /* element-wise kinds */
    float relu_max;          /* RELU: the upper clip, 0 for none */
    float alpha;             /* SCALE, UNSCALE_CHECK, LOGSOFTMAX_NLL,
                                (DE)QUANTIZE: the scale */
    int32_t zero_point;      /* (DE)QUANTIZE */
    double value;            /* FILL */
    int relu;                /* CONV2D_POOL: a ReLU after the pooling;
                                CONV2D_ADD, CONV2D_INT8_ADD: after the
                                sum; CONV2D_DW: after the 1x1 */
    struct dlb_conv2d_desc dwconv; /* CONV2D_DW: the depthwise convolution */
    int relu2;               /* CONV2D_DW: a ReLU after it, clipped at */
    float relu2_max;         /* relu2_max when positive */
    const struct dlb_buffer *w2, *b2; /* CONV2D_DW: its weights, bias */
    const struct dlb_buffer *x, *w, *b, *dy, *g, *labels;
    const struct dlb_buffer *w_scale, *row_ptr, *col, *val;
    struct dlb_buffer *y, *dx, *dw, *db, *ws;
    struct dlb_buffer *mean, *var, *save_mean, *save_invstd;
    struct dlb_buffer *param, *v, *found;
    int *nonfinite;          /* CHECK_FINITE's answer */
};

/* One implementation of a kind: `applies` says whether it takes this
 * descriptor (the types, shapes and layouts it covers; NULL: every
 * descriptor of its kind and propagations, checked), `run` computes it.
 * A backend lists its kernels in order of preference: the first that
 * applies runs, and a profile (suite key profile = ops) names it. */
struct dlb_kernel {
    const char *name;        /* "onednn", "conv1_avx512", "cudnn" */
    enum dlb_op_kind kind;
    unsigned props;          /* DLB_PROPS(...) of the propagations it runs */
    int (*applies)(struct dlb_backend *be, const struct dlb_op *op);
    dlb_status (*run)(struct dlb_backend *be, const struct dlb_op *op);
};

/* ---- The device interface. Entries marked optional may be NULL: the core
 * then returns DLB_ERR_UNSUPPORTED naming them. ----------------------- */
struct dlb_backend_ops {
    uint32_t struct_size;   /* sizeof(struct dlb_backend_ops) */
    uint16_t api_major;     /* DLB_BACKEND_API_MAJOR */
    uint16_t api_minor;     /* DLB_BACKEND_API_MINOR */
    const char *name;       /* "ref", "cpu", "cuda" */

    /* Release everything the backend holds. Buffers and timers must have
     * been freed before. */
    void (*destroy)(struct dlb_backend *be);

    /* DLB_OK when the device can do `cap`, else DLB_ERR_UNSUPPORTED with a
     * reason ("no AVX512_FP16: oneDNN 2.6 has no fp16 kernels here"). */
    dlb_status (*supports)(struct dlb_backend *be, enum dlb_backend_cap cap,
                           char *reason, size_t reason_len);
    dlb_status (*device_info)(struct dlb_backend *be,
                              struct dlb_device_info *out);

    /* Buffers of `count` elements of `dtype`; contents undefined. Out of
     * device memory is DLB_ERR_NOMEM. free accepts NULL. */
    dlb_status (*buffer_alloc)(struct dlb_backend *be, enum dlb_dtype dtype,
                               size_t count, struct dlb_buffer **out);
    void (*buffer_free)(struct dlb_backend *be, struct dlb_buffer *buf);

    /* Copies in bytes at byte offsets. from_host may return before the
     * device has the data but the host memory may be reused at once;
     * to_host returns when `dst` holds the data (it waits for the stream). */
    dlb_status (*copy_from_host)(struct dlb_backend *be, struct dlb_buffer *dst,
                                 size_t dst_off, const void *src, size_t bytes);
    dlb_status (*copy_to_host)(struct dlb_backend *be, void *dst,
                               const struct dlb_buffer *src, size_t src_off,
                               size_t bytes);
    dlb_status (*copy)(struct dlb_backend *be, struct dlb_buffer *dst,
                       size_t dst_off, const struct dlb_buffer *src,
                       size_t src_off, size_t bytes);

    /* Wait until all enqueued work is done; errors of asynchronous work
     * surface here at the latest. */
    dlb_status (*synchronize)(struct dlb_backend *be);

    /* Timers: start and stop are recorded on the stream; elapsed (seconds)
     * is valid once both marks completed (after synchronize). */
    dlb_status (*timer_create)(struct dlb_backend *be, struct dlb_timer **out);
    void (*timer_destroy)(struct dlb_backend *be, struct dlb_timer *t);
    dlb_status (*timer_start)(struct dlb_backend *be, struct dlb_timer *t);
    dlb_status (*timer_stop)(struct dlb_backend *be, struct dlb_timer *t);
    dlb_status (*timer_elapsed)(struct dlb_backend *be, struct dlb_timer *t,
                                double *seconds);

    /* The kernels, in order of preference within each kind (struct
     * dlb_kernel): every operation runs on the first that applies. */
    const struct dlb_kernel *kernels;
    size_t n_kernels;

    /* ---- API 1.1: buffers in place (the dp plugin) ---- */

    /* Optional. The buffer's bytes in place, in its host view's layout, for
     * communication libraries that read and write them directly (MPI on
     * host memory, NCCL on device memory): *ptr, with *device 0 for host
     * memory, 1 for device memory. The view stays valid until the next
     * operation on the buffer; after writing through it, unmap with
     * `written` 1 so that the backend drops what it derived from the old
     * contents (reordered copies). DLB_ERR_UNSUPPORTED when the buffer
     * cannot be shown in place: use the copies then. */
    dlb_status (*map)(struct dlb_backend *be, struct dlb_buffer *buf,
                      void **ptr, int *device);
    dlb_status (*unmap)(struct dlb_backend *be, struct dlb_buffer *buf,
                        int written);

    /* ---- the gradient scaler's flag on the device (the amp plugin) ---- */

    /* Optional, both or none (with kernels of SGD_IF_FINITE and
     * UNSCALE_CHECK): flag_post enqueues a copy of `found` (S32, one
     * element) to host memory the backend keeps and returns at once;
     * flag_wait waits for that copy only (work enqueued after flag_post
     * runs on) and gives the value. One post is outstanding per backend; a
     * new post replaces it; flag_wait without a post is DLB_ERR_INTERNAL.
     * Backends that run synchronously (ref, cpu) need none of this: the
     * core then uses CHECK_FINITE and SGD. */
    dlb_status (*flag_post)(struct dlb_backend *be,
                            const struct dlb_buffer *found);
    dlb_status (*flag_wait)(struct dlb_backend *be, int32_t *value);

    /* ---- API 1.3: graphs of a whole training step (cuda.graphs) ---- */

    /* Optional, all five or none. A graph records the operations enqueued
     * between graph_begin and graph_end once and replays them with one
     * launch, as CUDA graphs do.
     * graph_create: an empty graph with memory of its own.
     * graph_begin: from here to graph_end, buffers allocated come from
     *   the graph's memory and stay the graph's after buffer_free (a
     *   replay writes them again), and buffers of other memory freed in
     *   between are released at graph_end. capture 0: the operations run
     *   as usual; this warm-up sizes the graph's memory and every
     *   workspace, and makes the per-shape choices (algorithm search),
     *   so that the captured run needs none of it. capture 1: the
     *   operations are recorded, not run, and must not allocate memory
     *   the warm-up did not, wait for the device, or read results on the
     *   host (copy_to_host, check_finite, flag_wait, timers): those fail
     *   with DLB_ERR_INTERNAL and abandon the capture.
     * graph_end: ends the run or the capture; a capture is made ready to
     *   launch (a second capture replaces the first, updating it in place
     *   where the shapes allow). *capture_s, when not NULL, is the host
     *   time the capture and its instantiation took (0 after a warm-up).
     * graph_launch: enqueue one replay on the stream. Dropout seeds are
     *   arguments the capture froze: seeds[k].captured, a seed value the
     *   captured step used, is replaced by seeds[k].now in this replay
     *   (values the step did not use are ignored: a layer may not have
     *   reached the backend), so that a replay draws fresh masks as an
     *   eager step would; seeds not given keep their captured values.
     * graph_destroy: waits for the replays in flight, then frees the
     *   graph and the memory of its that no live buffer holds; NULL is
     *   fine. */
    dlb_status (*graph_create)(struct dlb_backend *be, struct dlb_graph **out);
    dlb_status (*graph_begin)(struct dlb_backend *be, struct dlb_graph *g,
                              int capture);
    dlb_status (*graph_end)(struct dlb_backend *be, struct dlb_graph *g,
                            double *capture_s);
    dlb_status (*graph_launch)(struct dlb_backend *be, struct dlb_graph *g,
                               const struct dlb_graph_seed *seeds, size_t n);
    void (*graph_destroy)(struct dlb_backend *be, struct dlb_graph *g);

    /* ---- API 1.4: batches uploaded on a copy stream (dataloader) ---- */

    /* Optional, both or none; backends whose buffers live in host memory
     * (ref, cpu) have none. Page-locked host memory, which the device
     * reads by DMA without the host in the way (cudaHostAlloc); the host
     * reads and writes it as any memory. host_free_pinned takes the same
     * byte count and waits for nothing: no upload may still read it. */
    dlb_status (*host_alloc_pinned)(struct dlb_backend *be, size_t bytes,
                                    void **out);
    void (*host_free_pinned)(struct dlb_backend *be, void *p, size_t bytes);

    /* Optional, all six or none. An upload copies host memory into
     * buffers on a copy stream of the backend's own, so that a batch's
     * copy runs while the stream computes on the batch before.
     * upload_create / upload_destroy: destroy waits for its copies.
     * upload_async: enqueue the n copies on the copy stream, after all
     *   work enqueued on the stream so far (which may still read the
     *   destinations) and beside work enqueued later; returns at once.
     *   The sources must stay untouched until upload_sync; from pageable
     *   memory the copy is right but the host waits for it.
     * upload_wait: work enqueued on the stream from now on runs after
     *   the copies; the host does not wait.
     * upload_sync: the host waits until the copies are done: their
     *   sources may be written again.
     * upload_figures: of the last upload_async and upload_wait, the
     *   copies' device time and how long the stream waited for them at
     *   upload_wait (0 when they were done before it got there); waits
     *   for both marks. DLB_ERR_INTERNAL without a wait since the copy.
     * None of them may run during a graph capture (DLB_ERR_INTERNAL). */
    dlb_status (*upload_create)(struct dlb_backend *be, struct dlb_upload **out);
    void (*upload_destroy)(struct dlb_backend *be, struct dlb_upload *u);
    dlb_status (*upload_async)(struct dlb_backend *be, struct dlb_upload *u,
                               const struct dlb_upload_part *parts, size_t n);
    dlb_status (*upload_wait)(struct dlb_backend *be, struct dlb_upload *u);
    dlb_status (*upload_sync)(struct dlb_backend *be, struct dlb_upload *u);
    dlb_status (*upload_figures)(struct dlb_backend *be, struct dlb_upload *u,
                                 double *copy_s, double *stall_s);
};

/* Output size of a convolution or pooling window along one axis; 0 when
 * the padded input is smaller than the kernel or the stride is 0. */
static inline uint32_t dlb_conv_out_size(uint32_t in, uint32_t k,
                                         uint32_t stride, uint32_t pad)
{
    uint64_t padded = (uint64_t)in + 2u * (uint64_t)pad;
    if (stride == 0 || k == 0 || padded < k)
        return 0;
    return (uint32_t)((padded - k) / stride + 1);
}

/* The dropout mask, the same on every backend. Element (or, in channel
 * mode, plane) `index` of a step with seed `seed` is kept when the top 24
 * bits of h = mix(seed + (index + 1) * 0x9e3779b97f4a7c15) are >= the
 * threshold round(p * 2^24), where mix is splitmix64's finaliser. Index is
 * the flat element index (element mode) or n_i * c + c_i (channel mode).
 * A CUDA kernel copies these lines with __device__ added. */
static inline uint32_t dlb_dropout_threshold(float p)
{
    if (!(p > 0.0f))
        return 0;
    if (p >= 1.0f)
        return 1u << 24;
    return (uint32_t)((double)p * 16777216.0 + 0.5);
}

static inline int dlb_dropout_keep(uint64_t seed, uint64_t index,
                                   uint32_t threshold)
{
    uint64_t z = seed + (index + 1u) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (uint32_t)(z >> 40) >= threshold;
}

#ifdef __cplusplus
}
#endif
#endif
