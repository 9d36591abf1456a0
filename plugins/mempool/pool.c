/* The caching allocator: segments, blocks, size bins. See pool.h. */
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>

#include "pool_map.h"

/* Size bins over 512-byte units u: u < 32 each get a bin; above, each power
 * of two is cut in 16 (as in TLSF), so a bin's sizes differ by under 7%.
 * Within a bin, free blocks are kept sorted by size, which makes the first
 * fitting block of the first non-empty bin the best fit. */
#define EXACT_BINS 32u
#define SUB_BINS 16u
#define BIN_COUNT (EXACT_BINS + 50u * SUB_BINS)
#define BIN_WORDS ((BIN_COUNT + 63u) / 64u)

struct seg;

struct blk {
    char *ptr;
    size_t size, requested;
    struct blk *prev, *next;   /* address neighbours in the segment */
    struct blk *fprev, *fnext; /* the bin's list, free blocks only */
    struct seg *seg;
    int stream;
    unsigned bin;
    unsigned char allocated;
};

struct seg {
    struct blk *head; /* starts at the segment base; never merged away */
    size_t size;
    int large;
    struct seg *prev, *next;
};

struct bins {
    struct blk *head[BIN_COUNT];
    uint64_t used[BIN_WORDS]; /* bit set: the bin is not empty */
};

struct dlb_pool {
    struct dlb_pool_config cfg;
    struct dlb_pool_source src;
    struct bins bins[2]; /* [0] small pool, [1] large pool (and the arena) */
    struct seg *segs;
    struct blk *spare;   /* recycled block records: no malloc per split */
    struct dlb_pool_map live;
    struct dlb_pool_stats st;
};

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static unsigned bin_of(size_t size)
{
    uint64_t u = size / DLB_POOL_ROUND;
    if (u < EXACT_BINS)
        return (unsigned)u;
    unsigned fl = 63u - (unsigned)__builtin_clzll(u);
    unsigned sl = (unsigned)(u >> (fl - 4u)) & (SUB_BINS - 1u);
    return EXACT_BINS + (fl - 5u) * SUB_BINS + sl;
}

static void bin_insert(struct bins *bs, struct blk *b)
{
    unsigned i = bin_of(b->size);
    struct blk **at = &bs->head[i], *before = NULL;
    while (*at && ((*at)->size < b->size ||
                   ((*at)->size == b->size && (*at)->ptr < b->ptr))) {
        before = *at;
        at = &(*at)->fnext;
    }
    b->bin = i;
    b->fprev = before;
    b->fnext = *at;
    if (*at)
        (*at)->fprev = b;
    *at = b;
    bs->used[i / 64] |= UINT64_C(1) << (i % 64);
}

static void bin_remove(struct bins *bs, struct blk *b)
{
    if (b->fprev)
        b->fprev->fnext = b->fnext;
    else
        bs->head[b->bin] = b->fnext;
    if (b->fnext)
        b->fnext->fprev = b->fprev;
    if (!bs->head[b->bin])
        bs->used[b->bin / 64] &= ~(UINT64_C(1) << (b->bin % 64));
    b->fprev = b->fnext = NULL;
}

static struct bins *bins_of(struct dlb_pool *p, const struct blk *b)
{
    return &p->bins[b->seg->large];
}

/* An arena is one block to begin with: it must split whatever its size. */
static int oversize(const struct dlb_pool *p, size_t size)
{
    return p->cfg.mode == DLB_POOL_CACHING && p->cfg.max_split_size &&
           size >= p->cfg.max_split_size;
}

/* The smallest cached block of `stream` that fits, or NULL. A request
 * below max_split_size never takes an oversize block (it would pin it),
 * and a large request takes one only within DLB_POOL_OVERSIZE_SLACK. */
static struct blk *find_fit(struct dlb_pool *p, struct bins *bs, size_t size,
                            int stream)
{
    unsigned i = bin_of(size);
    for (unsigned w = i / 64; w < BIN_WORDS; w++) {
        uint64_t bits = bs->used[w];
        if (w == i / 64)
            bits &= ~UINT64_C(0) << (i % 64);
        while (bits) {
            unsigned k = w * 64 + (unsigned)__builtin_ctzll(bits);
            bits &= bits - 1;
            for (struct blk *b = bs->head[k]; b; b = b->fnext) {
                if (b->size < size || b->stream != stream)
                    continue;
                if (oversize(p, b->size) &&
                    (size < p->cfg.max_split_size ||
                     b->size - size >= DLB_POOL_OVERSIZE_SLACK))
                    return NULL; /* every later block is larger still */
                return b;
            }
        }
    }
    return NULL;
}

