/* Engine mpi: one stage per rank (process), activations and their
 * gradients sent point to point between neighbouring ranks.
 *
 * Rank r runs stage r (mp_rank.c), receives micro-batch k's activations
 * from r - 1 with MPI_Recv and sends its output to r + 1 with MPI_Isend
 * (tag k), and the gradients the other way (tag M + k); the stages'
 * layers go back to rank 0 from tag 2 M on. Sends never block, so the
 * schedules cannot deadlock on each other's sends; their buffers are one
 * per micro-batch, completed at the end of the step. */
#include <stdlib.h>

#include "mp_rank.h"

struct mp_mpi {
    struct mp_rank p;            /* first: the engine is its stage's rank */
    uint32_t cap;
    size_t in_count, out_count;  /* per image at the stage's first and last */
    float **fwd_in, **fwd_out, **bwd_in, **bwd_out; /* per micro-batch */
    MPI_Request *req;
    int n_req;
};

static dlb_status mpi_probe(const struct dlb_host *h,
                            const struct mp_settings *s,
                            char *reason, size_t len)
{
    (void)h;
    (void)s;
    (void)reason;
    (void)len;
    return DLB_OK;
}

static dlb_status mpi_init(const struct dlb_host *h,
                           const struct mp_settings *s,
                           void **eng)
{
    struct mp_mpi *e = calloc(1, sizeof *e);
    if (!e)
        return DLB_ERR_NOMEM;
    dlb_status st = mp_rank_open(h, s, 2 * s->micro, &e->p);
    if (st != DLB_OK) {
        free(e);
        return st;
    }
    *eng = e;
    return DLB_OK;
}

static float **alloc_slots(int M)
{
    return calloc((size_t)M, sizeof(float *));
}

static dlb_status grow(struct mp_mpi *e, uint32_t cap)
{
    for (int k = 0; k < e->p.M; k++) {
        float **v[] = {&e->fwd_in[k], &e->bwd_out[k], &e->fwd_out[k],
                       &e->bwd_in[k]};
        for (int j = 0; j < 4; j++) {
            size_t n = (size_t)cap * (j < 2 ? e->in_count : e->out_count);
            float *p = realloc(*v[j], (n ? n : 1) * sizeof *p);
            if (!p)
                return DLB_ERR_NOMEM;
            *v[j] = p;
        }
    }
    e->cap = cap;
    return DLB_OK;
}

static dlb_status start(struct mp_rank *p, struct dlb_model *m)
{
    struct mp_mpi *e = (struct mp_mpi *)p;
    dlb_status s;
    if ((s = p->api->act_count(p->h, m, p->cut.first[p->r], &e->in_count)) ||
        (s = p->api->act_count(p->h, m, p->cut.first[p->r + 1],
                               &e->out_count)))
        return s;
    e->req = malloc(2 * (size_t)p->M * sizeof *e->req);
    e->fwd_in = alloc_slots(p->M);
    e->fwd_out = alloc_slots(p->M);
    e->bwd_in = alloc_slots(p->M);
    e->bwd_out = alloc_slots(p->M);
    if (!e->req || !e->fwd_in || !e->fwd_out || !e->bwd_in || !e->bwd_out)
        return DLB_ERR_NOMEM;
    return DLB_OK;
}

