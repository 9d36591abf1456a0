/* Buffers, copies, scratch memory, weight shadows, timers. Buffer memory
 * comes from the configuration's allocator (a memory pool plugin) or
 * malloc, over-allocated by 64 bytes and aligned to 64 so that oneDNN's
 * vector loads never split a cache line at the start. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include "cpu.h"
#include "../dtype.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dlb_timer {
    double start, stop;
};

void *dlb_cpu_alloc(struct dlb_cpu *cpu, size_t bytes, void **block)
{
    if (bytes > SIZE_MAX - 64)
        return *block = NULL;
    *block = cpu->host_alloc ? cpu->host_alloc(cpu->alloc_ctx, bytes + 64)
                             : malloc(bytes + 64);
    if (!*block)
        return NULL;
    return (void *)(((uintptr_t)*block + 63) & ~(uintptr_t)63);
}

void dlb_cpu_free(struct dlb_cpu *cpu, void *block, size_t bytes)
{
    if (!block)
        return;
    if (cpu->host_free)
        cpu->host_free(cpu->alloc_ctx, block, bytes + 64);
    else
        free(block);
}

void *dlb_cpu_scratch(struct dlb_backend *be, int slot, size_t bytes)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    if (cpu->scratch_bytes[slot] >= bytes)
        return cpu->scratch[slot];
    dlb_cpu_free(cpu, cpu->scratch_block[slot], cpu->scratch_bytes[slot]);
    cpu->scratch_bytes[slot] = 0;
    cpu->scratch[slot] = dlb_cpu_alloc(cpu, bytes, &cpu->scratch_block[slot]);
    if (!cpu->scratch[slot]) {
        dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu: out of memory for %zu bytes "
                         "of scratch", bytes);
        return NULL;
    }
    cpu->scratch_bytes[slot] = bytes;
    return cpu->scratch[slot];
}

void dlb_cpu_written(const struct dlb_buffer *b)
{
    ((struct dlb_cpu_buf *)b->impl)->version++;
}

dlb_status dlb_cpu_shadow(struct dlb_backend *be, const struct dlb_buffer *b,
                          const dlb_dnnl_md *md,
                          dnnl_primitive_t reorder, dnnl_memory_t src_mem,
                          dnnl_memory_t dst_mem, void **out)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    struct dlb_cpu_buf *bi = b->impl;
    struct dlb_cpu_shadow *sh;
    dnnl_status_t st;
    dlb_status s;
    if ((s = dlb_cpu_make_plain(be, b))) /* the reorder reads the host view */
        return s;
    if (!reorder) {
        *out = b->data;
        return DLB_OK;
    }
    for (sh = bi->shadows; sh; sh = sh->next)
        if (dlb_dnnl_md_equal(&sh->md, md))
            break;
    if (!sh) {
        sh = calloc(1, sizeof *sh);
        if (!sh)
            return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu: out of memory");
        sh->md = *md;
        sh->block_bytes = dlb_dnnl_md_size(md);
        sh->data = dlb_cpu_alloc(cpu, sh->block_bytes, &sh->block);
        if (!sh->data) {
            free(sh);
            return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu: out of memory for "
                                    "a reordered copy of a weight buffer");
        }
        sh->version = bi->version - 1; /* stale: reorder below */
        sh->next = bi->shadows;
        bi->shadows = sh;
    }
    if (sh->version != bi->version) {
        st = dlb_cpu_run_reorder(cpu, reorder, src_mem, b->data, dst_mem,
                                 sh->data);
        if (st != dnnl_success)
            return dlb_cpu_dnnl_fail(be, st, "weights reorder", "reorder");
        sh->version = bi->version;
    }
    *out = sh->data;
    return DLB_OK;
}

dlb_status dlb_cpu_buffer_alloc(struct dlb_backend *be, enum dlb_dtype dtype,
                                size_t count, struct dlb_buffer **out)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    size_t esz = dlb_dtype_size(dtype);
    struct dlb_buffer *b;
    struct dlb_cpu_buf *bi;
    *out = NULL;
    if (!esz)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu: unknown dtype %d",
                                (int)dtype);
    if (count > (SIZE_MAX - 128) / esz)
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu: %zu elements of %s "
                                "overflow size_t", count, dlb_dtype_name(dtype));
    b = calloc(1, sizeof *b);
    bi = calloc(1, sizeof *bi);
    if (!b || !bi)
        goto nomem;
    b->dtype = dtype;
    b->count = count;
    b->bytes = count * esz;
    b->impl = bi;
    bi->block_bytes = b->bytes;
    b->data = dlb_cpu_alloc(cpu, b->bytes, &bi->block);
    if (!b->data)
        goto nomem;
    *out = b;
    return DLB_OK;
