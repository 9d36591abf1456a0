/* What the cuda backend's int8 operations share (cuda_int8_ops.c): the
 * checks of their arguments and the int8 GEMM with its plans. */
#ifndef DLB_CUDA_INT8_H
#define DLB_CUDA_INT8_H

#include <stdint.h>

#include "cuda.h"
#include "../int8.h"

/* backend.h's rules for an int8 convolution or linear layer, as the core's
 * dlb_int8_check (int8.c) states them, which a module cannot call: a
 * broken argument is DLB_ERR_INTERNAL naming op and the argument; an F16
 * or BF16 x is DLB_ERR_UNSUPPORTED (the interface quantises F32 only). */
dlb_status dlb_cuda_int8_check(struct dlb_backend *be, const char *op,
                               const struct dlb_int8_desc *q,
                               const struct dlb_int8_args *a);

/* C (m x n, leading dimension ldc, int32) = A^T B with A k x m (lda) and
 * B k x n (ldb), s8, column-major: c[j * ldc + i] = sum over l of
 * a[i * lda + l] * b[j * ldb + l]. cuBLASLt's IMMA kernels when the shape
 * meets their rules (m, k and the leading dimensions multiples of 4,
 * 4-byte aligned pointers) and cuBLASLt has an algorithm for it; the
 * module's dp4a kernel otherwise. Plans are kept per shape for the
 * backend's life (dlb_cuda_int8_cache_free). */
dlb_status dlb_cuda_int8_gemm(struct dlb_backend *be, const char *op,
                              uint32_t m, size_t n, uint32_t k,
                              const int8_t *a, uint32_t lda, const int8_t *b,
                              uint32_t ldb, int32_t *c, uint32_t ldc);

#endif
