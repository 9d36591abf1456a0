/* Engine mpi: one rank per process on the configuration's own model, its
 * shard of the global batch, gradients all-reduced over MPI on the host.
 *
 * The weights (with momentum and batch-norm statistics) are broadcast
 * from rank 0 before the first step and whenever they were set from
 * outside (a training run from the seed). Backward hands each bucket over
 * as soon as its gradients are final: they are copied into the bucket's
 * contiguous part of a flat buffer and, with overlap on, MPI_Iallreduce
 * starts at once, progressed by MPI_Testall at every later layer; with
 * overlap off each bucket is MPI_Allreduce'd after backward. The sums go
 * back into the gradients and every rank applies the same update, so the
 * weights stay identical. Running statistics are averaged over the ranks
 * after each step, the loss riding along. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "mpi_world.h"

struct dp_mpi {
    const struct dlb_host *h;
    const struct dlb_model_api *api;
    struct dp_settings s;
    struct dlb_mpi_world w;
    struct dp_plan plan;
    int planned;
    float *flat;               /* the buckets, contiguous each */
    MPI_Request *req;
    float **view;              /* per tensor: its gradient in place, or NULL */
    unsigned next;             /* first bucket not yet handed over */
    float *state, *stats;      /* stats: running statistics + the loss */
    size_t state_n, stats_n;
    uint64_t version;
    int synced;
    struct dlb_model *model;
    struct dp_figures fig;
};

static dlb_status mpi_probe(const struct dlb_host *h,
                            const struct dp_settings *s,
                            char *reason, size_t len)
{
    (void)h;
    (void)s;
    (void)reason;
    (void)len;
    return DLB_OK;
}

static dlb_status mpi_init(const struct dlb_host *h,
                           const struct dp_settings *s,
                           void **eng)
{
    struct dp_mpi *m = calloc(1, sizeof *m);
    if (!m)
        return DLB_ERR_NOMEM;
    m->h = h;
    m->api = h->model_api;
    m->s = *s;
    dlb_status st = dlb_mpi_world_open(h, &m->w);
    if (st != DLB_OK) {
        free(m);
        return st;
    }
    if (m->w.size != s->ranks && m->w.rank == 0)
        h->log(h, DLB_LOG_WARN, "ranks = %d, but the launcher started %d: the "
               "figures are for %d", s->ranks, m->w.size, m->w.size);
    *eng = m;
    return DLB_OK;
}

static dlb_status setup(struct dp_mpi *m, struct dlb_model *model)
{
    dlb_status s = dp_plan_build(m->h, model, m->s.bucket_bytes, &m->plan);
    if (s != DLB_OK)
        return s;
    m->planned = 1;
    m->api->state_count(m->h, model, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                        &m->state_n);
    m->api->state_count(m->h, model, 0, DLB_NODES_ALL, DLB_STATE_STATS,
                        &m->stats_n);
    m->flat = malloc(m->plan.total * sizeof *m->flat);
    m->req = malloc(m->plan.n * sizeof *m->req);
    m->view = calloc(m->plan.n_params, sizeof *m->view);
    m->state = malloc((m->state_n ? m->state_n : 1) * sizeof *m->state);
    m->stats = malloc((m->stats_n + 1) * sizeof *m->stats);
    if (!m->flat || !m->req || !m->view || !m->state || !m->stats)
        return DLB_ERR_NOMEM;
    for (unsigned b = 0; b < m->plan.n; b++)
        m->req[b] = MPI_REQUEST_NULL;
    return DLB_OK;
}

/* Rank 0's state everywhere. */
static dlb_status broadcast_state(struct dp_mpi *m, struct dlb_model *model)
{
    dlb_status s = DLB_OK;
    if (m->w.rank == 0)
        s = m->api->state_io(m->h, model, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                             m->state, m->state_n, 0);
    if (s != DLB_OK)
        dlb_mpi_world_abort(m->h, &m->w,
                            "cannot read the weights to broadcast");
    MPI_Bcast(m->state, (int)m->state_n, MPI_FLOAT, 0, m->w.comm);
    if (m->w.rank != 0)
        s = m->api->state_io(m->h, model, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                             m->state, m->state_n, 1);
    return s;
}

/* Copy bucket b's gradients into the flat buffer. */
static dlb_status pack(struct dp_mpi *m, unsigned b)
{
    const struct dp_bucket *bk = &m->plan.b[b];
    dlb_status s = DLB_OK;
    for (unsigned p = bk->lo; p <= bk->hi && s == DLB_OK; p++) {
        struct dlb_act_view v;
        float *dst = m->flat + m->plan.offset[p];
        size_t n = m->plan.params[p].count;
        m->view[p] = NULL;
        s = m->api->tensor_map(m->h, m->model, p, DLB_TENSOR_GRAD, &v);
        if (s == DLB_OK && !v.device) {
            m->view[p] = v.data;
            memcpy(dst, v.data, n * sizeof *dst);
            continue;
        }
        if (s == DLB_OK)
            s = m->api->tensor_unmap(m->h, m->model, p, DLB_TENSOR_GRAD, 0);
        else if (s == DLB_ERR_UNSUPPORTED)
            s = DLB_OK;
        if (s == DLB_OK)
            s = m->api->tensor_io(m->h, m->model, p, DLB_TENSOR_GRAD, dst, n,
                                  0);
    }
    return s;
}

