/* Unit tests of the mempool plugin's allocator core (plugins/mempool/pool.c),
 * compiled in directly: hand-worked splitting and coalescing, the fixed
 * arena, trim, the out-of-memory retry, streams, and a long random trace
 * whose live blocks are filled with patterns so that any overlap shows. */
#include "pool.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KiB ((size_t)1024)
#define MiB ((size_t)1024 * 1024)

/* A segment source over malloc that counts what is out and can be made to
 * run dry, as a device does. */
struct src {
    size_t out, limit; /* limit 0: none */
    unsigned allocs, frees;
};

static void *src_alloc(void *ctx, size_t bytes)
{
    struct src *s = ctx;
    if (s->limit && s->out + bytes > s->limit)
        return NULL;
    void *p = malloc(bytes);
    if (p) {
        s->out += bytes;
        s->allocs++;
    }
    return p;
}

static void src_free(void *ctx, void *p, size_t bytes)
{
    struct src *s = ctx;
    s->out -= bytes;
    s->frees++;
    free(p);
}

static struct dlb_pool *make(struct src *s, enum dlb_pool_mode mode,
                             size_t arena, size_t max_split)
{
    struct dlb_pool_config cfg = {.mode = mode, .arena_size = arena,
                                  .max_split_size = max_split};
    struct dlb_pool_source so = {src_alloc, src_free, s};
    struct dlb_pool *p = NULL;
    CHECK(dlb_pool_create(&cfg, &so, &p) == DLB_OK);
    return p;
}

static int consistent(const struct dlb_pool *p)
{
    char why[256] = "";
    dlb_status st = dlb_pool_check(p, why, sizeof why);
    if (st != DLB_OK)
        fprintf(stderr, "pool check: %s\n", why);
    return st == DLB_OK;
}

static struct dlb_pool_stats stats(const struct dlb_pool *p)
{
    struct dlb_pool_stats st;
    dlb_pool_stats(p, &st);
    return st;
}

/* Small pool, worked by hand. One 2 MiB segment S:
 *   a = 1000 B -> 1024 at S, the rest (2 MiB - 1 KiB) cached
 *   b = 3000 B -> 3072 at S+1024; c = 512 at S+4096
 *   free b: its neighbours are live, nothing merges
 *   d = 2048: best fit is b's 3072 hole, not the big remainder -> S+1024,
 *     leaving 1024 free at S+3072
 *   free a, then d: d merges with a before and the 1024 after
 *   free c: everything merges back into the one 2 MiB block. */
static void test_small_by_hand(void)
{
    struct src s = {0};
    struct dlb_pool *p = make(&s, DLB_POOL_CACHING, 0, 0);
    char *a = dlb_pool_alloc(p, 1000, 0);
    struct dlb_pool_stats st = stats(p);
    CHECK(a && dlb_pool_block_size(p, a) == 1024);
    CHECK(st.reserved_bytes == 2 * MiB && st.allocated_bytes == 1024);
    CHECK(st.requested_bytes == 1000 && st.splits == 1);
    CHECK(st.system_allocs == 1 && st.cache_misses == 1 && st.cache_hits == 0);
    char *b = dlb_pool_alloc(p, 3000, 0);
    char *c = dlb_pool_alloc(p, 512, 0);
    CHECK(b == a + 1024 && c == a + 4096);
    CHECK(stats(p).cache_hits == 2 && stats(p).system_allocs == 1);
    CHECK(dlb_pool_free(p, b) == DLB_OK);
    CHECK(stats(p).merges == 0);
    char *d = dlb_pool_alloc(p, 2048, 0);
    CHECK(d == a + 1024 && dlb_pool_block_size(p, d) == 2048);
    CHECK(consistent(p));
    CHECK(dlb_pool_free(p, a) == DLB_OK);
    CHECK(stats(p).merges == 0);
    CHECK(dlb_pool_free(p, d) == DLB_OK);
    CHECK(stats(p).merges == 2);
    CHECK(dlb_pool_free(p, c) == DLB_OK);
    st = stats(p);
    CHECK(st.merges == 4 && st.allocated_bytes == 0 && st.active_blocks == 0);
    CHECK(st.allocated_peak == 1024 + 3072 + 512 && st.reserved_peak == 2 * MiB);
    CHECK(consistent(p));
    /* One whole free block again: a 1 MiB request (the largest small one)
     * is carved from its start. */
    char *e = dlb_pool_alloc(p, 1 * MiB, 0);
    CHECK(e == a);
    CHECK(dlb_pool_free(p, e) == DLB_OK);
    CHECK(dlb_pool_trim(p) == 2 * MiB);
    CHECK(stats(p).reserved_bytes == 0 && s.out == 0 && s.frees == 1);
    dlb_pool_destroy(p);
}

