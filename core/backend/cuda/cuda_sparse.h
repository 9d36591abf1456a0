/* The CSR check kernel of the cuda backend's sparse linear layer
 * (cuda_sparse_check.cu), as a C entry point. */
#ifndef DLB_CUDA_SPARSE_H
#define DLB_CUDA_SPARSE_H

#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets DLB_CUDA_KERR_CSR in *kerr unless rows [out + 1] runs from 0 to
 * nnz without decreasing and every row's columns ascend below `in`: what
 * ref checks, so that a broken structure is reported at the next wait
 * instead of read past the buffers without a word. */
cudaError_t dlb_cuda_k_csr_check(cudaStream_t s, uint32_t out, uint32_t in,
                                 uint32_t nnz, const int32_t *rows,
                                 const int32_t *cols, unsigned *kerr);

#ifdef __cplusplus
}
#endif
#endif
