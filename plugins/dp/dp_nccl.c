/* Engine nccl: one rank and one GPU per process on the cuda backend,
 * gradients all-reduced by NCCL on a stream of its own; the NCCL unique id
 * is broadcast over MPI, as nccl-tests does. Built as dp_nccl.so, which
 * dp loads only for engine = nccl (dp_nccl_module.h), so that dp.so
 * itself links no CUDA library.
 *
 * Each rank sees one GPU: before anything starts CUDA, the probe narrows
 * CUDA_VISIBLE_DEVICES to the rank's own device (its index on its node,
 * or that entry of a list the user set), so the backend's device 0 is the
 * rank's own. NCCL works on the gradients where the cuda backend keeps
 * them: model_api's tensor_map shows each in place in device memory
 * (device = 1), and a backend that cannot is refused at the first step.
 * Backward hands each bucket over as its gradients become final: the
 * compute stream is waited for (the backend's synchronize), the gradients
 * are copied device to device into the bucket's part of a flat device
 * buffer and ncclAllReduce is enqueued on the NCCL stream, which then
 * runs beside the rest of backward. After backward the NCCL stream is
 * waited for, the sums go back into the gradients (grad_unmap, written),
 * and every rank applies the same update. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "dp_nccl_module.h"
#include "mpi_world.h"

struct dp_nccl {
    const struct dlb_host *h;
    const struct dlb_model_api *api;
    struct dp_settings s;
    struct dlb_mpi_world w;
    ncclComm_t comm;
    cudaStream_t stream;
    cudaEvent_t *ev;           /* per bucket: start and end */
    struct dp_plan plan;
    int planned;
    float *flat;               /* device: the buckets */
    float **view;              /* device: each gradient in place */
    unsigned next;
    float *state, *stats;
    size_t state_n, stats_n;
    uint64_t version;
    int synced;
    struct dlb_model *model;
    struct dp_figures fig;
};

/* The rank's index on its node, from the launcher's environment. */
static const char *local_rank_env(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK",
                                       "MPI_LOCALRANKID", "SLURM_LOCALID",
                                       "PMI_LOCAL_RANK", NULL};
    for (const char *const *v = vars; *v; v++)
        if (getenv(*v))
            return getenv(*v);
    return NULL;
}

/* CUDA_VISIBLE_DEVICES for a rank with index `local` on its node: that
 * index, or the local-th entry (wrapping) of the list already set, so that
 * ranks sharing a node never share a GPU. */
static void narrow_devices(const char *local)
{
    const char *set = getenv("CUDA_VISIBLE_DEVICES");
    char one[64];
    long k = strtol(local, NULL, 10), n = 1;
    if (!set || !*set) {
        setenv("CUDA_VISIBLE_DEVICES", local, 1);
        return;
    }
    for (const char *c = set; *c; c++)
        n += *c == ',';
    if (n < 2)
        return;
    const char *p = set;
    for (long i = 0; i < (k < 0 ? 0 : k) % n; i++)
        p = strchr(p, ',') + 1;
    snprintf(one, sizeof one, "%.*s", (int)strcspn(p, ","), p);
    setenv("CUDA_VISIBLE_DEVICES", one, 1);
}

/* The loader checked the backend; this is about the device. */
static dlb_status nccl_probe(const struct dlb_host *h,
                             const struct dp_settings *s,
                             char *reason, size_t len)
{
    int count = 0;
    (void)h;
    (void)s;
    /* Before the first CUDA call, which reads it. */
    const char *local = local_rank_env();
    if (local)
        narrow_devices(local);
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1) {
        snprintf(reason, len, "engine nccl: no CUDA device for this rank "
                 "(CUDA_VISIBLE_DEVICES=%s): %s",
                 getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES")
                                                : "unset",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return DLB_ERR_UNSUPPORTED;
    }
    return DLB_OK;
}

static dlb_status cuda_fail(const struct dlb_host *h, cudaError_t e,
                            const char *what)
{
    h->log(h, DLB_LOG_ERROR, "%s: %s", what, cudaGetErrorString(e));
    return DLB_ERR_RUNTIME;
}