static struct blk *blk_new(struct dlb_pool *p)
{
    struct blk *b = p->spare;
    if (b)
        p->spare = b->next;
    else if (!(b = malloc(sizeof *b)))
        return NULL;
    *b = (struct blk){0};
    return b;
}

static void blk_recycle(struct dlb_pool *p, struct blk *b)
{
    b->next = p->spare;
    p->spare = b;
}

static void bump(uint64_t *cur, uint64_t *peak, uint64_t add)
{
    *cur += add;
    if (*cur > *peak)
        *peak = *cur;
}

/* A fresh segment from the source, as one free block not yet binned. */
static struct blk *seg_new(struct dlb_pool *p, size_t size, int large,
                           int stream)
{
    struct seg *s = malloc(sizeof *s);
    struct blk *b = blk_new(p);
    char *base = s && b ? p->src.alloc(p->src.ctx, size) : NULL;
    if (!base) {
        free(s);
        if (b)
            blk_recycle(p, b);
        return NULL;
    }
    *s = (struct seg){.head = b, .size = size, .large = large, .next = p->segs};
    if (p->segs)
        p->segs->prev = s;
    p->segs = s;
    b->ptr = base;
    b->size = size;
    b->seg = s;
    b->stream = stream;
    p->st.system_allocs++;
    p->st.segments++;
    bump(&p->st.reserved_bytes, &p->st.reserved_peak, size);
    return b;
}

static void seg_release(struct dlb_pool *p, struct seg *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        p->segs = s->next;
    if (s->next)
        s->next->prev = s->prev;
    p->src.free(p->src.ctx, s->head->ptr, s->size);
    p->st.system_frees++;
    p->st.segments--;
    p->st.reserved_bytes -= s->size;
    blk_recycle(p, s->head);
    free(s);
}

/* Small-pool remainders down to one unit are worth keeping; large-pool
 * remainders only above the small limit, so the large pool is not littered
 * with slivers that small requests cannot use. An arena keeps every unit:
 * it cannot grow to make up for waste. */
static int worth_splitting(const struct dlb_pool *p, const struct blk *b,
                           size_t size)
{
    size_t rest = b->size - size;
    if (oversize(p, b->size))
        return 0;
    if (p->cfg.mode == DLB_POOL_FIXED || !b->seg->large)
        return rest >= DLB_POOL_ROUND;
    return rest > DLB_POOL_SMALL_MAX;
}

static void split(struct dlb_pool *p, struct blk *b, size_t size)
{
    struct blk *r = blk_new(p);
    if (!r)
        return; /* hand out the whole block: wasteful, not wrong */
    r->ptr = b->ptr + size;
    r->size = b->size - size;
    r->seg = b->seg;
    r->stream = b->stream;
    r->prev = b;
    r->next = b->next;
    if (b->next)
        b->next->prev = r;
    b->next = r;
    b->size = size;
    bin_insert(bins_of(p, r), r);
    p->st.splits++;
}

/* A new segment for `size`; when the source is exhausted, give the cache
 * back and try once more before failing. Segments never merge, so free
 * ones too small for this request only add to the reserved peak:
 * trim_on_miss gives them back first. */
static struct blk *grow(struct dlb_pool *p, size_t size, int large, int stream)
{
    size_t seg_size = large ? round_up(size, p->cfg.large_round)
                            : DLB_POOL_SMALL_SEGMENT;
    if (p->cfg.trim_on_miss)
        dlb_pool_trim(p);
    struct blk *b = seg_new(p, seg_size, large, stream);
    if (!b && dlb_pool_trim(p) > 0) {
        p->st.oom_retries++;
        b = seg_new(p, seg_size, large, stream);
    }
    return b;
}

