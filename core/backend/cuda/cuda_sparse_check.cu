// The CSR structure of a sparse linear layer, checked on the device: one
// thread per row, which reads its row's columns only within [0, nnz), so
// that the check itself never reads past the buffers.
#include "cuda_kernels.h"
#include "cuda_sparse.h"
#include "cuda_dev.cuh"

__global__ void k_csr_check(uint32_t out, uint32_t in, uint32_t nnz,
                            const int32_t *rows, const int32_t *cols,
                            unsigned *kerr)
{
    DLB_CUDA_FOR(o, (size_t)out) {
        int32_t lo = rows[o], hi = rows[o + 1];
        int bad = hi < lo || (o == 0 && lo != 0) ||
                  (o + 1 == out && hi != (int32_t)nnz);
        lo = lo < 0 ? 0 : lo;
        hi = hi > (int32_t)nnz ? (int32_t)nnz : hi;
        for (int32_t k = lo; k < hi && !bad; k++)
            bad = cols[k] < 0 || (uint32_t)cols[k] >= in ||
                  (k > lo && cols[k] <= cols[k - 1]);
        if (bad) // a plain store, as the other kernels set their bits: the
            *kerr |= DLB_CUDA_KERR_CSR; // word is mapped host memory
    }
}

extern "C" cudaError_t dlb_cuda_k_csr_check(cudaStream_t s, uint32_t out,
                                            uint32_t in, uint32_t nnz,
                                            const int32_t *rows,
                                            const int32_t *cols,
                                            unsigned *kerr)
{
    k_csr_check<<<dlb_cuda_blocks(out), DLB_CUDA_BLOCK, 0, s>>>(out, in, nnz,
                                                                rows, cols,
                                                                kerr);
    return cudaGetLastError();
}
