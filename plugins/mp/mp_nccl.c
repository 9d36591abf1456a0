/* Engine nccl: one stage per rank and GPU on the cuda backend, the
 * activations and their gradients sent between neighbouring stages with
 * ncclSend/ncclRecv from and into the stages' own device memory
 * (stage_ops' view variants: no host round trip). The NCCL unique id is
 * broadcast over MPI, which also starts the ranks (as the mpi engine's),
 * carries the stages' layers back to rank 0 once per step and gathers
 * the figures. Built as mp_nccl.so, which mp loads only for engine =
 * nccl (mp_nccl_module.h).
 *
 * Every rank runs the configuration with the same seed and data, so the
 * ranks' models start equal and read the same batch; rank r runs stage r
 * on a replica of its model. Between two operations of its schedule a
 * stage issues one NCCL group (mp_p2p.c): the send that ends the last
 * operation with the receive the next one waits for, on a stream of its
 * own. The backend's stream is not the engine's to see, so the hand-over
 * between the two is the host's: the backend is waited for
 * (replica_ops' synchronize) before a group, so that what is sent is
 * computed and a receive buffer's memory is no longer read by earlier
 * work, and the group is waited for before the next operation. A stage
 * thus computes or communicates, never both at once; the pipeline's
 * parallelism is across the GPUs. A rank that fails ends every rank. */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_world.h"
#include "mp_nccl.h"
#include "mp_nccl_module.h"

struct mp_nccl {
    const struct dlb_host *h;
    const struct dlb_replica_ops *ro;
    const struct dlb_stage_ops *so;
    struct mp_settings s;
    struct dp_world w;
    ncclComm_t comm;
    cudaStream_t stream;
    int S, M, r;
    int started;
    dlb_status start_status;
    struct mp_cut cut;
    struct dlb_model *model, *replica;
    struct dlb_stage *stage;
    struct mp_op *ops;
    struct mp_p2p_group *groups;   /* 2 M + 1 */
    uint32_t *lo;
    size_t per_image;
    struct dlb_act_view *out;      /* per micro-batch: forward's output */
    struct dlb_act_view din;       /* the last backward's input gradient */
    float *handback, *state;
    size_t handback_n, handback_max, state_n;
    uint64_t version;
    struct mp_figures fig;
};

static dlb_status nccl_init(const struct dlb_host *h, const struct mp_settings *s,
                            void **eng)
{
    struct mp_nccl *e = calloc(1, sizeof *e);
    ncclUniqueId id;
    ncclResult_t nr;
    cudaError_t ce;
    char why[256];
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
    /* The probe narrowed CUDA_VISIBLE_DEVICES to this rank's GPU. */
    if ((ce = cudaSetDevice(0)) != cudaSuccess ||
        (ce = cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking)) !=
            cudaSuccess) {
        snprintf(why, sizeof why, "stage %d: %s", e->r, cudaGetErrorString(ce));
        dp_world_abort(h, &e->w, why);
    }
    memset(&id, 0, sizeof id);
    if (e->r == 0 && (nr = ncclGetUniqueId(&id)) != ncclSuccess)
        dp_world_abort(h, &e->w, ncclGetErrorString(nr));
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, e->w.comm);
    if ((nr = ncclCommInitRank(&e->comm, e->S, id, e->r)) != ncclSuccess) {
        snprintf(why, sizeof why, "stage %d: ncclCommInitRank: %s", e->r,
                 ncclGetErrorString(nr));
        dp_world_abort(h, &e->w, why);
    }
    *eng = e;
    return DLB_OK;
}

