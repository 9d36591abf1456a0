/* Engine nccl: one stage per rank and GPU on the cuda backend, the
 * activations and their gradients sent between neighbouring stages with
 * ncclSend/ncclRecv from and into the stages' own device memory
 * (model_api's slice views: no host round trip). The NCCL unique id is
 * broadcast over MPI, which also starts the ranks, carries the stages'
 * layers back to rank 0 once per step and gathers the figures, as for
 * the mpi engine (mp_rank.c). Built as mp_nccl.so, which mp loads only for engine =
 * nccl (mp_nccl_module.h).
 *
 * Rank r runs stage r on a replica of its model. Between two operations of its schedule a
 * stage issues one NCCL group (mp_p2p.c): the send that ends the last
 * operation with the receive the next one waits for, on a stream of its
 * own. The backend's stream is not the engine's to see, so the hand-over
 * between the two is the host's: the backend is waited for
 * (model_api's synchronize) before a group, so that what is sent is
 * computed and a receive buffer's memory is no longer read by earlier
 * work, and the group is waited for before the next operation. A stage
 * thus computes or communicates, never both at once; the pipeline's
 * parallelism is across the GPUs. A rank that fails ends every rank. */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_nccl.h"
#include "mp_nccl_module.h"
#include "mp_rank.h"

struct mp_nccl {
    struct mp_rank p;              /* first: the engine is its stage's rank */
    ncclComm_t comm;
    cudaStream_t stream;
    struct mp_p2p_group *groups;   /* 2 M + 1 */
    struct dlb_act_view *out;      /* per micro-batch: forward's output */
    struct dlb_act_view din;       /* the last backward's input gradient */
};

static dlb_status nccl_init(const struct dlb_host *h,
                            const struct mp_settings *s,
                            void **eng)
{
    struct mp_nccl *e = calloc(1, sizeof *e);
    ncclUniqueId id;
    ncclResult_t nr;
    cudaError_t ce;
    char why[256];
    if (!e)
        return DLB_ERR_NOMEM;
    dlb_status st = mp_rank_open(h, s, 0, &e->p);
    if (st != DLB_OK) {
        free(e);
        return st;
    }
    int r = e->p.r;
    /* The probe narrowed CUDA_VISIBLE_DEVICES to this rank's GPU. */
    if ((ce = cudaSetDevice(0)) != cudaSuccess ||
        (ce = cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking)) !=
            cudaSuccess) {
        snprintf(why, sizeof why, "stage %d: %s", r, cudaGetErrorString(ce));
        dlb_mpi_world_abort(h, &e->p.w, why);
    }
    memset(&id, 0, sizeof id);
    if (r == 0 && (nr = ncclGetUniqueId(&id)) != ncclSuccess)
        dlb_mpi_world_abort(h, &e->p.w, ncclGetErrorString(nr));
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, e->p.w.comm);
    if ((nr = ncclCommInitRank(&e->comm, e->p.S, id, r)) != ncclSuccess) {
        snprintf(why, sizeof why, "stage %d: ncclCommInitRank: %s", r,
                 ncclGetErrorString(nr));
        dlb_mpi_world_abort(h, &e->p.w, why);
    }
    *eng = e;
    return DLB_OK;
}

static dlb_status start(struct mp_rank *p, struct dlb_model *m)
{
    struct mp_nccl *e = (struct mp_nccl *)p;
    (void)m;
    e->groups = malloc((2 * (size_t)p->M + 1) * sizeof *e->groups);
    e->out = calloc((size_t)p->M, sizeof *e->out);
    if (!e->groups || !e->out)
        return DLB_ERR_NOMEM;
    mp_p2p_plan(p->ops, p->r, p->S, p->M, e->groups);
    return DLB_OK;
}

/* The device memory a transfer reads or writes: a receive gets a buffer
 * of the stage (input_view), a send the view its operation gave. */
static dlb_status transfer_view(struct mp_nccl *e, const struct mp_p2p *p,
                                struct dlb_act_view *v)
{
    const struct mp_rank *rk = &e->p;
    dlb_status s = DLB_OK;
    if (!p->send)
        s = rk->api->slice_input(rk->h, rk->stage, p->k,
                                 p->grad ? DLB_STAGE_GRAD : DLB_STAGE_ACT, v);
    else
        *v = p->grad ? e->din : e->out[p->k];
    if (s == DLB_OK && (!v->device || !v->data)) {
        rk->h->log(rk->h, DLB_LOG_ERROR, "engine nccl needs the activations "
                   "in device memory; backend %s shows them in host memory",
                   rk->h->backend_name);
        s = DLB_ERR_UNSUPPORTED;
    }
    return s;
}

