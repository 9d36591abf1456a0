/* dataloader: the batch source that fills batches on worker threads ahead
 * of the training step (PyTorch's DataLoader with num_workers, pin_memory,
 * prefetch_factor), so that the step waits for data only when the workers
 * fall behind.
 *
 * The batches are the baseline's, bit for bit and in the same order,
 * whatever the number of workers: the order and the augmentation draws
 * come from the host's data services (the core's own code), per batch
 * number (dl_queue.h). The figures say what the loader costs and whether
 * it keeps up: loader_images_per_s (the loader alone), stall_share (time
 * the step waited in next, as a share of step time) and the queue depth
 * found at each next.
 *
 * Why the loader-alone figure is measured by this plugin rather than by a
 * workload of its own: a plugin workload sees neither the suite's batch
 * and dataset keys nor the active batch source, so it would need copies of
 * them; the measured source has the very data set, batch and spec the
 * training uses. It is measured when the figures are collected, after the
 * step measurement, not when the source opens: its threads and
 * allocations then preceded the measurement and changed it. With it
 * before, the dataloader suite's loader rows (2 workers, and the loader
 * inside the step) measured 12.4-15.1k samples/s in 8 processes; without
 * it, 13.7-24.2k (median 20.7k), in alternation on the same binary.
 *
 * pinned = on (a GPU backend): the batch buffers come from the host's
 * page-locked memory (plugin ABI 1.4), and the core uploads each batch on
 * the backend's copy stream during the step before, with the figures
 * h2d_* in the configuration's record. The core's copy of a batch is
 * done before it calls next again, so the slots are refilled exactly
 * when they are without it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sched_getaffinity */
#endif
#include <dlbench/plugin.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dl_cache.h"
#include "dl_queue.h"

/* Rounds of the loader-alone measurement; the median is reported. */
#define DL_BENCH_ROUNDS 5
#define DL_QUICK_DIVISOR 10

static const char *const dl_tristate[] = {"auto", "on", "off", NULL};
static const char *const dl_sources[] = {"memory", "mmap", NULL};

enum { P_WORKERS, P_PREFETCH, P_PINNED, P_SHUFFLE, P_AUGMENT, P_DROP_LAST,
       P_SOURCE, P_NICE, P_BENCH_IMAGES, P_COUNT };

static const struct dlb_param_def dl_params[P_COUNT] = {
    [P_WORKERS] = {"workers", DLB_PARAM_INT, "2",
        DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, 0, 64, NULL, "threads",
        "threads filling batches ahead of the step; 0 = fill inside the step"},
    [P_PREFETCH] = {"prefetch", DLB_PARAM_INT, "2",
        DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, 1, 64, NULL, "batches",
        "batches each worker may fill ahead (queue capacity = workers x "
        "prefetch)"},
    [P_PINNED] = {"pinned", DLB_PARAM_BOOL, "off", 0, 0, 0, NULL, NULL,
        "page-locked batch buffers, uploaded on the backend's copy stream "
        "one step ahead, beside the step before (backend cuda only: ref "
        "and cpu have no host-to-device copy to speed up)"},
    [P_SHUFFLE] = {"shuffle", DLB_PARAM_ENUM, "auto", 0, 0, 0, dl_tristate,
        NULL, "seeded shuffle of each epoch; auto: as the workload asks "
        "(cnn: on, as the baseline)"},
    [P_AUGMENT] = {"augment", DLB_PARAM_ENUM, "auto", 0, 0, 0, dl_tristate,
        NULL, "random flip and crop (pad 2) per image; auto: as the workload "
        "asks (cnn: on)"},
    [P_DROP_LAST] = {"drop_last", DLB_PARAM_ENUM, "auto", 0, 0, 0, dl_tristate,
        NULL, "drop each epoch's partial last batch; auto: as the workload "
        "asks (cnn: on, as the baseline)"},
    [P_SOURCE] = {"source", DLB_PARAM_ENUM, "memory", 0, 0, 0, dl_sources,
        NULL, "memory: the decoded data set in memory; mmap: a decompressed "
        "cache file of it in the dlbench cache directory, mapped read-only"},
    [P_NICE] = {"nice", DLB_PARAM_INT, "0",
        DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, 0, 19, NULL, NULL,
        "added to the workers' nice value, so that they yield to the step's "
        "threads (0 = same priority)"},
    [P_BENCH_IMAGES] = {"bench_images", DLB_PARAM_INT, "100000",
        DLB_PARAM_HAS_MIN | DLB_PARAM_NO_SWEEP, 0, 0, NULL, "images",
        "images per round of the loader-alone measurement after the step "
        "measurement (5 rounds; a tenth under --quick; skipped under "
        "measure_only, as in halving's screening rounds); 0 = skip it"},
};

