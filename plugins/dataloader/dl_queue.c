/* The dataloader's engine: a ring of batch slots filled by workers, taken in
 * order by one consumer (dl_queue.h says why the order is deterministic). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* cpu_set_t, pthread_attr_setaffinity_np */
#endif
#include "dl_queue.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };
enum { ORDER_NONE, ORDER_COMPUTING, ORDER_READY };

struct dl_slot {
    float *images;
    int32_t *labels;
    uint64_t seq;        /* the batch it holds or is being filled with */
    uint32_t n;
    int state;
    dlb_status status;
};

/* One epoch's visiting order. Workers near an epoch boundary need two (or,
 * with a tiny data set, more) at once. */
struct dl_order {
    uint32_t *idx;
    uint64_t epoch;
    int state;
};

struct dl_queue {
    const struct dlb_host *h;
    const struct dlb_dataset *ds;
    struct dl_config cfg;
    uint32_t n;               /* images in the data set */
    uint64_t bpe;             /* batches per epoch */
    size_t image_bytes, label_bytes;
    unsigned nslots, norders;
    struct dl_slot *slots;
    struct dl_order *orders;
    pthread_t *threads;
    unsigned started;

    pthread_mutex_t mu;       /* guards everything below and slot/order state */
    pthread_cond_t space;     /* the consumer freed a slot, or stop */
    pthread_cond_t ready;     /* a slot became ready */
    pthread_cond_t order_ready;
    uint64_t next_claim;      /* next batch a worker takes on */
    uint64_t next_take;       /* next batch the consumer takes */
    uint64_t freed;           /* batches below this are released */
    unsigned ready_count;
    int stop;

    struct dl_stats st;       /* the consumer's alone: no lock */
};

uint64_t dl_batches_per_epoch(uint32_t n, uint32_t batch, int drop_last)
{
    if (batch == 0)
        return 0;
    return drop_last ? n / batch : (n + (uint64_t)batch - 1) / batch;
}

unsigned dl_queue_capacity(const struct dl_queue *q)
{
    return q->cfg.workers ? q->nslots - 1 : 0;
}

const struct dl_stats *dl_queue_stats(const struct dl_queue *q)
{
    return &q->st;
}

/* Batch k of the run: epoch, number in the epoch, first position in the
 * epoch's order and size (the last batch of an epoch may be partial). */
static void geometry(const struct dl_queue *q, uint64_t k, uint64_t *epoch,
                     uint64_t *no, uint32_t *pos, uint32_t *count)
{
    *epoch = k / q->bpe;
    *no = k % q->bpe;
    *pos = (uint32_t)(*no * q->cfg.batch);
    *count = q->n - *pos < q->cfg.batch ? q->n - *pos : q->cfg.batch;
}

/* Epoch e's order, computed once by whichever worker needs it first; with
 * q->mu held on entry and return (released while computing, so the
 * consumer is not held up by a shuffle of the whole data set). A slot's
 * older epoch is out of every in-flight batch's reach (norders is sized for
 * the window), so overwriting it is safe. */
static const uint32_t *order_get(struct dl_queue *q, uint64_t e, int locked)
{
    struct dl_order *o = &q->orders[e % q->norders];
    for (;;) {
        if (o->epoch == e && o->state == ORDER_READY)
            return o->idx;
        if (o->epoch == e && o->state == ORDER_COMPUTING) {
            pthread_cond_wait(&q->order_ready, &q->mu);
            continue;
        }
        o->epoch = e;
        o->state = ORDER_COMPUTING;
        if (locked)
            pthread_mutex_unlock(&q->mu);
        q->h->epoch_order(q->h, q->ds, q->cfg.seed, e, q->cfg.shuffle, o->idx);
        if (locked)
            pthread_mutex_lock(&q->mu);
        o->state = ORDER_READY;
        if (locked)
            pthread_cond_broadcast(&q->order_ready);
        return o->idx;
    }
}