void *dlb_pool_alloc(struct dlb_pool *p, size_t bytes, int stream)
{
    p->st.alloc_calls++;
    if (bytes > SIZE_MAX - p->cfg.large_round) {
        p->st.oom_failures++;
        return NULL;
    }
    size_t size = round_up(bytes ? bytes : 1, DLB_POOL_ROUND);
    int large = p->cfg.mode == DLB_POOL_FIXED || size > DLB_POOL_SMALL_MAX;
    struct bins *bs = &p->bins[large];
    struct blk *b = find_fit(p, bs, size, stream);
    if (b) {
        bin_remove(bs, b);
        p->st.cache_hits++;
    } else {
        p->st.cache_misses++;
        if (p->cfg.mode == DLB_POOL_FIXED || !(b = grow(p, size, large, stream))) {
            p->st.oom_failures++;
            return NULL;
        }
    }
    if (dlb_pool_map_put(&p->live, b->ptr, b) != DLB_OK) {
        bin_insert(bs, b); /* not split yet: it goes back as it was */
        p->st.oom_failures++;
        return NULL;
    }
    if (worth_splitting(p, b, size))
        split(p, b, size);
    b->allocated = 1;
    b->requested = bytes;
    bump(&p->st.requested_bytes, &p->st.requested_peak, bytes);
    bump(&p->st.allocated_bytes, &p->st.allocated_peak, b->size);
    bump(&p->st.active_bytes, &p->st.active_peak, b->size);
    p->st.active_blocks++;
    return b->ptr;
}

/* Absorb b's successor into b; neither is in a bin. */
static void absorb_next(struct dlb_pool *p, struct blk *b)
{
    struct blk *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    blk_recycle(p, n);
    p->st.merges++;
}

dlb_status dlb_pool_free(struct dlb_pool *p, void *ptr)
{
    struct blk *b = dlb_pool_map_take(&p->live, ptr);
    if (!b)
        return DLB_ERR_INPUT;
    struct bins *bs = bins_of(p, b);
    p->st.free_calls++;
    p->st.requested_bytes -= b->requested;
    p->st.allocated_bytes -= b->size;
    p->st.active_bytes -= b->size;
    p->st.active_blocks--;
    b->allocated = 0;
    if (b->next && !b->next->allocated) {
        bin_remove(bs, b->next);
        absorb_next(p, b);
    }
    if (b->prev && !b->prev->allocated) {
        b = b->prev;
        bin_remove(bs, b);
        absorb_next(p, b);
    }
    bin_insert(bs, b);
    return DLB_OK;
}

size_t dlb_pool_trim(struct dlb_pool *p)
{
    size_t released = 0;
    if (p->cfg.mode == DLB_POOL_FIXED)
        return 0;
    for (struct seg *s = p->segs, *next; s; s = next) {
        next = s->next;
        struct blk *h = s->head;
        if (h->allocated || h->next)
            continue;
        bin_remove(&p->bins[s->large], h);
        released += s->size;
        seg_release(p, s);
    }
    return released;
}

dlb_status dlb_pool_create(const struct dlb_pool_config *cfg,
                           const struct dlb_pool_source *src,
                           struct dlb_pool **out)
{
    *out = NULL;
    size_t arena = cfg->arena_size / DLB_POOL_ROUND * DLB_POOL_ROUND;
    if (cfg->mode == DLB_POOL_FIXED && arena == 0)
        return DLB_ERR_INPUT;
    struct dlb_pool *p = calloc(1, sizeof *p);
    if (!p)
        return DLB_ERR_NOMEM;
    p->cfg = *cfg;
    if (!p->cfg.large_round)
        p->cfg.large_round = DLB_POOL_LARGE_ROUND;
    p->cfg.large_round = round_up(p->cfg.large_round, DLB_POOL_ROUND);
    p->src = *src;
    if (cfg->mode == DLB_POOL_FIXED) {
        struct blk *b = seg_new(p, arena, 1, 0);
        if (!b) {
            dlb_pool_destroy(p);
            return DLB_ERR_NOMEM;
        }
        bin_insert(&p->bins[1], b);
    }
    *out = p;
    return DLB_OK;
}

void dlb_pool_destroy(struct dlb_pool *p)
{
    if (!p)
        return;
    while (p->segs) {
        struct seg *s = p->segs;
        for (struct blk *b = s->head->next, *n; b; b = n) {
            n = b->next;
            free(b);
        }
        s->head->next = NULL;
        seg_release(p, s);
    }
    while (p->spare) {
        struct blk *b = p->spare;
        p->spare = b->next;
        free(b);
    }
    dlb_pool_map_free(&p->live);
    free(p);
}

