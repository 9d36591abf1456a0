/* Engine threads: one process, one thread per stage, each with a replica
 * of the model on a backend handle of its own pinned to its share of the
 * CPUs (a stage per core with stage_threads = 1).
 *
 * Stages hand activations forward and gradients back through one slot per
 * (cut, micro-batch), posted with the step's number: a consumer waits for
 * its slot, a producer never waits, so the schedules' order alone decides
 * who is busy and who idles. The configuration's model takes no part in
 * the step: the stages copy it when its weights were set from outside
 * (initialisation, a checkpoint), and after each step the calling thread
 * writes every stage's layers back into it (weights and running
 * statistics), so that what the harness evaluates is what was trained.
 * Replicas keep their own lifetime, closed by the plugin on their threads
 * whether the model still exists or not. */
#define _POSIX_C_SOURCE 200809L /* barriers, clock_gettime */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp.h"
#include "threads_probe.h"
#include "wake.h"

struct sw;

struct mp_threads {
    const struct dlb_host *h;
    const struct dlb_model_api *api;
    struct mp_settings s;
    int S, M;
    struct mp_cut cut;
    struct sw *w;
    int started;
    dlb_status start_status;
    pthread_barrier_t bar;
    struct dlb_wake wake;        /* gen: the step's number, slots posted
                                  * with it; its lock guards the slots */
    struct dlb_model *model;     /* the configuration's */
    const struct dlb_batch *batch;
    uint32_t *lo;                /* micro-batch bounds, M + 1 */
    uint32_t cap;                /* images the slots hold per micro-batch */
    float **fwd, **bwd;          /* [cut * M + k] */
    uint64_t *fwd_gen, *bwd_gen;
    size_t *cut_count;           /* per image, at each cut */
    size_t per_image;            /* input elements per image */
    atomic_int failed;
    int sync;                    /* replicas copy `state` first */
    float *state;
    size_t state_n;
    uint64_t version;
    struct mp_figures fig;
};

struct sw {
    struct mp_threads *t;
    int index;
    pthread_t tid;
    int have_thread;
    struct dlb_model *model;     /* this stage's replica */
    struct dlb_stage *stage;
    struct mp_op *ops;
    float *handback;
    size_t handback_n;
    double busy, end, loss;
    dlb_status status;
};

static void fail(struct sw *w, dlb_status s)
{
    struct mp_threads *t = w->t;
    if (s == DLB_OK)
        return;
    if (w->status == DLB_OK)
        w->status = s;
    pthread_mutex_lock(&t->wake.mu);
    atomic_store(&t->failed, 1);
    pthread_cond_broadcast(&t->wake.cv);
    pthread_mutex_unlock(&t->wake.mu);
}

/* Wait until slot `flag` holds this step's data; 0 when a stage failed. */
static int wait_slot(struct mp_threads *t, const uint64_t *flag)
{
    pthread_mutex_lock(&t->wake.mu);
    while (*flag != t->wake.gen && !atomic_load(&t->failed))
        pthread_cond_wait(&t->wake.cv, &t->wake.mu);
    int ok = !atomic_load(&t->failed);
    pthread_mutex_unlock(&t->wake.mu);
    return ok;
}

static void post_slot(struct mp_threads *t, uint64_t *flag)
{
    pthread_mutex_lock(&t->wake.mu);
    *flag = t->wake.gen;
    pthread_cond_broadcast(&t->wake.cv);
    pthread_mutex_unlock(&t->wake.mu);
}

static dlb_status run_op(struct sw *w, const struct mp_op *op)
{
    struct mp_threads *t = w->t;
    const struct dlb_batch *b = t->batch;
    int s = w->index, S = t->S, M = t->M;
    unsigned k = op->k;
    size_t slot_in = (size_t)(s - 1) * M + k, slot_out = (size_t)s * M + k;
    dlb_status st;
    double t0;
    if (!op->backward) {
        const float *in = s == 0 ? b->images + (size_t)t->lo[k] * t->per_image
                                 : t->fwd[slot_in];
        double loss = 0;
        if (s > 0 && !wait_slot(t, &t->fwd_gen[slot_in]))
            return DLB_ERR_RUNTIME;
        t0 = mp_now();
        st = t->api->slice_forward(t->h, w->stage, k, in,
                                   s == S - 1 ? b->labels + t->lo[k] : NULL,
                                   s < S - 1 ? t->fwd[slot_out] : NULL,
                                   s == S - 1 ? &loss : NULL);
        w->busy += mp_now() - t0;
        w->loss += loss * (double)(t->lo[k + 1] - t->lo[k]) / (double)b->n;
        if (st == DLB_OK && s < S - 1)
            post_slot(t, &t->fwd_gen[slot_out]);
        return st;
    }
    if (s < S - 1 && !wait_slot(t, &t->bwd_gen[slot_out]))
        return DLB_ERR_RUNTIME;
    t0 = mp_now();
    st = t->api->slice_backward(t->h, w->stage, k,
                                s < S - 1 ? t->bwd[slot_out] : NULL,
                                s > 0 ? t->bwd[slot_in] : NULL);
    w->busy += mp_now() - t0;
    if (st == DLB_OK && s > 0)
        post_slot(t, &t->bwd_gen[slot_in]);
    return st;
}

