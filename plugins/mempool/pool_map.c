#include "pool_map.h"

#include <stdint.h>
#include <stdlib.h>

/* Block addresses share their low bits (multiples of 512 from a segment
 * base): a multiplicative hash spreads them over the high bits we keep. */
static size_t slot_of(const struct dlb_pool_map *m, const void *key)
{
    uint64_t h = (uint64_t)(uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32) & (m->cap - 1);
}

static dlb_status grow(struct dlb_pool_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 256;
    struct dlb_pool_slot *old = m->slots;
    size_t old_cap = m->cap;
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->slots) {
        m->slots = old;
        return DLB_ERR_NOMEM;
    }
    m->cap = cap;
    m->n = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key)
            dlb_pool_map_put(m, old[i].key, old[i].val);
    free(old);
    return DLB_OK;
}

dlb_status dlb_pool_map_put(struct dlb_pool_map *m, const void *key, void *val)
{
    /* Half full at most: probes stay short. */
    if ((m->n + 1) * 2 > m->cap && grow(m) != DLB_OK)
        return DLB_ERR_NOMEM;
    size_t i = slot_of(m, key);
    while (m->slots[i].key && m->slots[i].key != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->slots[i].key)
        m->n++;
    m->slots[i].key = key;
    m->slots[i].val = val;
    return DLB_OK;
}

void *dlb_pool_map_get(const struct dlb_pool_map *m, const void *key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = slot_of(m, key); m->slots[i].key; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].key == key)
            return m->slots[i].val;
    return NULL;
}

void *dlb_pool_map_take(struct dlb_pool_map *m, const void *key)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1, i = slot_of(m, key);
    while (m->slots[i].key && m->slots[i].key != key)
        i = (i + 1) & mask;
    if (!m->slots[i].key)
        return NULL;
    void *val = m->slots[i].val;
    /* Backward shift: move later entries of the probe run into the hole
     * when their home slot is not between the hole and them. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
        size_t home = slot_of(m, m->slots[j].key);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].key = NULL;
    m->slots[hole].val = NULL;
    m->n--;
    return val;
}

void dlb_pool_map_free(struct dlb_pool_map *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}