static dlb_status start(struct mp_nccl *e, struct dlb_model *m)
{
    dlb_status s;
    e->started = 1;
    e->model = m;
    if ((s = mp_plan_model(e->h, m, &e->s, &e->cut)) != DLB_OK)
        return s;
    unsigned first = e->cut.first[e->r], last = e->cut.first[e->r + 1];
    struct dlb_stage_spec spec = {first, last, (unsigned)e->M, 1.0f};
    if ((s = e->so->act_count(e->h, m, 0, &e->per_image)) ||
        (s = e->ro->create(e->h, m, e->s.stage_threads, -1, &e->replica)) ||
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
    e->groups = malloc((2 * (size_t)e->M + 1) * sizeof *e->groups);
    e->lo = calloc((size_t)e->M + 1, sizeof *e->lo);
    e->out = calloc((size_t)e->M, sizeof *e->out);
    if (!e->state || !e->handback || !e->ops || !e->groups || !e->lo || !e->out)
        return DLB_ERR_NOMEM;
    mp_schedule_ops(e->s.schedule, e->r, e->S, e->M, e->ops);
    mp_p2p_plan(e->ops, e->r, e->S, e->M, e->groups);
    e->version = e->ro->weights_version(e->h, m) - 1; /* sync at once */
    e->fig.stages = e->S;
    e->fig.micro = e->M;
    memcpy(e->fig.first, e->cut.first, sizeof e->fig.first);
    return DLB_OK;
}

/* The device memory a transfer reads or writes: a receive gets a buffer
 * of the stage (input_view), a send the view its operation gave. */
static dlb_status transfer_view(struct mp_nccl *e, const struct mp_p2p *p,
                                struct dlb_act_view *v)
{
    dlb_status s = DLB_OK;
    if (!p->send)
        s = e->so->input_view(e->h, e->stage, p->k,
                              p->grad ? DLB_STAGE_GRAD : DLB_STAGE_ACT, v);
    else
        *v = p->grad ? e->din : e->out[p->k];
    if (s == DLB_OK && (!v->device || !v->data)) {
        e->h->log(e->h, DLB_LOG_ERROR, "engine nccl needs the activations in "
                  "device memory; backend %s shows them in host memory",
                  e->h->backend_name);
        s = DLB_ERR_UNSUPPORTED;
    }
    return s;
}

static dlb_status run_group(struct mp_nccl *e, const struct mp_p2p_group *g)
{
    struct dlb_act_view v[2];
    dlb_status s = DLB_OK;
    ncclResult_t nr = ncclSuccess;
    if (!g->n)
        return DLB_OK;
    for (int i = 0; i < g->n && s == DLB_OK; i++)
        s = transfer_view(e, &g->p[i], &v[i]);
    if (s != DLB_OK || (s = e->ro->synchronize(e->h, e->replica)) != DLB_OK)
        return s;
    (void)ncclGroupStart();
    for (int i = 0; i < g->n && nr == ncclSuccess; i++)
        nr = g->p[i].send ? ncclSend(v[i].data, v[i].count, ncclFloat,
                                     g->p[i].peer, e->comm, e->stream)
                          : ncclRecv(v[i].data, v[i].count, ncclFloat,
                                     g->p[i].peer, e->comm, e->stream);
    ncclResult_t end = ncclGroupEnd();
    if (nr == ncclSuccess)
        nr = end;
    if (nr != ncclSuccess) {
        e->h->log(e->h, DLB_LOG_ERROR, "stage %d: ncclSend/ncclRecv of "
                  "micro-batch %u: %s", e->r, g->p[0].k, ncclGetErrorString(nr));
        return DLB_ERR_RUNTIME;
    }
    cudaError_t ce = cudaStreamSynchronize(e->stream);
    if (ce != cudaSuccess) {
        e->h->log(e->h, DLB_LOG_ERROR, "stage %d: the NCCL stream: %s", e->r,
                  cudaGetErrorString(ce));
        return DLB_ERR_RUNTIME;
    }
    return DLB_OK;
}

/* Operation op of the schedule, waited for: its time is the stage's. */
static dlb_status run_op(struct mp_nccl *e, const struct dlb_batch *b,
                         const struct mp_op *op, double *busy, double *loss)
{
    unsigned k = op->k;
    int r = e->r, S = e->S;
    double t0 = mp_now(), l = 0;
    dlb_status s;
    if (!op->backward) {
        s = e->so->forward_view(e->h, e->stage, k,
                                r == 0 ? b->images + (size_t)e->lo[k] *
                                                         e->per_image
                                       : NULL,
                                r == S - 1 ? b->labels + e->lo[k] : NULL,
                                r < S - 1 ? &e->out[k] : NULL,
                                r == S - 1 ? &l : NULL);
        *loss += l * (e->lo[k + 1] - e->lo[k]) / (double)b->n;
    } else {
        s = e->so->backward_view(e->h, e->stage, k, r > 0 ? &e->din : NULL);
    }
    if (s == DLB_OK)
        s = e->ro->synchronize(e->h, e->replica);
    *busy += mp_now() - t0;
    return s;
}

/* Every stage's layers into rank 0's model, over MPI (host arrays: once
 * per step, for the model the harness evaluates). */
static dlb_status hand_back(struct mp_nccl *e, struct dlb_model *m)
{
    const unsigned parts = DLB_STATE_WEIGHTS | DLB_STATE_STATS;
    unsigned first = e->cut.first[e->r], last = e->cut.first[e->r + 1];
    dlb_status s = e->so->layers_io(e->h, e->replica, first, last, parts,
                                    e->handback, e->handback_n, 0);
    if (s != DLB_OK)
        return s;
    if (e->r > 0) {
        MPI_Send(e->handback, (int)e->handback_n, MPI_FLOAT, 0, e->r,
                 e->w.comm);
        return DLB_OK;
    }
    s = e->so->layers_io(e->h, m, first, last, parts, e->handback,
                         e->handback_n, 1);
    for (int r = 1; r < e->S && s == DLB_OK; r++) {
        size_t n = 0;
        e->so->layers_count(e->h, m, e->cut.first[r], e->cut.first[r + 1],
                            parts, &n);
        MPI_Recv(e->handback, (int)n, MPI_FLOAT, r, r, e->w.comm,
                 MPI_STATUS_IGNORE);
        s = e->so->layers_io(e->h, m, e->cut.first[r], e->cut.first[r + 1],
                             parts, e->handback, n, 1);
    }
    return s;
}

static dlb_status step(struct mp_nccl *e, struct dlb_model *m,
                       const struct dlb_batch *b)
{
    dlb_status s = DLB_OK;
    double t0 = mp_now(), busy = 0, loss = 0;
    if (b->n < (uint32_t)e->M) {
        e->h->log(e->h, DLB_LOG_ERROR, "batch of %u images for %d "
                  "micro-batches: each needs at least one", b->n, e->M);
        return DLB_ERR_INPUT;
    }
    /* Weights set from outside (every rank does the same): copy them. */
    if (e->ro->weights_version(e->h, m) != e->version &&
        ((s = e->ro->state_read(e->h, m, DLB_STATE_ALL, e->state, e->state_n)) ||
         (s = e->ro->state_write(e->h, e->replica, DLB_STATE_ALL, e->state,
                                 e->state_n)) ||
         (s = e->ro->copy_rng(e->h, e->replica, m))))
        return s;
    s = e->so->begin(e->h, e->stage, b->n, e->lo);
    for (int i = 0; s == DLB_OK && i < 2 * e->M; i++) {
        s = run_group(e, &e->groups[i]);
        if (s == DLB_OK)
            s = run_op(e, b, &e->ops[i], &busy, &loss);
    }
    if (s == DLB_OK)
        s = run_group(e, &e->groups[2 * e->M]);
    double tu = mp_now();
    if (s == DLB_OK && (s = e->so->update(e->h, e->stage)) == DLB_OK)
        s = e->ro->synchronize(e->h, e->replica);
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

static dlb_status nccl_step(void *eng, struct dlb_model *m,
                            const struct dlb_batch *b)
{
    struct mp_nccl *e = eng;
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
static dlb_status nccl_figures(void *eng, struct mp_figures *out)
{
    struct mp_nccl *e = eng;
    double mine[3] = {e->fig.busy_s[e->r], e->fig.pipe_s, e->fig.last_loss};
    double *all = calloc(3 * (size_t)e->S, sizeof *all);
    unsigned long long peak, *peaks = calloc((size_t)e->S, sizeof *peaks);
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

static void nccl_fini(void *eng)
{
    struct mp_nccl *e = eng;
    if (!e)
        return;
    e->so->close(e->h, e->stage);
    e->ro->destroy(e->h, e->replica);
    if (e->comm)
        ncclCommDestroy(e->comm);
    if (e->stream)
        cudaStreamDestroy(e->stream);
    free(e->out);
    free(e->lo);
    free(e->groups);
    free(e->ops);
    free(e->handback);
    free(e->state);
    dp_world_close(&e->w);
    free(e);
}

static const struct mp_engine nccl_engine = {
    .name = "nccl",
    .probe = mp_nccl_probe,
    .init = nccl_init,
    .step = nccl_step,
    .figures = nccl_figures,
    .fini = nccl_fini,
};

static const struct mp_nccl_module nccl_module = {
    .version = MP_NCCL_MODULE_VERSION,
    .engine_size = sizeof(struct mp_engine),
    .settings_size = sizeof(struct mp_settings),
    .figures_size = sizeof(struct mp_figures),
    .engine = &nccl_engine,
};

/* The one exported symbol (mp_nccl_module.h). */
const struct mp_nccl_module *dlb_mp_nccl_module(void);
const struct mp_nccl_module *dlb_mp_nccl_module(void)
{
    return &nccl_module;
}
