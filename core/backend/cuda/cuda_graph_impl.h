/* The layout of a cuda graph and its memory, shared by cuda_graph.c and
 * cuda_graph_mem.c only. */
#ifndef DLB_CUDA_GRAPH_IMPL_H
#define DLB_CUDA_GRAPH_IMPL_H

#include "cuda.h"
#include "cuda_kernels.h"

struct dlb_cuda_gblock {
    void *p;
    size_t bytes;
    int busy;               /* a live buffer holds it */
};

/* Outlives its graph while buffers still hold blocks (orphan). */
struct dlb_cuda_gmem {
    struct dlb_cuda_gblock *b;
    size_t n, cap;
    size_t busy;
    int orphan;
};

struct dlb_graph {
    struct dlb_cuda_gmem *mem;
    cudaGraphExec_t exec;       /* NULL until the first capture ends */
    uint64_t *seed_dev;         /* DLB_CUDA_GRAPH_SEEDS slots */
    /* Seed values the capture in progress met, in order: slot k holds
     * seeds[k] at capture; live: those of exec. */
    uint64_t seeds[DLB_CUDA_GRAPH_SEEDS];
    unsigned n_seeds;
    uint64_t live[DLB_CUDA_GRAPH_SEEDS];
    unsigned n_live;
    /* Buffers of other memory freed under the capture. */
    struct dlb_buffer **deferred;
    size_t n_deferred, cap_deferred;
    double t0;                  /* capture start, host clock */
};

void dlb_cuda_graph_mem_free_all(struct dlb_cuda_gmem *m);

#endif
