/* The primitive cache: one entry per (operation, shape, element types),
 * created on first use and kept until the backend closes, so that no
 * training step creates a primitive. A chained hash map; a network has a
 * few dozen entries, so it never needs to shrink. */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a over the key's bytes: keys are small and fixed-size. */
static size_t key_hash(const struct dlb_cpu_key *k)
{
    const unsigned char *p = (const unsigned char *)k;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof *k; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return (size_t)h;
}

struct dlb_cpu_prim *dlb_cpu_cache_find(struct dlb_cpu *cpu,
                                        const struct dlb_cpu_key *key)
{
    if (!cpu->n_buckets)
        return NULL;
    struct dlb_cpu_prim *p = cpu->buckets[key_hash(key) % cpu->n_buckets];
    for (; p; p = p->next)
        if (memcmp(&p->key, key, sizeof *key) == 0)
            return p;
    return NULL;
}

struct dlb_cpu_prim *dlb_cpu_prim_new(const struct dlb_cpu_key *key)
{
    struct dlb_cpu_prim *p = calloc(1, sizeof *p);
    if (p)
        p->key = *key;
    return p;
}

static void rehash(struct dlb_cpu *cpu)
{
    size_t n = cpu->n_buckets ? cpu->n_buckets * 4 : 64;
    struct dlb_cpu_prim **b = calloc(n, sizeof *b);
    if (!b)
        return; /* keep the longer chains: still correct */
    for (size_t i = 0; i < cpu->n_buckets; i++) {
        struct dlb_cpu_prim *p = cpu->buckets[i], *next;
        for (; p; p = next) {
            next = p->next;
            size_t h = key_hash(&p->key) % n;
            p->next = b[h];
            b[h] = p;
        }
    }
    free(cpu->buckets);
    cpu->buckets = b;
    cpu->n_buckets = n;
}

void dlb_cpu_cache_insert(struct dlb_cpu *cpu, struct dlb_cpu_prim *p)
{
    if (cpu->n_prims >= cpu->n_buckets)
        rehash(cpu);
    size_t h = key_hash(&p->key) % cpu->n_buckets;
    p->next = cpu->buckets[h];
    cpu->buckets[h] = p;
    cpu->n_prims++;
}

void dlb_cpu_prim_free(struct dlb_cpu_prim *p)
{
    if (!p)
        return;
    for (int i = 0; i < DLB_CPU_PRIMS; i++) {
        if (p->prim[i])
            dnnl_primitive_destroy(p->prim[i]);
        if (p->pd[i])
            dnnl_primitive_desc_destroy(p->pd[i]);
    }
    for (int i = 0; i < DLB_CPU_MEMS; i++)
        if (p->mem[i])
            dnnl_memory_destroy(p->mem[i]);
    free(p);
}

void dlb_cpu_cache_clear(struct dlb_cpu *cpu)
{
    for (size_t i = 0; i < cpu->n_buckets; i++) {
        struct dlb_cpu_prim *p = cpu->buckets[i], *next;
        for (; p; p = next) {
            next = p->next;
            dlb_cpu_prim_free(p);
        }
    }
    free(cpu->buckets);
    cpu->buckets = NULL;
    cpu->n_buckets = cpu->n_prims = 0;
}

dlb_status dlb_cpu_cache_get(struct dlb_backend *be,
                             const struct dlb_cpu_key *key,
                             dlb_cpu_build_fn build, const void *arg,
                             struct dlb_cpu_prim **out)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    struct dlb_cpu_prim *p = dlb_cpu_cache_find(cpu, key);
    dlb_status s;
    *out = NULL;
    if (!p) {
        if (!(p = dlb_cpu_prim_new(key)))
            return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu: out of memory "
                                    "creating a primitive");
        if ((s = build(be, p, arg))) {
            dlb_cpu_prim_free(p);
            return s;
        }
        dlb_cpu_cache_insert(cpu, p);
    }
    *out = p;
    return DLB_OK;
}
