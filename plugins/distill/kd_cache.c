/* An open-addressing table from image hashes to data set indices, beside
 * the logits array. */
#include "kd_cache.h"

#include <stdlib.h>
#include <string.h>

struct kd_cache {
    uint32_t n, classes;
    size_t per;
    float *logits;        /* n x classes, by data set index */
    uint64_t *keys;       /* per slot: the image's hash */
    uint32_t *slots;      /* per slot: index + 1, 0 = empty */
    size_t n_slots;       /* a power of two, at least 2n: short probes */
};

/* FNV-1a over the floats' 32-bit patterns, with a final mix so that the
 * low bits, which pick the slot, depend on every word. */
static uint64_t image_hash(const float *x, size_t per)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < per; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        h = (h ^ u) * 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

struct kd_cache *kd_cache_create(uint32_t n, uint32_t classes, size_t per)
{
    struct kd_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n = n;
    c->classes = classes;
    c->per = per;
    c->n_slots = 16;
    while (c->n_slots < 2 * (size_t)n)
        c->n_slots *= 2;
    c->logits = malloc((size_t)n * classes * sizeof *c->logits);
    c->keys = malloc(c->n_slots * sizeof *c->keys);
    c->slots = calloc(c->n_slots, sizeof *c->slots);
    if (!c->logits || !c->keys || !c->slots) {
        kd_cache_free(c);
        return NULL;
    }
    return c;
}

void kd_cache_free(struct kd_cache *c)
{
    if (!c)
        return;
    free(c->logits);
    free(c->keys);
    free(c->slots);
    free(c);
}

void kd_cache_put(struct kd_cache *c, uint32_t index, const float *image,
                  const float *logits)
{
    uint64_t h = image_hash(image, c->per);
    size_t mask = c->n_slots - 1, i = (size_t)h & mask;
    if (index >= c->n)
        return;
    memcpy(c->logits + (size_t)index * c->classes, logits,
           c->classes * sizeof *logits);
    /* One slot per hash: a duplicate image keeps the first index (equal
     * images, equal logits); a different image with the same 64-bit hash
     * is not stored, so find() misses it and the caller computes it:
     * slower for that image, never wrong. */
    while (c->slots[i] && c->keys[i] != h)
        i = (i + 1) & mask;
    if (c->slots[i])
        return;
    c->keys[i] = h;
    c->slots[i] = index + 1;
}

const float *kd_cache_find(const struct kd_cache *c, const float *image,
                           kd_image_fn load, void *ctx, float *scratch)
{
    uint64_t h = image_hash(image, c->per);
    size_t mask = c->n_slots - 1, i = (size_t)h & mask;
    while (c->slots[i] && c->keys[i] != h)
        i = (i + 1) & mask;
    if (!c->slots[i])
        return NULL;
    uint32_t index = c->slots[i] - 1;
    if (load(ctx, index, scratch) != 0 ||
        memcmp(scratch, image, c->per * sizeof *image) != 0)
        return NULL;
    return c->logits + (size_t)index * c->classes;
}

size_t kd_cache_bytes(const struct kd_cache *c)
{
    return (size_t)c->n * c->classes * sizeof *c->logits +
           c->n_slots * (sizeof *c->keys + sizeof *c->slots);
}
