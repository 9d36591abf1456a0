#include "child/host.h"
#include "child/host_api.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "data/augment.h"
#include "stats/measure.h"
#include "data/batches.h"
#include "util/cache_dir.h"

static const struct dlb_host_priv *priv(const struct dlb_host *h)
{
    return (const struct dlb_host_priv *)h;
}

static void host_log(const struct dlb_host *h, enum dlb_log_level lvl,
                     const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    const struct dlb_host_priv *p = priv(h);
    if (lvl == DLB_LOG_DEBUG && !p->shared->verbose)
        return;
    /* a replica's threads may log at once */
    static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
    va_list ap;
    va_start(ap, fmt);
    if (lvl == DLB_LOG_ERROR) {
        va_list again;
        va_copy(again, ap);
        pthread_mutex_lock(&last_lock);
        int n = snprintf(p->shared->last_error, sizeof p->shared->last_error,
                         "%s: ", p->who);
        if (n > 0 && (size_t)n < sizeof p->shared->last_error)
            vsnprintf(p->shared->last_error + n,
                      sizeof p->shared->last_error - (size_t)n, fmt, again);
        pthread_mutex_unlock(&last_lock);
        va_end(again);
    }
    fprintf(stderr, "%s: %s: ", p->who, names[lvl]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *dlb_host_last_error(const struct dlb_host *h)
{
    return h ? priv(h)->shared->last_error : "";
}

static dlb_status host_metric(const struct dlb_host *h, const char *name,
                              const char *unit, double value)
{
    const struct dlb_host_priv *p = priv(h);
    char key[256];
    /* A workload plugin's scores are the configuration's, as the built-in
     * workload's are: the selection and the accuracy verdicts read them. */
    static const char *const quality[] = {"accuracy", "test_loss",
                                          "test_images",
                                          "train_loss_last", NULL};
    int own = 0;
    if (!name || !*name)
        return DLB_ERR_INPUT;
    for (const char *const *q = quality; p->workload && *q; q++)
        own |= !strcmp(name, *q);
    snprintf(key, sizeof key, "%s%s", own ? "" : p->metric_prefix, name);
    json_t *m = json_pack("{s:f,s:s}", "value", value, "unit",
                          unit ? unit : "");
    if (!m || json_object_set_new(p->shared->metrics, key, m) != 0)
        return DLB_ERR_NOMEM;
    return DLB_OK;
}

static void host_quality_work_skipped(const struct dlb_host *h)
{
    priv(h)->shared->quality_work_skipped = 1;
}

/* Host memory, counted. */
static void *host_sys_alloc(const struct dlb_host *h, size_t bytes)
{
    struct dlb_host_shared *s = priv(h)->shared;
    void *p = malloc(bytes ? bytes : 1);
    if (p) {
        s->sys_bytes += bytes;
        if (s->sys_bytes > s->sys_peak)
            s->sys_peak = s->sys_bytes;
    }
    return p;
}

static void host_sys_free(const struct dlb_host *h, void *p, size_t bytes)
{
    struct dlb_host_shared *s = priv(h)->shared;
    if (!p)
        return;
    s->sys_bytes -= bytes;
    free(p);
}

/* "The device allocator under any pool": the GPU's on a GPU
 * configuration (host_device.c), else malloc. */
static void *host_raw_alloc(const struct dlb_host *h, size_t bytes)
{
    if (dlb_host_device_memory(h))
        return dlb_host_device_raw_alloc(h, bytes);
    return host_sys_alloc(h, bytes);
}

static void host_raw_free(const struct dlb_host *h, void *p, size_t bytes)
{
    if (dlb_host_device_memory(h))
        dlb_host_device_raw_free(h, p, bytes);
    else
        host_sys_free(h, p, bytes);
}

/* Workload memory goes through the pool when a plugin provides one: the
 * pool's calls use the pool plugin's own host, so its raw_alloc figures are
 * attributed to it. A pool over device memory serves only the backend's
 * buffers: host memory bypasses it. */
static void *host_alloc(const struct dlb_host *h, size_t bytes)
{
    struct dlb_host_shared *s = priv(h)->shared;
    if (s->pool && !dlb_host_device_memory(h))
        return s->pool->alloc(s->pool_state, s->pool_host, bytes);
    return host_sys_alloc(h, bytes);
}

static void host_free(const struct dlb_host *h, void *p, size_t bytes)
{
    struct dlb_host_shared *s = priv(h)->shared;
    if (s->pool && !dlb_host_device_memory(h))
        s->pool->free(s->pool_state, s->pool_host, p, bytes);
    else
        host_sys_free(h, p, bytes);
}

static double host_now(const struct dlb_host *h)
{
    (void)h;
    return dlb_now();
}

/* ---- data services: thin, so that a plugin's batches come from
 * the very code the baseline loader runs. */

static void host_dataset_shape(const struct dlb_host *h,
                               const struct dlb_dataset *ds, uint32_t *n,
                               uint32_t *c, uint32_t *hh, uint32_t *w,
                               uint32_t *classes)
{
    (void)h;
    *n = ds->n;
    *c = ds->c;
    *hh = ds->h;
    *w = ds->w;
    *classes = ds->classes;
}

static void host_dataset_bytes(const struct dlb_host *h,
                               const struct dlb_dataset *ds,
                               const uint8_t **images, const uint8_t **labels)
{
    (void)h;
    *images = ds->images;
    *labels = ds->labels;
}

/* A view borrows everything (bytes, source name): freeing it frees only
 * the struct. */
static dlb_status host_dataset_view(const struct dlb_host *h,
                                    const struct dlb_dataset *ds,
                                    const uint8_t *images,
                                    const uint8_t *labels,
                                    struct dlb_dataset **view)
{
    (void)h;
    *view = NULL;
    if (!images || !labels)
        return DLB_ERR_INPUT;
    struct dlb_dataset *v = malloc(sizeof *v);
    if (!v)
        return DLB_ERR_NOMEM;
    *v = *ds;
    v->images = (uint8_t *)(uintptr_t)images;
    v->labels = (uint8_t *)(uintptr_t)labels;
    *view = v;
    return DLB_OK;
}

static void host_dataset_view_free(const struct dlb_host *h,
                                   struct dlb_dataset *view)
{
    (void)h;
    free(view);
}

static void host_epoch_order(const struct dlb_host *h,
                             const struct dlb_dataset *ds, uint64_t seed,
                             uint64_t epoch, int shuffle, uint32_t *idx)
{
    (void)h;
    dlb_epoch_order(idx, ds->n, seed, epoch, shuffle);
}

static dlb_status host_batch_fill(const struct dlb_host *h,
                                  const struct dlb_dataset *ds,
                                  const uint32_t *indices, uint32_t n,
                                  int augment, uint64_t seed, uint64_t epoch,
                                  uint64_t batch_no, float *images,
                                  int32_t *labels)
{
    (void)h;
    /* a plugin's worker threads call it: one thread each */
    return dlb_batches_fill(ds, indices, n, augment, seed, epoch, batch_no,
                            images, labels, 0);
}

static dlb_status host_cache_dir(const struct dlb_host *h, char *buf,
                                 size_t len)
{
    (void)h;
    return dlb_cache_dir(buf, len, NULL);
}

/* ---- backend capabilities: asked of a short-lived handle of the
 * configuration's backend (backend.c). */
static dlb_status host_backend_supports(const struct dlb_host *h,
                                        enum dlb_dtype dtype, char *reason,
                                        size_t len)
{
    return dlb_backend_probe_dtype(h->backend_name, dtype, reason, len);
}

void dlb_host_setup(struct dlb_host_priv *h, struct dlb_host_shared *shared,
                    const char *who, uint64_t seed, int quick)
{
    memset(h, 0, sizeof *h);
    h->shared = shared;
    if (!shared->have_cpus)
        shared->have_cpus =
            sched_getaffinity(0, sizeof shared->cpus, &shared->cpus) == 0;
    snprintf(h->who, sizeof h->who, "%s", who);
    if (strcmp(who, "core") != 0)
        snprintf(h->metric_prefix, sizeof h->metric_prefix, "%s.", who);
    h->pub.struct_size = sizeof h->pub;
    h->pub.abi_minor = DLB_PLUGIN_ABI_MINOR;
    h->pub.log = host_log;
    h->pub.metric = host_metric;
    h->pub.alloc = host_alloc;
    h->pub.free = host_free;
    h->pub.raw_alloc = host_raw_alloc;
    h->pub.raw_free = host_raw_free;
    h->pub.now = host_now;
    h->pub.seed = seed;
    h->pub.quick = quick;
    h->pub.core = h;
    h->pub.dataset_shape = host_dataset_shape;
    h->pub.dataset_bytes = host_dataset_bytes;
    h->pub.dataset_view = host_dataset_view;
    h->pub.dataset_view_free = host_dataset_view_free;
    h->pub.epoch_order = host_epoch_order;
    h->pub.batch_fill = host_batch_fill;
    h->pub.cache_dir = host_cache_dir;
    h->pub.backend_supports = host_backend_supports;
    h->pub.model_api = dlb_host_model_api();
    h->pub.pinned_supported = dlb_host_pinned_supported;
    h->pub.pinned_alloc = dlb_host_pinned_alloc;
    h->pub.pinned_free = dlb_host_pinned_free;
    h->pub.quality_work_skipped = host_quality_work_skipped;
}

int dlb_host_quality_work_skipped(const struct dlb_host *h)
{
    return priv(h)->shared->quality_work_skipped;
}

unsigned dlb_host_take_prepared(const struct dlb_host *h,
                                const struct dlb_host_prepared **out)
{
    struct dlb_host_shared *sh = priv(h)->shared;
    sh->prepared_taken = 1;
    *out = sh->prepared;
    return sh->n_prepared;
}

void dlb_host_set_data(const struct dlb_host *h,
                       const struct dlb_host_data *data)
{
    /* The named models plugins opened live on the workload's backend. */
    if (data != priv(h)->shared->data)
        dlb_model_lend_close_all(&priv(h)->shared->models);
    priv(h)->shared->data = data;
}
