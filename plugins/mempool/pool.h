/* The caching allocator behind the mempool plugin, free of plugin glue so
 * that it can be unit-tested on its own.
 *
 * Requests are rounded up to DLB_POOL_ROUND bytes. Requests up to
 * DLB_POOL_SMALL_MAX come from a small pool carved out of
 * DLB_POOL_SMALL_SEGMENT segments; larger ones from a large pool whose
 * segments are the request rounded up to DLB_POOL_LARGE_ROUND. A request is
 * served by the best-fitting cached free block (the smallest that fits),
 * split when the remainder is worth keeping; a freed block merges with free
 * neighbours. Segments come from a `dlb_pool_source` — malloc on the CPU,
 * cudaMalloc on a GPU — so the same code sits over either. Block metadata
 * lives outside the memory it describes, because device memory cannot hold
 * headers the host reads.
 *
 * In fixed mode one arena of `arena_size` is taken at creation and never
 * grows: a request that does not fit fails.
 *
 * Not thread-safe: the caller serialises (the plugin holds a mutex). */
#ifndef DLB_MEMPOOL_POOL_H
#define DLB_MEMPOOL_POOL_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/status.h>

#define DLB_POOL_ROUND ((size_t)512)
#define DLB_POOL_SMALL_MAX ((size_t)1 << 20)
#define DLB_POOL_SMALL_SEGMENT ((size_t)2 << 20)
/* cudaMalloc's granularity: on a GPU a finer rounding saves nothing. */
#define DLB_POOL_LARGE_ROUND ((size_t)2 << 20)
/* A request of at least max_split_size takes a cached oversize block only
 * when it wastes less than this (as in PyTorch's caching allocator). */
#define DLB_POOL_OVERSIZE_SLACK ((size_t)20 << 20)

/* Where segments come from and go back to. alloc returns NULL when the
 * device is out of memory. */
struct dlb_pool_source {
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *p, size_t bytes);
    void *ctx;
};

enum dlb_pool_mode { DLB_POOL_CACHING, DLB_POOL_FIXED };

struct dlb_pool_config {
    enum dlb_pool_mode mode;
    size_t arena_size;     /* fixed mode: the one arena, in bytes */
    size_t max_split_size; /* caching: blocks this large are never split;
                            * 0: no limit */
    size_t large_round;    /* large segments: requests rounded up to this
                            * (a multiple of DLB_POOL_ROUND); 0: the
                            * default, DLB_POOL_LARGE_ROUND */
    int trim_on_miss;      /* release wholly free segments before growing:
                            * lower reserved peak, more source calls */
};

/* Figures as common frameworks report them. "allocated" counts the blocks
 * handed out (rounded sizes), "requested" what callers asked for,
 * "reserved" the segments held from the source, "active" the blocks in use
 * or awaiting a stream (the same as allocated while streams are all 0). */
struct dlb_pool_stats {
    uint64_t requested_bytes, requested_peak;
    uint64_t allocated_bytes, allocated_peak;
    uint64_t reserved_bytes, reserved_peak;
    uint64_t active_bytes, active_peak;
    uint64_t active_blocks, segments;
    uint64_t alloc_calls, free_calls;
    uint64_t cache_hits, cache_misses;  /* served from a cached block or not */
    uint64_t system_allocs, system_frees;
    uint64_t splits, merges;
    uint64_t oom_retries;  /* source failed, cache released, tried again */
    uint64_t oom_failures; /* requests that returned NULL */
};

struct dlb_pool;

/* A pool over `src`. Fixed mode takes its arena here: DLB_ERR_NOMEM when
 * the source cannot give it; DLB_ERR_INPUT for a zero arena. */
dlb_status dlb_pool_create(const struct dlb_pool_config *cfg,
                           const struct dlb_pool_source *src,
                           struct dlb_pool **out);

/* Returns every segment to the source, live blocks included. */
void dlb_pool_destroy(struct dlb_pool *p);

/* `bytes` (0 counts as 1) on `stream`, or NULL when the source (or the
 * arena) is exhausted even after releasing the cache. */
void *dlb_pool_alloc(struct dlb_pool *p, size_t bytes, int stream);

/* DLB_ERR_INPUT when `ptr` is not a live block of this pool. */
dlb_status dlb_pool_free(struct dlb_pool *p, void *ptr);

/* Return every wholly free segment to the source (never the fixed arena).
 * Returns the bytes released. */
size_t dlb_pool_trim(struct dlb_pool *p);

void dlb_pool_stats(const struct dlb_pool *p, struct dlb_pool_stats *out);

/* The block size behind a live pointer, 0 when it is not one. */
size_t dlb_pool_block_size(const struct dlb_pool *p, const void *ptr);

/* Walk every segment and bin and check the invariants the allocator
 * relies on (blocks tile their segment, no two free neighbours, bins hold
 * exactly the free blocks, figures match the blocks). DLB_OK or
 * DLB_ERR_INTERNAL with the first broken one in `why`. For tests. */
dlb_status dlb_pool_check(const struct dlb_pool *p, char *why, size_t len);

#endif
