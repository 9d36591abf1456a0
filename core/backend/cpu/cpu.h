/* The cpu backend's private declarations: the context, the buffer side
 * state, the primitive cache and the helpers the op files share.
 *
 * Buffers live in 64-byte aligned host memory from the configuration's
 * allocator, holding either their host view (dense NCHW / row-major) or
 * the layout the primitive that wrote them chose (cpu_layout.c): a
 * convolution's blocked output goes on to batch norm, ReLU, pooling and
 * dropout as it is, and only the copies and ops that index the host view
 * translate. oneDNN primitives are created once per shape and kept in a
 * cache keyed by the operation and its descriptor and element types;
 * weights reordered for a primitive are kept beside their buffer (a
 * "shadow") until the buffer is written again (its version changes). */
#ifndef DLB_CPU_H
#define DLB_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_dnnl_api.h"

#include "../backend.h"
#include "../backend_impl.h"
#include "../backend_kernels.h"
#include "../backend_ops.h"

/* Expand to an OpenMP pragma when built with OpenMP, else to nothing. */
#ifdef _OPENMP
#define DLB_OMP(x) _Pragma(x)
#else
#define DLB_OMP(x)
#endif

/* Loops below this many elements run on one thread: a parallel region
 * costs microseconds, more than the work. */
#define DLB_CPU_PAR_MIN 32768

struct dlb_cpu_prim;

/* Backend-wide scratch slots: activations reordered to or from a blocked
 * layout inside one operation. Ops run one at a time, so a few slots that
 * grow to the largest tensor serve every shape. Slots 0 to
 * DLB_CPU_IO_MAX - 1 belong to dlb_cpu_io_run's tensors; the others are
 * named below. */
#define DLB_CPU_SCRATCH_SLOTS 13
enum { DLB_CPU_SLOT_PLAIN = 4, /* dlb_cpu_make_plain's staging */
       DLB_CPU_SLOT_VIEW_A = 5, DLB_CPU_SLOT_VIEW_B = 6,
       DLB_CPU_SLOT_F32 = 7, DLB_CPU_SLOT_F32_B = 8, DLB_CPU_SLOT_F32_C = 9,
       DLB_CPU_SLOT_INT8 = 10, /* cpu_int8*.c: a quantised or im2col input */
       DLB_CPU_SLOT_ONEDNN = 11, /* a primitive's scratchpad (user mode) */
       DLB_CPU_SLOT_OWN = 12 /* an own kernel's per-thread buffers */ };

struct dlb_cpu_reorder;

struct dlb_cpu {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    int threads;
    int winograd; /* dlb_backend_config.winograd, resolved */
    uint64_t seed;
    void *(*host_alloc)(void *ctx, size_t bytes);
    void (*host_free)(void *ctx, void *p, size_t bytes);
    void *alloc_ctx;
    struct dlb_cpu_prim **buckets; /* the primitive cache */
    size_t n_buckets, n_prims;
    void *scratch[DLB_CPU_SCRATCH_SLOTS];      /* aligned data */
    void *scratch_block[DLB_CPU_SCRATCH_SLOTS]; /* as allocated */
    size_t scratch_bytes[DLB_CPU_SCRATCH_SLOTS];
    struct dlb_cpu_reorder *reorders; /* cpu_layout.c's reorder cache */
};

/* A weight buffer reordered into a primitive's layout, valid while the
 * buffer's version equals `version`. */
struct dlb_cpu_shadow {
    dlb_dnnl_md md;
    uint64_t version;
    void *data, *block;
    size_t block_bytes;
    struct dlb_cpu_shadow *next;
};

/* What buffer->impl points to. A buffer holds its host view (plain) or,
 * after a primitive wrote it, the layout that primitive chose (`md`,
 * blocked): the next primitive then reads it without a reorder, and only
 * the copies and the own loops that need the host view translate. A
 * padded layout (16 channels for 10) can need more bytes than the host
 * view: the storage then grows to `block_bytes`. */
struct dlb_cpu_buf {
    void *block;          /* as the allocator returned it */
    size_t block_bytes;   /* what the storage can hold, plus the 64 */
    uint64_t version;     /* bumped by every write */
    struct dlb_cpu_shadow *shadows;
    int blocked;          /* 0: data is the host view; 1: data is in md */
    dlb_dnnl_md md;
    /* cpu_int8_cols.c: int8 conv weights packed for several pixels per
     * row, built from this buffer at version packed_version; NULL when
     * none was needed. */
    struct dlb_buffer *packed;
    uint64_t packed_version;
    uint32_t packed_geom;
};