struct dl_state {
    const struct dlb_host *h;
    unsigned workers, prefetch;
    int shuffle, augment, drop_last; /* -1 auto, else 0/1 */
    int mmap_source, nice, pinned;
    int64_t bench_images;
    cpu_set_t cpus;
    int has_cpus;
    /* Figures: the first source opened is the one the harness measures. */
    struct dl_source *first;
    struct dl_stats first_stats;
    unsigned first_capacity;
    int have_first;
    double bench_ips;
    int bench_done, cache_written;
};

struct dl_source {
    struct dl_state *state;
    const struct dlb_host *h;
    struct dl_queue *q;
    const struct dlb_dataset *ds; /* what q reads, and its settings */
    struct dl_config cfg;
    struct dl_cache cache;
    struct dlb_dataset *view; /* the mapped bytes, for source = mmap */
};

static int tristate(const struct dlb_value *v)
{
    return v->i == 0 ? -1 : v->i == 1;
}

static dlb_status dl_probe(const struct dlb_host *h, const struct dlb_params *p,
                           char *reason, size_t len)
{
    if (!p || p->count < P_COUNT)
        return DLB_ERR_INTERNAL;
    if (!DLB_HOST_HAS(h, cache_dir)) {
        snprintf(reason, len, "dataloader: this dlbench has no data services "
                 "(plugin ABI 1.1); update dlbench");
        return DLB_ERR_UNSUPPORTED;
    }
    if (!p->values[P_PINNED].i)
        return DLB_OK;
    if (!DLB_HOST_HAS(h, pinned_free)) {
        snprintf(reason, len, "dataloader: pinned = on: this dlbench lends "
                 "no page-locked memory (plugin ABI 1.4); update dlbench");
        return DLB_ERR_UNSUPPORTED;
    }
    char why[384] = "";
    if (h->pinned_supported(h, why, sizeof why) != DLB_OK) {
        snprintf(reason, len, "dataloader: pinned = on: %s", why);
        return DLB_ERR_UNSUPPORTED;
    }
    return DLB_OK;
}

static dlb_status dl_init(const struct dlb_host *h, const struct dlb_params *p,
                          void **state)
{
    if (!p || p->count < P_COUNT)
        return DLB_ERR_INTERNAL;
    struct dl_state *s = calloc(1, sizeof *s);
    if (!s)
        return DLB_ERR_NOMEM;
    s->h = h;
    s->workers = (unsigned)p->values[P_WORKERS].i;
    s->prefetch = (unsigned)p->values[P_PREFETCH].i;
    s->shuffle = tristate(&p->values[P_SHUFFLE]);
    s->augment = tristate(&p->values[P_AUGMENT]);
    s->drop_last = tristate(&p->values[P_DROP_LAST]);
    s->mmap_source = p->values[P_SOURCE].i == 1;
    s->nice = (int)p->values[P_NICE].i;
    s->pinned = p->values[P_PINNED].i != 0;
    s->bench_images = p->values[P_BENCH_IMAGES].i;
    if (h->quick)
        s->bench_images /= DL_QUICK_DIVISOR;
    /* init runs before the workload opens its backend, whose thread pool
     * pins this thread to one core: take the process's CPUs now, for the
     * workers to spread over. */
    s->has_cpus = sched_getaffinity(0, sizeof s->cpus, &s->cpus) == 0;
    *state = s;
    return DLB_OK;
}

static void dl_fini(void *state)
{
    free(state);
}