static dlb_status on_ready(void *ctx, unsigned layer)
{
    struct dp_mpi *m = ctx;
    unsigned first = m->next, n = dp_plan_ready(&m->plan, layer, &m->next);
    for (unsigned b = first; b < first + n; b++) {
        dlb_status s = pack(m, b);
        if (s != DLB_OK)
            return s;
        if (m->s.overlap)
            MPI_Iallreduce(MPI_IN_PLACE, m->flat + m->plan.b[b].offset,
                           (int)m->plan.b[b].count, MPI_FLOAT, MPI_SUM,
                           m->w.comm, &m->req[b]);
    }
    /* Non-blocking collectives move only inside MPI calls: each layer's
     * end is one. */
    int done;
    if (m->s.overlap && m->next > 0)
        MPI_Testall((int)m->next, m->req, &done, MPI_STATUSES_IGNORE);
    return DLB_OK;
}

/* The sums back into the gradients. */
static dlb_status unpack(struct dp_mpi *m)
{
    dlb_status s = DLB_OK;
    for (unsigned p = 0; p < m->plan.n_params && s == DLB_OK; p++) {
        const float *src = m->flat + m->plan.offset[p];
        size_t n = m->plan.params[p].count;
        if (m->view[p]) {
            memcpy(m->view[p], src, n * sizeof *src);
            s = m->api->tensor_unmap(m->h, m->model, p, DLB_TENSOR_GRAD, 1);
        } else {
            s = m->api->tensor_io(m->h, m->model, p, DLB_TENSOR_GRAD,
                                  (float *)src, n, 1);
        }
    }
    return s;
}

/* Running statistics averaged over the ranks; the loss rides along. */
static dlb_status average_stats(struct dp_mpi *m, double loss, uint32_t part,
                                uint32_t n)
{
    dlb_status s = DLB_OK;
    if (m->stats_n)
        s = m->api->state_io(m->h, m->model, 0, DLB_NODES_ALL, DLB_STATE_STATS,
                             m->stats, m->stats_n, 0);
    m->stats[m->stats_n] = (float)(loss * part / n);
    if (s != DLB_OK)
        dlb_mpi_world_abort(m->h, &m->w,
                            "cannot read the batch-norm statistics");
    MPI_Allreduce(MPI_IN_PLACE, m->stats, (int)m->stats_n + 1, MPI_FLOAT,
                  MPI_SUM, m->w.comm);
    for (size_t j = 0; j < m->stats_n; j++)
        m->stats[j] /= (float)m->w.size;
    m->fig.last_loss = m->stats[m->stats_n];
    if (m->stats_n)
        s = m->api->state_io(m->h, m->model, 0, DLB_NODES_ALL, DLB_STATE_STATS,
                             m->stats, m->stats_n, 1);
    return s;
}