/* Large pool: segments are the request rounded to 2 MiB, and a remainder
 * is split off only when it is more than 1 MiB. */
static void test_large_by_hand(void)
{
    struct src s = {0};
    struct dlb_pool *p = make(&s, DLB_POOL_CACHING, 0, 0);
    /* 2.5 MiB -> 4 MiB segment, 1.5 MiB remainder split off */
    char *a = dlb_pool_alloc(p, 2 * MiB + 512 * KiB, 0);
    CHECK(a && stats(p).reserved_bytes == 4 * MiB && stats(p).splits == 1);
    /* 1.25 MiB takes the 1.5 MiB remainder whole (256 KiB left is too small
     * to split in the large pool) */
    char *b = dlb_pool_alloc(p, 1 * MiB + 256 * KiB, 0);
    CHECK(b == a + 2 * MiB + 512 * KiB);
    CHECK(dlb_pool_block_size(p, b) == 1 * MiB + 512 * KiB);
    CHECK(stats(p).allocated_bytes == 4 * MiB && stats(p).cache_hits == 1);
    /* 3 MiB -> 4 MiB segment, 1 MiB remainder is not split: */
    char *c = dlb_pool_alloc(p, 3 * MiB, 0);
    CHECK(c && dlb_pool_block_size(p, c) == 4 * MiB);
    CHECK(stats(p).reserved_bytes == 8 * MiB && stats(p).system_allocs == 2);
    CHECK(consistent(p));
    CHECK(dlb_pool_free(p, a) == DLB_OK && dlb_pool_free(p, b) == DLB_OK);
    CHECK(stats(p).merges == 1);
    CHECK(dlb_pool_free(p, c) == DLB_OK);
    CHECK(dlb_pool_trim(p) == 8 * MiB && s.out == 0);
    dlb_pool_destroy(p);
}

/* max_split_size = 4 MiB: oversize blocks are never split and never given
 * to requests below 4 MiB; a large request takes one only when it wastes
 * less than DLB_POOL_OVERSIZE_SLACK. */
static void test_max_split(void)
{
    struct src s = {0};
    struct dlb_pool *p = make(&s, DLB_POOL_CACHING, 0, 4 * MiB);
    char *a = dlb_pool_alloc(p, 5 * MiB, 0);  /* 6 MiB segment, not split */
    CHECK(a && dlb_pool_block_size(p, a) == 6 * MiB && stats(p).splits == 0);
    CHECK(dlb_pool_free(p, a) == DLB_OK);
    char *b = dlb_pool_alloc(p, 3 * MiB, 0);  /* below 4 MiB: not the 6 MiB */
    CHECK(b && b != a && stats(p).system_allocs == 2);
    char *c = dlb_pool_alloc(p, 4 * MiB, 0);  /* oversize, wastes 2 MiB: ok */
    CHECK(c == a && dlb_pool_block_size(p, c) == 6 * MiB);
    CHECK(stats(p).system_allocs == 2 && stats(p).splits == 0); /* all oversize */
    CHECK(consistent(p));
    CHECK(dlb_pool_free(p, b) == DLB_OK && dlb_pool_free(p, c) == DLB_OK);
    /* 30 MiB cached; a 6 MiB request would waste 24 MiB > slack: new one */
    char *big = dlb_pool_alloc(p, 30 * MiB, 0);
    CHECK(dlb_pool_free(p, big) == DLB_OK);
    unsigned before = s.allocs;
    char *d = dlb_pool_alloc(p, 6 * MiB, 0);
    CHECK(d == a && s.allocs == before); /* the 6 MiB block fits exactly */
    char *e = dlb_pool_alloc(p, 7 * MiB, 0);
    CHECK(e && e != big && s.allocs == before + 1);
    CHECK(consistent(p));
    dlb_pool_destroy(p);
    CHECK(s.out == 0);
}

