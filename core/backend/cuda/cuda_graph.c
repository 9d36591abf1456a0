/* Graphs of a whole step (backend.h, API 1.3): the stream's work between
 * graph_begin and graph_end captured once (cudaStreamBeginCapture in
 * thread-local mode, so that only this thread's unsafe calls break it)
 * and replayed with one cudaGraphLaunch. A second capture of the same
 * graph updates the executable in place (cudaGraphExecUpdate) when the
 * topology allows, else it is instantiated anew. */
#include "cuda.h"
#include "cuda_graph_impl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double host_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

dlb_status dlb_cuda_not_capturing(struct dlb_backend *be, const char *op)
{
    if (!dlb_cuda_of(be)->capturing)
        return DLB_OK;
    return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: waits for the device "
                         "or reads a result on the host, which a graph capture "
                         "cannot record; do it outside graph_begin/graph_end",
                         op);
}

dlb_status dlb_cuda_graph_create(struct dlb_backend *be, struct dlb_graph **out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct dlb_graph *g = calloc(1, sizeof *g);
    dlb_status s;
    *out = NULL;
    if (g)
        g->mem = calloc(1, sizeof *g->mem);
    if (!g || !g->mem) {
        free(g);
        return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda: out of host memory");
    }
    if ((s = dlb_cuda_not_capturing(be, "graph_create")) ||
        (s = dlb_cuda_check(be, dlb_cuda_mem_alloc((void **)&g->seed_dev,
                                                   DLB_CUDA_GRAPH_SEEDS *
                                                       sizeof(uint64_t)),
                            "graph_create", "seed slots"))) {
        free(g->mem);
        free(g);
        return s;
    }
    cu->graphs_live++;
    *out = g;
    return DLB_OK;
}

dlb_status dlb_cuda_graph_begin(struct dlb_backend *be, struct dlb_graph *g,
                                int capture)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    if (!g)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda graph_begin: graph "
                             "is NULL");
    if (cu->graph_on)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda graph_begin: another "
                             "graph is open (graph_end it first)");
    if (capture) {
        dlb_status s = dlb_cuda_check(be, cudaStreamBeginCapture(
                                              cu->stream,
                                              cudaStreamCaptureModeThreadLocal),
                                      "graph_begin", "cudaStreamBeginCapture");
        if (s != DLB_OK)
            return s;
        g->n_seeds = 0;
        g->t0 = host_now();
        cu->capturing = 1;
    }
    cu->graph_on = g;
    return DLB_OK;
}

dlb_status dlb_cuda_graph_seed_slot(struct dlb_backend *be, uint64_t seed,
                                    const uint64_t **slot)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct dlb_graph *g = cu->graph_on;
    *slot = NULL;
    if (!cu->capturing || !g)
        return DLB_OK;
    unsigned k = 0;
    while (k < g->n_seeds && g->seeds[k] != seed)
        k++;
    if (k == g->n_seeds) {
        if (k == DLB_CUDA_GRAPH_SEEDS)
            return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda graph capture: "
                                 "more than %d dropout seeds in one step",
                                 DLB_CUDA_GRAPH_SEEDS);
        g->seeds[g->n_seeds++] = seed;
    }
    *slot = g->seed_dev + k;
    return DLB_OK;
}

/* The capture as an executable: an update of the existing one in place
 * where cudaGraphExecUpdate takes it, else a new instantiation. Replays
 * still in flight use the old executable: wait for them first. */
static dlb_status make_exec(struct dlb_backend *be, struct dlb_graph *g,
                            cudaGraph_t graph)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    if (g->exec) {
        cudaGraphExecUpdateResultInfo info;
        memset(&info, 0, sizeof info);
        if ((s = dlb_cuda_check(be, cudaStreamSynchronize(cu->stream),
                                "graph_end", "waiting for replays")))
            return s;
        if (cudaGraphExecUpdate(g->exec, graph, &info) == cudaSuccess)
            return DLB_OK;
        (void)cudaGetLastError(); /* a refused update is not an error */
        cudaGraphExecDestroy(g->exec);
        g->exec = NULL;
    }
    return dlb_cuda_check(be, cudaGraphInstantiate(&g->exec, graph, 0),
                          "graph_end", "cudaGraphInstantiate");
}

/* Each slot back to the value it had at capture: a launch without seeds
 * replays the captured masks. */
/* A captured seed the caller names but the step never used (a layer that
 * did not reach the backend) has no slot and is skipped. */
