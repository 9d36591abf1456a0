/* Page-locked memory for batch sources (ABI 1.4): lent from the workload's
 * backend and remembered, so that the core's batch path can tell a pinned
 * batch (uploaded a step ahead on the copy stream, batch_prefetch.c) from
 * a pageable one (copied inside the step). */
#include "child/host.h"

#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"

struct dlb_host_pinned_block {
    const char *p;
    size_t bytes;
};

static struct dlb_host_shared *shared_of(const struct dlb_host *h)
{
    return ((const struct dlb_host_priv *)h)->shared;
}

void dlb_host_set_backend(const struct dlb_host *h, struct dlb_backend *be)
{
    shared_of(h)->backend = be;
}

dlb_status dlb_host_pinned_supported(const struct dlb_host *h, char *reason,
                                     size_t len)
{
    const char *name = h->backend_name ? h->backend_name : "";
    /* Answered from the name: probe runs before the backend opens, and
     * every backend with device memory lends pinned memory (API 1.4). */
    if (dlb_backend_device_memory(name))
        return DLB_OK;
    snprintf(reason, len, "backend %s keeps its buffers in host memory, so "
             "batches reach it without a host-to-device copy: there is no "
             "copy for page-locked memory to speed up (use backend = cuda)",
             *name ? name : "(none)");
    return DLB_ERR_UNSUPPORTED;
}

static int remember(struct dlb_host_shared *s, const void *p, size_t bytes)
{
    if (s->n_pinned == s->cap_pinned) {
        size_t cap = s->cap_pinned ? 2 * s->cap_pinned : 16;
        struct dlb_host_pinned_block *v = realloc(s->pinned, cap * sizeof *v);
        if (!v)
            return 0;
        s->pinned = v;
        s->cap_pinned = cap;
    }
    s->pinned[s->n_pinned++] = (struct dlb_host_pinned_block){p, bytes};
    return 1;
}

void *dlb_host_pinned_alloc(const struct dlb_host *h, size_t bytes)
{
    struct dlb_host_shared *s = shared_of(h);
    const struct dlb_backend_ops *o;
    void *p = NULL;
    if (!s->backend)
        return NULL;
    o = dlb_backend_ops_of(s->backend);
    if (!o->host_alloc_pinned || !o->host_free_pinned ||
        o->host_alloc_pinned(s->backend, bytes, &p) != DLB_OK)
        return NULL;
    if (!remember(s, p, bytes)) {
        o->host_free_pinned(s->backend, p, bytes);
        return NULL;
    }
    return p;
}

void dlb_host_pinned_free(const struct dlb_host *h, void *p, size_t bytes)
{
    struct dlb_host_shared *s = shared_of(h);
    if (!p || !s->backend)
        return;
    for (size_t i = 0; i < s->n_pinned; i++)
        if (s->pinned[i].p == p) {
            s->pinned[i] = s->pinned[--s->n_pinned];
            break;
        }
    if (!s->n_pinned) { /* nothing lent: nothing to keep */
        free(s->pinned);
        s->pinned = NULL;
        s->cap_pinned = 0;
    }
    dlb_backend_ops_of(s->backend)->host_free_pinned(s->backend, p, bytes);
}

int dlb_host_pinned_holds(const struct dlb_host *h, const void *p,
                          size_t bytes)
{
    const struct dlb_host_shared *s = shared_of(h);
    const char *c = p;
    for (size_t i = 0; c && i < s->n_pinned; i++) {
        const struct dlb_host_pinned_block *b = &s->pinned[i];
        if (c >= b->p && bytes <= b->bytes &&
            (size_t)(c - b->p) <= b->bytes - bytes)
            return 1;
    }
    return 0;
}