void dlb_pool_stats(const struct dlb_pool *p, struct dlb_pool_stats *out)
{
    *out = p->st;
}

size_t dlb_pool_block_size(const struct dlb_pool *p, const void *ptr)
{
    const struct blk *b = dlb_pool_map_get(&p->live, ptr);
    return b ? b->size : 0;
}

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            snprintf(why, len, __VA_ARGS__);                                 \
            return DLB_ERR_INTERNAL;                                         \
        }                                                                    \
    } while (0)

static dlb_status check_bins(const struct dlb_pool *p, uint64_t *n_free,
                             char *why, size_t len)
{
    for (int k = 0; k < 2; k++) {
        const struct bins *bs = &p->bins[k];
        for (unsigned i = 0; i < BIN_COUNT; i++) {
            int used = (bs->used[i / 64] >> (i % 64)) & 1;
            CHECK(used == (bs->head[i] != NULL), "bin %u: bitmap says %d", i, used);
            for (const struct blk *b = bs->head[i]; b; b = b->fnext) {
                CHECK(!b->allocated, "bin %u holds a live block", i);
                CHECK(bin_of(b->size) == i && b->bin == i,
                      "block of %zu bytes in bin %u", b->size, i);
                CHECK(b->seg->large == k, "block in the other pool's bins");
                CHECK(!b->fnext || b->fnext->size >= b->size, "bin %u unsorted", i);
                CHECK(b->fnext == NULL || b->fnext->fprev == b, "bin %u links", i);
                (*n_free)++;
            }
        }
    }
    return DLB_OK;
}

dlb_status dlb_pool_check(const struct dlb_pool *p, char *why, size_t len)
{
    uint64_t reserved = 0, allocated = 0, requested = 0, live = 0, n_free = 0,
             segs = 0, binned = 0;
    for (const struct seg *s = p->segs; s; s = s->next) {
        size_t sum = 0;
        segs++;
        reserved += s->size;
        CHECK(!s->head->prev, "segment head has a predecessor");
        for (const struct blk *b = s->head; b; b = b->next) {
            CHECK(b->seg == s, "block outside its segment's list");
            CHECK(b->ptr == s->head->ptr + sum, "blocks do not tile the segment");
            CHECK(b->size > 0 && b->size % DLB_POOL_ROUND == 0, "odd block size %zu",
                  b->size);
            CHECK(!b->next || b->next->prev == b, "neighbour links broken");
            sum += b->size;
            if (b->allocated) {
                live++;
                allocated += b->size;
                requested += b->requested;
                CHECK(dlb_pool_map_get(&p->live, b->ptr) == b, "live block not mapped");
            } else {
                n_free++;
                CHECK(!b->next || b->next->allocated, "two free neighbours");
            }
        }
        CHECK(sum == s->size, "blocks cover %zu of a %zu-byte segment", sum, s->size);
    }
    dlb_status st = check_bins(p, &binned, why, len);
    if (st != DLB_OK)
        return st;
    const struct dlb_pool_stats *f = &p->st;
    CHECK(binned == n_free, "%llu free blocks, %llu in bins",
          (unsigned long long)n_free, (unsigned long long)binned);
    CHECK(live == p->live.n && live == f->active_blocks, "live block count");
    CHECK(reserved == f->reserved_bytes && segs == f->segments, "reserved figure");
    CHECK(allocated == f->allocated_bytes && allocated == f->active_bytes,
          "allocated figure");
    CHECK(requested == f->requested_bytes && requested <= allocated,
          "requested figure");
    CHECK(f->allocated_bytes <= f->reserved_bytes, "allocated above reserved");
    CHECK(f->allocated_peak >= f->allocated_bytes && f->reserved_peak >= f->reserved_bytes
          && f->requested_peak >= f->requested_bytes, "a peak below its current value");
    CHECK(f->allocated_peak <= f->reserved_peak, "allocated peak above reserved peak");
    CHECK(f->system_allocs - f->system_frees == f->segments, "segment count");
    return DLB_OK;
}
