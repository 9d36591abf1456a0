/* One stage per rank, what engines mpi and nccl share (mp_rank.h).
 *
 * Every rank runs the configuration with the same seed and data, so every
 * rank's model starts from the same weights and every rank reads the same
 * batch. After the update every rank sends its layers (weights, running
 * statistics) to rank 0, which writes them into its model: rank 0
 * reports, and what it evaluates is what the pipeline trained. A rank
 * that fails ends every rank (the others would wait for its messages for
 * ever). */
#include "mp_rank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dlb_status mp_rank_open(const struct dlb_host *h, const struct mp_settings *s,
                        int handback_tag, struct mp_rank *p)
{
    p->h = h;
    p->api = h->model_api;
    p->s = *s;
    p->S = s->ranks;
    p->M = s->micro;
    p->handback_tag = handback_tag;
    dlb_status st = dlb_mpi_world_open(h, &p->w);
    if (st != DLB_OK)
        return st;
    if (p->w.size != p->S) {
        h->log(h, DLB_LOG_ERROR, "ranks = %d, but the launcher started %d "
               "processes: run one rank per stage", p->S, p->w.size);
        dlb_mpi_world_close(&p->w);
        return DLB_ERR_INPUT;
    }
    p->r = p->w.rank;
    return DLB_OK;
}

static dlb_status start(struct mp_rank *p, struct dlb_model *m)
{
    dlb_status s;
    p->started = 1;
    p->model = m;
    if ((s = mp_plan_model(p->h, m, &p->s, &p->cut)) != DLB_OK)
        return s;
    unsigned first = p->cut.first[p->r], last = p->cut.first[p->r + 1];
    struct dlb_stage_spec spec = {first, last, (unsigned)p->M, 1.0f};
    /* The launcher (or the MPI world) gave this rank its CPUs already. */
    if ((s = p->api->act_count(p->h, m, 0, &p->per_image)) ||
        (s = dlb_model_clone(p->h, m, p->s.stage_threads, -1, &p->replica)) ||
        (s = p->api->slice(p->h, p->replica, &spec, &p->stage)))
        return s;
    p->api->state_count(p->h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL, &p->state_n);
    p->api->state_count(p->h, m, first, last,
                        DLB_STATE_WEIGHTS | DLB_STATE_STATS, &p->handback_n);
    p->handback_max = p->handback_n;
    for (int r = 0; p->r == 0 && r < p->S; r++) {
        size_t n = 0;
        p->api->state_count(p->h, m, p->cut.first[r], p->cut.first[r + 1],
                            DLB_STATE_WEIGHTS | DLB_STATE_STATS, &n);
        p->handback_max = n > p->handback_max ? n : p->handback_max;
    }
    p->state = malloc((p->state_n ? p->state_n : 1) * sizeof *p->state);
    p->handback = malloc((p->handback_max ? p->handback_max : 1) *
                         sizeof *p->handback);
    p->ops = malloc(2 * (size_t)p->M * sizeof *p->ops);
    p->lo = calloc((size_t)p->M + 1, sizeof *p->lo);
    if (!p->state || !p->handback || !p->ops || !p->lo)
        return DLB_ERR_NOMEM;
    mp_schedule_ops(p->s.schedule, p->r, p->S, p->M, p->ops);
    p->version = p->api->weights_version(p->h, m) - 1; /* sync at once */
    p->fig.stages = p->S;
    p->fig.micro = p->M;
    memcpy(p->fig.first, p->cut.first, sizeof p->fig.first);
    return DLB_OK;
}

/* Every stage's layers into rank 0's model, over MPI (host arrays: once
 * per step, for the model the harness evaluates). */
static dlb_status hand_back(struct mp_rank *p, struct dlb_model *m)
{
    const unsigned parts = DLB_STATE_WEIGHTS | DLB_STATE_STATS;
    unsigned first = p->cut.first[p->r], last = p->cut.first[p->r + 1];
    dlb_status s = p->api->state_io(p->h, p->replica, first, last, parts,
                                    p->handback, p->handback_n, 0);
    if (s != DLB_OK)
        return s;
    if (p->r > 0) {
        MPI_Send(p->handback, (int)p->handback_n, MPI_FLOAT, 0,
                 p->handback_tag + p->r, p->w.comm);
        return DLB_OK;
    }
    s = p->api->state_io(p->h, m, first, last, parts, p->handback,
                         p->handback_n, 1);
    for (int r = 1; r < p->S && s == DLB_OK; r++) {
        size_t n = 0;
        p->api->state_count(p->h, m, p->cut.first[r], p->cut.first[r + 1],
                            parts, &n);
        MPI_Recv(p->handback, (int)n, MPI_FLOAT, r, p->handback_tag + r,
                 p->w.comm, MPI_STATUS_IGNORE);
        s = p->api->state_io(p->h, m, p->cut.first[r], p->cut.first[r + 1],
                             parts, p->handback, n, 1);
    }
    return s;
}

