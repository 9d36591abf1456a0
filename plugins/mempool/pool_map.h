/* Live pointer -> block lookup for the pool: open addressing with linear
 * probing and backward-shift deletion, so there are no tombstones to make
 * lookups slow down over a long run. */
#ifndef DLB_MEMPOOL_POOL_MAP_H
#define DLB_MEMPOOL_POOL_MAP_H

#include <stddef.h>

#include <dlbench/status.h>

struct dlb_pool_slot {
    const void *key;
    void *val;
};

struct dlb_pool_map {
    struct dlb_pool_slot *slots;
    size_t cap, n; /* cap is a power of two, 0 before the first put */
};

dlb_status dlb_pool_map_put(struct dlb_pool_map *m, const void *key, void *val);
void *dlb_pool_map_get(const struct dlb_pool_map *m, const void *key);
/* Removes and returns the value, NULL when absent. */
void *dlb_pool_map_take(struct dlb_pool_map *m, const void *key);
void dlb_pool_map_free(struct dlb_pool_map *m);

#endif
