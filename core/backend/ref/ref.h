/* The ref backend's private declarations: the operations of each family
 * file and the load/store helpers they share.
 *
 * Every operation loads its float inputs into double arrays, computes in
 * double with plain loops, and stores the results rounded to the output
 * buffer's type (F32, F64, F16, BF16; the latter two through F32, a double
 * rounding that only matters at exact ties). Slow on purpose: it is the
 * oracle the other backends are tested against. */
#ifndef DLB_REF_H
#define DLB_REF_H

#include <stddef.h>
#include <stdint.h>

#include "../backend.h"
#include "../backend_impl.h"
#include "../backend_kernels.h"
#include "../backend_ops.h"

struct dlb_ref {
    int threads;
    uint64_t seed;
    /* buffer memory: the configuration's allocator, or malloc/free */
    void *(*host_alloc)(void *ctx, size_t bytes);
    void (*host_free)(void *ctx, void *p, size_t bytes);
    void *alloc_ctx;
};

/* Check that `b` is a float buffer of at least `count` elements and return
 * its values as a malloc'ed double array. `op` and `arg` name the operation
 * and argument in the reason on failure. */
dlb_status dlb_ref_get(struct dlb_backend *be, const char *op, const char *arg,
                       const struct dlb_buffer *b, size_t count, double **out);
/* The same check for an output buffer; returns a zeroed double array. */
dlb_status dlb_ref_new(struct dlb_backend *be, const char *op, const char *arg,
                       const struct dlb_buffer *b, size_t count, double **out);
/* Store `count` doubles into `b`, rounding to its type. */
void dlb_ref_put(struct dlb_buffer *b, const double *v, size_t count);
/* Check that `b` is an S32 buffer of at least `count` elements. */
dlb_status dlb_ref_check_s32(struct dlb_backend *be, const char *op,
                             const char *arg, const struct dlb_buffer *b,
                             size_t count);
double dlb_ref_elem(const struct dlb_buffer *b, size_t i);
void dlb_ref_set_elem(struct dlb_buffer *b, size_t i, double v);

/* Free up to `n` arrays; NULLs are fine. */
void dlb_ref_free_all(double **p, size_t n);

/* The device entries, dlb_ref_<entry>, with the table's signatures
 * (backend_ops.h): the required ones in ref_backend.c, map and unmap in
 * ref_map.c. */
#define DLB_REF_DEVICE(X) DLB_OPS_REQUIRED(X, ref) DLB_OPS_MAP(X, ref)
DLB_REF_DEVICE(DLB_OP_DECLARE)
/* The kernels' functions, dlb_ref_<name> (backend_kernels.h): ref_conv.c,
 * ref_pool.c, ref_act.c (relu, dropout), ref_bnorm.c (batch norm, and
 * with the ReLU after it), ref_linear.c, ref_loss.c, ref_sgd.c;
 * ref_elementwise.c (cast, scale, check_finite, fill, (de)quantize);
 * ref_int8.c, ref_sparse.c. No allreduce_sum: one device. */
#define DLB_REF_KFN(X)                                                      \
    DLB_KFN_CNN(X, ref) DLB_KFN_QUANTIZE(X, ref) DLB_KFN_INT8(X, ref)       \
    DLB_KFN_SPARSE(X, ref) DLB_KFN_BN_RELU(X, ref)
DLB_REF_KFN(DLB_KFN_DECLARE)
/* Kernels written for the descriptor (struct dlb_op) itself:
 * ref_elementwise.c's add and concat. */
dlb_status dlb_ref_add(struct dlb_backend *be, const struct dlb_op *op); /* and ADD_RELU */
dlb_status dlb_ref_concat(struct dlb_backend *be, const struct dlb_op *op);
/* ref_conv.c's CONV2D_RELU: the convolution, then the ReLU in place. */
dlb_status dlb_ref_conv2d_relu(struct dlb_backend *be, const struct dlb_op *op);
/* ref_conv.c's CONV2D_ADD: the convolution summed onto y's contents. */
dlb_status dlb_ref_conv2d_add(struct dlb_backend *be, const struct dlb_op *op);
/* CONV2D_ADD and CONV2D_INT8_ADD (ref_conv.c): what y held, kept; `conv`
 * (the op's convolution) into y; the sum and op's ReLU as ADD and RELU
 * compute them (ref_elementwise.c). `name` names the op in errors. */
dlb_status dlb_ref_conv_onto(struct dlb_backend *be, const struct dlb_op *op,
                             const char *name,
                             dlb_status (*conv)(struct dlb_backend *,
                                                const struct dlb_op *));
/* ref_int8.c's CONV2D_INT8_ADD: the int8 convolution summed onto y's. */
dlb_status dlb_ref_conv2d_int8_add(struct dlb_backend *be,
                                   const struct dlb_op *op);
/* ref_conv.c's CONV2D_DW: the 1x1 and the depthwise convolution apart. */
dlb_status dlb_ref_conv2d_dw(struct dlb_backend *be, const struct dlb_op *op);

#endif