/* One stage's part of a step. A failed stage stops; the others see the
 * flag in their waits and stop too, and every one meets the barrier. */
static void work(struct sw *w)
{
    struct mp_threads *t = w->t;
    dlb_status s = DLB_OK;
    w->status = DLB_OK;
    w->busy = w->loss = 0;
    if (t->sync)
        s = t->api->state_io(t->h, w->model, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                             t->state, t->state_n, 1);
    if (s == DLB_OK)
        s = t->api->slice_begin(t->h, w->stage, t->batch->n, NULL);
    for (int i = 0; s == DLB_OK && i < 2 * t->M; i++)
        s = run_op(w, &w->ops[i]);
    double t0 = mp_now();
    if (s == DLB_OK)
        s = t->api->slice_step(t->h, w->stage);
    w->end = mp_now();
    w->busy += w->end - t0;
    if (s == DLB_OK)
        s = t->api->state_io(t->h, w->model, t->cut.first[w->index],
                             t->cut.first[w->index + 1],
                             DLB_STATE_WEIGHTS | DLB_STATE_STATS, w->handback,
                             w->handback_n, 0);
    fail(w, s);
}

static void *stage_main(void *arg)
{
    struct sw *w = arg;
    struct mp_threads *t = w->t;
    uint64_t seen = 0;
    if (!dlb_wake_wait_go(&t->wake))
        return NULL;
    struct dlb_stage_spec spec = {t->cut.first[w->index],
                                  t->cut.first[w->index + 1], (unsigned)t->M,
                                  1.0f};
    dlb_status s = dlb_model_clone(t->h, t->model, t->s.stage_threads,
                                   w->index, &w->model);
    if (s == DLB_OK)
        s = t->api->slice(t->h, w->model, &spec, &w->stage);
    if (s == DLB_OK)
        s = t->api->state_count(t->h, w->model, spec.first, spec.last,
                                DLB_STATE_WEIGHTS | DLB_STATE_STATS,
                                &w->handback_n);
    if (s == DLB_OK && !(w->handback = malloc((w->handback_n ? w->handback_n
                                                             : 1) * sizeof(float))))
        s = DLB_ERR_NOMEM;
    if (s != DLB_OK)
        w->status = s;
    pthread_barrier_wait(&t->bar); /* made (or not) */
    while (dlb_wake_wait_next(&t->wake, &seen)) {
        work(w);
        pthread_barrier_wait(&t->bar);
    }
    t->api->slice_close(t->h, w->stage);
    t->api->release(t->h, w->model);
    w->stage = NULL;
    w->model = NULL;
    return NULL;
}

static dlb_status th_probe(const struct dlb_host *h,
                           const struct mp_settings *s,
                           char *reason, size_t len)
{
    (void)h;
    return dlb_threads_probe(s->ranks, reason, len);
}

static dlb_status th_init(const struct dlb_host *h,
                          const struct mp_settings *s,
                          void **eng)
{
    struct mp_threads *t = calloc(1, sizeof *t);
    if (!t)
        return DLB_ERR_NOMEM;
    t->h = h;
    t->api = h->model_api;
    t->s = *s;
    t->S = s->stages;
    t->M = s->micro;
    dlb_wake_init(&t->wake);
    /* The stages and the calling thread, which waits for them. */
    pthread_barrier_init(&t->bar, NULL, (unsigned)t->S + 1);
    t->w = calloc((size_t)t->S, sizeof *t->w);
    t->lo = calloc((size_t)t->M + 1, sizeof *t->lo);
    size_t slots = (size_t)(t->S > 1 ? t->S - 1 : 1) * (size_t)t->M;
    t->fwd = calloc(slots, sizeof *t->fwd);
    t->bwd = calloc(slots, sizeof *t->bwd);
    t->fwd_gen = calloc(slots, sizeof *t->fwd_gen);
    t->bwd_gen = calloc(slots, sizeof *t->bwd_gen);
    t->cut_count = calloc((size_t)t->S, sizeof *t->cut_count);
    if (!t->w || !t->lo || !t->fwd || !t->bwd || !t->fwd_gen || !t->bwd_gen ||
        !t->cut_count) {
        mp_engine_threads.fini(t);
        return DLB_ERR_NOMEM;
    }
    *eng = t;
    return DLB_OK;
}

