/* The CSR linear kernel's pieces (cpu_sparse.c), with AVX-512 versions
 * (cpu_sparse_avx512.c) picked at run time. */
#ifndef DLB_CPU_SPARSE_H
#define DLB_CPU_SPARSE_H

#include <stddef.h>
#include <stdint.h>

/* Images per block and output rows per block: 16 = one AVX-512 vector
 * of fp32; a block of TILE images keeps four vectors of sums per row. */
#define DLB_CSR_VEC 16
#define DLB_CSR_TILE 64

struct dlb_csr_job {
    const int32_t *rows, *cols;
    const float *vals, *bias;   /* bias may be NULL */
    uint32_t n, in, out;
    size_t ld;                  /* xt's row length: n rounded up to 16 */
};

/* xt[c][s] = x[s][c] for the 16 x 16 block at channel c0 and image s0,
 * zeros for images at or past n; rows at or past `in` are not written. */
typedef void (*dlb_csr_transpose_fn)(const struct dlb_csr_job *j,
                                     const float *x, float *xt, uint32_t c0,
                                     size_t s0);
/* y[s][o] for rows o0 .. o0+15 (those below out) and images t0 .. t0+w-1
 * (those below n), w a multiple of 16 up to DLB_CSR_TILE, from xt. */
typedef void (*dlb_csr_block_fn)(const struct dlb_csr_job *j, const float *xt,
                                 float *y, uint32_t o0, size_t t0, size_t w);

void dlb_csr_transpose_c(const struct dlb_csr_job *j, const float *x,
                         float *xt, uint32_t c0, size_t s0);
void dlb_csr_block_c(const struct dlb_csr_job *j, const float *xt, float *y,
                     uint32_t o0, size_t t0, size_t w);
/* 1 when this build and CPU run the AVX-512 versions. */
int dlb_csr_have_avx512(void);
void dlb_csr_transpose_avx512(const struct dlb_csr_job *j, const float *x,
                              float *xt, uint32_t c0, size_t s0);
void dlb_csr_block_avx512(const struct dlb_csr_job *j, const float *xt,
                          float *y, uint32_t o0, size_t t0, size_t w);

#endif
