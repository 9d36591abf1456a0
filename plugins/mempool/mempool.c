/* mempool: a caching memory pool behind the allocator hook point.
 *
 * The allocator itself is pool.c; this file is the plugin around it: the
 * parameters, the segment source (h->raw_alloc: malloc, or cudaMalloc on a
 * cuda configuration, where the pool serves the backend's device buffers
 * on its one stream, stream 0), the mutex that
 * makes it safe for several threads, the release policy, the figures, and
 * the allocation trace recorder (trace.c) that feeds the alloctrace
 * workload. */
#include <dlbench/plugin.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "trace.h"

static const char *const mp_modes[] = {"caching", "fixed", NULL};
static const char *const mp_releases[] = {"never", "after_run", "after_step",
                                           "on_miss", NULL};
enum { MP_NEVER, MP_AFTER_RUN, MP_AFTER_STEP, MP_ON_MISS };

enum { MP_MODE, MP_RELEASE, MP_ARENA, MP_MAX_SPLIT, MP_LARGE_ROUND, MP_LOCK,
       MP_TRACE_OUT, MP_TRACE_STEP, MP_N_PARAMS };

static const struct dlb_param_def mp_params[MP_N_PARAMS] = {
    [MP_MODE] = {
        .name = "mode", .type = DLB_PARAM_ENUM, .def = "caching",
        .choices = mp_modes,
        .help = "caching: grow by segments on demand; fixed: carve one "
                "arena_size arena taken before the run, never grow (oom past it)",
    },
    [MP_RELEASE] = {
        .name = "release", .type = DLB_PARAM_ENUM, .def = "never",
        .choices = mp_releases,
        .help = "when wholly free cached segments go back to the system: "
                "never (at exit), after_run (when measuring ends), after_step, "
                "on_miss (before the pool grows)",
    },
    [MP_ARENA] = {
        .name = "arena_size", .type = DLB_PARAM_SIZE, .def = "1G",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 4096,
        .max = 1099511627776.0, .unit = "bytes",
        .help = "mode=fixed: the arena every request is carved from",
    },
    [MP_MAX_SPLIT] = {
        .name = "max_split_size", .type = DLB_PARAM_SIZE, .def = "0",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 0,
        .max = 1099511627776.0, .unit = "bytes",
        .help = "mode=caching: cached blocks this large are never split, nor "
                "given to smaller requests (limits fragmentation); 0: no limit",
    },
    [MP_LARGE_ROUND] = {
        .name = "large_round", .type = DLB_PARAM_SIZE, .def = "2M",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 512,
        .max = 1073741824.0, .unit = "bytes",
        .help = "requests above 1 MiB get a segment of their size rounded up "
                "to this (2M: cudaMalloc's granularity)",
    },
    [MP_LOCK] = {
        .name = "lock", .type = DLB_PARAM_BOOL, .def = "on",
        .help = "serialise calls with a mutex (off only to measure its cost: "
                "unsafe once several threads allocate)",
    },
    [MP_TRACE_OUT] = {
        .name = "trace_out", .type = DLB_PARAM_STRING, .def = "",
        .flags = DLB_PARAM_NO_SWEEP,
        .help = "write the allocation trace of step trace_step to this file "
                "(replayed by the alloctrace workload); empty: none",
    },
    [MP_TRACE_STEP] = {
        .name = "trace_step", .type = DLB_PARAM_INT, .def = "3",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_NO_SWEEP, .min = 2,
        .unit = "steps",
        .help = "the step trace_out records, counted from 1 with warm-up",
    },
};

struct mp_state {
    const struct dlb_host *h;   /* the segment source's host */
    struct dlb_pool *pool;
    pthread_mutex_t mu;
    int lock, release;
    uint64_t steps, bad_frees, trims, trimmed_bytes;
    double trim_s;
    struct dlb_mp_trace *trace;
};

