// The one kernel of graph replays: the dropout seeds of the next replay
// into the graph's slots, passed by value so that the launch owns them.
#include "cuda_kernels.h"

__global__ void k_set_seeds(uint64_t *dst, struct dlb_cuda_seed_set set)
{
    unsigned k = threadIdx.x;
    if (k < set.n)
        dst[k] = set.v[k];
}

cudaError_t dlb_cuda_k_set_seeds(cudaStream_t s, uint64_t *dst,
                                 struct dlb_cuda_seed_set set)
{
    k_set_seeds<<<1, DLB_CUDA_GRAPH_SEEDS, 0, s>>>(dst, set);
    return cudaGetLastError();
}
