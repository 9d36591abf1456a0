/* The dataloader plugin: its engine (plugins/dataloader/dl_queue.c) and its
 * hooks (dataloader.c) compiled in, against the core's real host, so the
 * data services are the core's own.
 *
 * Facts a user relies on:
 *  - the batches are the baseline loader's, bit for bit and in order, for
 *    0, 1, 2 and 3 workers and prefetch 1 to 4, across epoch boundaries;
 *  - every sample is visited exactly once per epoch, in the epoch's order,
 *    with drop_last on (the partial batch dropped) and off (delivered);
 *  - the plugin, through the batch-source hooks the training uses (memory
 *    and mmap sources), gives the baseline's batches and records its
 *    figures;
 *  - closing mid-epoch, with workers blocked or busy, neither hangs nor
 *    leaks (run it under ASan to see the latter; an alarm catches a hang);
 *  - pinned = on is refused on ref and cpu with the reason, passes the
 *    probe on cuda (answered without a GPU), and without page-locked
 *    memory to lend the source fails to open instead of falling back. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/augment.h"
#include "dl_queue.h"
#include "child/host.h"
#include "data/batches.h"

#define T_BATCH 64u
#define T_STEPS 40u /* over two epochs of T_N / T_BATCH batches */
#define T_N 1000u
#define T_SEED 1234u

const struct dlb_plugin *dlb_plugin_entry(void);

static uint64_t fnv(uint64_t x, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        x = (x ^ b[i]) * 0x100000001b3ull;
    return x;
}

static uint64_t batch_sum(const struct dlb_batch *b)
{
    size_t per = (size_t)b->c * b->h * b->w;
    uint64_t x = fnv(0xcbf29ce484222325ull, &b->n, sizeof b->n);
    x = fnv(x, b->images, (size_t)b->n * per * sizeof *b->images);
    return fnv(x, b->labels, (size_t)b->n * sizeof *b->labels);
}

/* The baseline's first T_STEPS batches. */
static void baseline_sums(const struct dlb_dataset *d, int augment,
                          uint64_t *sums)
{
    struct dlb_batch_spec spec = {T_BATCH, 1, augment, 1, T_SEED};
    struct dlb_batches *bs = NULL;
    struct dlb_error err = {""};
    struct dlb_batch b;
    CHECK(dlb_batches_open(d, &spec, NULL, &bs, &err) == DLB_OK);
    for (unsigned k = 0; bs && k < T_STEPS; k++) {
        CHECK(dlb_batches_next(bs, &b, &err) == DLB_OK);
        sums[k] = batch_sum(&b);
    }
    dlb_batches_close(bs);
}

static struct dl_config cfg_of(unsigned workers, unsigned prefetch,
                               int augment, int drop_last)
{
    struct dl_config c;
    memset(&c, 0, sizeof c);
    c.workers = workers;
    c.prefetch = prefetch;
    c.batch = T_BATCH;
    c.shuffle = 1;
    c.augment = augment;
    c.drop_last = drop_last;
    c.seed = T_SEED;
    return c;
}

static void test_same_as_baseline(const struct dlb_host *h,
                                  const struct dlb_dataset *d)
{
    for (int augment = 0; augment <= 1; augment++) {
        uint64_t want[T_STEPS];
        baseline_sums(d, augment, want);
        for (unsigned w = 0; w <= 3; w++)
            for (unsigned p = 1; p <= 4; p++) {
                struct dl_config c = cfg_of(w, p, augment, 1);
                struct dl_queue *q = NULL;
                struct dlb_batch b;
                unsigned same = 0;
                CHECK(dl_queue_open(h, d, &c, &q) == DLB_OK);
                for (unsigned k = 0; q && k < T_STEPS; k++)
                    same += dl_queue_next(q, &b) == DLB_OK &&
                            batch_sum(&b) == want[k];
                if (same != T_STEPS)
                    fprintf(stderr, "workers %u prefetch %u augment %d: %u "
                            "of %u batches as the baseline's\n", w, p,
                            augment, same, T_STEPS);
                CHECK(same == T_STEPS);
                dl_queue_close(q);
            }
    }
}

/* A data set whose image i holds i in its first two pixels: without
 * augmentation (mean 0, std 1, so value = byte / 255) the batch says which
 * samples it holds. */
static dlb_status index_dataset(uint32_t n, struct dlb_dataset *d)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    d->c = 1;
    d->h = d->w = 2;
    d->classes = 10;
    d->std = 1.0f;
    d->images = calloc((size_t)n * 4, 1);
    d->labels = malloc(n);
    d->source = malloc(16);
    if (!d->images || !d->labels || !d->source)
        return DLB_ERR_NOMEM;
    strcpy(d->source, "index set");
    for (uint32_t i = 0; i < n; i++) {
        d->images[4 * i] = (uint8_t)(i & 0xff);
        d->images[4 * i + 1] = (uint8_t)(i >> 8);
        d->labels[i] = (uint8_t)(i % 10);
    }
    return DLB_OK;
}