static dlb_status set_seeds(struct dlb_backend *be, struct dlb_graph *g,
                            const struct dlb_graph_seed *seeds, size_t n)
{
    struct dlb_cuda_seed_set set;
    memset(&set, 0, sizeof set);
    set.n = g->n_live;
    memcpy(set.v, g->live, g->n_live * sizeof set.v[0]);
    for (size_t i = 0; i < n; i++) {
        unsigned k = 0;
        while (k < g->n_live && g->live[k] != seeds[i].captured)
            k++;
        if (k < g->n_live)
            set.v[k] = seeds[i].now;
    }
    if (!set.n)
        return DLB_OK;
    return dlb_cuda_check(be, dlb_cuda_k_set_seeds(dlb_cuda_of(be)->stream,
                                                   g->seed_dev, set),
                          "graph_launch", "setting the dropout seeds");
}

/* Buffers of other memory that the capture freed: their last users were
 * recorded, not run, so only now may they go. */
static void free_deferred(struct dlb_backend *be, struct dlb_graph *g)
{
    for (size_t i = 0; i < g->n_deferred; i++)
        dlb_cuda_buffer_free(be, g->deferred[i]);
    g->n_deferred = 0;
}

dlb_status dlb_cuda_graph_end(struct dlb_backend *be, struct dlb_graph *g,
                              double *capture_s)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    cudaGraph_t graph = NULL;
    dlb_status s;
    if (capture_s)
        *capture_s = 0.0;
    if (!g || cu->graph_on != g)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda graph_end: the graph "
                             "is not the one graph_begin opened");
    cu->graph_on = NULL;
    if (!cu->capturing) {
        free_deferred(be, g);
        return DLB_OK;
    }
    cu->capturing = 0;
    /* An operation refused under the capture, or a call the runtime found
     * unsafe, leaves it invalidated: EndCapture says so. */
    s = dlb_cuda_check(be, cudaStreamEndCapture(cu->stream, &graph),
                       "graph_end", "cudaStreamEndCapture");
    free_deferred(be, g);
    if (s == DLB_OK)
        s = make_exec(be, g, graph);
    if (graph)
        cudaGraphDestroy(graph);
    if (s != DLB_OK)
        return s;
    memcpy(g->live, g->seeds, sizeof g->live);
    g->n_live = g->n_seeds;
    if ((s = set_seeds(be, g, NULL, 0)))
        return s;
    if (capture_s)
        *capture_s = host_now() - g->t0;
    return DLB_OK;
}

dlb_status dlb_cuda_graph_launch(struct dlb_backend *be, struct dlb_graph *g,
                                 const struct dlb_graph_seed *seeds, size_t n)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    if (!g || !g->exec)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda graph_launch: nothing "
                             "captured yet");
    if (cu->graph_on)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda graph_launch: inside "
                             "graph_begin/graph_end");
    if ((s = set_seeds(be, g, seeds, n)))
        return s;
    return dlb_cuda_check(be, cudaGraphLaunch(g->exec, cu->stream),
                          "graph_launch", "cudaGraphLaunch");
}

void dlb_cuda_graph_destroy(struct dlb_backend *be, struct dlb_graph *g)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    if (!g)
        return;
    if (cu->graph_on == g) {
        /* Destroyed mid-capture (an error path): end it and drop it. */
        double unused;
        (void)dlb_cuda_graph_end(be, g, &unused);
    }
    cudaStreamSynchronize(cu->stream); /* replays in flight */
    (void)cudaGetLastError();
    if (g->exec)
        cudaGraphExecDestroy(g->exec);
    dlb_cuda_mem_free(g->seed_dev, DLB_CUDA_GRAPH_SEEDS * sizeof(uint64_t));
    if (g->mem->busy) {
        /* Buffers still hold blocks (state the model keeps across steps):
         * the unheld go now, the rest as they are freed. */
        struct dlb_cuda_gmem *m = g->mem;
        size_t j = 0;
        for (size_t i = 0; i < m->n; i++) {
            if (m->b[i].busy)
                m->b[j++] = m->b[i];
            else
                dlb_cuda_mem_free(m->b[i].p, m->b[i].bytes);
        }
        m->n = j;
        m->orphan = 1;
    } else {
        dlb_cuda_graph_mem_free_all(g->mem);
    }
    free(g->deferred);
    free(g);
    if (--cu->graphs_live == 0)
        dlb_cuda_retired_free(cu);
}
