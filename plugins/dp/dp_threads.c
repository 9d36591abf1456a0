/* Engine threads: one process, one replica per worker thread, gradients
 * summed in shared memory.
 *
 * Worker 0 is the calling thread on the configuration's own model; workers
 * 1..R-1 are threads, each with a replica on a backend handle of its own
 * pinned to its share of the CPUs. A step: every worker runs forward and
 * backward on its shard; gradients are shown in place (the cpu and ref
 * backends map them) and summed bucket by bucket, always as
 * ((g0 + g1) + g2) + ..., whichever thread does it, so the result is
 * deterministic; the sum is copied to every worker, and each applies the
 * same SGD update to its own weights, which therefore stay bit-identical.
 * With overlap on, the last worker to finish a bucket sums it at once,
 * while the others are still in backward; with overlap off, the workers
 * sum slices of every bucket after backward. Batch-norm running
 * statistics are averaged over the workers after each step. */
#define _POSIX_C_SOURCE 200809L /* barriers, clock_gettime, setenv */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "threads_probe.h"
#include "wake.h"

struct tw;

struct dp_threads {
    const struct dlb_host *h;
    const struct dlb_model_api *api;
    struct dp_settings s;
    int R;
    struct tw *w;
    struct dp_plan plan;
    int started;
    dlb_status start_status;     /* of the first step's setup */
    pthread_barrier_t bar;
    struct dlb_wake wake;        /* its generation moves: workers start */
    /* The step in flight. */
    const struct dlb_batch *batch;
    int sync;                    /* replicas copy `state` first */
    float *state;
    size_t state_n, stats_n;
    uint64_t version;            /* the master's weights the replicas hold */
    atomic_int *arrived;         /* per bucket: workers done with it */
    double *bucket_s;            /* per bucket: time to sum it */
    double *bucket_done;         /* per bucket: when its sum was done */
    atomic_int failed;
    struct dp_figures fig;
};

struct tw {
    struct dp_threads *t;
    int index;
    pthread_t tid;
    int have_thread;
    struct dlb_model *model;
    float **grad;                /* per tensor, this step */
    unsigned char *mapped;       /* per tensor: grad is the view in place */
    float *staging;              /* copies, where the backend cannot map */
    unsigned next;               /* first bucket not yet ready */
    float *stats, *avg;
    double loss;
    double bwd_end;              /* when its backward ended, this step */
    dlb_status status;
};

/* Show worker w's gradients of bucket b: in place, else copied out. */
static dlb_status take_bucket(struct tw *w, unsigned b)
{
    struct dp_threads *t = w->t;
    const struct dp_bucket *bk = &t->plan.b[b];
    dlb_status s = DLB_OK;
    for (unsigned p = bk->lo; p <= bk->hi && s == DLB_OK; p++) {
        struct dlb_act_view v;
        w->mapped[p] = 0;
        s = t->api->tensor_map(t->h, w->model, p, DLB_TENSOR_GRAD, &v);
        if (s == DLB_OK && !v.device) {
            w->grad[p] = v.data;
            w->mapped[p] = 1;
            continue;
        }
        if (s == DLB_OK) /* device memory: the host sums, so copy */
            s = t->api->tensor_unmap(t->h, w->model, p, DLB_TENSOR_GRAD, 0);
        else if (s == DLB_ERR_UNSUPPORTED)
            s = DLB_OK;
        if (s != DLB_OK)
            return s;
        if (!w->staging &&
            !(w->staging = malloc(t->plan.total * sizeof *w->staging)))
            return DLB_ERR_NOMEM;
        w->grad[p] = w->staging + t->plan.offset[p];
        s = t->api->tensor_io(t->h, w->model, p, DLB_TENSOR_GRAD, w->grad[p],
                              t->plan.params[p].count, 0);
    }
    return s;
}

/* Sum elements [from, to) of every tensor of bucket b over the workers, in
 * worker order, and give every worker the sum. */
static void sum_bucket(struct dp_threads *t, unsigned b, double from_frac,
                       double to_frac)
{
    const struct dp_bucket *bk = &t->plan.b[b];
    for (unsigned p = bk->lo; p <= bk->hi; p++) {
        size_t n = t->plan.params[p].count;
        size_t from = (size_t)(from_frac * (double)n),
        to = (size_t)(to_frac * (double)n);
        float *g0 = t->w[0].grad[p];
        for (int r = 1; r < t->R; r++) {
            const float *g = t->w[r].grad[p];
            for (size_t j = from; j < to; j++)
                g0[j] += g[j];
        }
        for (int r = 1; r < t->R; r++)
            memcpy(t->w[r].grad[p] + from, g0 + from,
                   (to - from) * sizeof *g0);
    }
}

