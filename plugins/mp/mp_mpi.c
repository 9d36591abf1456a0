/* Engine mpi: one stage per rank (process), activations and their
 * gradients sent point to point between neighbouring ranks.
 *
 * Every rank runs the configuration with the same seed and data, so every
 * rank's model starts from the same weights and every rank reads the same
 * batch; rank r runs stage r on a replica of its model (its own lifetime,
 * as in the threads engine), receives micro-batch k's activations from
 * r - 1 with MPI_Recv and sends its output to r + 1 with MPI_Isend (tag k),
 * and the gradients the other way (tag M + k). Sends never block, so the
 * schedules cannot deadlock on each other's sends; their buffers are one
 * per micro-batch, completed at the end of the step. After the update
 * every rank sends its layers (weights, running statistics) to rank 0,
 * which writes them into its model: rank 0 reports, and what it evaluates
 * is what the pipeline trained. A rank that fails ends every rank (the
 * others would wait for its messages for ever). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_world.h"
#include "mp.h"

struct mp_mpi {
    const struct dlb_host *h;
    const struct dlb_replica_ops *ro;
    const struct dlb_stage_ops *so;
    struct mp_settings s;
    struct dp_world w;
    int S, M, r;
    int started;
    dlb_status start_status;
    struct mp_cut cut;
    struct dlb_model *model, *replica;
    struct dlb_stage *stage;
    struct mp_op *ops;
    uint32_t *lo, cap;
    size_t in_count, out_count, per_image; /* per image at first and last */
    float **fwd_in, **fwd_out, **bwd_in, **bwd_out; /* per micro-batch */
    MPI_Request *req;
    int n_req;
    float *handback;             /* this rank's layers; rank 0: the largest */
    size_t handback_n, handback_max;
    float *state;
    size_t state_n;
    uint64_t version;
    struct mp_figures fig;
};

static dlb_status mpi_probe(const struct dlb_host *h, const struct mp_settings *s,
                            char *reason, size_t len)
{
    (void)h;
    (void)s;
    (void)reason;
    (void)len;
    return DLB_OK;
}

static dlb_status mpi_init(const struct dlb_host *h, const struct mp_settings *s,
                           void **eng)
{
    struct mp_mpi *e = calloc(1, sizeof *e);
    if (!e)
        return DLB_ERR_NOMEM;
    e->h = h;
    e->ro = h->replica_ops;
    e->so = h->stage_ops;
    e->s = *s;
    e->S = s->ranks;
    e->M = s->micro;
    dlb_status st = dp_world_open(h, &e->w);
    if (st != DLB_OK) {
        free(e);
        return st;
    }
    if (e->w.size != e->S) {
        h->log(h, DLB_LOG_ERROR, "ranks = %d, but the launcher started %d "
               "processes: run one rank per stage", e->S, e->w.size);
        dp_world_close(&e->w);
        free(e);
        return DLB_ERR_INPUT;
    }
    e->r = e->w.rank;
    *eng = e;
    return DLB_OK;
}

static float **alloc_slots(int M)
{
    return calloc((size_t)M, sizeof(float *));
}