static dlb_status nccl_init(const struct dlb_host *h,
                            const struct dp_settings *s,
                            void **eng)
{
    struct dp_nccl *n = calloc(1, sizeof *n);
    ncclUniqueId id;
    ncclResult_t r;
    cudaError_t e;
    if (!n)
        return DLB_ERR_NOMEM;
    n->h = h;
    n->api = h->model_api;
    n->s = *s;
    dlb_status st = dlb_mpi_world_open(h, &n->w);
    if (st != DLB_OK) {
        free(n);
        return st;
    }
    if ((e = cudaSetDevice(0)) != cudaSuccess ||
        (e = cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking)) !=
            cudaSuccess)
        dlb_mpi_world_abort(h, &n->w, cudaGetErrorString(e));
    if (n->w.rank == 0 && (r = ncclGetUniqueId(&id)) != ncclSuccess)
        dlb_mpi_world_abort(h, &n->w, ncclGetErrorString(r));
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, n->w.comm);
    if ((r = ncclCommInitRank(&n->comm, n->w.size, id,
                              n->w.rank)) != ncclSuccess)
        dlb_mpi_world_abort(h, &n->w, ncclGetErrorString(r));
    *eng = n;
    return DLB_OK;
}

static dlb_status setup(struct dp_nccl *n, struct dlb_model *model)
{
    cudaError_t e;
    dlb_status s = dp_plan_build(n->h, model, n->s.bucket_bytes, &n->plan);
    if (s != DLB_OK)
        return s;
    n->planned = 1;
    n->api->state_count(n->h, model, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                        &n->state_n);
    n->api->state_count(n->h, model, 0, DLB_NODES_ALL, DLB_STATE_STATS,
                        &n->stats_n);
    n->view = calloc(n->plan.n_params, sizeof *n->view);
    n->ev = calloc(2 * (size_t)n->plan.n, sizeof *n->ev);
    n->state = malloc((n->state_n ? n->state_n : 1) * sizeof *n->state);
    n->stats = malloc((n->stats_n + 1) * sizeof *n->stats);
    if (!n->view || !n->ev || !n->state || !n->stats)
        return DLB_ERR_NOMEM;
    if ((e = cudaMalloc((void **)&n->flat, n->plan.total * sizeof *n->flat)) !=
        cudaSuccess)
        return cuda_fail(n->h, e, "cudaMalloc of the gradient buckets");
    for (unsigned b = 0; b < 2 * n->plan.n; b++)
        if ((e = cudaEventCreate(&n->ev[b])) != cudaSuccess)
            return cuda_fail(n->h, e, "cudaEventCreate");
    /* NCCL reads and writes the gradients where the backend keeps them. */
    struct dlb_act_view v;
    s = n->api->tensor_map(n->h, model, 0, DLB_TENSOR_GRAD, &v);
    if (s == DLB_OK)
        n->api->tensor_unmap(n->h, model, 0, DLB_TENSOR_GRAD, 0);
    if (s == DLB_OK && !v.device)
        s = DLB_ERR_UNSUPPORTED;
    if (s != DLB_OK)
        n->h->log(n->h, DLB_LOG_ERROR, "engine nccl needs backend %s to show "
                  "its gradients in device memory in place (backend API 1.1 "
                  "map/unmap)", n->h->backend_name);
    return s;
}

static dlb_status broadcast_state(struct dp_nccl *n, struct dlb_model *model)
{
    dlb_status s = DLB_OK;
    if (n->w.rank == 0)
        s = n->api->state_io(n->h, model, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                             n->state, n->state_n, 0);
    if (s != DLB_OK)
        dlb_mpi_world_abort(n->h, &n->w,
                            "cannot read the weights to broadcast");
    MPI_Bcast(n->state, (int)n->state_n, MPI_FLOAT, 0, n->w.comm);
    if (n->w.rank != 0)
        s = n->api->state_io(n->h, model, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                             n->state, n->state_n, 1);
    return s;
}