nomem:
    free(b);
    free(bi);
    return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu: out of memory for a buffer "
                            "of %zu %s elements", count, dlb_dtype_name(dtype));
}

void dlb_cpu_buffer_free(struct dlb_backend *be, struct dlb_buffer *b)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    if (!b)
        return;
    struct dlb_cpu_buf *bi = b->impl;
    struct dlb_cpu_shadow *sh = bi->shadows, *next;
    for (; sh; sh = next) {
        next = sh->next;
        dlb_cpu_free(cpu, sh->block, sh->block_bytes);
        free(sh);
    }
    dlb_cpu_buffer_free(be, bi->packed);
    dlb_cpu_free(cpu, bi->block, bi->block_bytes);
    free(bi);
    free(b);
}

static dlb_status range(struct dlb_backend *be, const char *op,
                        const struct dlb_buffer *b, size_t off, size_t bytes)
{
    if (!b || off > b->bytes || bytes > b->bytes - off)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: bytes [%zu, "
                                "%zu + %zu) outside a buffer of %zu", op, off,
                                off, bytes, b ? b->bytes : 0);
    return DLB_OK;
}

dlb_status dlb_cpu_copy_from_host(struct dlb_backend *be,
                                  struct dlb_buffer *dst, size_t off,
                                  const void *src, size_t bytes)
{
    dlb_status s = range(be, "copy_from_host", dst, off, bytes);
    /* A whole overwrite needs no translation of the old contents. */
    if (!s && off == 0 && bytes == dst->bytes)
        s = dlb_cpu_set_layout(be, dst, NULL);
    if (!s)
        s = dlb_cpu_make_plain(be, dst);
    if (!s && bytes) {
        memcpy((char *)dst->data + off, src, bytes);
        dlb_cpu_written(dst);
    }
    return s;
}

dlb_status dlb_cpu_copy_to_host(struct dlb_backend *be, void *dst,
                                const struct dlb_buffer *src, size_t off,
                                size_t bytes)
{
    dlb_status s = range(be, "copy_to_host", src, off, bytes);
    if (!s)
        s = dlb_cpu_make_plain(be, src);
    if (!s && bytes)
        memcpy(dst, (const char *)src->data + off, bytes);
    return s;
}

dlb_status dlb_cpu_copy(struct dlb_backend *be, struct dlb_buffer *dst,
                        size_t doff, const struct dlb_buffer *src, size_t soff,
                        size_t bytes)
{
    dlb_status s;
    if ((s = range(be, "copy", dst, doff, bytes)) ||
        (s = range(be, "copy", src, soff, bytes)) ||
        (s = dlb_cpu_make_plain(be, src)) ||
        (s = dlb_cpu_make_plain(be, dst)))
        return s;
    if (bytes) { /* memmove: a copy within one buffer may overlap */
        memmove((char *)dst->data + doff, (const char *)src->data + soff, bytes);
        dlb_cpu_written(dst);
    }
    return DLB_OK;
}

dlb_status dlb_cpu_synchronize(struct dlb_backend *be)
{
    (void)be; /* every operation waits for its primitives before returning */
    return DLB_OK;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

dlb_status dlb_cpu_timer_create(struct dlb_backend *be, struct dlb_timer **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? DLB_OK
                : dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu: out of memory");
}

void dlb_cpu_timer_destroy(struct dlb_backend *be, struct dlb_timer *t)
{
    (void)be;
    free(t);
}

dlb_status dlb_cpu_timer_start(struct dlb_backend *be, struct dlb_timer *t)
{
    (void)be;
    t->start = now_seconds();
    return DLB_OK;
}

dlb_status dlb_cpu_timer_stop(struct dlb_backend *be, struct dlb_timer *t)
{
    (void)be;
    t->stop = now_seconds();
    return DLB_OK;
}

dlb_status dlb_cpu_timer_elapsed(struct dlb_backend *be, struct dlb_timer *t,
                                 double *seconds)
{
    (void)be;
    *seconds = t->stop - t->start;
    return DLB_OK;
}

void dlb_cpu_scratch_buffer(enum dlb_dtype t, size_t count, void *data,
                            struct dlb_buffer *tmp, struct dlb_cpu_buf *impl)
{
    memset(impl, 0, sizeof *impl);
    *tmp = (struct dlb_buffer){ .dtype = t, .count = count,
                                .bytes = count * dlb_dtype_size(t),
                                .data = data, .impl = impl };
}