static dlb_status grow(struct mp_mpi *e, uint32_t cap)
{
    for (int k = 0; k < e->M; k++) {
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

static dlb_status start(struct mp_mpi *e, struct dlb_model *m)
{
    dlb_status s;
    e->started = 1;
    e->model = m;
    if ((s = mp_plan_model(e->h, m, &e->s, &e->cut)) != DLB_OK)
        return s;
    unsigned first = e->cut.first[e->r], last = e->cut.first[e->r + 1];
    struct dlb_stage_spec spec = {first, last, (unsigned)e->M, 1.0f};
    if ((s = e->so->act_count(e->h, m, first, &e->in_count)) ||
        (s = e->so->act_count(e->h, m, last, &e->out_count)) ||
        (s = e->so->act_count(e->h, m, 0, &e->per_image)))
        return s;
    /* The launcher (or dp's world) gave this rank its CPUs already. */
    if ((s = e->ro->create(e->h, m, e->s.stage_threads, -1, &e->replica)) ||
        (s = e->so->open(e->h, e->replica, &spec, &e->stage)))
        return s;
    e->ro->state_count(e->h, m, DLB_STATE_ALL, &e->state_n);
    e->so->layers_count(e->h, m, first, last,
                        DLB_STATE_WEIGHTS | DLB_STATE_STATS, &e->handback_n);
    e->handback_max = e->handback_n;
    for (int r = 0; e->r == 0 && r < e->S; r++) {
        size_t n = 0;
        e->so->layers_count(e->h, m, e->cut.first[r], e->cut.first[r + 1],
                            DLB_STATE_WEIGHTS | DLB_STATE_STATS, &n);
        e->handback_max = n > e->handback_max ? n : e->handback_max;
    }
    e->state = malloc((e->state_n ? e->state_n : 1) * sizeof *e->state);
    e->handback = malloc((e->handback_max ? e->handback_max : 1) *
                         sizeof *e->handback);
    e->ops = malloc(2 * (size_t)e->M * sizeof *e->ops);
    e->lo = calloc((size_t)e->M + 1, sizeof *e->lo);
    e->req = malloc(2 * (size_t)e->M * sizeof *e->req);
    e->fwd_in = alloc_slots(e->M);
    e->fwd_out = alloc_slots(e->M);
    e->bwd_in = alloc_slots(e->M);
    e->bwd_out = alloc_slots(e->M);
    if (!e->state || !e->handback || !e->ops || !e->lo || !e->req ||
        !e->fwd_in || !e->fwd_out || !e->bwd_in || !e->bwd_out)
        return DLB_ERR_NOMEM;
    mp_schedule_ops(e->s.schedule, e->r, e->S, e->M, e->ops);
    e->version = e->ro->weights_version(e->h, m) - 1; /* sync at once */
    e->fig.stages = e->S;
    e->fig.micro = e->M;
    memcpy(e->fig.first, e->cut.first, sizeof e->fig.first);
    return DLB_OK;
}

static dlb_status run_op(struct mp_mpi *e, const struct dlb_batch *b,
                         const struct mp_op *op, double *busy, double *loss)
{
    unsigned k = op->k;
    int r = e->r, S = e->S;
    uint32_t nk = e->lo[k + 1] - e->lo[k];
    int in_n = (int)(nk * e->in_count), out_n = (int)(nk * e->out_count);
    dlb_status s;
    double t0, l = 0;
    if (!op->backward) {
        const float *in = r == 0 ? b->images + (size_t)e->lo[k] * e->per_image
                                 : e->fwd_in[k];
        if (r > 0)
            MPI_Recv(e->fwd_in[k], in_n, MPI_FLOAT, r - 1, (int)k, e->w.comm,
                     MPI_STATUS_IGNORE);
        t0 = mp_now();
        s = e->so->forward(e->h, e->stage, k, in,
                           r == S - 1 ? b->labels + e->lo[k] : NULL,
                           r < S - 1 ? e->fwd_out[k] : NULL,
                           r == S - 1 ? &l : NULL);
        *busy += mp_now() - t0;
        *loss += l * nk / (double)b->n;
        if (s == DLB_OK && r < S - 1)
            MPI_Isend(e->fwd_out[k], out_n, MPI_FLOAT, r + 1, (int)k, e->w.comm,
                      &e->req[e->n_req++]);
        return s;
    }
    if (r < S - 1)
        MPI_Recv(e->bwd_in[k], out_n, MPI_FLOAT, r + 1, e->M + (int)k,
                 e->w.comm, MPI_STATUS_IGNORE);
    t0 = mp_now();
    s = e->so->backward(e->h, e->stage, k, r < S - 1 ? e->bwd_in[k] : NULL,
                        r > 0 ? e->bwd_out[k] : NULL);
    *busy += mp_now() - t0;
    if (s == DLB_OK && r > 0)
        MPI_Isend(e->bwd_out[k], in_n, MPI_FLOAT, r - 1, e->M + (int)k,
                  e->w.comm, &e->req[e->n_req++]);
    return s;
}

/* Every stage's layers into rank 0's model. */
static dlb_status hand_back(struct mp_mpi *e, struct dlb_model *m)
{
    const unsigned parts = DLB_STATE_WEIGHTS | DLB_STATE_STATS;
    unsigned first = e->cut.first[e->r], last = e->cut.first[e->r + 1];
    dlb_status s = e->so->layers_io(e->h, e->replica, first, last, parts,
                                    e->handback, e->handback_n, 0);
    if (s != DLB_OK)
        return s;
    if (e->r > 0) {
        MPI_Send(e->handback, (int)e->handback_n, MPI_FLOAT, 0, 2 * e->M + e->r,
                 e->w.comm);
        return DLB_OK;
    }
    s = e->so->layers_io(e->h, m, first, last, parts, e->handback,
                         e->handback_n, 1);
    for (int r = 1; r < e->S && s == DLB_OK; r++) {
        size_t n = 0;
        e->so->layers_count(e->h, m, e->cut.first[r], e->cut.first[r + 1],
                            parts, &n);
        MPI_Recv(e->handback, (int)n, MPI_FLOAT, r, 2 * e->M + r, e->w.comm,
                 MPI_STATUS_IGNORE);
        s = e->so->layers_io(e->h, m, e->cut.first[r], e->cut.first[r + 1],
                             parts, e->handback, n, 1);
    }
    return s;
}

static dlb_status step(struct mp_mpi *e, struct dlb_model *m,
                       const struct dlb_batch *b)
{
    dlb_status s = DLB_OK;
    double t0 = mp_now(), busy = 0, loss = 0;
    uint32_t most = (b->n + (uint32_t)e->M - 1) / (uint32_t)e->M;
    if (b->n < (uint32_t)e->M) {
        e->h->log(e->h, DLB_LOG_ERROR, "batch of %u images for %d "
                  "micro-batches: each needs at least one", b->n, e->M);
        return DLB_ERR_INPUT;
    }
    if (most > e->cap && (s = grow(e, most)) != DLB_OK)
        return s;
    for (int k = 0; k <= e->M; k++)
        e->lo[k] = (uint32_t)((uint64_t)b->n * (uint64_t)k / (uint64_t)e->M);
    /* Weights set from outside (every rank does the same): copy them. */
    if (e->ro->weights_version(e->h, m) != e->version &&
        ((s = e->ro->state_read(e->h, m, DLB_STATE_ALL, e->state, e->state_n)) ||
         (s = e->ro->state_write(e->h, e->replica, DLB_STATE_ALL, e->state,
                                 e->state_n)) ||
         (s = e->ro->copy_rng(e->h, e->replica, m))))
        return s;
    e->n_req = 0;
    s = e->so->begin(e->h, e->stage, b->n, NULL);
    for (int i = 0; s == DLB_OK && i < 2 * e->M; i++)
        s = run_op(e, b, &e->ops[i], &busy, &loss);
    MPI_Waitall(e->n_req, e->req, MPI_STATUSES_IGNORE);
    double tu = mp_now();
    if (s == DLB_OK)
        s = e->so->update(e->h, e->stage);
    double end = mp_now();
    busy += end - tu;
    if (s != DLB_OK)
        return s;
    s = hand_back(e, m);
    e->version = e->ro->weights_version(e->h, m);
    e->fig.handback_s += mp_now() - end;
    e->fig.pipe_s += end - t0;
    e->fig.busy_s[e->r] += busy;
    e->fig.last_loss = loss;
    e->fig.sent_bytes = 0;
    for (int r = 0; r + 1 < e->S; r++) {
        size_t c = 0;
        e->so->act_count(e->h, m, e->cut.first[r + 1], &c);
        e->fig.sent_bytes += 2 * (uint64_t)b->n * c * sizeof(float);
    }
    e->fig.steps++;
    e->fig.step_s += mp_now() - t0;
    return s;
}

static dlb_status mpi_step(void *eng, struct dlb_model *m,
                           const struct dlb_batch *b)
{
    struct mp_mpi *e = eng;
    char why[128];
    if (!e->started)
        e->start_status = start(e, m);
    dlb_status s = e->start_status;
    if (s == DLB_OK && e->model != m) {
        e->h->log(e->h, DLB_LOG_ERROR, "the model changed between steps");
        s = DLB_ERR_INTERNAL;
    }
    if (s == DLB_OK)
        s = step(e, m, b);
    if (s != DLB_OK) {
        snprintf(why, sizeof why, "pipeline stage %d failed (status %d; "
                 "its error is above)", e->r, (int)s);
        dp_world_abort(e->h, &e->w, why);
    }
    return s;
}

/* Rank 0 gathers the stages' times and memory; the pipeline's time is the
 * slowest rank's. */
static dlb_status mpi_figures(void *eng, struct mp_figures *out)
{
    struct mp_mpi *e = eng;
    double mine[3] = {e->fig.busy_s[e->r], e->fig.pipe_s, e->fig.last_loss};
    double *all = calloc(3 * (size_t)e->S, sizeof *all);
    unsigned long long peak = 0, *peaks = calloc((size_t)e->S, sizeof *peaks);
    struct dlb_stage_memory mem = {0, 0};
    if (!all || !peaks) {
        free(all);
        free(peaks);
        dp_world_abort(e->h, &e->w, "out of memory for the figures");
        return DLB_ERR_NOMEM;
    }
    if (e->stage)
        e->so->memory(e->h, e->stage, &mem);
    peak = mem.saved_peak;
    MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, e->w.comm);
    MPI_Gather(&peak, 1, MPI_UNSIGNED_LONG_LONG, peaks, 1,
               MPI_UNSIGNED_LONG_LONG, 0, e->w.comm);
    *out = e->fig;
    out->stages = e->S;
    out->micro = e->M;
    for (int r = 0; e->r == 0 && r < e->S; r++) {
        out->busy_s[r] = all[3 * r];
        out->pipe_s = all[3 * r + 1] > out->pipe_s ? all[3 * r + 1] : out->pipe_s;
        out->saved_peak[r] = peaks[r];
    }
    if (e->r == 0)
        out->last_loss = all[3 * (e->S - 1) + 2];
    free(all);
    free(peaks);
    return DLB_OK;
}

static void mpi_fini(void *eng)
{
    struct mp_mpi *e = eng;
    if (!e)
        return;
    e->so->close(e->h, e->stage);
    e->ro->destroy(e->h, e->replica);
    for (int k = 0; k < e->M; k++) {
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
    free(e->lo);
    free(e->ops);
    free(e->handback);
    free(e->state);
    dp_world_close(&e->w);
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
