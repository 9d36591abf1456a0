/* Physical layouts of buffers. A convolution leaves its output in the
 * blocked layout its kernel chose (nChw16c for most shapes) and the next
 * primitive reads it as it is: translating every activation to NCHW and
 * back cost as much as LeNet's convolutions. The host view is produced
 * only where the host or an own loop indexes it, in place, so the
 * buffer's logical contents never change. Reorders are cached per pair of
 * layouts, as primitives are. */
#include "cpu.h"
#include "../dtype.h"

#include <stdlib.h>
#include <string.h>

struct dlb_cpu_reorder {
    dlb_dnnl_md src, dst;
    dnnl_primitive_t prim;
    dnnl_memory_t src_mem, dst_mem;
    struct dlb_cpu_reorder *next;
};

const dlb_dnnl_md *dlb_cpu_layout(const struct dlb_buffer *b)
{
    const struct dlb_cpu_buf *bi = b->impl;
    return bi->blocked ? &bi->md : NULL;
}

int dlb_cpu_md_is_plain(const dlb_dnnl_md *md)
{
    const dlb_dnnl_blocking *bd = &md->format_desc.blocking;
    dnnl_dim_t stride = 1;
    if (md->format_kind != dnnl_blocked || md->offset0 != 0)
        return 0;
    if (bd->inner_nblks == 0) {
        for (int d = md->ndims - 1; d >= 0; d--) {
            if (md->padded_dims[d] != md->dims[d])
                return 0;
            if (md->dims[d] > 1 && bd->strides[d] != stride)
                return 0;
            stride *= md->dims[d];
        }
        return 1;
    }
    /* A channel block over channels that leave nothing after them (a 1x1
     * plane, a 2-D tensor) is the host view too: the global average
     * pool's output is one. */
    if (bd->inner_nblks != 1 || bd->inner_idxs[0] != 1 || md->ndims < 2)
        return 0;
    for (int d = 0; d < md->ndims; d++)
        if (md->padded_dims[d] != md->dims[d] || (d > 1 && md->dims[d] != 1))
            return 0;
    if (md->dims[1] > bd->inner_blks[0] && bd->strides[1] != bd->inner_blks[0])
        return 0;
    return md->dims[0] <= 1 || bd->strides[0] == md->dims[1];
}

/* The host view of md's dims in type dt. */
static dnnl_status_t plain_of(const dlb_dnnl_md *md, dnnl_data_type_t dt,
                              dlb_dnnl_md *out)
{
    return dlb_cpu_md_plain(out, md->ndims, md->dims, dt);
}

static size_t logical_count(const dlb_dnnl_md *md)
{
    size_t n = 1;
    for (int d = 0; d < md->ndims; d++)
        n *= (size_t)md->dims[d];
    return n;
}

static dnnl_status_t reorder_get(struct dlb_cpu *cpu,
                                 const dlb_dnnl_md *src,
                                 const dlb_dnnl_md *dst,
                                 struct dlb_cpu_reorder **out)
{
    struct dlb_cpu_reorder *r;
    dnnl_status_t st;
    for (r = cpu->reorders; r; r = r->next)
        if (dlb_dnnl_md_equal(&r->src, src) &&
            dlb_dnnl_md_equal(&r->dst, dst)) {
            *out = r;
            return dnnl_success;
        }
    if (!(r = calloc(1, sizeof *r)))
        return dnnl_out_of_memory;
    r->src = *src;
    r->dst = *dst;
    if ((st = dlb_cpu_reorder(cpu, &r->prim, src, dst)) ||
        (st = dlb_cpu_mem(cpu, &r->src_mem, src)) ||
        (st = dlb_cpu_mem(cpu, &r->dst_mem, dst))) {
        if (r->prim)
            dnnl_primitive_destroy(r->prim);
        if (r->src_mem)
            dnnl_memory_destroy(r->src_mem);
        free(r);
        return st;
    }
    r->next = cpu->reorders;
    cpu->reorders = r;
    *out = r;
    return dnnl_success;
}