/* Worker w is done with bucket b; the last one sums it. */
static void arrive(struct tw *w, unsigned b)
{
    struct dp_threads *t = w->t;
    if (atomic_fetch_add(&t->arrived[b], 1) + 1 != t->R)
        return;
    double t0 = dp_now();
    if (!atomic_load(&t->failed))
        sum_bucket(t, b, 0.0, 1.0);
    t->bucket_done[b] = dp_now();
    t->bucket_s[b] = t->bucket_done[b] - t0;
}

static dlb_status on_ready(void *ctx, unsigned layer)
{
    struct tw *w = ctx;
    struct dp_threads *t = w->t;
    unsigned first = w->next, n = dp_plan_ready(&t->plan, layer, &w->next);
    for (unsigned b = first; b < first + n; b++) {
        dlb_status s = take_bucket(w, b);
        if (s != DLB_OK)
            return s;
        if (t->s.overlap)
            arrive(w, b);
    }
    return DLB_OK;
}

/* Give the summed gradients back and apply the update. */
static dlb_status update(struct tw *w)
{
    struct dp_threads *t = w->t;
    dlb_status s = DLB_OK;
    for (unsigned p = 0; p < t->plan.n_params && s == DLB_OK; p++)
        s = w->mapped[p] ? t->api->tensor_unmap(t->h, w->model, p,
                                                DLB_TENSOR_GRAD, 1)
                         : t->api->tensor_io(t->h, w->model, p,
                                             DLB_TENSOR_GRAD, w->grad[p],
                                             t->plan.params[p].count, 1);
    if (s == DLB_OK)
        s = t->api->step(t->h, w->model);
    if (s == DLB_OK && t->stats_n)
        s = t->api->state_io(t->h, w->model, 0, DLB_NODES_ALL, DLB_STATE_STATS,
                             w->stats, t->stats_n, 0);
    return s;
}

/* Every worker averages the running statistics the same way, in worker
 * order, so they stay identical too. */
static dlb_status average_stats(struct tw *w)
{
    struct dp_threads *t = w->t;
    if (!t->stats_n)
        return DLB_OK;
    for (size_t j = 0; j < t->stats_n; j++) {
        float sum = t->w[0].stats[j];
        for (int r = 1; r < t->R; r++)
            sum += t->w[r].stats[j];
        w->avg[j] = sum / (float)t->R;
    }
    return t->api->state_io(t->h, w->model, 0, DLB_NODES_ALL, DLB_STATE_STATS,
                            w->avg, t->stats_n, 1);
}

static void fail(struct tw *w, dlb_status s)
{
    if (s != DLB_OK && w->status == DLB_OK) {
        w->status = s;
        atomic_store(&w->t->failed, 1);
    }
}

/* One worker's part of a step; every worker passes every barrier, failed
 * or not, so that none waits for ever. */
static void work(struct tw *w)
{
    struct dp_threads *t = w->t;
    const struct dlb_batch *bt = t->batch;
    size_t per = (size_t)bt->c * bt->h * bt->w;
    uint32_t lo, hi;
    dlb_status s = DLB_OK;
    w->status = DLB_OK;
    w->next = 0;
    dp_shard(bt->n, w->index, t->R, &lo, &hi);
    if (t->sync && w->index > 0)
        s = t->api->state_io(t->h, w->model, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                             t->state, t->state_n, 1);
    double t0 = dp_now();
    if (s == DLB_OK)
        s = t->api->forward_backward(t->h, w->model, bt->images + lo * per,
                                     bt->labels + lo, hi - lo,
                                     dp_shard_scale(&t->s, hi - lo, bt->n),
                                     &w->loss, on_ready, w);
    double t1 = dp_now();
    w->bwd_end = t1;
    fail(w, s);
    /* A failed worker still arrives everywhere, so nobody waits for it. */
    while (w->next < t->plan.n) {
        if (t->s.overlap)
            arrive(w, w->next);
        w->next++;
    }
    pthread_barrier_wait(&t->bar);
    double tb = dp_now();
    if (!t->s.overlap && !atomic_load(&t->failed))
        for (unsigned b = 0; b < t->plan.n; b++)
            sum_bucket(t, b, (double)w->index / t->R,
                       (double)(w->index + 1) / t->R);
    pthread_barrier_wait(&t->bar);
    double t2 = dp_now();
    if (!atomic_load(&t->failed))
        fail(w, update(w));
    pthread_barrier_wait(&t->bar);
    if (!atomic_load(&t->failed))
        fail(w, average_stats(w));
    pthread_barrier_wait(&t->bar);
    if (w->index == 0) {
        double last = t1;
        for (int r = 1; r < t->R; r++)
            last = t->w[r].bwd_end > last ? t->w[r].bwd_end : last;
        t->fig.backward_s += t1 - t0;
        t->fig.imbalance_s += last - t1;
        t->fig.exposed_s += t2 > last ? t2 - last : 0;
        if (!t->s.overlap)
            t->fig.comm_s += t2 - tb;
        for (unsigned b = 0; t->s.overlap && b < t->plan.n; b++) {
            t->fig.comm_s += t->bucket_s[b];
            if (t->bucket_done[b] <= last)
                t->fig.done_in_bwd_bytes +=
                    t->plan.b[b].count * sizeof(float);
        }
    }
}

