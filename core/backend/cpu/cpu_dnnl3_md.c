/* cpu_dnnl_api.h's memory descriptors over oneDNN 3.x: values holding
 * 2.x's fields and an interned handle.
 *
 * Interning: every handle a value holds comes from one process-wide table
 * with one handle per distinct layout (by dnnl_memory_desc_equal). The
 * handles are never destroyed, so values need no ownership (the backend
 * copies them into buffers, cache entries and locals freely, as it did
 * with 2.x's structs). A process sees a few dozen layouts per network
 * shape: the table stays small.
 *
 * The ops build descriptors on every call (the host view of a buffer's
 * dims, a layout in f32 for a bf16 one): creating a handle, querying its
 * fields and interning it took longer than some of the ops, so results
 * are also memoised by how they were made (a tag and dims, or a layout
 * and a type), which is a lookup in the common case. One lock guards
 * both tables: backends on several threads (the dp plugin's replicas)
 * share them. */
#include "cpu_dnnl_api.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct interned {
    uint64_t hash;
    dnnl_memory_desc_t handle;
    struct interned *next;
};

/* How a value was made: by tag (handle NULL) or by retyping `handle`. */
struct recipe {
    int ndims;
    dnnl_dims_t dims;
    dnnl_data_type_t dt;
    dnnl_format_tag_t tag;
    const_dnnl_memory_desc_t handle;
};

struct memo {
    struct recipe key;
    uint64_t hash;
    dlb_dnnl_md value;
    struct memo *next;
};

#define BUCKETS 256 /* a fixed size: the tables hold dozens to hundreds */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct interned *interned[BUCKETS];
static struct memo *memos[BUCKETS];

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Over all of m's fields (read_fields zeroes the padding), the handle
 * left NULL. */
static uint64_t fields_hash(const dlb_dnnl_md *m)
{
    return fnv(0xcbf29ce484222325ull, m, sizeof *m);
}

/* m's fields from handle h (m->handle is left for the caller). */
static dnnl_status_t read_fields(const_dnnl_memory_desc_t h, dlb_dnnl_md *m)
{
    dlb_dnnl_blocking *b = &m->format_desc.blocking;
    const dnnl_dims_t *v;
    dnnl_status_t st;
    memset(m, 0, sizeof *m);
#define Q(what, out) \
    if ((st = dnnl_memory_desc_query(h, (what), (out))) != dnnl_success) \
        return st
#define QDIMS(what, dst)                                                 \
    Q((what), &v);                                                       \
    memcpy((dst), *v, sizeof(dnnl_dims_t))
    Q(dnnl_query_ndims_s32, &m->ndims);
    Q(dnnl_query_data_type, &m->data_type);
    Q(dnnl_query_format_kind, &m->format_kind);
    Q(dnnl_query_submemory_offset_s64, &m->offset0);
    QDIMS(dnnl_query_dims, m->dims);
    QDIMS(dnnl_query_padded_dims, m->padded_dims);
    QDIMS(dnnl_query_padded_offsets, m->padded_offsets);
    if (m->format_kind != dnnl_blocked)
        return dnnl_success; /* "any" has no strides yet */
    QDIMS(dnnl_query_strides, b->strides);
    Q(dnnl_query_inner_nblks_s32, &b->inner_nblks);
    QDIMS(dnnl_query_inner_blks, b->inner_blks);
    QDIMS(dnnl_query_inner_idxs, b->inner_idxs);
#undef QDIMS
#undef Q
    return dnnl_success;
}

/* *out = the value of layout h, interned; h stays the caller's. Called
 * with the lock held. Two handles share an entry only when all their
 * fields are the same, strides of dims of size 1 included, which
 * dnnl_memory_desc_equal ignores but oneDNN's kernel choice does not: a
 * bf16 convolution of one input channel got a fast kernel for nhwc and
 * only the reference one for the equal nchw. */
static dnnl_status_t intern(const_dnnl_memory_desc_t h, dlb_dnnl_md *out)
{
    dnnl_status_t st = read_fields(h, out);
    struct interned *e;
    if (st != dnnl_success)
        return st;
    uint64_t hash = fields_hash(out);
    struct interned **head = &interned[hash % BUCKETS];
    for (e = *head; e; e = e->next) {
        dlb_dnnl_md seen;
        if (e->hash == hash && read_fields(e->handle, &seen) == dnnl_success &&
            memcmp(&seen, out, sizeof seen) == 0 &&
            dnnl_memory_desc_equal(e->handle, h)) {
            out->handle = e->handle;
            return dnnl_success;
        }
    }
    if (!(e = malloc(sizeof *e)))
        return dnnl_out_of_memory;
    if ((st = dnnl_memory_desc_clone(&e->handle, h)) != dnnl_success) {
        free(e);
        return st;
    }
    e->hash = hash;
    e->next = *head;
    *head = e;
    out->handle = e->handle;
    return dnnl_success;
}

/* The memoised value of recipe r, made by `make` when new. */
static dnnl_status_t memoised(const struct recipe *r,
                              dnnl_status_t (*make)(const struct recipe *,
                                                    dnnl_memory_desc_t *),
                              dlb_dnnl_md *out)
{
    uint64_t hash = fnv(0xcbf29ce484222325ull, r, sizeof *r);
    struct memo **head = &memos[hash % BUCKETS], *e;
    dnnl_memory_desc_t h = NULL;
    dnnl_status_t st;
    pthread_mutex_lock(&lock);
    for (e = *head; e; e = e->next)
        if (e->hash == hash && memcmp(&e->key, r, sizeof *r) == 0) {
            *out = e->value;
            pthread_mutex_unlock(&lock);
            return dnnl_success;
        }
    st = make(r, &h);
    if (st == dnnl_success)
        st = intern(h, out);
    if (h)
        dnnl_memory_desc_destroy(h);
    if (st == dnnl_success && (e = malloc(sizeof *e))) {
        /* Without memory for the memo the value is still right. */
        e->key = *r;
        e->hash = hash;
        e->value = *out;
        e->next = *head;
        *head = e;
    }
    pthread_mutex_unlock(&lock);
    return st;
}