static struct dl_config config_of(const struct dl_state *s,
                                  const struct dlb_batch_spec *spec)
{
    struct dl_config c;
    memset(&c, 0, sizeof c);
    c.workers = s->workers;
    c.prefetch = s->prefetch;
    c.batch = spec->batch;
    c.shuffle = s->shuffle < 0 ? spec->shuffle != 0 : s->shuffle;
    c.augment = s->augment < 0 ? spec->augment != 0 : s->augment;
    c.drop_last = s->drop_last < 0 ? spec->drop_last != 0 : s->drop_last;
    c.seed = spec->seed;
    c.cpus = s->cpus;
    c.has_cpus = s->has_cpus;
    c.nice = s->nice;
    c.pinned = s->pinned;
    return c;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The loader alone: images per second the configured pipeline delivers to
 * a consumer that does nothing, from its first batch (threads started) to
 * its last; the median of DL_BENCH_ROUNDS rounds. */
static dlb_status bench(struct dl_state *s, const struct dlb_dataset *ds,
                        const struct dl_config *cfg)
{
    const struct dlb_host *h = s->h;
    double ips[DL_BENCH_ROUNDS];
    for (int r = 0; r < DL_BENCH_ROUNDS; r++) {
        struct dl_queue *q;
        struct dlb_batch b;
        dlb_status st = dl_queue_open(h, ds, cfg, &q);
        if (st != DLB_OK)
            return st;
        uint64_t images = 0, taken = 0;
        double t0 = 0;
        /* The first batch starts the clock: thread start-up is not
         * throughput. */
        while (st == DLB_OK && images < (uint64_t)s->bench_images) {
            st = dl_queue_next(q, &b);
            if (st == DLB_OK && taken++ == 0)
                t0 = h->now(h);
            else if (st == DLB_OK)
                images += b.n;
        }
        double dt = h->now(h) - t0;
        dl_queue_close(q);
        if (st != DLB_OK)
            return st;
        ips[r] = dt > 0 ? (double)images / dt : 0;
    }
    qsort(ips, DL_BENCH_ROUNDS, sizeof ips[0], cmp_double);
    s->bench_ips = ips[DL_BENCH_ROUNDS / 2];
    h->log(h, DLB_LOG_DEBUG, "loader alone: %.0f images/s (median of %d, "
           "%u workers, prefetch %u)", s->bench_ips, DL_BENCH_ROUNDS,
           cfg->workers, cfg->prefetch);
    return DLB_OK;
}

static dlb_status dl_open(void *state, const struct dlb_host *h,
                          const struct dlb_dataset *data,
                          const struct dlb_batch_spec *spec, void **out)
{
    struct dl_state *s = state;
    struct dl_config cfg = config_of(s, spec);
    const struct dlb_dataset *ds = data;
    dlb_status st;
    *out = NULL;
    struct dl_source *src = calloc(1, sizeof *src);
    if (!src)
        return DLB_ERR_NOMEM;
    src->state = s;
    src->h = h;
    if (s->mmap_source) {
        st = dl_cache_open(h, data, &src->cache);
        if (st == DLB_OK)
            st = h->dataset_view(h, data, src->cache.images, src->cache.labels,
                                 &src->view);
        if (st != DLB_OK)
            goto fail;
        s->cache_written |= src->cache.written;
        ds = src->view;
    }
    src->ds = ds;
    src->cfg = cfg;
    if ((st = dl_queue_open(h, ds, &cfg, &src->q)) != DLB_OK) {
        if (st == DLB_ERR_INPUT)
            h->log(h, DLB_LOG_ERROR, "batch %u does not fit the data set",
                   cfg.batch);
        goto fail;
    }
    if (!s->first && !s->have_first) {
        s->first = src;
        s->first_capacity = dl_queue_capacity(src->q);
    }
    *out = src;
    return DLB_OK;
fail:
    if (src->view)
        h->dataset_view_free(h, src->view);
    dl_cache_close(&src->cache);
    free(src);
    return st;
}

/* The loader-alone figure, once per configuration, on the first source
 * (the measured one), after the step measurement: when the figures are
 * collected, or when that source closes if that comes first. Not under
 * measure_only: the figure explains the step time but does not rank the
 * configuration, and its 5 rounds cost a screening run of halving more
 * than its own measuring (0.25-0.7 s against 0.3 s). */
static void bench_after(struct dl_state *s, const struct dl_source *src)
{
    const struct dlb_host *h = s->h;
    int speed_only = DLB_HOST_HAS(h, measure_only) && h->measure_only;
    if (s->bench_done || s->bench_images <= 0 || speed_only)
        return;
    s->bench_done = 1; /* tried: a failure is not repeated at close */
    dlb_status st = bench(s, src->ds, &src->cfg);
    if (st != DLB_OK)
        h->log(h, DLB_LOG_WARN, "the loader-alone measurement failed "
               "(status %d): no loader_images_per_s", (int)st);
}

static dlb_status dl_next(void *source, struct dlb_batch *out)
{
    struct dl_source *src = source;
    return dl_queue_next(src->q, out);
}

static void dl_close(void *source)
{
    struct dl_source *src = source;
    if (!src)
        return;
    struct dl_state *s = src->state;
    if (s->first == src) {
        bench_after(s, src);
        s->first_stats = *dl_queue_stats(src->q);
        s->have_first = 1;
        s->first = NULL;
    }
    dl_queue_close(src->q); /* before the bytes it reads go */
    if (src->view)
        src->h->dataset_view_free(src->h, src->view);
    dl_cache_close(&src->cache);
    free(src);
}

static dlb_status dl_metrics(void *state, const struct dlb_host *h)
{
    struct dl_state *s = state;
    if (s->first)
        bench_after(s, s->first);
    const struct dl_stats *st = s->first ? dl_queue_stats(s->first->q)
                                         : s->have_first ? &s->first_stats : NULL;
    if (s->bench_ips > 0)
        h->metric(h, "loader_images_per_s", "images/s", s->bench_ips);
    if (s->mmap_source)
        h->metric(h, "cache_written", "", s->cache_written);
    if (!st || st->batches == 0)
        return DLB_OK;
    /* Step time is the interval between calls of next, from the second
     * call: the first waits for the pipeline's start-up (first_wait_s),
     * which no prefetching can hide, and the latest call's wait belongs to
     * a step that has not ended. */
    double span = st->last_t - st->second_t;
    if (st->batches >= 3 && span > 0)
        h->metric(h, "stall_share", "%", 100.0 * (st->stall_s -
                  st->first_stall_s - st->last_stall_s) / span);
    h->metric(h, "stall_s", "s", st->stall_s);
    h->metric(h, "first_wait_s", "s", st->first_stall_s);
    h->metric(h, "batches", "batches", (double)st->batches);
    h->metric(h, "queue_capacity", "batches", s->first_capacity);
    h->metric(h, "queue_depth_mean", "batches",
              (double)st->depth_sum / (double)st->batches);
    /* The histogram as shares of next() calls, up to the capacity. */
    for (unsigned d = 0; d < DL_DEPTH_BINS && d <= s->first_capacity; d++) {
        char name[32];
        if (d == DL_DEPTH_BINS - 1)
            snprintf(name, sizeof name, "queue_depth_%u_plus", d);
        else
            snprintf(name, sizeof name, "queue_depth_%u", d);
        h->metric(h, name, "%", 100.0 * (double)st->depth_hist[d] /
                  (double)st->batches);
    }
    return DLB_OK;
}

static const struct dlb_batch_source_hooks dl_batch_source = {
    .open = dl_open,
    .next = dl_next,
    .close = dl_close,
};

static const struct dlb_plugin dataloader_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "dataloader",
    .version = "1.0",
    .summary = "asynchronous data loader: worker threads fill batches ahead "
               "of the step",
    .params = dl_params,
    .n_params = P_COUNT,
    .probe = dl_probe,
    .init = dl_init,
    .fini = dl_fini,
    .batch_source = &dl_batch_source,
    .metrics = dl_metrics,
};

DLB_PLUGIN_DEFINE(dataloader_plugin)