/* A fixed arena is carved but never grows: past it, NULL. */
static void test_fixed_arena(void)
{
    struct src s = {0};
    struct dlb_pool *p = make(&s, DLB_POOL_FIXED, 64 * KiB, 0);
    CHECK(stats(p).reserved_bytes == 64 * KiB && s.allocs == 1);
    char *a = dlb_pool_alloc(p, 32 * KiB, 0);
    char *b = dlb_pool_alloc(p, 32 * KiB, 0);
    CHECK(a && b == a + 32 * KiB);
    CHECK(stats(p).allocated_bytes == stats(p).reserved_bytes);
    CHECK(dlb_pool_alloc(p, 1, 0) == NULL);
    CHECK(stats(p).oom_failures == 1 && s.allocs == 1);
    CHECK(dlb_pool_alloc(p, 1 * MiB, 0) == NULL);
    CHECK(dlb_pool_free(p, a) == DLB_OK);
    /* Small remainders are kept in an arena: 16 KiB splits the hole. */
    char *c = dlb_pool_alloc(p, 16 * KiB, 0);
    char *d = dlb_pool_alloc(p, 16 * KiB, 0);
    CHECK(c == a && d == a + 16 * KiB);
    CHECK(dlb_pool_trim(p) == 0 && stats(p).reserved_bytes == 64 * KiB);
    CHECK(consistent(p));
    dlb_pool_destroy(p);
    CHECK(s.out == 0 && s.frees == 1);

    /* max_split_size does not apply to the arena, which must split. */
    p = make(&s, DLB_POOL_FIXED, 64 * KiB, 4 * KiB);
    a = dlb_pool_alloc(p, 1024, 0);
    CHECK(a && dlb_pool_block_size(p, a) == 1024);
    dlb_pool_destroy(p);

    /* An arena the source cannot give, and a zero arena, fail to create. */
    struct src tight = {.limit = 1 * MiB};
    struct dlb_pool_config cfg = {.mode = DLB_POOL_FIXED, .arena_size = 2 * MiB};
    struct dlb_pool_source so = {src_alloc, src_free, &tight};
    CHECK(dlb_pool_create(&cfg, &so, &p) == DLB_ERR_NOMEM && p == NULL);
    cfg.arena_size = 100;
    CHECK(dlb_pool_create(&cfg, &so, &p) == DLB_ERR_INPUT);
}

/* Trim gives back every wholly free segment, and only those. */
static void test_trim(void)
{
    struct src s = {0};
    struct dlb_pool *p = make(&s, DLB_POOL_CACHING, 0, 0);
    void *v[40];
    for (int i = 0; i < 40; i++)
        v[i] = dlb_pool_alloc(p, (size_t)(i % 2 ? 900 * KiB : 3 * MiB + (size_t)i),
                              0);
    for (int i = 1; i < 40; i++)
        CHECK(dlb_pool_free(p, v[i]) == DLB_OK);
    size_t released = dlb_pool_trim(p);
    struct dlb_pool_stats st = stats(p);
    CHECK(released > 0 && st.segments == 1 && st.reserved_bytes == s.out);
    CHECK(st.system_allocs - st.system_frees == 1);
    CHECK(consistent(p));
    CHECK(dlb_pool_free(p, v[0]) == DLB_OK);
    dlb_pool_trim(p);
    CHECK(stats(p).reserved_bytes == 0 && stats(p).segments == 0 && s.out == 0);
    CHECK(s.allocs == s.frees);
    dlb_pool_destroy(p);
}

