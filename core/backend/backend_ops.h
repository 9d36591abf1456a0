/* The backend operations, named once, for backend implementations.
 *
 * struct dlb_backend_ops (<dlbench/backend.h>) states each entry's
 * signature and contract. The lists below name the entries by family, in
 * the table's order; from them each backend's header declares its
 * functions, dlb_<backend>_<entry>, with the entry's own type, and its
 * ops table is initialised, so that neither restates a signature and the
 * compiler checks every implementation against the public one.
 *
 * A backend implements a family whole (backend.h makes its optional
 * groups all or nothing): it lists the families it has, and the entries
 * of the others stay NULL, which the core answers with
 * DLB_ERR_UNSUPPORTED naming the operation (DLB_BE_CALL).
 * DLB_OPS_REQUIRED is never left out: the core refuses a table without
 * it (dlb_backend_new).
 *
 * To add an operation:
 *   1. append its entry and contract to struct dlb_backend_ops and bump
 *      DLB_BACKEND_API_MINOR (include/dlbench/backend.h);
 *   2. add X(be, entry) to its family here; or start a family, add it to
 *      DLB_OPS_ALL, and to the list of each backend that implements it
 *      (DLB_REF_OPS in ref/ref.h, DLB_CPU_OPS in cpu/cpu.h, DLB_CUDA_OPS
 *      in cuda/cuda.h), which declares the functions and fills the table;
 *   3. define dlb_<backend>_<entry> in each backend that lists the family.
 * An entry in no family fails the build (backend.c). A backend that lacks
 * one entry of a family it otherwise has writes that family's entries out
 * by hand in its table. */
#ifndef DLB_CORE_BACKEND_OPS_H
#define DLB_CORE_BACKEND_OPS_H

#include <dlbench/backend.h>

/* Every caller relies on these (API 1.0). */
#define DLB_OPS_REQUIRED(X, be)                                             \
    X(be, destroy) X(be, supports) X(be, device_info)                       \
    X(be, buffer_alloc) X(be, buffer_free)                                  \
    X(be, copy_from_host) X(be, copy_to_host) X(be, copy)                   \
    X(be, synchronize)                                                      \
    X(be, timer_create) X(be, timer_destroy) X(be, timer_start)             \
    X(be, timer_stop) X(be, timer_elapsed)

/* The reference CNN's layers, loss, update and element-wise work
 * (API 1.0). */
#define DLB_OPS_CNN(X, be)                                                  \
    X(be, conv2d_fwd) X(be, conv2d_bwd_data) X(be, conv2d_bwd_weights)      \
    X(be, pool_fwd) X(be, pool_bwd)                                         \
    X(be, relu_fwd) X(be, relu_bwd)                                         \
    X(be, dropout_fwd) X(be, dropout_bwd)                                   \
    X(be, batchnorm_fwd_train) X(be, batchnorm_fwd_infer)                   \
    X(be, batchnorm_bwd)                                                    \
    X(be, linear_fwd) X(be, linear_bwd)                                     \
    X(be, logsoftmax_fwd) X(be, nll_loss) X(be, logsoftmax_nll_bwd)         \
    X(be, sgd_update)                                                       \
    X(be, cast) X(be, scale) X(be, check_finite) X(be, fill)

/* Affine int8 (de)quantisation (API 1.0, optional). */
#define DLB_OPS_QUANTIZE(X, be) X(be, quantize) X(be, dequantize)

/* Sums over replicas (API 1.0, optional: multi-device backends). */
#define DLB_OPS_ALLREDUCE(X, be) X(be, allreduce_sum)

/* int8 inference (API 1.1, optional). */
#define DLB_OPS_INT8(X, be)                                                 \
    X(be, conv2d_int8_fwd) X(be, linear_int8_fwd) X(be, pool_int8_fwd)

/* Linear layers with CSR weights (API 1.1, optional). */
#define DLB_OPS_SPARSE(X, be) X(be, csr_linear_fwd)

/* Buffers in place (API 1.1, optional). */
#define DLB_OPS_MAP(X, be) X(be, map) X(be, unmap)

/* The gradient scaler on the device (API 1.2, optional). */
#define DLB_OPS_SCALER(X, be)                                               \
    X(be, unscale_check) X(be, sgd_update_if_finite)                        \
    X(be, flag_post) X(be, flag_wait)

/* Graphs of a whole step (API 1.3, optional). */
#define DLB_OPS_GRAPH(X, be)                                                \
    X(be, graph_create) X(be, graph_begin) X(be, graph_end)                 \
    X(be, graph_launch) X(be, graph_destroy)

/* Page-locked host memory (API 1.4, optional). */
#define DLB_OPS_PINNED(X, be) X(be, host_alloc_pinned) X(be, host_free_pinned)

/* Uploads on a copy stream (API 1.4, optional). */
#define DLB_OPS_UPLOAD(X, be)                                               \
    X(be, upload_create) X(be, upload_destroy) X(be, upload_async)          \
    X(be, upload_wait) X(be, upload_sync) X(be, upload_figures)

/* Every family, in the table's order: backend.c checks at compile time
 * that they name every entry of the table. */
#define DLB_OPS_ALL(X, be)                                                  \
    DLB_OPS_REQUIRED(X, be) DLB_OPS_CNN(X, be) DLB_OPS_QUANTIZE(X, be)      \
    DLB_OPS_ALLREDUCE(X, be) DLB_OPS_INT8(X, be) DLB_OPS_SPARSE(X, be)      \
    DLB_OPS_MAP(X, be) DLB_OPS_SCALER(X, be) DLB_OPS_GRAPH(X, be)           \
    DLB_OPS_PINNED(X, be) DLB_OPS_UPLOAD(X, be)

/* The function type of entry `op`, taken from the table itself. */
#define DLB_OP_TYPE(op) __typeof__(*((struct dlb_backend_ops *)0)->op)

/* X for a backend's header: declare dlb_<be>_<op>. */
#define DLB_OP_DECLARE(be, op) extern DLB_OP_TYPE(op) dlb_##be##_##op;

/* X for a backend's table: `.op = dlb_<be>_<op>,`. */
#define DLB_OP_ENTRY(be, op) .op = dlb_##be##_##op,

/* The table's version fields and name, first in every initialiser. */
#define DLB_OPS_HEAD(be)                                                    \
    .struct_size = sizeof(struct dlb_backend_ops),                          \
    .api_major = DLB_BACKEND_API_MAJOR,                                     \
    .api_minor = DLB_BACKEND_API_MINOR,                                     \
    .name = #be

#endif