static dlb_status run_group(struct mp_nccl *e, const struct mp_p2p_group *g)
{
    const struct mp_rank *rk = &e->p;
    struct dlb_act_view v[2];
    dlb_status s = DLB_OK;
    ncclResult_t nr = ncclSuccess;
    if (!g->n)
        return DLB_OK;
    for (int i = 0; i < g->n && s == DLB_OK; i++)
        s = transfer_view(e, &g->p[i], &v[i]);
    if (s != DLB_OK ||
        (s = rk->api->synchronize(rk->h, rk->replica)) != DLB_OK)
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
        rk->h->log(rk->h, DLB_LOG_ERROR, "stage %d: ncclSend/ncclRecv of "
                   "micro-batch %u: %s", rk->r, g->p[0].k,
                   ncclGetErrorString(nr));
        return DLB_ERR_RUNTIME;
    }
    cudaError_t ce = cudaStreamSynchronize(e->stream);
    if (ce != cudaSuccess) {
        rk->h->log(rk->h, DLB_LOG_ERROR, "stage %d: the NCCL stream: %s",
                   rk->r, cudaGetErrorString(ce));
        return DLB_ERR_RUNTIME;
    }
    return DLB_OK;
}

/* Operation op of the schedule, waited for: its time is the stage's. */
static dlb_status run_op(struct mp_nccl *e, const struct dlb_batch *b,
                         const struct mp_op *op, double *busy, double *loss)
{
    const struct mp_rank *rk = &e->p;
    unsigned k = op->k;
    int r = rk->r, S = rk->S;
    double t0 = mp_now(), l = 0;
    dlb_status s;
    if (!op->backward) {
        s = rk->api->slice_forward_view(rk->h, rk->stage, k,
                                        r == 0 ? b->images + (size_t)rk->lo[k]
                                                     * rk->per_image
                                               : NULL,
                                        r == S - 1 ? b->labels + rk->lo[k]
                                                   : NULL,
                                        r < S - 1 ? &e->out[k] : NULL,
                                        r == S - 1 ? &l : NULL);
        *loss += l * (rk->lo[k + 1] - rk->lo[k]) / (double)b->n;
    } else {
        s = rk->api->slice_backward_view(rk->h, rk->stage, k,
                                         r > 0 ? &e->din : NULL);
    }
    if (s == DLB_OK)
        s = rk->api->synchronize(rk->h, rk->replica);
    *busy += mp_now() - t0;
    return s;
}

/* Between two operations of the schedule a group of transfers; then
 * the update, waited for. */
static dlb_status run(struct mp_rank *p, struct dlb_model *m,
                      const struct dlb_batch *b, double *busy, double *loss)
{
    struct mp_nccl *e = (struct mp_nccl *)p;
    (void)m;
    dlb_status s = p->api->slice_begin(p->h, p->stage, b->n, p->lo);
    for (int i = 0; s == DLB_OK && i < 2 * p->M; i++) {
        s = run_group(e, &e->groups[i]);
        if (s == DLB_OK)
            s = run_op(e, b, &p->ops[i], busy, loss);
    }
    if (s == DLB_OK)
        s = run_group(e, &e->groups[2 * p->M]);
    double tu = mp_now();
    if (s == DLB_OK && (s = p->api->slice_step(p->h, p->stage)) == DLB_OK)
        s = p->api->synchronize(p->h, p->replica);
    *busy += mp_now() - tu;
    return s;
}

static const struct mp_rank_engine nccl_rank_engine = {start, run};

static dlb_status nccl_step(void *eng, struct dlb_model *m,
                            const struct dlb_batch *b)
{
    return mp_rank_step(eng, &nccl_rank_engine, m, b);
}

static dlb_status nccl_figures(void *eng, struct mp_figures *out)
{
    return mp_rank_figures(eng, out);
}

static void nccl_fini(void *eng)
{
    struct mp_nccl *e = eng;
    if (!e)
        return;
    if (e->comm)
        ncclCommDestroy(e->comm);
    if (e->stream)
        cudaStreamDestroy(e->stream);
    free(e->out);
    free(e->groups);
    mp_rank_close(&e->p);
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

static const struct dlb_nccl_module nccl_module = {
    .version = MP_NCCL_MODULE_VERSION,
    .engine_size = sizeof(struct mp_engine),
    .settings_size = sizeof(struct mp_settings),
    .figures_size = sizeof(struct mp_figures),
    .engine = &nccl_engine,
};

/* The one exported symbol (mp_nccl_module.h). */
const struct dlb_nccl_module *dlb_mp_nccl_module(void);
const struct dlb_nccl_module *dlb_mp_nccl_module(void)
{
    return &nccl_module;
}