static void *worker_main(void *arg)
{
    struct tw *w = arg;
    struct dp_threads *t = w->t;
    uint64_t seen = 0;
    /* Every worker thread exists before any meets the barrier: when one
     * cannot be started, the others leave here instead. */
    if (!dlb_wake_wait_go(&t->wake))
        return NULL;
    fail(w, dlb_model_clone(t->h, t->w[0].model, t->s.replica_threads,
                            w->index, &w->model));
    pthread_barrier_wait(&t->bar); /* created (or not) */
    while (dlb_wake_wait_next(&t->wake, &seen))
        work(w);
    t->api->release(t->h, w->model);
    w->model = NULL;
    return NULL;
}

static dlb_status th_probe(const struct dlb_host *h,
                           const struct dp_settings *s,
                           char *reason, size_t len)
{
    (void)h;
    return dlb_threads_probe(s->ranks, reason, len);
}

static dlb_status th_init(const struct dlb_host *h,
                          const struct dp_settings *s,
                          void **eng)
{
    struct dp_threads *t = calloc(1, sizeof *t);
    if (!t)
        return DLB_ERR_NOMEM;
    t->h = h;
    t->api = h->model_api;
    t->s = *s;
    t->R = s->replicas;
    t->w = calloc((size_t)t->R, sizeof *t->w);
    if (!t->w) {
        free(t);
        return DLB_ERR_NOMEM;
    }
    dlb_wake_init(&t->wake);
    pthread_barrier_init(&t->bar, NULL, (unsigned)t->R);
    *eng = t;
    return DLB_OK;
}

/* First step: the bucket plan, buffers, and the worker threads, each of
 * which makes its replica on its own thread. */
static dlb_status start(struct dp_threads *t, struct dlb_model *m)
{
    t->started = 1;
    dlb_status s = dp_plan_build(t->h, m, t->s.bucket_bytes, &t->plan);
    if (s != DLB_OK)
        return s;
    t->api->state_count(t->h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL, &t->state_n);
    t->api->state_count(t->h, m, 0, DLB_NODES_ALL, DLB_STATE_STATS,
                        &t->stats_n);
    t->state = malloc((t->state_n ? t->state_n : 1) * sizeof *t->state);
    t->arrived = calloc(t->plan.n, sizeof *t->arrived);
    t->bucket_s = calloc(t->plan.n, sizeof *t->bucket_s);
    t->bucket_done = calloc(t->plan.n, sizeof *t->bucket_done);
    if (!t->state || !t->arrived || !t->bucket_s || !t->bucket_done)
        return DLB_ERR_NOMEM;
    for (int r = 0; r < t->R; r++) {
        struct tw *w = &t->w[r];
        w->t = t;
        w->index = r;
        w->grad = calloc(t->plan.n_params, sizeof *w->grad);
        w->mapped = calloc(t->plan.n_params, 1);
        w->stats = malloc((t->stats_n ? t->stats_n : 1) * sizeof *w->stats);
        w->avg = malloc((t->stats_n ? t->stats_n : 1) * sizeof *w->avg);
        if (!w->grad || !w->mapped || !w->stats || !w->avg)
            return DLB_ERR_NOMEM;
    }
    t->w[0].model = m;
    for (int r = 1; r < t->R; r++) {
        if (pthread_create(&t->w[r].tid, NULL, worker_main, &t->w[r]) != 0) {
            t->h->log(t->h, DLB_LOG_ERROR, "cannot start worker thread %d of "
                      "%d", r, t->R - 1);
            return DLB_ERR_RUNTIME; /* fini sends the others home */
        }
        t->w[r].have_thread = 1;
    }
    dlb_wake_go(&t->wake);
    pthread_barrier_wait(&t->bar);
    for (int r = 1; r < t->R; r++)
        if (t->w[r].status != DLB_OK)
            return t->w[r].status;
    t->version = t->api->weights_version(t->h, m) - 1; /* sync at once */
    return DLB_OK;
}