static dlb_status mpi_step(void *eng, struct dlb_model *model,
                           const struct dlb_batch *bt)
{
    struct dp_mpi *m = eng;
    size_t per = (size_t)bt->c * bt->h * bt->w;
    uint32_t lo, hi;
    double loss = 0;
    dlb_status s = DLB_OK;
    double t0 = dp_now();
    m->model = model;
    if (!m->planned && (s = setup(m, model)) != DLB_OK)
        dlb_mpi_world_abort(m->h, &m->w, "cannot set the gradient buckets up");
    if ((uint32_t)m->w.size > bt->n) {
        char why[160];
        snprintf(why, sizeof why, "a global batch of %u images for %d ranks: "
                 "each needs at least one", bt->n, m->w.size);
        dlb_mpi_world_abort(m->h, &m->w, why);
    }
    /* Every rank sees the same version moves (the same code runs
     * everywhere), so the broadcast is collective. */
    if (!m->synced || m->api->weights_version(m->h, model) != m->version) {
        if ((s = broadcast_state(m, model)) != DLB_OK)
            dlb_mpi_world_abort(m->h, &m->w,
                                "cannot write the broadcast weights");
        m->synced = 1;
    }
    dp_shard(bt->n, m->w.rank, m->w.size, &lo, &hi);
    m->next = 0;
    double t1 = dp_now();
    s = m->api->forward_backward(m->h, model, bt->images + lo * per,
                                 bt->labels + lo, hi - lo,
                                 dp_shard_scale(&m->s, hi - lo, bt->n), &loss,
                                 on_ready, m);
    if (s != DLB_OK)
        dlb_mpi_world_abort(m->h, &m->w, "forward/backward failed");
    double t2 = dp_now(), comm = 0;
    if (m->s.overlap) {
        /* What overlap already finished, before waiting for the rest. */
        for (unsigned b = 0; b < m->plan.n; b++) {
            int done = 0;
            MPI_Test(&m->req[b], &done, MPI_STATUS_IGNORE);
            if (done)
                m->fig.done_in_bwd_bytes += m->plan.b[b].count * sizeof(float);
        }
        MPI_Waitall((int)m->plan.n, m->req, MPI_STATUSES_IGNORE);
    } else {
        for (unsigned b = 0; b < m->plan.n; b++) {
            double a = dp_now();
            MPI_Allreduce(MPI_IN_PLACE, m->flat + m->plan.b[b].offset,
                          (int)m->plan.b[b].count, MPI_FLOAT, MPI_SUM,
                          m->w.comm);
            comm += dp_now() - a;
        }
    }
    double t3 = dp_now(), last = t2;
    /* One node shares CLOCK_MONOTONIC: the wait for slower ranks is told
     * apart from the wait for the network. */
    if (m->w.same_host)
        MPI_Allreduce(&t2, &last, 1, MPI_DOUBLE, MPI_MAX, m->w.comm);
    if ((s = unpack(m)) != DLB_OK ||
        (s = m->api->step(m->h, model)) != DLB_OK ||
        (s = average_stats(m, loss, hi - lo, bt->n)) != DLB_OK)
        dlb_mpi_world_abort(m->h, &m->w, "the update failed");
    m->version = m->api->weights_version(m->h, model);
    m->fig.steps++;
    m->fig.backward_s += t2 - t1;
    m->fig.exposed_s += t3 > last ? t3 - last : 0;
    m->fig.imbalance_s += last - t2;
    m->fig.comm_s += m->s.overlap ? t3 - t2 : comm;
    m->fig.step_s += dp_now() - t0;
    return DLB_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One all-reduce of every bucket on its own, as nccl-tests times it: the
 * slowest rank's time, median of a few. */
static double calibrate(struct dp_mpi *m)
{
    enum { REPS = 7 };
    double t[REPS];
    for (int r = 0; r < REPS; r++) {
        MPI_Barrier(m->w.comm);
        double a = dp_now();
        for (unsigned b = 0; b < m->plan.n; b++)
            MPI_Allreduce(MPI_IN_PLACE, m->flat + m->plan.b[b].offset,
                          (int)m->plan.b[b].count, MPI_FLOAT, MPI_SUM,
                          m->w.comm);
        t[r] = dp_now() - a;
        MPI_Allreduce(MPI_IN_PLACE, &t[r], 1, MPI_DOUBLE, MPI_MAX, m->w.comm);
    }
    qsort(t, REPS, sizeof *t, cmp_double);
    return t[REPS / 2];
}

/* Every rank's state against rank 0's. */
static void check_weights(struct dp_mpi *m, struct dlb_model *model,
                          struct dp_figures *out)
{
    float *mine = malloc((m->state_n ? m->state_n : 1) * sizeof *mine);
    int ok = mine && m->api->state_io(m->h, model, 0, DLB_NODES_ALL,
                                      DLB_STATE_ALL, mine, m->state_n,
                                      0) == DLB_OK;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->w.comm);
    if (all_ok) {
        memcpy(m->state, mine, m->state_n * sizeof *mine);
        MPI_Bcast(m->state, (int)m->state_n, MPI_FLOAT, 0, m->w.comm);
        int same = memcmp(mine, m->state, m->state_n * sizeof *mine) == 0;
        double diff = 0;
        for (size_t j = 0; j < m->state_n; j++) {
            double d = (double)mine[j] - (double)m->state[j];
            d = d < 0 ? -d : d;
            diff = d > diff ? d : diff;
        }
        MPI_Allreduce(&same, &out->weights_identical, 1, MPI_INT, MPI_MIN,
                      m->w.comm);
        MPI_Allreduce(&diff, &out->weights_max_diff, 1, MPI_DOUBLE, MPI_MAX,
                      m->w.comm);
        out->weights_checked = 1;
    }
    free(mine);
}

static dlb_status mpi_figures(void *eng, struct dlb_model *model,
                              struct dp_figures *out)
{
    struct dp_mpi *m = eng;
    /* Every rank gets here at the same point; ranks that never stepped
     * (a failure before training) have nothing to agree on. */
    int planned = m->planned && model, all = 0;
    MPI_Allreduce(&planned, &all, 1, MPI_INT, MPI_MIN, m->w.comm);
    *out = m->fig;
    out->workers = m->w.size;
    out->buckets = (int)m->plan.n;
    out->grad_bytes = m->plan.total * sizeof(float);
    if (!all)
        return DLB_OK;
    check_weights(m, model, out);
    if (m->w.size > 1) {
        out->comm_calib_s = calibrate(m);
        out->calibrated = 1;
    }
    return DLB_OK;
}

static void mpi_fini(void *eng)
{
    struct dp_mpi *m = eng;
    if (!m)
        return;
    dlb_mpi_world_close(&m->w);
    dp_plan_free(&m->plan);
    free(m->flat);
    free(m->req);
    free(m->view);
    free(m->state);
    free(m->stats);
    free(m);
}

const struct dp_engine dp_engine_mpi = {
    .name = "mpi",
    .probe = mpi_probe,
    .init = mpi_init,
    .step = mpi_step,
    .figures = mpi_figures,
    .fini = mpi_fini,
};
