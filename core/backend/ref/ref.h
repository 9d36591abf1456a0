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

#include "../backend_impl.h"

struct dlb_ref {
    int threads;
    uint64_t seed;
    /* buffer memory: the configuration's allocator, or malloc/free */
    void *(*host_alloc)(void *ctx, size_t bytes);
    void (*host_free)(void *ctx, void *p, size_t bytes);
    void *alloc_ctx;
};

/* ref_map.c: a buffer's bytes in place (API 1.1 map/unmap). */
dlb_status dlb_ref_map(struct dlb_backend *be, struct dlb_buffer *b,
                       void **ptr, int *device);
dlb_status dlb_ref_unmap(struct dlb_backend *be, struct dlb_buffer *b,
                         int written);

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

/* ref_conv.c */
dlb_status dlb_ref_conv2d_fwd(struct dlb_backend *be,
                              const struct dlb_conv2d_desc *d,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *w,
                              const struct dlb_buffer *b, struct dlb_buffer *y);
dlb_status dlb_ref_conv2d_bwd_data(struct dlb_backend *be,
                                   const struct dlb_conv2d_desc *d,
                                   const struct dlb_buffer *w,
                                   const struct dlb_buffer *dy,
                                   struct dlb_buffer *dx);
dlb_status dlb_ref_conv2d_bwd_weights(struct dlb_backend *be,
                                      const struct dlb_conv2d_desc *d,
                                      const struct dlb_buffer *x,
                                      const struct dlb_buffer *dy,
                                      struct dlb_buffer *dw,
                                      struct dlb_buffer *db);
/* ref_pool.c */
dlb_status dlb_ref_pool_fwd(struct dlb_backend *be,
                            const struct dlb_pool_desc *d,
                            const struct dlb_buffer *x, struct dlb_buffer *y,
                            struct dlb_buffer *ws);
dlb_status dlb_ref_pool_bwd(struct dlb_backend *be,
                            const struct dlb_pool_desc *d,
                            const struct dlb_buffer *dy,
                            const struct dlb_buffer *ws, struct dlb_buffer *dx);
/* ref_act.c: relu and dropout */
dlb_status dlb_ref_relu_fwd(struct dlb_backend *be, size_t count,
                            const struct dlb_buffer *x, struct dlb_buffer *y);
dlb_status dlb_ref_relu_bwd(struct dlb_backend *be, size_t count,
                            const struct dlb_buffer *y,
                            const struct dlb_buffer *dy, struct dlb_buffer *dx);
dlb_status dlb_ref_dropout_fwd(struct dlb_backend *be,
                               const struct dlb_dropout_desc *d,
                               const struct dlb_buffer *x, struct dlb_buffer *y);
dlb_status dlb_ref_dropout_bwd(struct dlb_backend *be,
                               const struct dlb_dropout_desc *d,
                               const struct dlb_buffer *dy,
                               struct dlb_buffer *dx);
/* ref_bnorm.c */
dlb_status dlb_ref_bn_fwd_train(struct dlb_backend *be,
                                const struct dlb_batchnorm_desc *d,
                                const struct dlb_buffer *x,
                                const struct dlb_buffer *gamma,
                                const struct dlb_buffer *beta,
                                struct dlb_buffer *running_mean,
                                struct dlb_buffer *running_var,
                                struct dlb_buffer *save_mean,
                                struct dlb_buffer *save_invstd,
                                struct dlb_buffer *y);
dlb_status dlb_ref_bn_fwd_infer(struct dlb_backend *be,
                                const struct dlb_batchnorm_desc *d,
                                const struct dlb_buffer *x,
                                const struct dlb_buffer *gamma,
                                const struct dlb_buffer *beta,
                                const struct dlb_buffer *running_mean,
                                const struct dlb_buffer *running_var,
                                struct dlb_buffer *y);
dlb_status dlb_ref_bn_bwd(struct dlb_backend *be,
                          const struct dlb_batchnorm_desc *d,
                          const struct dlb_buffer *x,
                          const struct dlb_buffer *dy,
                          const struct dlb_buffer *gamma,
                          const struct dlb_buffer *save_mean,
                          const struct dlb_buffer *save_invstd,
                          struct dlb_buffer *dx, struct dlb_buffer *dgamma,
                          struct dlb_buffer *dbeta);