static dlb_status th_step(void *eng, struct dlb_model *m,
                          const struct dlb_batch *batch)
{
    struct dp_threads *t = eng;
    dlb_status s = DLB_OK;
    double t0 = dp_now();
    if (!t->started)
        t->start_status = start(t, m);
    if (t->start_status != DLB_OK)
        return t->start_status;
    if (t->w[0].model != m) {
        t->h->log(t->h, DLB_LOG_ERROR, "the model changed between steps");
        return DLB_ERR_INTERNAL;
    }
    if ((uint32_t)t->R > batch->n) {
        t->h->log(t->h, DLB_LOG_ERROR, "batch of %u images for %d replicas: "
                  "each needs at least one", batch->n, t->R);
        return DLB_ERR_INPUT;
    }
    /* The weights were set from outside (initialisation, a checkpoint):
     * the replicas copy them, momentum included. */
    t->sync = t->api->weights_version(t->h, m) != t->version;
    if (t->sync &&
        (s = t->api->state_io(t->h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                              t->state, t->state_n, 0)))
        return s;
    /* The dropout streams too, while the workers wait: every replica then
     * draws the master's masks, as ranks started from one seed do. */
    dlb_extra_copy_rng copy_rng =
        (dlb_extra_copy_rng)t->api->extra(t->h, "model.copy_rng");
    for (int r = 1; t->sync && r < t->R && s == DLB_OK; r++)
        s = copy_rng(t->h, t->w[r].model, m);
    if (s != DLB_OK)
        return s;
    t->batch = batch;
    for (unsigned b = 0; b < t->plan.n; b++) {
        atomic_store(&t->arrived[b], 0);
        t->bucket_s[b] = 0;
    }
    atomic_store(&t->failed, 0);
    dlb_wake_next(&t->wake);
    work(&t->w[0]);
    /* Its own averaged statistics moved the master's version. */
    t->version = t->api->weights_version(t->h, m);
    double loss = 0;
    for (int r = 0; r < t->R; r++) {
        uint32_t lo, hi;
        dp_shard(batch->n, r, t->R, &lo, &hi);
        loss += t->w[r].loss * (double)(hi - lo) / batch->n;
        if (s == DLB_OK)
            s = t->w[r].status;
    }
    t->fig.last_loss = loss;
    t->fig.steps++;
    t->fig.step_s += dp_now() - t0;
    return s;
}

/* Every replica's state against the master's, bit for bit. */
static dlb_status th_figures(void *eng, struct dlb_model *m,
                             struct dp_figures *out)
{
    struct dp_threads *t = eng;
    dlb_status s = DLB_OK;
    *out = t->fig;
    out->workers = t->R;
    out->buckets = (int)t->plan.n;
    out->grad_bytes = t->plan.total * sizeof(float);
    if (!t->started || !m)
        return DLB_OK;
    float *mine = malloc((t->state_n ? t->state_n : 1) * sizeof *mine);
    if (!mine)
        return DLB_ERR_NOMEM;
    if ((s = t->api->state_io(t->h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                              t->state, t->state_n, 0)))
        goto out;
    out->weights_checked = 1;
    out->weights_identical = 1;
    out->weights_max_diff = 0;
    /* The workers wait between steps: their models are free to read. */
    for (int r = 1; r < t->R; r++) {
        if ((s = t->api->state_io(t->h, t->w[r].model, 0, DLB_NODES_ALL,
                                  DLB_STATE_ALL, mine, t->state_n, 0)))
            goto out;
        if (memcmp(mine, t->state, t->state_n * sizeof *mine))
            out->weights_identical = 0;
        for (size_t j = 0; j < t->state_n; j++) {
            double d = (double)mine[j] - (double)t->state[j];
            d = d < 0 ? -d : d;
            if (d > out->weights_max_diff)
                out->weights_max_diff = d;
        }
    }
out:
    free(mine);
    return s;
}

static void th_fini(void *eng)
{
    struct dp_threads *t = eng;
    if (!t)
        return;
    dlb_wake_quit(&t->wake);
    for (int r = 1; r < t->R; r++)
        if (t->w[r].have_thread)
            pthread_join(t->w[r].tid, NULL);
    for (int r = 0; r < t->R; r++) {
        free(t->w[r].grad);
        free(t->w[r].mapped);
        free(t->w[r].staging);
        free(t->w[r].stats);
        free(t->w[r].avg);
    }
    pthread_barrier_destroy(&t->bar);
    dlb_wake_destroy(&t->wake);
    dp_plan_free(&t->plan);
    free(t->state);
    free(t->arrived);
    free(t->bucket_s);
    free(t->bucket_done);
    free(t->w);
    free(t);
}

const struct dp_engine dp_engine_threads = {
    .name = "threads",
    .probe = th_probe,
    .init = th_init,
    .step = th_step,
    .figures = th_figures,
    .fini = th_fini,
};