void dlb_cpu_layout_clear(struct dlb_cpu *cpu)
{
    struct dlb_cpu_reorder *r = cpu->reorders, *next;
    for (; r; r = next) {
        next = r->next;
        dnnl_primitive_destroy(r->prim);
        dnnl_memory_destroy(r->src_mem);
        dnnl_memory_destroy(r->dst_mem);
        free(r);
    }
    cpu->reorders = NULL;
}

dlb_status dlb_cpu_reorder_run(struct dlb_backend *be,
                               const dlb_dnnl_md *src, const void *from,
                               const dlb_dnnl_md *dst, void *to)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    struct dlb_cpu_reorder *r;
    dnnl_status_t st = reorder_get(cpu, src, dst, &r);
    if (st == dnnl_success)
        st = dlb_cpu_run_reorder(cpu, r->prim, r->src_mem, from, r->dst_mem,
                                 to);
    return st == dnnl_success ? DLB_OK
                              : dlb_cpu_dnnl_fail(be, st, "layout", "reorder");
}

dlb_status dlb_cpu_set_layout(struct dlb_backend *be, struct dlb_buffer *b,
                              const dlb_dnnl_md *md)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    struct dlb_cpu_buf *bi = b->impl;
    size_t need;
    if (!md || dlb_cpu_md_is_plain(md)) {
        bi->blocked = 0;
        return DLB_OK;
    }
    need = dlb_dnnl_md_size(md);
    if (need > bi->block_bytes) {
        /* Outputs only: the old contents need not survive. */
        void *block = NULL, *data = dlb_cpu_alloc(cpu, need, &block);
        if (!data)
            return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu: out of memory "
                                    "for %zu bytes of a padded layout", need);
        dlb_cpu_free(cpu, bi->block, bi->block_bytes);
        bi->block = block;
        bi->block_bytes = need;
        b->data = data;
    }
    bi->md = *md;
    bi->blocked = 1;
    return DLB_OK;
}

dlb_status dlb_cpu_make_plain(struct dlb_backend *be,
                              const struct dlb_buffer *b)
{
    struct dlb_cpu_buf *bi = b->impl;
    dlb_dnnl_md plain;
    dlb_status s;
    void *tmp;
    if (!bi->blocked)
        return DLB_OK;
    if (plain_of(&bi->md, bi->md.data_type, &plain) != dnnl_success)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu: no host view of a "
                                "%d-D layout", bi->md.ndims);
    if (!(tmp = dlb_cpu_scratch(be, DLB_CPU_SLOT_PLAIN,
                                dlb_dnnl_md_size(&plain))))
        return DLB_ERR_NOMEM;
    if ((s = dlb_cpu_reorder_run(be, &bi->md, b->data, &plain, tmp)))
        return s;
    memcpy(b->data, tmp, dlb_dnnl_md_size(&plain));
    bi->blocked = 0;
    return DLB_OK;
}

static int same_dims(const dlb_dnnl_md *a, const dlb_dnnl_md *b)
{
    return a->ndims == b->ndims &&
           memcmp(a->dims, b->dims, (size_t)a->ndims * sizeof a->dims[0]) == 0;
}