/* ref_sparse.c: a linear layer with CSR weights (API 1.1) */
dlb_status dlb_ref_csr_linear_fwd(struct dlb_backend *be,
                                  const struct dlb_csr_linear_desc *d,
                                  const struct dlb_buffer *x,
                                  const struct dlb_buffer *row_ptr,
                                  const struct dlb_buffer *col,
                                  const struct dlb_buffer *val,
                                  const struct dlb_buffer *b,
                                  struct dlb_buffer *y);
/* ref_linear.c */
dlb_status dlb_ref_linear_fwd(struct dlb_backend *be,
                              const struct dlb_linear_desc *d,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *w,
                              const struct dlb_buffer *b, struct dlb_buffer *y);
dlb_status dlb_ref_linear_bwd(struct dlb_backend *be,
                              const struct dlb_linear_desc *d,
                              const struct dlb_buffer *x,
                              const struct dlb_buffer *w,
                              const struct dlb_buffer *dy, struct dlb_buffer *dx,
                              struct dlb_buffer *dw, struct dlb_buffer *db);
/* ref_loss.c */
dlb_status dlb_ref_logsoftmax_fwd(struct dlb_backend *be,
                                  const struct dlb_loss_desc *d,
                                  const struct dlb_buffer *x,
                                  struct dlb_buffer *y);
dlb_status dlb_ref_nll_loss(struct dlb_backend *be,
                            const struct dlb_loss_desc *d,
                            const struct dlb_buffer *y,
                            const struct dlb_buffer *labels,
                            struct dlb_buffer *loss);
dlb_status dlb_ref_logsoftmax_nll_bwd(struct dlb_backend *be,
                                      const struct dlb_loss_desc *d,
                                      const struct dlb_buffer *y,
                                      const struct dlb_buffer *labels,
                                      float scale, struct dlb_buffer *dx);
/* ref_sgd.c */
dlb_status dlb_ref_sgd_update(struct dlb_backend *be,
                              const struct dlb_sgd_desc *d,
                              struct dlb_buffer *w, const struct dlb_buffer *g,
                              struct dlb_buffer *v);
/* ref_elementwise.c: cast, scale, check_finite, fill, (de)quantize */
dlb_status dlb_ref_cast(struct dlb_backend *be, size_t count,
                        const struct dlb_buffer *src, struct dlb_buffer *dst);
dlb_status dlb_ref_scale(struct dlb_backend *be, size_t count,
                         struct dlb_buffer *buf, float alpha);
dlb_status dlb_ref_check_finite(struct dlb_backend *be, size_t count,
                                const struct dlb_buffer *buf, int *found);
dlb_status dlb_ref_fill(struct dlb_backend *be, size_t count,
                        struct dlb_buffer *buf, double value);
dlb_status dlb_ref_quantize(struct dlb_backend *be, size_t count,
                            const struct dlb_buffer *src, struct dlb_buffer *dst,
                            float scale, int32_t zero_point);
dlb_status dlb_ref_dequantize(struct dlb_backend *be, size_t count,
                              const struct dlb_buffer *src,
                              struct dlb_buffer *dst, float scale,
                              int32_t zero_point);
/* ref_int8.c: int8 inference (API 1.1) */
dlb_status dlb_ref_conv2d_int8_fwd(struct dlb_backend *be,
                                   const struct dlb_conv2d_desc *d,
                                   const struct dlb_int8_desc *q,
                                   const struct dlb_buffer *x,
                                   const struct dlb_buffer *w,
                                   const struct dlb_buffer *w_scale,
                                   const struct dlb_buffer *b,
                                   struct dlb_buffer *y);
dlb_status dlb_ref_linear_int8_fwd(struct dlb_backend *be,
                                   const struct dlb_linear_desc *d,
                                   const struct dlb_int8_desc *q,
                                   const struct dlb_buffer *x,
                                   const struct dlb_buffer *w,
                                   const struct dlb_buffer *w_scale,
                                   const struct dlb_buffer *b,
                                   struct dlb_buffer *y);
dlb_status dlb_ref_pool_int8_fwd(struct dlb_backend *be,
                                 const struct dlb_pool_desc *d,
                                 const struct dlb_buffer *x,
                                 struct dlb_buffer *y);

#endif