static dlb_status on_ready(void *ctx, unsigned layer)
{
    struct dp_nccl *n = ctx;
    unsigned first = n->next, count = dp_plan_ready(&n->plan, layer, &n->next);
    dlb_status s = DLB_OK;
    if (!count)
        return DLB_OK;
    /* The gradients are enqueued on the compute stream: wait for them. */
    if ((s = n->api->synchronize(n->h, n->model)) != DLB_OK)
        return s;
    for (unsigned b = first; b < first + count; b++) {
        const struct dp_bucket *bk = &n->plan.b[b];
        for (unsigned p = bk->lo; p <= bk->hi; p++) {
            struct dlb_act_view v;
            if ((s = n->api->tensor_map(n->h, n->model, p, DLB_TENSOR_GRAD,
                                        &v)) != DLB_OK)
                return s;
            if (!v.device) {
                n->h->log(n->h, DLB_LOG_ERROR,
                          "engine nccl needs gradients in "
                          "device memory; backend %s keeps them on the host",
                          n->h->backend_name);
                return DLB_ERR_UNSUPPORTED;
            }
            n->view[p] = v.data;
            cudaError_t e = cudaMemcpyAsync(n->flat + n->plan.offset[p],
                                            v.data,
                                            v.count * sizeof(float),
                                            cudaMemcpyDeviceToDevice,
                                            n->stream);
            if (e != cudaSuccess)
                return cuda_fail(n->h, e,
                                 "copying a gradient into its bucket");
        }
        float *buf = n->flat + bk->offset;
        cudaEventRecord(n->ev[2 * b], n->stream);
        ncclResult_t r = ncclAllReduce(buf, buf, bk->count, ncclFloat, ncclSum,
                                       n->comm, n->stream);
        cudaEventRecord(n->ev[2 * b + 1], n->stream);
        if (r != ncclSuccess) {
            n->h->log(n->h, DLB_LOG_ERROR, "ncclAllReduce: %s",
                      ncclGetErrorString(r));
            return DLB_ERR_RUNTIME;
        }
    }
    return DLB_OK;
}

static dlb_status finish_step(struct dp_nccl *n, double loss, uint32_t part,
                              uint32_t total)
{
    dlb_status s = DLB_OK;
    cudaError_t e;
    for (unsigned p = 0; p < n->plan.n_params; p++)
        if ((e = cudaMemcpyAsync(n->view[p], n->flat + n->plan.offset[p],
                                 n->plan.params[p].count * sizeof(float),
                                 cudaMemcpyDeviceToDevice, n->stream)) !=
            cudaSuccess)
            return cuda_fail(n->h, e, "copying the sums into the gradients");
    if ((e = cudaStreamSynchronize(n->stream)) != cudaSuccess)
        return cuda_fail(n->h, e, "the NCCL stream");
    for (unsigned p = 0; p < n->plan.n_params && s == DLB_OK; p++)
        s = n->api->tensor_unmap(n->h, n->model, p, DLB_TENSOR_GRAD, 1);
    if (s == DLB_OK)
        s = n->api->step(n->h, n->model);
    if (s == DLB_OK && n->stats_n)
        s = n->api->state_io(n->h, n->model, 0, DLB_NODES_ALL, DLB_STATE_STATS,
                             n->stats, n->stats_n, 0);
    if (s != DLB_OK)
        return s;
    n->stats[n->stats_n] = (float)(loss * part / total);
    MPI_Allreduce(MPI_IN_PLACE, n->stats, (int)n->stats_n + 1, MPI_FLOAT,
                  MPI_SUM, n->w.comm);
    for (size_t j = 0; j < n->stats_n; j++)
        n->stats[j] /= (float)n->w.size;
    n->fig.last_loss = n->stats[n->stats_n];
    return n->stats_n ? n->api->state_io(n->h, n->model, 0, DLB_NODES_ALL,
                                         DLB_STATE_STATS, n->stats, n->stats_n,
                                         1)
                      : DLB_OK;
}