static uint32_t sample_of(const float *px)
{
    return (uint32_t)(px[0] * 255.0f + 0.5f) |
           (uint32_t)(px[1] * 255.0f + 0.5f) << 8;
}

static void test_coverage(const struct dlb_host *h, const struct dlb_dataset *d)
{
    uint32_t *order = malloc(d->n * sizeof *order);
    CHECK(order != NULL);
    for (int drop = 0; drop <= 1 && order; drop++)
        for (unsigned w = 0; w <= 3; w++) {
            struct dl_config c = cfg_of(w, 2, 0, drop);
            struct dl_queue *q = NULL;
            uint32_t full = d->n / T_BATCH, rest = d->n % T_BATCH;
            uint32_t per_epoch = drop ? full * T_BATCH : d->n;
            unsigned bad = 0;
            CHECK(dl_queue_open(h, d, &c, &q) == DLB_OK);
            for (uint64_t e = 0; q && e < 3; e++) {
                dlb_epoch_order(order, d->n, T_SEED, e, 1);
                uint32_t pos = 0;
                for (uint32_t k = 0; k < full + (!drop && rest); k++) {
                    struct dlb_batch b;
                    if (dl_queue_next(q, &b) != DLB_OK) {
                        bad++;
                        break;
                    }
                    bad += b.n != (k < full ? T_BATCH : rest);
                    for (uint32_t i = 0; i < b.n; i++, pos++)
                        bad += sample_of(b.images + 4 * i) != order[pos] ||
                               b.labels[i] != (int32_t)(order[pos] % 10);
                }
                /* The order is a permutation, so matching it position by
                 * position is "each sample exactly once". */
                bad += pos != per_epoch;
            }
            if (bad)
                fprintf(stderr, "coverage: workers %u drop_last %d: %u "
                        "mismatches\n", w, drop, bad);
            CHECK(bad == 0);
            dl_queue_close(q);
        }
    free(order);
}

static void test_bad_batch(const struct dlb_host *h, const struct dlb_dataset *d)
{
    struct dl_config c = cfg_of(2, 2, 0, 1);
    struct dl_queue *q = NULL;
    c.batch = d->n + 1; /* no whole batch in an epoch */
    CHECK(dl_queue_open(h, d, &c, &q) == DLB_ERR_INPUT && q == NULL);
    c.drop_last = 0; /* one partial batch per epoch is fine */
    CHECK(dl_queue_open(h, d, &c, &q) == DLB_OK);
    struct dlb_batch b;
    CHECK(q && dl_queue_next(q, &b) == DLB_OK && b.n == d->n);
    dl_queue_close(q);
}

/* Workers blocked on a full queue, busy filling, or not yet started when
 * close comes: all must stop and be joined. */
static void test_close_mid_epoch(const struct dlb_host *h,
                                 const struct dlb_dataset *d)
{
    for (unsigned round = 0; round < 60; round++) {
        struct dl_config c = cfg_of(1 + round % 3, 1 + round % 4, 1, 1);
        struct dl_queue *q = NULL;
        struct dlb_batch b;
        CHECK(dl_queue_open(h, d, &c, &q) == DLB_OK);
        for (unsigned k = 0; q && k < round % 7; k++)
            CHECK(dl_queue_next(q, &b) == DLB_OK);
        if (round % 2)
            usleep(1000); /* let the queue fill up */
        dl_queue_close(q);
    }
}

static struct dlb_value val_i(int64_t i)
{
    return (struct dlb_value){i, (double)i, ""};
}

/* The plugin as the training uses it: descriptor, init, the batch-source
 * hooks under dlb_batches, figures, fini. */