static dlb_status step(struct mp_rank *p, const struct mp_rank_engine *eng,
                       struct dlb_model *m, const struct dlb_batch *b)
{
    dlb_status s = DLB_OK;
    double t0 = mp_now(), busy = 0, loss = 0;
    if (b->n < (uint32_t)p->M) {
        p->h->log(p->h, DLB_LOG_ERROR, "batch of %u images for %d "
                  "micro-batches: each needs at least one", b->n, p->M);
        return DLB_ERR_INPUT;
    }
    /* Weights set from outside (every rank does the same): copy them. */
    if (p->api->weights_version(p->h, m) != p->version &&
        ((s = p->api->state_io(p->h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                               p->state, p->state_n, 0)) ||
         (s = p->api->state_io(p->h, p->replica, 0, DLB_NODES_ALL,
                               DLB_STATE_ALL, p->state, p->state_n, 1)) ||
         (s = ((dlb_extra_copy_rng)p->api->extra(
                   p->h, "model.copy_rng"))(p->h, p->replica, m))))
        return s;
    s = eng->run(p, m, b, &busy, &loss);
    double end = mp_now();
    if (s != DLB_OK)
        return s;
    s = hand_back(p, m);
    p->version = p->api->weights_version(p->h, m);
    p->fig.handback_s += mp_now() - end;
    p->fig.pipe_s += end - t0;
    p->fig.busy_s[p->r] += busy;
    p->fig.last_loss = loss;
    p->fig.sent_bytes = 0;
    for (int r = 0; r + 1 < p->S; r++) {
        size_t c = 0;
        p->api->act_count(p->h, m, p->cut.first[r + 1], &c);
        p->fig.sent_bytes += 2 * (uint64_t)b->n * c * sizeof(float);
    }
    p->fig.steps++;
    p->fig.step_s += mp_now() - t0;
    return s;
}

dlb_status mp_rank_step(struct mp_rank *p, const struct mp_rank_engine *eng,
                        struct dlb_model *m, const struct dlb_batch *b)
{
    char why[128];
    if (!p->started) {
        p->start_status = start(p, m);
        if (p->start_status == DLB_OK)
            p->start_status = eng->start(p, m);
    }
    dlb_status s = p->start_status;
    if (s == DLB_OK && p->model != m) {
        p->h->log(p->h, DLB_LOG_ERROR, "the model changed between steps");
        s = DLB_ERR_INTERNAL;
    }
    if (s == DLB_OK)
        s = step(p, eng, m, b);
    if (s != DLB_OK) {
        snprintf(why, sizeof why, "pipeline stage %d failed (status %d; "
                 "its error is above)", p->r, (int)s);
        dlb_mpi_world_abort(p->h, &p->w, why);
    }
    return s;
}

/* The pipeline's time is the slowest rank's. */
dlb_status mp_rank_figures(struct mp_rank *p, struct mp_figures *out)
{
    double mine[3] = {p->fig.busy_s[p->r], p->fig.pipe_s, p->fig.last_loss};
    double *all = calloc(3 * (size_t)p->S, sizeof *all);
    unsigned long long peak, *peaks = calloc((size_t)p->S, sizeof *peaks);
    struct dlb_stage_memory mem = {0, 0};
    if (!all || !peaks) {
        free(all);
        free(peaks);
        dlb_mpi_world_abort(p->h, &p->w, "out of memory for the figures");
        return DLB_ERR_NOMEM;
    }
    if (p->stage)
        p->api->slice_memory(p->h, p->stage, &mem);
    peak = mem.saved_peak;
    MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, p->w.comm);
    MPI_Gather(&peak, 1, MPI_UNSIGNED_LONG_LONG, peaks, 1,
               MPI_UNSIGNED_LONG_LONG, 0, p->w.comm);
    *out = p->fig;
    out->stages = p->S;
    out->micro = p->M;
    for (int r = 0; p->r == 0 && r < p->S; r++) {
        out->busy_s[r] = all[3 * r];
        out->pipe_s = all[3 * r + 1] > out->pipe_s ? all[3 * r + 1] : out->pipe_s;
        out->saved_peak[r] = peaks[r];
    }
    if (p->r == 0)
        out->last_loss = all[3 * (p->S - 1) + 2];
    free(all);
    free(peaks);
    return DLB_OK;
}

void mp_rank_close(struct mp_rank *p)
{
    p->api->slice_close(p->h, p->stage);
    p->api->release(p->h, p->replica);
    free(p->lo);
    free(p->ops);
    free(p->handback);
    free(p->state);
    dlb_mpi_world_close(&p->w);
}