/* Slots for micro-batches of up to `cap` images. */
static dlb_status grow_slots(struct mp_threads *t, uint32_t cap)
{
    for (int c = 0; c + 1 < t->S; c++)
        for (int k = 0; k < t->M; k++) {
            size_t i = (size_t)c * t->M + k, n = (size_t)cap * t->cut_count[c];
            float *f = realloc(t->fwd[i], n * sizeof *f);
            if (f)
                t->fwd[i] = f;
            float *g = realloc(t->bwd[i], n * sizeof *g);
            if (g)
                t->bwd[i] = g;
            if (!f || !g)
                return DLB_ERR_NOMEM;
        }
    t->cap = cap;
    return DLB_OK;
}

/* First step: the cut, the schedules, and the stage threads, each of
 * which makes its replica and stage on its own thread. */
static dlb_status start(struct mp_threads *t, struct dlb_model *m)
{
    dlb_status s;
    t->started = 1;
    t->model = m;
    if ((s = mp_plan_model(t->h, m, &t->s, &t->cut)) != DLB_OK)
        return s;
    for (int c = 0; c + 1 < t->S; c++)
        if ((s = t->api->act_count(t->h, m, t->cut.first[c + 1],
                                   &t->cut_count[c])) != DLB_OK)
            return s;
    if ((s = t->api->act_count(t->h, m, 0, &t->per_image)) != DLB_OK)
        return s;
    t->api->state_count(t->h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL, &t->state_n);
    if (!(t->state = malloc((t->state_n ? t->state_n : 1) * sizeof *t->state)))
        return DLB_ERR_NOMEM;
    for (int r = 0; r < t->S; r++) {
        struct sw *w = &t->w[r];
        w->t = t;
        w->index = r;
        if (!(w->ops = malloc(2 * (size_t)t->M * sizeof *w->ops)))
            return DLB_ERR_NOMEM;
        mp_schedule_ops(t->s.schedule, r, t->S, t->M, w->ops);
    }
    for (int r = 0; r < t->S; r++) {
        if (pthread_create(&t->w[r].tid, NULL, stage_main, &t->w[r]) != 0) {
            t->h->log(t->h, DLB_LOG_ERROR, "cannot start the thread of stage "
                      "%d of %d", r, t->S);
            return DLB_ERR_RUNTIME; /* fini sends the others home */
        }
        t->w[r].have_thread = 1;
    }
    dlb_wake_go(&t->wake);
    pthread_barrier_wait(&t->bar);
    for (int r = 0; r < t->S; r++)
        if (t->w[r].status != DLB_OK)
            return t->w[r].status;
    t->version = t->api->weights_version(t->h, m) - 1; /* sync at once */
    t->fig.stages = t->S;
    t->fig.micro = t->M;
    memcpy(t->fig.first, t->cut.first, sizeof t->fig.first);
    return DLB_OK;
}

/* Every stage's layers back into the configuration's model. */
static dlb_status hand_back(struct mp_threads *t, struct dlb_model *m)
{
    dlb_status s = DLB_OK;
    for (int r = 0; r < t->S && s == DLB_OK; r++)
        s = t->api->state_io(t->h, m, t->cut.first[r], t->cut.first[r + 1],
                             DLB_STATE_WEIGHTS | DLB_STATE_STATS,
                             t->w[r].handback, t->w[r].handback_n, 1);
    t->version = t->api->weights_version(t->h, m);
    return s;
}

