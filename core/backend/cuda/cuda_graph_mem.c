/* A graph's memory: the blocks its captured step uses. A replay writes
 * the same device addresses the capture saw, so the buffers a step
 * allocates between graph_begin and graph_end come from blocks the graph
 * keeps for its whole life; a buffer_free only marks its block free for
 * the next allocation of the warm-up or capture, in stream order, as a
 * framework's private graph pool does. Blocks come from cudaMalloc
 * outside any capture (the warm-up run), never from the caller's
 * device_alloc: a pool might hand a kept block to someone else. */
#include "cuda.h"
#include "cuda_graph_impl.h"

#include <stdlib.h>

/* The smallest free block that fits: the warm-up and the captured step
 * ask for the same sizes in the same order, so each finds its own. */
static long best_fit(const struct dlb_cuda_gmem *m, size_t bytes)
{
    long best = -1;
    for (size_t i = 0; i < m->n; i++)
        if (!m->b[i].busy && m->b[i].bytes >= bytes &&
            (best < 0 || m->b[i].bytes < m->b[(size_t)best].bytes))
            best = (long)i;
    return best;
}

dlb_status dlb_cuda_graph_mem_take(struct dlb_backend *be, size_t bytes,
                                   void **p, void **owner)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct dlb_cuda_gmem *m = cu->graph_on->mem;
    long i = best_fit(m, bytes);
    dlb_status s;
    *p = NULL;
    if (i < 0) {
        /* cudaMalloc may wait for the device, which a capture forbids. */
        if (cu->capturing)
            return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda graph capture: "
                                 "the step asked for %zu bytes its warm-up "
                                 "(graph_begin with capture 0) did not", bytes);
        if (m->n == m->cap) {
            size_t cap = m->cap ? 2 * m->cap : 64;
            struct dlb_cuda_gblock *nb = realloc(m->b, cap * sizeof *nb);
            if (!nb)
                return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda: out of host "
                                     "memory");
            m->b = nb;
            m->cap = cap;
        }
        void *q = NULL;
        if ((s = dlb_cuda_check(be, dlb_cuda_mem_alloc(&q, bytes),
                                "buffer_alloc", "graph memory")))
            return s;
        m->b[m->n] = (struct dlb_cuda_gblock){q, bytes, 0};
        i = (long)m->n++;
    }
    m->b[i].busy = 1;
    m->busy++;
    *p = m->b[i].p;
    *owner = m;
    return DLB_OK;
}

void dlb_cuda_graph_mem_free_all(struct dlb_cuda_gmem *m)
{
    for (size_t i = 0; i < m->n; i++)
        dlb_cuda_mem_free(m->b[i].p, m->b[i].bytes);
    free(m->b);
    free(m);
}

/* A block given back after its graph is gone is freed at once (cudaFree
 * waits for the device, so no enqueued work still uses it); the table
 * goes with the last one. */
void dlb_cuda_graph_mem_give(void *owner, void *p)
{
    struct dlb_cuda_gmem *m = owner;
    for (size_t i = 0; i < m->n; i++) {
        if (m->b[i].p != p || !m->b[i].busy)
            continue;
        m->b[i].busy = 0;
        m->busy--;
        if (m->orphan) {
            dlb_cuda_mem_free(m->b[i].p, m->b[i].bytes);
            m->b[i] = m->b[--m->n];
            if (!m->busy)
                dlb_cuda_graph_mem_free_all(m);
        }
        return;
    }
}

int dlb_cuda_graph_defer(struct dlb_cuda *cu, struct dlb_buffer *b)
{
    struct dlb_graph *g = cu->graph_on;
    if (!g || !cu->capturing)
        return 0;
    if (g->n_deferred == g->cap_deferred) {
        size_t cap = g->cap_deferred ? 2 * g->cap_deferred : 16;
        struct dlb_buffer **nd = realloc(g->deferred, cap * sizeof *nd);
        if (!nd)
            return 0; /* freed now: the capture fails on it, loudly */
        g->deferred = nd;
        g->cap_deferred = cap;
    }
    g->deferred[g->n_deferred++] = b;
    return 1;
}

struct dlb_cuda_retired {
    void *p;
    size_t bytes;
    struct dlb_cuda_retired *next;
};

void dlb_cuda_retire(struct dlb_cuda *cu, void *p, size_t bytes)
{
    struct dlb_cuda_retired *r = malloc(sizeof *r);
    if (!r) {
        /* Freeing would leave a graph pointing at freed memory; keeping
         * the area unlisted only leaks it. */
        return;
    }
    *r = (struct dlb_cuda_retired){p, bytes, cu->retired};
    cu->retired = r;
}

void dlb_cuda_retired_free(struct dlb_cuda *cu)
{
    while (cu->retired) {
        struct dlb_cuda_retired *r = cu->retired;
        cu->retired = r->next;
        dlb_cuda_mem_free(r->p, r->bytes);
        free(r);
    }
}