/* ---- the primitive cache (cpu_cache.c) ----------------------------- */

#define DLB_CPU_KEY_WORDS 20
#define DLB_CPU_PRIMS 6
#define DLB_CPU_MEMS 14
#define DLB_CPU_MDS 6
#define DLB_CPU_IO_MAX 4
/* pd[DLB_CPU_HINT] keeps a backward primitive's forward hint alive. */
#define DLB_CPU_HINT (DLB_CPU_PRIMS - 1)

/* Kinds of cached entries; part of the key. */
enum dlb_cpu_op {
    DLB_CPU_CONV_FWD = 1, DLB_CPU_CONV_BWD_DATA, DLB_CPU_CONV_BWD_WEIGHTS,
    DLB_CPU_RELU_FWD, DLB_CPU_RELU_BWD, DLB_CPU_BN_FWD_TRAIN,
    DLB_CPU_BN_FWD_INFER, DLB_CPU_BN_BWD, DLB_CPU_IP_FWD, DLB_CPU_IP_BWD_DATA,
    DLB_CPU_IP_BWD_WEIGHTS, DLB_CPU_POOL_FWD_INFER, DLB_CPU_CONV_DW_FWD,
    /* cpu_int8*.c */
    DLB_CPU_CONV_INT8 = 64, DLB_CPU_IP_INT8, DLB_CPU_POOL_INT8,
    DLB_CPU_CONV_INT8_ADD
};

struct dlb_cpu_key {
    uint32_t op;
    uint32_t w[DLB_CPU_KEY_WORDS];
};

/* One cached operation instance: its primitives (the main one first, then
 * reorders), memory objects whose handles are set per call, memory
 * descriptors the op needs again, and op-specific flags. The op files
 * define which slot holds what. */
struct dlb_cpu_prim {
    struct dlb_cpu_key key;
    dnnl_primitive_desc_t pd[DLB_CPU_PRIMS];
    dnnl_primitive_t prim[DLB_CPU_PRIMS];
    dnnl_memory_t mem[DLB_CPU_MEMS];
    dlb_dnnl_md md[DLB_CPU_MDS];
    int flags;
    int n_io;                    /* tensors run through dlb_cpu_io_run */
    int io_arg[DLB_CPU_IO_MAX];  /* DNNL_ARG_SRC ... */
    int io_role[DLB_CPU_IO_MAX]; /* enum dlb_cpu_role */
    dlb_dnnl_md io_md[DLB_CPU_IO_MAX]; /* the primitive's layouts of them */
    dlb_dnnl_md io_out[DLB_CPU_IO_MAX]; /* OUT_RETYPED: the buffer's layout */
    struct dlb_cpu_prim *next;
};

/* The cached entry for `key`, or NULL. */
struct dlb_cpu_prim *dlb_cpu_cache_find(struct dlb_cpu *cpu,
                                        const struct dlb_cpu_key *key);
/* A new zeroed entry for `key`; the caller fills it and then either
 * dlb_cpu_cache_insert or dlb_cpu_prim_free. NULL when out of memory. */
struct dlb_cpu_prim *dlb_cpu_prim_new(const struct dlb_cpu_key *key);
void dlb_cpu_cache_insert(struct dlb_cpu *cpu, struct dlb_cpu_prim *p);
void dlb_cpu_prim_free(struct dlb_cpu_prim *p);
void dlb_cpu_cache_clear(struct dlb_cpu *cpu);
/* The entry for `key`: found, or made by build(be, p, arg) and inserted.
 * build records the reason when it fails. */
typedef dlb_status (*dlb_cpu_build_fn)(struct dlb_backend *be,
                                       struct dlb_cpu_prim *p, const void *arg);
dlb_status dlb_cpu_cache_get(struct dlb_backend *be,
                             const struct dlb_cpu_key *key,
                             dlb_cpu_build_fn build, const void *arg,
                             struct dlb_cpu_prim **out);

/* ---- oneDNN helpers (cpu_dnnl.c) ----------------------------------- */

/* Record a failed oneDNN call: DLB_ERR_UNSUPPORTED for "unimplemented"
 * (no kernel for these types on this CPU), DLB_ERR_NOMEM for out of
 * memory, else DLB_ERR_RUNTIME, with the dnnl status named. */