static dlb_status th_step(void *eng, struct dlb_model *m,
                          const struct dlb_batch *batch)
{
    struct mp_threads *t = eng;
    dlb_status s = DLB_OK;
    double t0 = mp_now();
    if (!t->started)
        t->start_status = start(t, m);
    if (t->start_status != DLB_OK)
        return t->start_status;
    if (t->model != m) {
        t->h->log(t->h, DLB_LOG_ERROR, "the model changed between steps");
        return DLB_ERR_INTERNAL;
    }
    if (batch->n < (uint32_t)t->M) {
        t->h->log(t->h, DLB_LOG_ERROR, "batch of %u images for %d "
                  "micro-batches: each needs at least one", batch->n, t->M);
        return DLB_ERR_INPUT;
    }
    uint32_t most = (batch->n + (uint32_t)t->M - 1) / (uint32_t)t->M;
    if (most > t->cap && (s = grow_slots(t, most)) != DLB_OK)
        return s;
    for (int k = 0; k <= t->M; k++)
        t->lo[k] = (uint32_t)((uint64_t)batch->n * (uint64_t)k / (uint64_t)t->M);
    /* Weights set from outside: the stages copy them, momentum included,
     * and the dropout stream, so that they draw the model's masks. */
    t->sync = t->api->weights_version(t->h, m) != t->version;
    if (t->sync &&
        (s = t->api->state_io(t->h, m, 0, DLB_NODES_ALL, DLB_STATE_ALL,
                              t->state, t->state_n, 0)))
        return s;
    dlb_extra_copy_rng copy_rng =
        (dlb_extra_copy_rng)t->api->extra(t->h, "model.copy_rng");
    for (int r = 0; t->sync && r < t->S && s == DLB_OK; r++)
        s = copy_rng(t->h, t->w[r].model, m);
    if (s != DLB_OK)
        return s;
    t->batch = batch;
    atomic_store(&t->failed, 0);
    double tp = mp_now();
    dlb_wake_next(&t->wake);
    pthread_barrier_wait(&t->bar); /* every stage done */
    double end = tp;
    for (int r = 0; r < t->S; r++) {
        if (s == DLB_OK)
            s = t->w[r].status;
        end = t->w[r].end > end ? t->w[r].end : end;
    }
    if (s != DLB_OK)
        return s;
    double th = mp_now();
    s = hand_back(t, m);
    t->fig.handback_s += mp_now() - th;
    t->fig.pipe_s += end - tp;
    for (int r = 0; r < t->S; r++)
        t->fig.busy_s[r] += t->w[r].busy;
    t->fig.last_loss = t->w[t->S - 1].loss;
    /* Each cut carries the activations forward and their gradients back. */
    t->fig.sent_bytes = 0;
    for (int c = 0; c + 1 < t->S; c++)
        t->fig.sent_bytes += 2 * (uint64_t)batch->n * t->cut_count[c] *
                             sizeof(float);
    t->fig.steps++;
    t->fig.step_s += mp_now() - t0;
    return s;
}

static dlb_status th_figures(void *eng, struct mp_figures *out)
{
    struct mp_threads *t = eng;
    *out = t->fig;
    out->stages = t->S;
    out->micro = t->M;
    /* The stages wait between steps: their handles are free to read. */
    for (int r = 0; t->started && r < t->S; r++) {
        struct dlb_stage_memory mem = {0, 0};
        if (t->w[r].stage)
            t->api->slice_memory(t->h, t->w[r].stage, &mem);
        out->saved_peak[r] = mem.saved_peak;
    }
    return DLB_OK;
}

static void th_fini(void *eng)
{
    struct mp_threads *t = eng;
    if (!t)
        return;
    dlb_wake_quit(&t->wake);
    for (int r = 0; t->w && r < t->S; r++)
        if (t->w[r].have_thread)
            pthread_join(t->w[r].tid, NULL);
    for (int r = 0; t->w && r < t->S; r++) {
        free(t->w[r].ops);
        free(t->w[r].handback);
    }
    pthread_barrier_destroy(&t->bar);
    dlb_wake_destroy(&t->wake);
    size_t slots = (size_t)(t->S > 1 ? t->S - 1 : 1) * (size_t)t->M;
    for (size_t i = 0; t->fwd && t->bwd && i < slots; i++) {
        free(t->fwd[i]);
        free(t->bwd[i]);
    }
    free(t->fwd);
    free(t->bwd);
    free(t->fwd_gen);
    free(t->bwd_gen);
    free(t->cut_count);
    free(t->lo);
    free(t->state);
    free(t->w);
    free(t);
}

const struct mp_engine mp_engine_threads = {
    .name = "threads",
    .probe = th_probe,
    .init = th_init,
    .step = th_step,
    .figures = th_figures,
    .fini = th_fini,
};