static dlb_status run_op(struct mp_mpi *e, const struct dlb_batch *b,
                         const struct mp_op *op, double *busy, double *loss)
{
    unsigned k = op->k;
    const struct mp_rank *p = &e->p;
    int r = p->r, S = p->S;
    uint32_t nk = p->lo[k + 1] - p->lo[k];
    int in_n = (int)(nk * e->in_count), out_n = (int)(nk * e->out_count);
    dlb_status s;
    double t0, l = 0;
    if (!op->backward) {
        const float *in = r == 0 ? b->images + (size_t)p->lo[k] * p->per_image
                                 : e->fwd_in[k];
        if (r > 0)
            MPI_Recv(e->fwd_in[k], in_n, MPI_FLOAT, r - 1, (int)k, p->w.comm,
                     MPI_STATUS_IGNORE);
        t0 = mp_now();
        s = p->api->slice_forward(p->h, p->stage, k, in,
                                  r == S - 1 ? b->labels + p->lo[k] : NULL,
                                  r < S - 1 ? e->fwd_out[k] : NULL,
                                  r == S - 1 ? &l : NULL);
        *busy += mp_now() - t0;
        *loss += l * nk / (double)b->n;
        if (s == DLB_OK && r < S - 1)
            MPI_Isend(e->fwd_out[k], out_n, MPI_FLOAT, r + 1, (int)k,
                      p->w.comm,
                      &e->req[e->n_req++]);
        return s;
    }
    if (r < S - 1)
        MPI_Recv(e->bwd_in[k], out_n, MPI_FLOAT, r + 1, p->M + (int)k,
                 p->w.comm, MPI_STATUS_IGNORE);
    t0 = mp_now();
    s = p->api->slice_backward(p->h, p->stage, k,
                               r < S - 1 ? e->bwd_in[k] : NULL,
                               r > 0 ? e->bwd_out[k] : NULL);
    *busy += mp_now() - t0;
    if (s == DLB_OK && r > 0)
        MPI_Isend(e->bwd_out[k], in_n, MPI_FLOAT, r - 1, p->M + (int)k,
                  p->w.comm, &e->req[e->n_req++]);
    return s;
}

/* The schedule's operations, then the update. */
static dlb_status run(struct mp_rank *p, struct dlb_model *m,
                      const struct dlb_batch *b, double *busy, double *loss)
{
    struct mp_mpi *e = (struct mp_mpi *)p;
    dlb_status s = DLB_OK;
    uint32_t most = (b->n + (uint32_t)p->M - 1) / (uint32_t)p->M;
    (void)m;
    if (most > e->cap && (s = grow(e, most)) != DLB_OK)
        return s;
    for (int k = 0; k <= p->M; k++)
        p->lo[k] = (uint32_t)((uint64_t)b->n * (uint64_t)k / (uint64_t)p->M);
    e->n_req = 0;
    s = p->api->slice_begin(p->h, p->stage, b->n, NULL);
    for (int i = 0; s == DLB_OK && i < 2 * p->M; i++)
        s = run_op(e, b, &p->ops[i], busy, loss);
    MPI_Waitall(e->n_req, e->req, MPI_STATUSES_IGNORE);
    double tu = mp_now();
    if (s == DLB_OK)
        s = p->api->slice_step(p->h, p->stage);
    *busy += mp_now() - tu;
    return s;
}

static const struct mp_rank_engine mpi_rank_engine = {start, run};

static dlb_status mpi_step(void *eng, struct dlb_model *m,
                           const struct dlb_batch *b)
{
    return mp_rank_step(eng, &mpi_rank_engine, m, b);
}

static dlb_status mpi_figures(void *eng, struct mp_figures *out)
{
    return mp_rank_figures(eng, out);
}

static void mpi_fini(void *eng)
{
    struct mp_mpi *e = eng;
    if (!e)
        return;
    for (int k = 0; k < e->p.M; k++) {
        if (e->fwd_in) free(e->fwd_in[k]);
        if (e->fwd_out) free(e->fwd_out[k]);
        if (e->bwd_in) free(e->bwd_in[k]);
        if (e->bwd_out) free(e->bwd_out[k]);
    }
    free(e->fwd_in);
    free(e->fwd_out);
    free(e->bwd_in);
    free(e->bwd_out);
    free(e->req);
    mp_rank_close(&e->p);
    free(e);
}

const struct mp_engine mp_engine_mpi = {
    .name = "mpi",
    .probe = mpi_probe,
    .init = mpi_init,
    .step = mpi_step,
    .figures = mpi_figures,
    .fini = mpi_fini,
};
