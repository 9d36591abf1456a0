/* Device memory of a configuration (host.h): the raw device allocator a
 * pool sits over, the pool's blocks for the backend's buffers, and the
 * device record kept for the configuration's record. */
#include "child/host.h"

#include <stdio.h>

#include "backend/backend.h"

static struct dlb_host_shared *shared_of(const struct dlb_host *h)
{
    return ((const struct dlb_host_priv *)h)->shared;
}

int dlb_host_device_memory(const struct dlb_host *h)
{
    return h->backend_name && dlb_backend_device_memory(h->backend_name);
}

/* Device 0: the workload opens its backend on it (dlb_backend_config). */
void *dlb_host_device_raw_alloc(const struct dlb_host *h, size_t bytes)
{
    struct dlb_host_shared *s = shared_of(h);
    char why[256] = "";
    void *p = NULL;
    dlb_status st = dlb_backend_raw_alloc(h->backend_name, 0, bytes, &p, why,
                                          sizeof why);
    if (st == DLB_ERR_UNSUPPORTED && !s->device_why[0])
        snprintf(s->device_why, sizeof s->device_why, "%s", why);
    else if (st != DLB_OK && st != DLB_ERR_NOMEM)
        h->log(h, DLB_LOG_ERROR, "device memory: %s", why);
    return st == DLB_OK ? p : NULL;
}

void dlb_host_device_raw_free(const struct dlb_host *h, void *p, size_t bytes)
{
    if (p)
        dlb_backend_raw_free(h->backend_name, 0, p, bytes);
}

int dlb_host_device_pool(const struct dlb_host *h)
{
    return shared_of(h)->pool && dlb_host_device_memory(h);
}

void *dlb_host_pool_alloc(const struct dlb_host *h, size_t bytes)
{
    struct dlb_host_shared *s = shared_of(h);
    return s->pool->alloc(s->pool_state, s->pool_host, bytes);
}

void dlb_host_pool_free(const struct dlb_host *h, void *p, size_t bytes)
{
    struct dlb_host_shared *s = shared_of(h);
    s->pool->free(s->pool_state, s->pool_host, p, bytes);
}

void dlb_host_set_device(const struct dlb_host *h, json_t *device)
{
    struct dlb_host_shared *s = shared_of(h);
    json_decref(s->device);
    s->device = device;
}