static void *src_alloc(void *ctx, size_t bytes)
{
    const struct mp_state *s = ctx;
    return s->h->raw_alloc(s->h, bytes);
}

static void src_free(void *ctx, void *p, size_t bytes)
{
    const struct mp_state *s = ctx;
    s->h->raw_free(s->h, p, bytes);
}

static void lock(struct mp_state *s)
{
    if (s->lock)
        pthread_mutex_lock(&s->mu);
}

static void unlock(struct mp_state *s)
{
    if (s->lock)
        pthread_mutex_unlock(&s->mu);
}

static dlb_status mp_init(const struct dlb_host *h, const struct dlb_params *p,
                          void **state)
{
    if (!p || p->count < MP_N_PARAMS)
        return DLB_ERR_INTERNAL;
    struct mp_state *s = calloc(1, sizeof *s);
    if (!s)
        return DLB_ERR_NOMEM;
    s->h = h;
    s->lock = p->values[MP_LOCK].i != 0;
    s->release = (int)p->values[MP_RELEASE].i;
    pthread_mutex_init(&s->mu, NULL);
    struct dlb_pool_config cfg = {
        .mode = p->values[MP_MODE].i == 1 ? DLB_POOL_FIXED : DLB_POOL_CACHING,
        .arena_size = (size_t)p->values[MP_ARENA].i,
        .max_split_size = (size_t)p->values[MP_MAX_SPLIT].i,
        .large_round = (size_t)p->values[MP_LARGE_ROUND].i,
        .trim_on_miss = s->release == MP_ON_MISS,
    };
    struct dlb_pool_source src = {src_alloc, src_free, s};
    const char *trace = p->values[MP_TRACE_OUT].s;
    dlb_status st = dlb_pool_create(&cfg, &src, &s->pool);
    if (st == DLB_ERR_NOMEM)
        h->log(h, DLB_LOG_ERROR, "cannot take the %lld-byte arena (arena_size)",
               (long long)cfg.arena_size);
    if (st == DLB_OK && trace && *trace)
        st = dlb_mp_trace_new(trace, (uint64_t)p->values[MP_TRACE_STEP].i,
                              &s->trace);
    if (st != DLB_OK) {
        dlb_pool_destroy(s->pool);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return st;
    }
    *state = s;
    return DLB_OK;
}

