/* The core's side of `struct dlb_host`: what plugins and workloads may call
 * inside a configuration's process. One host per plugin, so that log lines
 * and figures carry the plugin's name. */
#ifndef DLB_CORE_HOST_H
#define DLB_CORE_HOST_H

#include <stdint.h>
#include <jansson.h>
#include <dlbench/plugin.h>

/* State shared by every host of one configuration. */
struct dlb_host_shared {
    json_t *metrics;                          /* { "name": {value, unit} } */
    const struct dlb_allocator_hooks *pool;   /* NULL: system allocator */
    void *pool_state;
    const struct dlb_host *pool_host;
    uint64_t sys_bytes, sys_peak;             /* through raw_alloc */
    int verbose;
};

struct dlb_host_priv {
    struct dlb_host pub;
    struct dlb_host_shared *shared;
    char who[64];                             /* "core" or the plugin's name */
    char metric_prefix[66];                   /* "" for core, "NAME." for plugins */
};

void dlb_host_setup(struct dlb_host_priv *h, struct dlb_host_shared *shared,
                    const char *who, uint64_t seed, int quick);

#endif