static void *worker_main(void *arg)
{
    struct dl_queue *q = arg;
    if (q->cfg.nice > 0) {
        /* Linux: the nice value is per thread, named by its tid. */
        id_t tid = (id_t)syscall(SYS_gettid);
        setpriority(PRIO_PROCESS, tid, getpriority(PRIO_PROCESS, tid) +
                    q->cfg.nice);
    }
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->stop && q->next_claim >= q->freed + q->nslots)
            pthread_cond_wait(&q->space, &q->mu);
        if (q->stop)
            break;
        uint64_t k = q->next_claim++, epoch, no;
        uint32_t pos, count;
        struct dl_slot *s = &q->slots[k % q->nslots];
        s->state = SLOT_FILLING;
        s->seq = k;
        geometry(q, k, &epoch, &no, &pos, &count);
        const uint32_t *idx = order_get(q, epoch, 1);
        pthread_mutex_unlock(&q->mu);
        dlb_status st = q->h->batch_fill(q->h, q->ds, idx + pos, count,
                                         q->cfg.augment, q->cfg.seed, epoch, no,
                                         s->images, s->labels);
        pthread_mutex_lock(&q->mu);
        s->n = count;
        s->status = st;
        s->state = SLOT_READY;
        q->ready_count++;
        pthread_cond_signal(&q->ready); /* one consumer */
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* Batch memory: page-locked with pinned = on, else the host's. */
static void *slot_alloc(const struct dl_queue *q, size_t bytes)
{
    const struct dlb_host *h = q->h;
    void *p = NULL;
    if (!q->cfg.pinned)
        return h->alloc(h, bytes);
    if (DLB_HOST_HAS(h, pinned_free))
        p = h->pinned_alloc(h, bytes);
    if (!p)
        h->log(h, DLB_LOG_ERROR, "pinned = on: no page-locked memory for a "
               "batch buffer of %zu bytes (the backend lends none, or has "
               "none left)", bytes);
    return p;
}

static void slot_free(const struct dl_queue *q, void *p, size_t bytes)
{
    if (q->cfg.pinned)
        q->h->pinned_free(q->h, p, bytes);
    else
        q->h->free(q->h, p, bytes);
}

static dlb_status alloc_parts(struct dl_queue *q)
{
    q->slots = calloc(q->nslots, sizeof *q->slots);
    q->orders = calloc(q->norders, sizeof *q->orders);
    q->threads = calloc(q->cfg.workers ? q->cfg.workers : 1, sizeof *q->threads);
    if (!q->slots || !q->orders || !q->threads)
        return DLB_ERR_NOMEM;
    for (unsigned i = 0; i < q->nslots; i++) {
        q->slots[i].images = slot_alloc(q, q->image_bytes);
        q->slots[i].labels = slot_alloc(q, q->label_bytes);
        if (!q->slots[i].images || !q->slots[i].labels)
            return DLB_ERR_NOMEM;
    }
    for (unsigned i = 0; i < q->norders; i++) {
        q->orders[i].epoch = UINT64_MAX;
        q->orders[i].idx = malloc((size_t)q->n * sizeof *q->orders[i].idx);
        if (!q->orders[i].idx)
            return DLB_ERR_NOMEM;
    }
    return DLB_OK;
}

static dlb_status start_workers(struct dl_queue *q)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return DLB_ERR_RUNTIME;
    if (q->cfg.has_cpus)
        pthread_attr_setaffinity_np(&attr, sizeof q->cfg.cpus, &q->cfg.cpus);
    dlb_status st = DLB_OK;
    for (; q->started < q->cfg.workers; q->started++)
        if (pthread_create(&q->threads[q->started], &attr, worker_main, q) != 0) {
            st = DLB_ERR_RUNTIME;
            break;
        }
    pthread_attr_destroy(&attr);
    return st;
}