static void mp_fini(void *state)
{
    struct mp_state *s = state;
    dlb_pool_destroy(s->pool);
    dlb_mp_trace_delete(s->trace);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static void *mp_alloc(void *state, const struct dlb_host *h, size_t bytes)
{
    struct mp_state *s = state;
    (void)h;
    lock(s);
    void *p = dlb_pool_alloc(s->pool, bytes, 0);
    if (p)
        dlb_mp_trace_alloc(s->trace, p, bytes);
    unlock(s);
    return p;
}

static void mp_free(void *state, const struct dlb_host *h, void *p, size_t bytes)
{
    struct mp_state *s = state;
    if (!p)
        return;
    lock(s);
    dlb_mp_trace_free(s->trace, p, bytes);
    int bad = dlb_pool_free(s->pool, p) != DLB_OK && s->bad_frees++ == 0;
    unlock(s);
    /* A pointer the pool never gave out is a caller's bug: say it once. */
    if (bad)
        h->log(h, DLB_LOG_ERROR, "free of %p (%zu bytes), which the pool did not "
               "allocate: ignored", p, bytes);
}

static void mp_stats(void *state, struct dlb_alloc_stats *out)
{
    struct mp_state *s = state;
    struct dlb_pool_stats st;
    lock(s);
    dlb_pool_stats(s->pool, &st);
    unlock(s);
    *out = (struct dlb_alloc_stats){
        .allocated_bytes = st.allocated_bytes, .allocated_peak = st.allocated_peak,
        .reserved_bytes = st.reserved_bytes, .reserved_peak = st.reserved_peak,
        .active_blocks = st.active_blocks, .system_allocs = st.system_allocs,
        .system_frees = st.system_frees, .cache_hits = st.cache_hits,
        .oom_retries = st.oom_retries};
}

static void trim_timed(struct mp_state *s)
{
    double t0 = s->h->now(s->h);
    lock(s);
    s->trimmed_bytes += dlb_pool_trim(s->pool);
    unlock(s);
    s->trims++;
    s->trim_s += s->h->now(s->h) - t0;
}

static void mp_trim(void *state, const struct dlb_host *h)
{
    (void)h;
    trim_timed(state);
}

static void mp_step_end(void *state, const struct dlb_host *h)
{
    struct mp_state *s = state;
    s->steps++;
    if (s->trace) {
        lock(s);
        dlb_mp_trace_step_end(s->trace, s->steps, h);
        unlock(s);
    }
    if (s->release == MP_AFTER_STEP)
        trim_timed(s);
}

static dlb_status mp_metrics(void *state, const struct dlb_host *h)
{
    struct mp_state *s = state;
    struct dlb_pool_stats st;
    lock(s);
    dlb_pool_stats(s->pool, &st);
    unlock(s);
    double hits = st.cache_hits + st.cache_misses;
    const struct { const char *name, *unit; double v; } f[] = {
        {"allocated_peak", "bytes", (double)st.allocated_peak},
        {"reserved_peak", "bytes", (double)st.reserved_peak},
        {"active_peak", "bytes", (double)st.active_peak},
        {"requested_peak", "bytes", (double)st.requested_peak},
        {"allocated_bytes", "bytes", (double)st.allocated_bytes},
        {"reserved_bytes", "bytes", (double)st.reserved_bytes},
        {"active_bytes", "bytes", (double)st.active_bytes},
        {"active_blocks", "count", (double)st.active_blocks},
        {"fragmentation", "bytes", (double)(st.reserved_bytes - st.allocated_bytes)},
        {"reserved_over_allocated_peak", "x",
         st.allocated_peak ? (double)st.reserved_peak / (double)st.allocated_peak : 0},
        {"system_allocs", "count", (double)st.system_allocs},
        {"system_frees", "count", (double)st.system_frees},
        {"cache_hits", "count", (double)st.cache_hits},
        {"hit_rate", "%", hits > 0 ? 100.0 * (double)st.cache_hits / hits : 0},
        {"splits", "count", (double)st.splits},
        {"merges", "count", (double)st.merges},
        {"oom_retries", "count", (double)st.oom_retries},
        {"oom_failures", "count", (double)st.oom_failures},
        {"trim_time", "s", s->trim_s},
        {"trimmed_bytes", "bytes", (double)s->trimmed_bytes},
        {"bad_frees", "count", (double)s->bad_frees},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        dlb_status r = h->metric(h, f[i].name, f[i].unit, f[i].v);
        if (r != DLB_OK)
            return r;
    }
    /* after_run hands the cache back once measuring is over, so the
     * figures above are the run's and this one is what stayed. */
    if (s->release == MP_AFTER_RUN) {
        trim_timed(s);
        lock(s);
        dlb_pool_stats(s->pool, &st);
        unlock(s);
        return h->metric(h, "reserved_after_release", "bytes",
                         (double)st.reserved_bytes);
    }
    return DLB_OK;
}

static const struct dlb_allocator_hooks mp_allocator = {
    .alloc = mp_alloc,
    .free = mp_free,
    .stats = mp_stats,
    .trim = mp_trim,
    .step_end = mp_step_end,
};

static const struct dlb_plugin mempool_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "mempool",
    .version = "1.0",
    .summary = "caching memory pool: best-fit blocks from cached segments",
    .params = mp_params,
    .n_params = MP_N_PARAMS,
    .init = mp_init,
    .fini = mp_fini,
    .allocator = &mp_allocator,
    .metrics = mp_metrics,
};

DLB_PLUGIN_DEFINE(mempool_plugin)