static void test_plugin(struct dlb_host *h, struct dlb_host_shared *sh,
                        const struct dlb_dataset *d, int mmap_source,
                        int expect_written, int measure_only)
{
    const struct dlb_plugin *p = dlb_plugin_entry();
    struct dlb_value v[9] = {val_i(2), val_i(2), val_i(0), val_i(0), val_i(0),
                             val_i(0), val_i(mmap_source), val_i(0),
                             val_i(5000)};
    struct dlb_params prm = {p->params, v, p->n_params};
    char why[200] = "";
    void *state = NULL;
    uint64_t want[T_STEPS];
    json_object_clear(sh->metrics);
    h->measure_only = measure_only;
    CHECK(p->n_params == 9);
    CHECK(p->probe(h, &prm, why, sizeof why) == DLB_OK);
    CHECK(p->init(h, &prm, &state) == DLB_OK);
    baseline_sums(d, 1, want);

    struct dlb_batch_spec spec = {T_BATCH, 1, 1, 1, T_SEED};
    struct dlb_batch_plugin bp = {p->batch_source, state, h, dlb_host_pinned_holds};
    struct dlb_batches *bs = NULL;
    struct dlb_error err = {""};
    struct dlb_batch b;
    unsigned same = 0;
    CHECK(dlb_batches_open(d, &spec, &bp, &bs, &err) == DLB_OK);
    for (unsigned k = 0; bs && k < T_STEPS; k++)
        same += dlb_batches_next(bs, &b, &err) == DLB_OK &&
                batch_sum(&b) == want[k];
    CHECK(same == T_STEPS);
    CHECK(p->metrics(state, h) == DLB_OK);
    dlb_batches_close(bs);
    p->fini(state);

    json_t *m = sh->metrics;
    CHECK(json_object_get(m, "dataloader.stall_share") != NULL);
    CHECK(json_object_get(m, "dataloader.queue_depth_mean") != NULL);
    json_t *ips = json_object_get(json_object_get(m,
                                  "dataloader.loader_images_per_s"), "value");
    /* The loader-alone figure only where more than speed is wanted: a
     * screening run does without its 5 rounds. */
    CHECK(measure_only ? ips == NULL : ips && json_real_value(ips) > 0);
    h->measure_only = 0;
    if (mmap_source) {
        json_t *wr = json_object_get(json_object_get(m,
                                     "dataloader.cache_written"), "value");
        CHECK(wr && json_real_value(wr) == expect_written);
    }
}

/* pinned = on: refused where the backend keeps its buffers in host
 * memory, and never a silent fallback to pageable memory. */
static void test_pinned(struct dlb_host_priv *hp, const struct dlb_dataset *d)
{
    const struct dlb_plugin *p = dlb_plugin_entry();
    struct dlb_value v[9] = {val_i(2), val_i(2), val_i(1), val_i(0), val_i(0),
                             val_i(0), val_i(0), val_i(0), val_i(0)};
    struct dlb_params prm = {p->params, v, p->n_params};
    const char *host_backends[] = {"cpu", "ref"};
    char why[300];
    void *state = NULL, *src = NULL;
    CHECK(DLB_HOST_HAS(&hp->pub, pinned_free));
    for (int i = 0; i < 2; i++) {
        hp->pub.backend_name = host_backends[i];
        why[0] = '\0';
        CHECK(p->probe(&hp->pub, &prm, why, sizeof why) == DLB_ERR_UNSUPPORTED);
        CHECK(strstr(why, "pinned = on") && strstr(why, host_backends[i]) &&
              strstr(why, "host memory"));
        fprintf(stderr, "  probe on %s: %s\n", host_backends[i], why);
    }
    hp->pub.backend_name = "cuda";
    CHECK(p->probe(&hp->pub, &prm, why, sizeof why) == DLB_OK);
    /* No backend lends page-locked memory here: open fails. */
    struct dlb_batch_spec spec = {T_BATCH, 1, 1, 1, T_SEED};
    CHECK(p->init(&hp->pub, &prm, &state) == DLB_OK);
    CHECK(p->batch_source->open(state, &hp->pub, d, &spec, &src) ==
          DLB_ERR_NOMEM);
    CHECK(src == NULL);
    p->fini(state);
    hp->pub.backend_name = NULL;
    CHECK(hp->pub.pinned_alloc(&hp->pub, 64) == NULL);
}

int main(void)
{
    struct dlb_host_shared shared = {0};
    struct dlb_host_priv hp;
    struct dlb_dataset syn, idx;
    char dir[512];

    alarm(120); /* a hang fails the test instead of stalling the suite */
    check_temp_template(dir, sizeof dir, "dlb-test-dataloader.XXXXXX");
    shared.metrics = json_object();
    dlb_host_setup(&hp, &shared, "dataloader", T_SEED, 0);
    CHECK(DLB_HOST_HAS(&hp.pub, cache_dir));
    if (dlb_dataset_synthetic(T_N, 7, 1, &syn) != DLB_OK ||
        index_dataset(T_N, &idx) != DLB_OK || !mkdtemp(dir)) {
        fprintf(stderr, "test_dataloader: setup failed\n");
        return 1;
    }
    setenv("DLBENCH_CACHE_DIR", dir, 1);

    test_same_as_baseline(&hp.pub, &syn);
    test_coverage(&hp.pub, &idx);
    test_bad_batch(&hp.pub, &idx);
    test_close_mid_epoch(&hp.pub, &syn);
    test_plugin(&hp.pub, &shared, &syn, 0, 0, 0);
    test_plugin(&hp.pub, &shared, &syn, 0, 0, 1);
    test_plugin(&hp.pub, &shared, &syn, 1, 1, 0); /* writes the cache */
    test_plugin(&hp.pub, &shared, &syn, 1, 0, 1); /* maps the one written */
    test_pinned(&hp, &syn);

    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    dlb_dataset_free(&syn);
    dlb_dataset_free(&idx);
    json_decref(shared.metrics);
    return check_exit();
}
