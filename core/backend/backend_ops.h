/* The device interface's entries, named once, for backend implementations.
 *
 * struct dlb_backend_ops (<dlbench/backend.h>) states each entry's
 * signature and contract. The lists below name the entries by family, in
 * the table's order; from them each backend's header declares its
 * functions, dlb_<backend>_<entry>, with the entry's own type, and its
 * table is initialised, so that neither restates a signature and the
 * compiler checks every implementation against the public one.
 *
 * A backend implements a family whole (backend.h makes its optional
 * groups all or nothing): it lists the families it has, and the entries
 * of the others stay NULL, which the core answers with
 * DLB_ERR_UNSUPPORTED naming the entry (DLB_BE_CALL). DLB_OPS_REQUIRED is
 * never left out: the core refuses a table without it (dlb_backend_new).
 * Computations are not entries: they are operations (struct dlb_op) run
 * by the table's kernel list (backend_kernels.h). */
#ifndef DLB_CORE_BACKEND_OPS_H
#define DLB_CORE_BACKEND_OPS_H

#include <dlbench/backend.h>

/* Every caller relies on these. */
#define DLB_OPS_REQUIRED(X, be)                                             \
    X(be, destroy) X(be, supports) X(be, device_info)                       \
    X(be, buffer_alloc) X(be, buffer_free)                                  \
    X(be, copy_from_host) X(be, copy_to_host) X(be, copy)                   \
    X(be, synchronize)                                                      \
    X(be, timer_create) X(be, timer_destroy) X(be, timer_start)             \
    X(be, timer_stop) X(be, timer_elapsed)

/* Buffers in place (optional). */
#define DLB_OPS_MAP(X, be) X(be, map) X(be, unmap)

/* The gradient scaler's flag (optional). */
#define DLB_OPS_FLAG(X, be) X(be, flag_post) X(be, flag_wait)

/* Graphs of a whole step (optional). */
#define DLB_OPS_GRAPH(X, be)                                                \
    X(be, graph_create) X(be, graph_begin) X(be, graph_end)                 \
    X(be, graph_launch) X(be, graph_destroy)

/* Page-locked host memory (optional). */
#define DLB_OPS_PINNED(X, be) X(be, host_alloc_pinned) X(be, host_free_pinned)

/* Uploads on a copy stream (optional). */
#define DLB_OPS_UPLOAD(X, be)                                               \
    X(be, upload_create) X(be, upload_destroy) X(be, upload_async)          \
    X(be, upload_wait) X(be, upload_sync) X(be, upload_figures)

/* Every family, in the table's order (the kernel list sits between the
 * required entries and the rest): backend.c checks at compile time that
 * they name every entry of the table. */
#define DLB_OPS_ALL(X, be)                                                  \
    DLB_OPS_REQUIRED(X, be) DLB_OPS_MAP(X, be) DLB_OPS_FLAG(X, be)          \
    DLB_OPS_GRAPH(X, be) DLB_OPS_PINNED(X, be) DLB_OPS_UPLOAD(X, be)

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
