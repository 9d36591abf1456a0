#include "host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"

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
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: %s: ", p->who, names[lvl]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static dlb_status host_metric(const struct dlb_host *h, const char *name,
                              const char *unit, double value)
{
    const struct dlb_host_priv *p = priv(h);
    char key[256];
    if (!name || !*name)
        return DLB_ERR_INPUT;
    snprintf(key, sizeof key, "%s%s", p->metric_prefix, name);
    json_t *m = json_pack("{s:f,s:s}", "value", value, "unit", unit ? unit : "");
    if (!m || json_object_set_new(p->shared->metrics, key, m) != 0)
        return DLB_ERR_NOMEM;
    return DLB_OK;
}

static void *host_raw_alloc(const struct dlb_host *h, size_t bytes)
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

static void host_raw_free(const struct dlb_host *h, void *p, size_t bytes)
{
    struct dlb_host_shared *s = priv(h)->shared;
    if (!p)
        return;
    s->sys_bytes -= bytes;
    free(p);
}

/* Workload memory goes through the pool when a plugin provides one: the
 * pool's calls use the pool plugin's own host, so its raw_alloc figures are
 * attributed to it. */
static void *host_alloc(const struct dlb_host *h, size_t bytes)
{
    struct dlb_host_shared *s = priv(h)->shared;
    if (s->pool)
        return s->pool->alloc(s->pool_state, s->pool_host, bytes);
    return host_raw_alloc(h, bytes);
}

static void host_free(const struct dlb_host *h, void *p, size_t bytes)
{
    struct dlb_host_shared *s = priv(h)->shared;
    if (s->pool)
        s->pool->free(s->pool_state, s->pool_host, p, bytes);
    else
        host_raw_free(h, p, bytes);
}

static double host_now(const struct dlb_host *h)
{
    (void)h;
    return dlb_now();
}

void dlb_host_setup(struct dlb_host_priv *h, struct dlb_host_shared *shared,
                    const char *who, uint64_t seed, int quick)
{
    memset(h, 0, sizeof *h);
    h->shared = shared;
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
}