dlb_status dlb_cpu_view(struct dlb_backend *be, const struct dlb_buffer *b,
                        const dlb_dnnl_md *want, int slot, void **out)
{
    struct dlb_cpu_buf *bi = b->impl;
    dlb_dnnl_md src, dst = *want;
    dlb_status s;
    void *tmp;
    int want_plain = dlb_cpu_md_is_plain(want);
    int same_type = dlb_cpu_dnnl_type(b->dtype) == want->data_type;
    *out = b->data;
    if (same_type &&
        (bi->blocked ? dlb_dnnl_md_equal(&bi->md, want) : want_plain))
        return DLB_OK;
    if (bi->blocked && want_plain) {
        /* The host view of the buffer's own dims is want's bytes too (a
         * flatten's 4-D input read as 2-D). */
        if (plain_of(&bi->md, want->data_type, &dst) != dnnl_success)
            return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu: bad layout");
    } else if (bi->blocked && !same_dims(&bi->md, want)) {
        if ((s = dlb_cpu_make_plain(be, b)))
            return s;
    }
    if (bi->blocked) {
        src = bi->md;
    } else {
        /* A reorder converts the type on the way (f32 activations into a
         * bf16 convolution) in the same pass as the layout. */
        if (plain_of(want, dlb_cpu_dnnl_type(b->dtype), &src) !=
            dnnl_success)
            return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu: bad layout");
    }
    if (!(tmp = dlb_cpu_scratch(be, slot, dlb_dnnl_md_size(&dst))))
        return DLB_ERR_NOMEM;
    if ((s = dlb_cpu_reorder_run(be, &src, b->data, &dst, tmp)))
        return s;
    *out = tmp;
    return DLB_OK;
}

dlb_status dlb_cpu_physical(struct dlb_backend *be, const struct dlb_buffer *b,
                            size_t count, size_t *out)
{
    struct dlb_cpu_buf *bi = b->impl;
    dlb_status s;
    *out = count;
    if (!bi->blocked)
        return DLB_OK;
    if (count == logical_count(&bi->md)) {
        *out = dlb_dnnl_md_size(&bi->md) / dlb_dtype_size(b->dtype);
        return DLB_OK;
    }
    return (s = dlb_cpu_make_plain(be, b));
}

dlb_status dlb_cpu_make_plain_all(struct dlb_backend *be,
                                  const struct dlb_buffer *const *b, int n)
{
    dlb_status s;
    for (int i = 0; i < n; i++)
        if (b[i] && (s = dlb_cpu_make_plain(be, b[i])))
            return s;
    return DLB_OK;
}

int dlb_cpu_map_of(const dlb_dnnl_md *md, uint32_t n, uint32_t c,
                   uint32_t hw, struct dlb_cpu_map *m)
{
    const dlb_dnnl_blocking *bd = &md->format_desc.blocking;
    size_t spatial = 1;
    if (md->format_kind != dnnl_blocked || md->ndims < 2 || md->ndims > 4 ||
        md->dims[0] != (dnnl_dim_t)n || md->dims[1] != (dnnl_dim_t)c ||
        bd->inner_nblks > 1 || (bd->inner_nblks && bd->inner_idxs[0] != 1))
        return 0;
    for (int i = 2; i < md->ndims; i++)
        spatial *= (size_t)md->dims[i];
    if (spatial != (hw ? hw : 1))
        return 0;
    /* The spatial dims must run as one: h's stride is w's times w. */
    if (md->ndims == 4 && md->dims[2] > 1 &&
        bd->strides[2] != bd->strides[3] * md->dims[3])
        return 0;
    m->sn = (size_t)bd->strides[0];
    m->sc = (size_t)bd->strides[1];
    m->sk = md->ndims > 2 ? (size_t)bd->strides[md->ndims - 1] : 1;
    m->blk = bd->inner_nblks ? (size_t)bd->inner_blks[0] : 1;
    m->padded_c = (size_t)md->padded_dims[1];
    return 1;
}

int dlb_cpu_layout_code(const dlb_dnnl_md *md)
{
    static const dnnl_format_tag_t tags[] = { dnnl_aBcd16b, dnnl_aBcd8b,
                                              dnnl_acdb };
    dlb_dnnl_md t;
    if (md->ndims != 4)
        return 0;
    for (int i = 0; i < 3; i++)
        if (dlb_dnnl_md_tag(&t, 4, md->dims, md->data_type,
                                         tags[i]) == dnnl_success &&
            dlb_dnnl_md_equal(&t, md))
            return i + 1;
    return 0;
}