static dlb_status nccl_step(void *eng, struct dlb_model *model,
                            const struct dlb_batch *bt)
{
    struct dp_nccl *n = eng;
    size_t per = (size_t)bt->c * bt->h * bt->w;
    uint32_t lo, hi;
    double loss = 0;
    double t0 = dp_now();
    n->model = model;
    if (!n->planned && setup(n, model) != DLB_OK)
        dlb_mpi_world_abort(n->h, &n->w,
                            "cannot set the NCCL gradient buckets up");
    if ((uint32_t)n->w.size > bt->n)
        dlb_mpi_world_abort(n->h, &n->w,
                            "fewer images in the batch than ranks");
    if (!n->synced || n->api->weights_version(n->h, model) != n->version) {
        if (broadcast_state(n, model) != DLB_OK)
            dlb_mpi_world_abort(n->h, &n->w,
                                "cannot write the broadcast weights");
        n->synced = 1;
    }
    dp_shard(bt->n, n->w.rank, n->w.size, &lo, &hi);
    n->next = 0;
    double t1 = dp_now();
    /* Without overlap the callback comes once, after backward. */
    dlb_status s = n->api->forward_backward(n->h, model, bt->images + lo * per,
                                            bt->labels + lo, hi - lo,
                                            dp_shard_scale(&n->s, hi - lo,
                                                           bt->n),
                                            &loss,
                                            n->s.overlap ? on_ready : NULL, n);
    if (s == DLB_OK && !n->s.overlap)
        s = on_ready(n, 0);
    if (s != DLB_OK)
        dlb_mpi_world_abort(n->h, &n->w, "forward/backward failed");
    double t2 = dp_now();
    if (cudaStreamSynchronize(n->stream) != cudaSuccess)
        dlb_mpi_world_abort(n->h, &n->w, "the NCCL stream failed");
    double t3 = dp_now(), comm = 0, last = t2;
    if (n->w.same_host)
        MPI_Allreduce(&t2, &last, 1, MPI_DOUBLE, MPI_MAX, n->w.comm);
    for (unsigned b = 0; b < n->plan.n; b++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, n->ev[2 * b],
                                 n->ev[2 * b + 1]) == cudaSuccess)
            comm += ms * 1e-3;
    }
    if (finish_step(n, loss, hi - lo, bt->n) != DLB_OK)
        dlb_mpi_world_abort(n->h, &n->w, "the update failed");
    n->version = n->api->weights_version(n->h, model);
    n->fig.steps++;
    n->fig.backward_s += t2 - t1;
    n->fig.exposed_s += t3 > last ? t3 - last : 0;
    n->fig.imbalance_s += last - t2;
    n->fig.comm_s += comm;
    n->fig.step_s += dp_now() - t0;
    return DLB_OK;
}

static dlb_status nccl_figures(void *eng, struct dlb_model *model,
                               struct dp_figures *out)
{
    struct dp_nccl *n = eng;
    int planned = n->planned && model, all = 0;
    MPI_Allreduce(&planned, &all, 1, MPI_INT, MPI_MIN, n->w.comm);
    *out = n->fig;
    out->workers = n->w.size;
    out->buckets = (int)n->plan.n;
    out->grad_bytes = n->plan.total * sizeof(float);
    if (!all || !n->api)
        return DLB_OK;
    /* The weights against rank 0's. */
    float *mine = malloc((n->state_n ? n->state_n : 1) * sizeof *mine);
    int ok = mine && n->api->state_io(n->h, model, 0, DLB_NODES_ALL,
                                      DLB_STATE_ALL, mine, n->state_n,
                                      0) == DLB_OK;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, n->w.comm);
    if (all_ok) {
        memcpy(n->state, mine, n->state_n * sizeof *mine);
        MPI_Bcast(n->state, (int)n->state_n, MPI_FLOAT, 0, n->w.comm);
        int same = memcmp(mine, n->state, n->state_n * sizeof *mine) == 0;
        MPI_Allreduce(&same, &out->weights_identical, 1, MPI_INT, MPI_MIN,
                      n->w.comm);
        out->weights_checked = 1;
    }
    free(mine);
    return DLB_OK;
}

static void nccl_fini(void *eng)
{
    struct dp_nccl *n = eng;
    if (!n)
        return;
    if (n->comm)
        ncclCommDestroy(n->comm);
    for (unsigned b = 0; n->ev && b < 2 * n->plan.n; b++)
        if (n->ev[b])
            cudaEventDestroy(n->ev[b]);
    if (n->flat)
        cudaFree(n->flat);
    if (n->stream)
        cudaStreamDestroy(n->stream);
    dlb_mpi_world_close(&n->w);
    dp_plan_free(&n->plan);
    free(n->ev);
    free(n->view);
    free(n->state);
    free(n->stats);
    free(n);
}

static const struct dp_engine nccl_engine = {
    .name = "nccl",
    .probe = nccl_probe,
    .init = nccl_init,
    .step = nccl_step,
    .figures = nccl_figures,
    .fini = nccl_fini,
};

static const struct dlb_nccl_module nccl_module = {
    .version = DP_NCCL_MODULE_VERSION,
    .engine_size = sizeof(struct dp_engine),
    .settings_size = sizeof(struct dp_settings),
    .figures_size = sizeof(struct dp_figures),
    .engine = &nccl_engine,
};

/* The one exported symbol (dp_nccl_module.h). */
const struct dlb_nccl_module *dlb_dp_nccl_module(void);
const struct dlb_nccl_module *dlb_dp_nccl_module(void)
{
    return &nccl_module;
}