dlb_status dlb_cpu_dnnl_fail(struct dlb_backend *be, dnnl_status_t st,
                             const char *op, const char *call);
/* Evaluate a oneDNN call inside an op; on failure record it and goto out. */
#define DLB_DNNL(be, op, call)                                              \
    do {                                                                    \
        dnnl_status_t dlb_st_ = (call);                                     \
        if (dlb_st_ != dnnl_success) {                                      \
            s = dlb_cpu_dnnl_fail((be), dlb_st_, (op), #call);              \
            goto out;                                                       \
        }                                                                   \
    } while (0)

/* The oneDNN type of a dlbench type; dnnl_data_type_undef for F64. */
dnnl_data_type_t dlb_cpu_dnnl_type(enum dlb_dtype t);

/* Why fp16 does not run here, as a true statement about this machine
 * (cpu_f16.c): whether the CPU has AVX512_FP16, and which fp16
 * convolution and inner product kernels the oneDNN in use has, asked of
 * the library. */
void dlb_cpu_f16_reason(char *buf, size_t len);

/* Check that `b` is a float buffer of at least `count` elements whose
 * type oneDNN computes in here (f32, bf16); F16 and F64 give
 * DLB_ERR_UNSUPPORTED with the reason. */
dlb_status dlb_cpu_check_float(struct dlb_backend *be, const char *op,
                               const char *arg, const struct dlb_buffer *b,
                               size_t count);
/* The same for an S32 buffer. */
dlb_status dlb_cpu_check_s32(struct dlb_backend *be, const char *op,
                             const char *arg, const struct dlb_buffer *b,
                             size_t count);

/* A plain (dense, row-major) memory descriptor. */
dnnl_status_t dlb_cpu_md_plain(dlb_dnnl_md *md, int ndims,
                               const dnnl_dim_t *dims, dnnl_data_type_t dt);
/* A memory object without a handle (set per call). */
dnnl_status_t dlb_cpu_mem(struct dlb_cpu *cpu, dnnl_memory_t *m,
                          const dlb_dnnl_md *md);
/* A reorder primitive from `src` to `dst` layouts. */
dnnl_status_t dlb_cpu_reorder(struct dlb_cpu *cpu, dnnl_primitive_t *prim,
                              const dlb_dnnl_md *src,
                              const dlb_dnnl_md *dst);
/* Create prim[i] from pd[i], which the caller made (cpu_dnnl_api.h). */
dnnl_status_t dlb_cpu_make(struct dlb_cpu_prim *p, int i);
/* Run a reorder from (src_mem, src) to (dst_mem, dst). */
dnnl_status_t dlb_cpu_run_reorder(struct dlb_cpu *cpu, dnnl_primitive_t r,
                                  dnnl_memory_t src_mem, const void *src,
                                  dnnl_memory_t dst_mem, void *dst);
/* Set a memory object's handle. */
dnnl_status_t dlb_cpu_bind(dnnl_memory_t m, const void *data);
/* Execute a primitive with `n` (argument, memory) pairs and wait. */
dnnl_status_t dlb_cpu_exec(struct dlb_cpu *cpu, dnnl_primitive_t prim, int n,
                           const dnnl_exec_arg_t *args);

/* ---- tensors in and out of a primitive (cpu_io.c) ------------------
 * Tensor i of an entry has a plain memory object mem[2i] (the buffer's
 * host view; for OUT_RETYPED the buffer in the primitive's layout) and one
 * in the primitive's layout mem[2i+1]; prim[1+i] is the reorder between
 * them, NULL when the layouts agree. */
enum dlb_cpu_role {
    DLB_CPU_IN,         /* an activation read: used as it is when its layout
                           is the primitive's, else reordered into scratch */
    DLB_CPU_IN_WEIGHTS, /* weights read: a shadow, reordered once per write */
    DLB_CPU_OUT,        /* an activation written: in the primitive's layout,
                           which the buffer then carries */
    DLB_CPU_OUT_WEIGHTS, /* a weight gradient written: computed into scratch
                           and reordered out to the host view, as the SGD
                           update reads it beside the plain weights */
    DLB_CPU_OUT_RETYPED /* an activation a primitive computes in f32 for a
                           buffer of another type (bf16): written into
                           scratch, then converted into the buffer in the
                           same layout, which the buffer then carries */
};

struct dlb_cpu_tensor {
    int arg;                   /* DNNL_ARG_SRC ... */
    dnnl_query_t query;        /* where the primitive's layout is found
                                  (exec_arg_md: under `arg`) */
    enum dlb_cpu_role role;
    dlb_dnnl_md plain;  /* the host view */
};

/* Fill p's io slots for the `n` tensors of primitive pd[0]. */
dnnl_status_t dlb_cpu_io_setup(struct dlb_cpu *cpu, struct dlb_cpu_prim *p,
                               const struct dlb_cpu_tensor *t, int n);
/* The pointers tensor i of the entry is read from or written to in this
 * call, in the primitive's layouts: for an own kernel that runs on the
 * layouts a primitive chose. dlb_cpu_io_done afterwards. */
dlb_status dlb_cpu_io_ptrs(struct dlb_backend *be, struct dlb_cpu_prim *p,
                           const struct dlb_buffer *const *bufs, void **ptrs);
/* After the tensors were written: weight gradients reordered out, the
 * outputs marked written. */
dlb_status dlb_cpu_io_done(struct dlb_backend *be, struct dlb_cpu_prim *p,
                           const char *op, const struct dlb_buffer *const *bufs);
/* Run prim[0] on bufs[i] for tensor i plus `n_extra` further arguments,
 * reordering in and out as set up. Marks the OUT buffers written. */
dlb_status dlb_cpu_io_run(struct dlb_backend *be, struct dlb_cpu_prim *p,
                          const char *op, const struct dlb_buffer *const *bufs,
                          int n_extra, const dnnl_exec_arg_t *extra);

/* ---- physical layouts of buffers (cpu_layout.c) -------------------- */

/* b's layout when it is not the host view, else NULL. */
const dlb_dnnl_md *dlb_cpu_layout(const struct dlb_buffer *b);
/* 1 when `md` lays its elements out as the dense row-major host view. */
int dlb_cpu_md_is_plain(const dlb_dnnl_md *md);
/* Record that the op about to write `b` writes it in layout `md` (NULL:
 * the host view), growing the storage when `md` needs more bytes. The
 * contents are undefined after a growth: call it for outputs only. */
dlb_status dlb_cpu_set_layout(struct dlb_backend *be, struct dlb_buffer *b,
                              const dlb_dnnl_md *md);
/* Turn b's data into its host view in place (its logical contents do not
 * change, hence the const): for the copies and the own loops that index
 * the host view. */
dlb_status dlb_cpu_make_plain(struct dlb_backend *be,
                              const struct dlb_buffer *b);
/* dlb_cpu_make_plain on each of the `n` buffers that is not NULL: the
 * inputs and outputs of an own loop over the host view. */
dlb_status dlb_cpu_make_plain_all(struct dlb_backend *be,
                                  const struct dlb_buffer *const *b, int n);
#define DLB_CPU_PLAIN(be, ...)                                              \
    dlb_cpu_make_plain_all((be), (const struct dlb_buffer *const[]){        \
                               __VA_ARGS__ },                               \
                           (int)(sizeof((const struct dlb_buffer *const[]){ \
                                     __VA_ARGS__ }) /                       \
                                 sizeof(const struct dlb_buffer *)))
/* b's data in layout and type `want` (same logical dims): b->data when b
 * already has them, else a reorder (converting the type on the way) into
 * scratch slot `slot`. */
dlb_status dlb_cpu_view(struct dlb_backend *be, const struct dlb_buffer *b,
                        const dlb_dnnl_md *want, int slot, void **out);
/* Elements the physical storage of `b` spans for `count` logical ones:
 * the padded size when b is blocked and count is all of it, else count
 * (after making b plain when count is only part of it). */
dlb_status dlb_cpu_physical(struct dlb_backend *be, const struct dlb_buffer *b,
                            size_t count, size_t *out);
/* Where logical element (n, c, k) of an [n][c][hw] tensor lies: at
 * n * sn + (c / blk) * sc + c % blk + k * sk, for the host view, nChw16c,
 * nChw8c and nhwc; channels c <= i < padded_c are padding (zeros). */
struct dlb_cpu_map {
    size_t sn, sc, sk, blk, padded_c;
};
/* Fill m for layout md seen as [n][c][hw]; 0 when md is not of that form
 * (more than one block, a block not on channels, other dims). */
int dlb_cpu_map_of(const dlb_dnnl_md *md, uint32_t n, uint32_t c,
                   uint32_t hw, struct dlb_cpu_map *m);
/* Which of oneDNN's activation layouts md is, for cache keys: 1 nChw16c,
 * 2 nChw8c, 3 nhwc, 0 none of them. */
int dlb_cpu_layout_code(const dlb_dnnl_md *md);
/* Reorder (a cached primitive) from `from` in layout src to `to` in dst. */
dlb_status dlb_cpu_reorder_run(struct dlb_backend *be,
                               const dlb_dnnl_md *src, const void *from,
                               const dlb_dnnl_md *dst, void *to);
/* Release the reorder cache. */
void dlb_cpu_layout_clear(struct dlb_cpu *cpu);

/* ---- buffers and memory (cpu_buffer.c) ----------------------------- */

/* 64-byte aligned host memory through the configuration's allocator;
 * *block is what to hand back to dlb_cpu_free. */
void *dlb_cpu_alloc(struct dlb_cpu *cpu, size_t bytes, void **block);
void dlb_cpu_free(struct dlb_cpu *cpu, void *block, size_t bytes);
/* Scratch slot `slot`, grown to at least `bytes`; NULL when out of memory
 * (the reason is recorded). */
void *dlb_cpu_scratch(struct dlb_backend *be, int slot, size_t bytes);
/* Record that `b` was written: its shadows are stale. */
void dlb_cpu_written(const struct dlb_buffer *b);

/* `b`'s data in layout `md`: b->data itself when `reorder` is NULL (the
 * layouts agree), else a shadow reordered by `reorder` from the plain
 * data, redone only when b was written since. `src_mem` and `dst_mem` are
 * memory objects of the plain and the wanted layout for the reorder. */
dlb_status dlb_cpu_shadow(struct dlb_backend *be, const struct dlb_buffer *b,
                          const dlb_dnnl_md *md,
                          dnnl_primitive_t reorder, dnnl_memory_t src_mem,
                          dnnl_memory_t dst_mem, void **out);

/* ---- the operations ------------------------------------------------ */

/* The device entries, dlb_cpu_<entry>, with the table's signatures
 * (backend_ops.h): destroy, supports, device_info in cpu_backend.c; the
 * buffer, copy, timer and synchronize entries in cpu_buffer.c; map and
 * unmap in cpu_map.c. */
#define DLB_CPU_DEVICE(X) DLB_OPS_REQUIRED(X, cpu) DLB_OPS_MAP(X, cpu)
DLB_CPU_DEVICE(DLB_OP_DECLARE)
/* The oneDNN kernels' functions, dlb_cpu_<name> (backend_kernels.h):
 * cpu_conv.c, cpu_pool.c (the host view's loops), cpu_act.c (relu,
 * dropout), cpu_bnorm.c (batch norm, and with the ReLU after it),
 * cpu_linear.c, cpu_loss.c; cpu_elementwise.c (sgd, cast, scale,
 * check_finite, fill, (de)quantize); cpu_int8.c and cpu_int8_pool.c,
 * cpu_sparse.c. No allreduce_sum: one device; MPI data parallelism is a
 * plugin. The kernel list, own kernels first, is cpu_kernel_list.c's. */
#define DLB_CPU_KFN(X)                                                      \
    DLB_KFN_CNN(X, cpu) DLB_KFN_QUANTIZE(X, cpu) DLB_KFN_INT8(X, cpu)       \
    DLB_KFN_SPARSE(X, cpu) DLB_KFN_BN_RELU(X, cpu)
DLB_CPU_KFN(DLB_KFN_DECLARE)
/* Kernels written for the descriptor itself: cpu_elementwise.c's add and
 * concat. */
dlb_status dlb_cpu_add(struct dlb_backend *be, const struct dlb_op *op); /* and ADD_RELU */
dlb_status dlb_cpu_concat(struct dlb_backend *be, const struct dlb_op *op);
/* CONV2D_RELU and CONV2D_ADD (cpu_conv.c): oneDNN's inference convolution
 * with the ReLU (or ReLU6's clip) as its post-op, for CONV2D_ADD after
 * the sum onto y's contents (oneDNN's sum post-op). */
dlb_status dlb_cpu_conv2d_post(struct dlb_backend *be, const struct dlb_op *op);
/* The sum post-op adds onto the destination as the primitive lays it out
 * (p's io_md[2], its DST): y's contents, put in that layout first when
 * they are in another (an add of tensors from convolutions of different
 * layouts). The residual networks' adds meet two tensors of one layout,
 * and this does nothing. */
dlb_status dlb_cpu_sum_operand(struct dlb_backend *be,
                               const struct dlb_cpu_prim *p,
                               struct dlb_buffer *y);
/* cpu_int8.c's CONV2D_INT8_ADD: the int8 convolution with its f32 output
 * summed onto y's contents (and the sum's ReLU) as oneDNN post-ops. */
int dlb_cpu_conv2d_int8_add_applies(struct dlb_backend *be,
                                    const struct dlb_op *op);
dlb_status dlb_cpu_conv2d_int8_add(struct dlb_backend *be,
                                   const struct dlb_op *op);
/* CONV2D_DW (cpu_conv_dw.c): a 1x1 convolution with oneDNN's depthwise
 * post-op; applies to F32 tensors. */
int dlb_cpu_conv2d_dw_applies(struct dlb_backend *be, const struct dlb_op *op);
/* CONV2D (every pass), CONV2D_RELU and CONV2D_ADD on oneDNN's Winograd
 * kernels, where the library has one for the shape (cpu.winograd). */
int dlb_cpu_conv2d_wino_applies(struct dlb_backend *be, const struct dlb_op *op);
dlb_status dlb_cpu_conv2d_wino(struct dlb_backend *be, const struct dlb_op *op);
dlb_status dlb_cpu_conv2d_dw(struct dlb_backend *be, const struct dlb_op *op);
/* The same pair on the own kernels (cpu_conv_dw_f32.c, cpu_conv_dw_bf16.c), where oneDNN
 * would run it as two primitives in turn. */
int dlb_cpu_conv2d_dw_own_applies(struct dlb_backend *be, const struct dlb_op *op);
dlb_status dlb_cpu_conv2d_dw_own(struct dlb_backend *be, const struct dlb_op *op);
extern const struct dlb_backend_ops dlb_cpu_ops;

/* cpu_conv.c: a convolution's weight dims for oneDNN into wd, 4 ([out_c]
 * [in_c][kh][kw]) or with groups 5 ([g][out_c / g][in_c / g][kh][kw],
 * dense in the host view's order); returns how many. The own kernels
 * below take one group only (their fits say so). */
int dlb_cpu_conv_w_dims(const struct dlb_conv2d_desc *d, dnnl_dims_t wd);
/* cpu_conv.c: the activations' layout of a convolution computing in ct
 * (oneDNN's choice, or nhwc where its comment says). */
dnnl_format_tag_t dlb_cpu_conv_act_tag(const struct dlb_conv2d_desc *d,
                                       dnnl_data_type_t ct);

/* cpu_bnorm_bf16.c: batch norm on bf16 data in nChw16c or nhwc (`nhwc`
 * set) with c % 16 == 0 on AVX-512 (applies says whether it takes md);
 * cpu_bnorm.c calls them.
 * Forward: use_mean/use_var given (inference) normalise with them, else
 * the batch mean and biased variance land in mean and var (c floats);
 * relu (training only) stores max(y, 0), the fused ReLU after it. */
int dlb_cpu_bn16_applies(const dlb_dnnl_md *md, uint32_t c);
dlb_status dlb_cpu_bn16_fwd(struct dlb_backend *be,
                            const struct dlb_batchnorm_desc *d, int nhwc,
                            const void *x,
                            void *y, const float *gamma, const float *beta,
                            const float *use_mean, const float *use_var,
                            float *mean, float *var, int relu);
/* Backward; with beta given, of batch norm + ReLU (forward's relu set):
 * dy is the ReLU output's gradient, masked where forward's y was 0. */
dlb_status dlb_cpu_bn16_bwd(struct dlb_backend *be,
                            const struct dlb_batchnorm_desc *d, int nhwc,
                            const void *x,
                            const void *dy, void *dx, const float *gamma,
                            const float *mean, const float *invstd,
                            const float *beta, float *dgamma, float *dbeta);
/* The oneDNN inference pooling primitive of d over layouts x and y: a
 * builder for dlb_cpu_cache_get (cpu_pool_blocked.c); `op` names the
 * operation in errors. */
struct dlb_cpu_pool_arg {
    const char *op;
    const struct dlb_pool_desc *d;
    const dlb_dnnl_md *x, *y;
};
dlb_status dlb_cpu_pool_build(struct dlb_backend *be, struct dlb_cpu_prim *p,
                              const void *arg);
/* cpu_pool_blocked.c: pooling kernels on the channel-blocked layouts a
 * convolution's output arrives in (nChw16c, nChw8c, nhwc): oneDNN's
 * inference primitive (no workspace wanted), and the own loops over
 * blocks (training); pool_fwd and pool_bwd run on the host view. */
int dlb_cpu_pool_onednn_applies(struct dlb_backend *be, const struct dlb_op *o);
dlb_status dlb_cpu_pool_onednn_fwd(struct dlb_backend *be, const struct dlb_op *o);
int dlb_cpu_pool_blocked_fwd_applies(struct dlb_backend *be,
                                     const struct dlb_op *o);
dlb_status dlb_cpu_pool_blocked_fwd(struct dlb_backend *be, const struct dlb_op *o);
int dlb_cpu_pool_blocked_bwd_applies(struct dlb_backend *be,
                                     const struct dlb_op *o);
dlb_status dlb_cpu_pool_blocked_bwd(struct dlb_backend *be, const struct dlb_op *o);
/* cpu_pool_loops.c: the pooling loops over `blocks` blocks [h][w][B] of
 * B channels (B = 1: the host view's planes), src to dst (forward: x to
 * y; backward: dy to dx) in the buffers' own float types, with max
 * pooling's workspace ws in dst's (forward) or src's (backward) block
 * layout; ws may be NULL in the forward pass. */
struct dlb_cpu_pool_blocks {
    const struct dlb_pool_desc *d;
    size_t B, blocks;
    const struct dlb_buffer *src;
    struct dlb_buffer *dst;
};
dlb_status dlb_cpu_pool_loops_fwd(struct dlb_backend *be,
                                  const struct dlb_cpu_pool_blocks *r,
                                  int32_t *ws);
dlb_status dlb_cpu_pool_loops_bwd(struct dlb_backend *be,
                                  const struct dlb_cpu_pool_blocks *r,
                                  const int32_t *ws);
/* cpu_pool_bf16.c: 2x2 stride-2 max pooling of bf16 blocks of 16 lanes
 * (applies says when), which the two above hand over to. */
int dlb_cpu_pool16_applies(const struct dlb_cpu_pool_blocks *r);
dlb_status dlb_cpu_pool16_fwd(struct dlb_backend *be,
                              const struct dlb_cpu_pool_blocks *r, int32_t *ws);
dlb_status dlb_cpu_pool16_bwd(struct dlb_backend *be,
                              const struct dlb_cpu_pool_blocks *r,
                              const int32_t *ws);
/* cpu_conv1.c: an f32 convolution with one input channel, fewer than
 * 16 output channels and no padding on AVX-512 (the fits functions say
 * when; backward-weights also wants 5x5 or 3x3 and its gradient in
 * nhwc). Forward writes y in nhwc, as oneDNN would for these channels. */
int dlb_cpu_conv1_fwd_fits(const struct dlb_conv2d_desc *d,
                           const struct dlb_buffer *x,
                           const struct dlb_buffer *w,
                           const struct dlb_buffer *b,
                           const struct dlb_buffer *y);
int dlb_cpu_conv1_bwd_weights_fits(const struct dlb_conv2d_desc *d,
                                   const struct dlb_buffer *x,
                                   const struct dlb_buffer *dy,
                                   const struct dlb_buffer *dw,
                                   const struct dlb_buffer *db);
dlb_status dlb_cpu_conv1_fwd(struct dlb_backend *be,
                             const struct dlb_conv2d_desc *d,
                             const struct dlb_buffer *x,
                             const struct dlb_buffer *w,
                             const struct dlb_buffer *b, struct dlb_buffer *y);
dlb_status dlb_cpu_conv1_bwd_weights(struct dlb_backend *be,
                                     const struct dlb_conv2d_desc *d,
                                     const struct dlb_buffer *x,
                                     const struct dlb_buffer *dy,
                                     struct dlb_buffer *dw,
                                     struct dlb_buffer *db);
/* cpu_conv1.c: backward-weights of the same convolution when a 2x2
 * stride-2 max pooling followed it, from the pooling's output gradient
 * dy and workspace ws (both nhwc, as cpu_conv1_pool.c's training pass
 * leaves them), without the pooling's backward: the same bits as
 * pool_bwd then conv2d_bwd_weights. */
dlb_status dlb_cpu_conv1_bwd_weights_pooled(struct dlb_backend *be,
                                            const struct dlb_conv2d_desc *d,
                                            const struct dlb_pool_desc *p,
                                            const struct dlb_buffer *x,
                                            const struct dlb_buffer *dy,
                                            const struct dlb_buffer *ws,
                                            struct dlb_buffer *dw,
                                            struct dlb_buffer *db);
/* cpu_conv1_pool.c: the same convolution with 2x2 stride-2 max pooling
 * and optionally a ReLU in one pass (kind CONV2D_POOL): applies says for
 * which descriptors, with every float tensor of type t; fwd with ws (a
 * training pass, no ReLU) or without; bwd_weights from the pooling's
 * output gradient and workspace. */
int dlb_cpu_conv_pool_applies(const struct dlb_conv2d_desc *c,
                              const struct dlb_pool_desc *p, enum dlb_dtype t);
dlb_status dlb_cpu_conv_pool_fwd(struct dlb_backend *be,
                                 const struct dlb_conv2d_desc *c,
                                 const struct dlb_pool_desc *p, int relu,
                                 const struct dlb_buffer *x,
                                 const struct dlb_buffer *w,
                                 const struct dlb_buffer *b,
                                 struct dlb_buffer *y, struct dlb_buffer *ws);
dlb_status dlb_cpu_conv_pool_bwd_weights(struct dlb_backend *be,
                                         const struct dlb_conv2d_desc *c,
                                         const struct dlb_pool_desc *p,
                                         const struct dlb_buffer *x,
                                         const struct dlb_buffer *dy,
                                         const struct dlb_buffer *ws,
                                         struct dlb_buffer *dw,
                                         struct dlb_buffer *db);
/* cpu_conv_quads.c: an f32 convolution of 2-32 input channels to 4, 8,
 * 12 or 20 output channels in one group on the host view, stride 1, no
 * padding, out_w a multiple of 4, on AVX-512 (fits says when; x must be
 * in the host view), for inference passes (kernel conv_quads). y is
 * written in the host view. */
int dlb_cpu_conv_quads_fits(const struct dlb_conv2d_desc *d,
                            const struct dlb_buffer *x,
                            const struct dlb_buffer *w,
                            const struct dlb_buffer *b,
                            const struct dlb_buffer *y);
dlb_status dlb_cpu_conv_quads_fwd(struct dlb_backend *be,
                                  const struct dlb_conv2d_desc *d,
                                  const struct dlb_buffer *x,
                                  const struct dlb_buffer *w,
                                  const struct dlb_buffer *b,
                                  struct dlb_buffer *y);
/* cpu_int8_cols.c: a convolution with one input channel as a matrix
 * product over im2col rows (dlb_cpu_int8_cols_fit says when); x F32 is
 * quantised on the way, in the same pass. */
int dlb_cpu_int8_cols_fit(const struct dlb_conv2d_desc *d);
dlb_status dlb_cpu_conv2d_int8_cols(struct dlb_backend *be,
                                    const struct dlb_conv2d_desc *d,
                                    const struct dlb_int8_desc *q,
                                    const struct dlb_buffer *x,
                                    const struct dlb_buffer *w,
                                    const struct dlb_buffer *w_scale,
                                    const struct dlb_buffer *b,
                                    struct dlb_buffer *y);
/* cpu_quantise.c: n values of `in` quantised to q->x_type, as quantize
 * does (the same bytes as dlb_int8_quantize_fast) */
void dlb_cpu_quantise_run(const struct dlb_int8_desc *q, const float *in,
                          unsigned char *out, size_t n);
/* The first `count` values of F32 x quantised to q->x_type, as quantize
 * does, into scratch slot DLB_CPU_SLOT_INT8, which *tmp (with *impl, its
 * side state) then describes as a buffer in the host view; with
 * keep_layout, in x's blocked layout where x has one without padding. */
dlb_status dlb_cpu_int8_quantised(struct dlb_backend *be,
                                  const struct dlb_int8_desc *q,
                                  const struct dlb_buffer *x, size_t count,
                                  int keep_layout, struct dlb_buffer *tmp,
                                  struct dlb_cpu_buf *impl);
/* *tmp (and *impl) describing `count` elements of type t at data, in the
 * host view: scratch memory handed to an op as its input. */
void dlb_cpu_scratch_buffer(enum dlb_dtype t, size_t count, void *data,
                            struct dlb_buffer *tmp, struct dlb_cpu_buf *impl);

/* cpu_floats.c: loading and storing f32/bf16 element runs */
void dlb_cpu_load_f32(const struct dlb_buffer *b, size_t off, size_t n,
                      float *out);
void dlb_cpu_store_f32(struct dlb_buffer *b, size_t off, size_t n,
                       const float *in);

#endif