dlb_status dl_queue_open(const struct dlb_host *h, const struct dlb_dataset *ds,
                         const struct dl_config *cfg, struct dl_queue **out)
{
    uint32_t n, c, hh, w, classes;
    *out = NULL;
    h->dataset_shape(h, ds, &n, &c, &hh, &w, &classes);
    uint64_t bpe = dl_batches_per_epoch(n, cfg->batch, cfg->drop_last);
    if (bpe == 0 || cfg->prefetch == 0)
        return DLB_ERR_INPUT;
    struct dl_queue *q = calloc(1, sizeof *q);
    if (!q)
        return DLB_ERR_NOMEM;
    q->h = h;
    q->ds = ds;
    q->cfg = *cfg;
    q->n = n;
    q->bpe = bpe;
    q->image_bytes = (size_t)cfg->batch * c * hh * w * sizeof(float);
    q->label_bytes = (size_t)cfg->batch * sizeof(int32_t);
    /* workers x prefetch batches ahead, plus the one the consumer holds. */
    q->nslots = cfg->workers ? cfg->workers * cfg->prefetch + 1 : 1;
    /* In-flight batches lie in a window of nslots consecutive batches,
     * which spans at most this many epochs. */
    q->norders = (unsigned)((q->nslots - 1) / bpe + 2);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->space, NULL);
    pthread_cond_init(&q->ready, NULL);
    pthread_cond_init(&q->order_ready, NULL);
    dlb_status st = alloc_parts(q);
    if (st == DLB_OK)
        st = start_workers(q);
    if (st != DLB_OK) {
        dl_queue_close(q);
        return st;
    }
    *out = q;
    return DLB_OK;
}

/* workers = 0: the baseline's work, done here, through the same services. */
static dlb_status next_inline(struct dl_queue *q, struct dl_slot *s)
{
    uint64_t k = q->next_take++, epoch, no;
    uint32_t pos, count;
    geometry(q, k, &epoch, &no, &pos, &count);
    const uint32_t *idx = order_get(q, epoch, 0);
    s->n = count;
    return q->h->batch_fill(q->h, q->ds, idx + pos, count, q->cfg.augment,
                            q->cfg.seed, epoch, no, s->images, s->labels);
}

static void record(struct dl_queue *q, double t0, double t1, unsigned depth,
                   uint32_t count)
{
    struct dl_stats *st = &q->st;
    if (st->batches == 0)
        st->first_stall_s = t1 - t0;
    if (st->batches == 1)
        st->second_t = t0;
    st->last_t = t0;
    st->batches++;
    st->images += count;
    st->last_stall_s = t1 - t0;
    st->stall_s += t1 - t0;
    st->depth_sum += depth;
    st->depth_hist[depth < DL_DEPTH_BINS - 1 ? depth : DL_DEPTH_BINS - 1]++;
}

dlb_status dl_queue_next(struct dl_queue *q, struct dlb_batch *out)
{
    const struct dlb_host *h = q->h;
    uint32_t n, c, hh, w, classes;
    struct dl_slot *s;
    unsigned depth = 0;
    dlb_status st;
    double t0 = h->now(h);

    if (q->cfg.workers == 0) {
        s = &q->slots[0];
        st = next_inline(q, s);
    } else {
        pthread_mutex_lock(&q->mu);
        /* Calling next releases the batch returned last time. */
        if (q->freed != q->next_take) {
            q->freed = q->next_take;
            pthread_cond_broadcast(&q->space);
        }
        uint64_t k = q->next_take;
        s = &q->slots[k % q->nslots];
        depth = q->ready_count;
        while (!(s->state == SLOT_READY && s->seq == k))
            pthread_cond_wait(&q->ready, &q->mu);
        q->ready_count--;
        q->next_take++;
        st = s->status;
        pthread_mutex_unlock(&q->mu);
    }
    record(q, t0, h->now(h), depth, s->n);
    if (st != DLB_OK)
        return st;
    h->dataset_shape(h, q->ds, &n, &c, &hh, &w, &classes);
    *out = (struct dlb_batch){s->images, s->labels, s->n, c, hh, w};
    return DLB_OK;
}

void dl_queue_close(struct dl_queue *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    pthread_cond_broadcast(&q->space);
    pthread_cond_broadcast(&q->ready);
    pthread_mutex_unlock(&q->mu);
    for (unsigned i = 0; i < q->started; i++)
        pthread_join(q->threads[i], NULL);
    for (unsigned i = 0; q->slots && i < q->nslots; i++) {
        if (q->slots[i].images)
            slot_free(q, q->slots[i].images, q->image_bytes);
        if (q->slots[i].labels)
            slot_free(q, q->slots[i].labels, q->label_bytes);
    }
    for (unsigned i = 0; q->orders && i < q->norders; i++)
        free(q->orders[i].idx);
    free(q->slots);
    free(q->orders);
    free(q->threads);
    pthread_cond_destroy(&q->order_ready);
    pthread_cond_destroy(&q->ready);
    pthread_cond_destroy(&q->space);
    pthread_mutex_destroy(&q->mu);
    free(q);
}