/* A source that runs dry: the cache is released and the request retried. */
static void test_oom_retry(void)
{
    struct src s = {.limit = 6 * MiB};
    struct dlb_pool *p = make(&s, DLB_POOL_CACHING, 0, 0);
    void *a = dlb_pool_alloc(p, 4 * MiB, 0);
    CHECK(a && dlb_pool_free(p, a) == DLB_OK);
    void *b = dlb_pool_alloc(p, 5 * MiB, 0); /* 6 MiB: only after a's 4 go */
    CHECK(b != NULL && stats(p).oom_retries == 1 && stats(p).reserved_bytes == 6 * MiB);
    CHECK(dlb_pool_alloc(p, 5 * MiB, 0) == NULL); /* nothing left to release */
    CHECK(stats(p).oom_failures == 1 && stats(p).oom_retries == 1);
    CHECK(consistent(p));
    dlb_pool_destroy(p);
    CHECK(s.out == 0);
}

/* trim_on_miss: free segments too small for a request go back before the
 * pool grows, so they do not add to the reserved peak. */
static void test_trim_on_miss(void)
{
    struct src s = {0};
    struct dlb_pool_config cfg = {.mode = DLB_POOL_CACHING, .trim_on_miss = 1};
    struct dlb_pool_source so = {src_alloc, src_free, &s};
    struct dlb_pool *p = NULL;
    CHECK(dlb_pool_create(&cfg, &so, &p) == DLB_OK);
    void *a = dlb_pool_alloc(p, 3 * MiB, 0), *b = dlb_pool_alloc(p, 3 * MiB, 0);
    CHECK(dlb_pool_free(p, a) == DLB_OK && dlb_pool_free(p, b) == DLB_OK);
    CHECK(dlb_pool_alloc(p, 3 * MiB, 0) != NULL); /* a hit: nothing released */
    CHECK(stats(p).system_frees == 0);
    CHECK(dlb_pool_alloc(p, 6 * MiB, 0) != NULL); /* a miss: the free 4 MiB goes */
    CHECK(stats(p).system_frees == 1 && stats(p).reserved_bytes == 10 * MiB);
    CHECK(stats(p).reserved_peak == 10 * MiB);
    CHECK(consistent(p));
    dlb_pool_destroy(p);
    CHECK(s.out == 0);
}

/* A block freed on one stream is not handed to another. */
static void test_streams(void)
{
    struct src s = {0};
    struct dlb_pool *p = make(&s, DLB_POOL_CACHING, 0, 0);
    void *a = dlb_pool_alloc(p, 4096, 0);
    CHECK(dlb_pool_free(p, a) == DLB_OK);
    void *b = dlb_pool_alloc(p, 4096, 1);
    CHECK(b && b != a && s.allocs == 2);
    void *c = dlb_pool_alloc(p, 4096, 0);
    CHECK(c == a && s.allocs == 2);
    CHECK(consistent(p));
    dlb_pool_destroy(p);
}

static void test_bad_free(void)
{
    struct src s = {0};
    struct dlb_pool *p = make(&s, DLB_POOL_CACHING, 0, 0);
    char *a = dlb_pool_alloc(p, 100, 0);
    int x;
    CHECK(dlb_pool_free(p, &x) == DLB_ERR_INPUT);
    CHECK(dlb_pool_free(p, a + 512) == DLB_ERR_INPUT);
    CHECK(dlb_pool_free(p, a) == DLB_OK);
    CHECK(dlb_pool_free(p, a) == DLB_ERR_INPUT); /* double free */
    CHECK(dlb_pool_alloc(p, 0, 0) != NULL);       /* counts as one byte */
    CHECK(consistent(p));
    dlb_pool_destroy(p);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Sizes as a CNN asks: many small, some up to 1 MiB, a few large. */
static size_t random_size(uint64_t *r)
{
    uint64_t k = rng_next(r);
    switch (k % 8) {
    case 0: case 1: case 2: return (size_t)(k >> 8) % 4096 + 1;
    case 3: case 4: return (size_t)(k >> 8) % (256 * KiB) + 1;
    case 5: case 6: return (size_t)(k >> 8) % MiB + 1;
    default: return (size_t)(k >> 8) % (12 * MiB) + 1;
    }
}

/* Blocks start at multiples of 512 from their segment's base, so a block
 * that overlapped a live one would start on one of its 512-byte marks: a
 * byte every 512 (and the last) is as telling as the whole block, and
 * keeps 10 GB of memset out of the test. */
static void fill(unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i += 512)
        p[i] = v;
    p[n - 1] = v;
}