static dnnl_status_t make_tag(const struct recipe *r, dnnl_memory_desc_t *h)
{
    return dnnl_memory_desc_create_with_tag(h, r->ndims, r->dims, r->dt,
                                            r->tag);
}

dnnl_status_t dlb_dnnl_md_tag(dlb_dnnl_md *md, int ndims,
                              const dnnl_dims_t dims, dnnl_data_type_t dt,
                              dnnl_format_tag_t tag)
{
    struct recipe r;
    if (ndims < 1 || ndims > DNNL_MAX_NDIMS)
        return dnnl_invalid_arguments;
    memset(&r, 0, sizeof r); /* the key is compared bytewise */
    r.ndims = ndims;
    memcpy(r.dims, dims, (size_t)ndims * sizeof dims[0]);
    r.dt = dt;
    r.tag = tag;
    return memoised(&r, make_tag, md);
}

/* The layout of r->handle in type r->dt. 3.x has no call for it: a
 * strided layout is rebuilt from its strides; a blocked one is matched
 * against the activation tags the backend's primitives produce and
 * rebuilt from the tag. */
static dnnl_status_t make_retyped(const struct recipe *r,
                                  dnnl_memory_desc_t *h)
{
    static const dnnl_format_tag_t tags[] = { dnnl_aBcd16b, dnnl_aBcd8b,
                                              dnnl_aBcd32b, dnnl_aBcd4b };
    dlb_dnnl_md m;
    dnnl_status_t st = read_fields(r->handle, &m);
    if (st != dnnl_success)
        return st;
    if (m.format_kind != dnnl_blocked || m.offset0 != 0)
        return dnnl_unimplemented;
    if (m.format_desc.blocking.inner_nblks == 0)
        return dnnl_memory_desc_create_with_strides(
            h, m.ndims, m.dims, r->dt, m.format_desc.blocking.strides);
    for (size_t i = 0; m.ndims == 4 && i < sizeof tags / sizeof *tags; i++) {
        dnnl_memory_desc_t t;
        int same;
        if (dnnl_memory_desc_create_with_tag(&t, 4, m.dims, m.data_type,
                                             tags[i]) != dnnl_success)
            continue;
        same = dnnl_memory_desc_equal(t, r->handle);
        dnnl_memory_desc_destroy(t);
        if (same)
            return dnnl_memory_desc_create_with_tag(h, 4, m.dims, r->dt,
                                                    tags[i]);
    }
    return dnnl_unimplemented;
}

dnnl_status_t dlb_dnnl_md_retype(dlb_dnnl_md *out, const dlb_dnnl_md *md,
                                 dnnl_data_type_t dt)
{
    struct recipe r;
    if (!md->handle)
        return dnnl_invalid_arguments;
    if (md->data_type == dt) {
        *out = *md;
        return dnnl_success;
    }
    memset(&r, 0, sizeof r);
    r.dt = dt;
    r.handle = md->handle; /* interned: a stable key */
    return memoised(&r, make_retyped, out);
}

int dlb_dnnl_md_equal(const dlb_dnnl_md *a, const dlb_dnnl_md *b)
{
    /* The same entry, or layouts oneDNN deems equal (nchw and nhwc of
     * one channel), as 2.x's dnnl_memory_desc_equal answered. */
    if (a->handle == b->handle)
        return 1;
    return a->handle && b->handle &&
           dnnl_memory_desc_equal(a->handle, b->handle);
}

size_t dlb_dnnl_md_size(const dlb_dnnl_md *md)
{
    return md->handle ? dnnl_memory_desc_get_size(md->handle) : 0;
}

size_t dlb_dnnl_memory_size(const_dnnl_memory_t m)
{
    const_dnnl_memory_desc_t md = NULL;
    if (!m || dnnl_memory_get_memory_desc(m, &md) != dnnl_success || !md)
        return 0;
    return dnnl_memory_desc_get_size(md);
}

dnnl_status_t dlb_dnnl_pd_md(dlb_dnnl_md *out, const_dnnl_primitive_desc_t pd,
                             dnnl_query_t what)
{
    const_dnnl_memory_desc_t h = dnnl_primitive_desc_query_md(pd, what, 0);
    dnnl_status_t st;
    memset(out, 0, sizeof *out);
    if (!h)
        return dnnl_not_required;
    pthread_mutex_lock(&lock);
    st = intern(h, out);
    pthread_mutex_unlock(&lock);
    return st;
}

dnnl_status_t dlb_dnnl_pd_arg_md(dlb_dnnl_md *out, const_dnnl_primitive_desc_t pd,
                                 int arg)
{
    const_dnnl_memory_desc_t h =
        dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
    dnnl_status_t st;
    memset(out, 0, sizeof *out);
    if (!h || !dnnl_memory_desc_get_size(h))
        return dnnl_not_required;
    pthread_mutex_lock(&lock);
    st = intern(h, out);
    pthread_mutex_unlock(&lock);
    return st;
}

dnnl_status_t dlb_dnnl_memory_create(dnnl_memory_t *m, const dlb_dnnl_md *md,
                                     dnnl_engine_t engine, void *handle)
{
    return dnnl_memory_create(m, md->handle, engine, handle);
}