static int pattern_intact(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i += 512)
        if (p[i] != v)
            return 0;
    return p[n - 1] == v;
}

/* Random alloc/free with every live block marked with its own byte: a
 * block overlapping another would overwrite it. Invariants and the
 * monotonicity of the peaks hold after every operation; with a limited
 * source, failures are NULL and leave the pool consistent. */
static void random_trace(size_t limit, unsigned ops, uint64_t seed)
{
    enum { LIVE = 64 };
    struct src s = {.limit = limit};
    struct dlb_pool *p = make(&s, DLB_POOL_CACHING, 0, (seed & 1) ? 8 * MiB : 0);
    unsigned char *ptr[LIVE] = {0};
    size_t size[LIVE] = {0};
    uint64_t r = seed;
    struct dlb_pool_stats prev = stats(p);
    int ok = 1, intact = 1, monotone = 1, nulls = 0;
    for (unsigned op = 0; op < ops && ok; op++) {
        unsigned k = (unsigned)(rng_next(&r) % LIVE);
        if (ptr[k]) {
            intact &= pattern_intact(ptr[k], size[k], (unsigned char)(k + 1));
            ok &= dlb_pool_free(p, ptr[k]) == DLB_OK;
            ptr[k] = NULL;
        } else {
            size[k] = random_size(&r);
            ptr[k] = dlb_pool_alloc(p, size[k], 0);
            if (ptr[k]) {
                ok &= dlb_pool_block_size(p, ptr[k]) >= size[k];
                fill(ptr[k], size[k], (unsigned char)(k + 1));
            } else {
                nulls++;
            }
        }
        if (op % 64 == 0 && rng_next(&r) % 4 == 0)
            dlb_pool_trim(p);
        struct dlb_pool_stats st = stats(p);
        monotone &= st.allocated_peak >= prev.allocated_peak &&
                    st.reserved_peak >= prev.reserved_peak &&
                    st.requested_peak >= prev.requested_peak &&
                    st.system_allocs >= prev.system_allocs;
        ok &= st.reserved_bytes == s.out && (!limit || s.out <= limit);
        ok &= consistent(p);
        prev = st;
    }
    CHECK(ok);
    CHECK(intact);
    CHECK(monotone);
    CHECK(limit ? nulls > 0 : nulls == 0);
    if (limit)
        CHECK(stats(p).oom_retries > 0);
    for (unsigned k = 0; k < LIVE; k++)
        if (ptr[k]) {
            CHECK(pattern_intact(ptr[k], size[k], (unsigned char)(k + 1)));
            CHECK(dlb_pool_free(p, ptr[k]) == DLB_OK);
        }
    struct dlb_pool_stats st = stats(p);
    CHECK(st.allocated_bytes == 0 && st.requested_bytes == 0 && st.active_blocks == 0);
    CHECK(st.cache_hits > st.cache_misses); /* it is a cache after all */
    dlb_pool_trim(p);
    CHECK(stats(p).reserved_bytes == 0 && s.out == 0 && s.allocs == s.frees);
    dlb_pool_destroy(p);
}

int main(void)
{
    test_small_by_hand();
    test_large_by_hand();
    test_max_split();
    test_fixed_arena();
    test_trim();
    test_oom_retry();
    test_trim_on_miss();
    test_streams();
    test_bad_free();
    random_trace(0, 20000, 0x9E3779B97F4A7C15u);
    random_trace(0, 20000, 12345);
    random_trace(48 * MiB, 20000, 777);
    return check_exit();
}
