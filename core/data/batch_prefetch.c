/* Pinned batches uploaded a step ahead (batch_prefetch.h). */
#include "data/batch_prefetch.h"

#include <stdlib.h>

#include "backend/backend.h"

struct slot {
    struct dlb_buffer *images, *labels;
    struct dlb_upload *up;
    uint32_t n;
    int waited;  /* the stream waited for its last upload: measurable */
};

struct dlb_prefetch {
    struct dlb_backend *be;
    uint32_t batch;
    size_t per;            /* floats per image */
    struct slot slot[2];
    unsigned cur;          /* the slot of the batch the next step uses */
    struct dlb_prefetch_figures fig;
};

int dlb_prefetch_supported(struct dlb_backend *be)
{
    const struct dlb_backend_ops *o = dlb_backend_ops_of(be);
    return o->upload_create && o->upload_destroy && o->upload_async &&
           o->upload_wait && o->upload_sync && o->upload_figures;
}

static dlb_status be_fail(struct dlb_prefetch *p, dlb_status s, const char *op,
                          struct dlb_error *err)
{
    return dlb_errorf(err, s, "batch upload: %s: %s", op,
                      dlb_backend_last_error(p->be));
}

/* The last upload of slot `sl`, measured before its events are reused. */
static dlb_status measure(struct dlb_prefetch *p, struct slot *sl,
                          struct dlb_error *err)
{
    double copy_s = 0.0, stall_s = 0.0;
    if (!sl->waited)
        return DLB_OK;
    sl->waited = 0;
    dlb_status s = dlb_backend_ops_of(p->be)->upload_figures(p->be, sl->up,
                                                             &copy_s, &stall_s);
    if (s != DLB_OK)
        return be_fail(p, s, "upload_figures", err);
    p->fig.measured++;
    p->fig.copy_s += copy_s;
    /* A wait longer than the copy includes the copy stream's queue: only
     * the copy's own time counts as exposed. */
    p->fig.exposed_s += stall_s < copy_s ? stall_s : copy_s;
    return DLB_OK;
}

static dlb_status upload(struct dlb_prefetch *p, struct slot *sl,
                         const struct dlb_batch *b, struct dlb_error *err)
{
    size_t img = (size_t)b->n * p->per * sizeof(float);
    size_t lab = (size_t)b->n * sizeof(int32_t);
    if (b->n > p->batch)
        return dlb_errorf(err, DLB_ERR_PLUGIN, "batch source: a batch of %u "
                          "images, above the batch size %u", b->n, p->batch);
    struct dlb_upload_part parts[2] = {{sl->images, 0, b->images, img},
                                       {sl->labels, 0, b->labels, lab}};
    dlb_status s = measure(p, sl, err);
    if (s != DLB_OK)
        return s;
    s = dlb_backend_ops_of(p->be)->upload_async(p->be, sl->up, parts, 2);
    if (s != DLB_OK)
        return be_fail(p, s, "upload_async", err);
    sl->n = b->n;
    p->fig.batches++;
    p->fig.bytes += (double)(img + lab);
    return DLB_OK;
}

dlb_status dlb_prefetch_open(struct dlb_backend *be, uint32_t batch,
                             size_t per_image, const struct dlb_batch *first,
                             struct dlb_prefetch **out, struct dlb_error *err)
{
    const struct dlb_backend_ops *o = dlb_backend_ops_of(be);
    dlb_status s = DLB_OK;
    *out = NULL;
    if (!dlb_prefetch_supported(be))
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "batch upload: backend %s "
                          "has no uploads on a copy stream", o->name);
    struct dlb_prefetch *p = calloc(1, sizeof *p);
    if (!p)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    p->be = be;
    p->batch = batch;
    p->per = per_image;
    for (int i = 0; i < 2 && s == DLB_OK; i++) {
        struct slot *sl = &p->slot[i];
        if ((s = o->buffer_alloc(be, DLB_F32, (size_t)batch * per_image,
                                 &sl->images)) ||
            (s = o->buffer_alloc(be, DLB_S32, batch, &sl->labels)))
            s = be_fail(p, s, "device slots", err);
        else if ((s = o->upload_create(be, &sl->up)))
            s = be_fail(p, s, "upload_create", err);
    }
    if (s == DLB_OK)
        s = upload(p, &p->slot[0], first, err);
    if (s != DLB_OK) {
        dlb_prefetch_close(p);
        return s;
    }
    *out = p;
    return DLB_OK;
}

dlb_status dlb_prefetch_next(struct dlb_prefetch *p, struct dlb_batches *src,
                             struct dlb_dev_batch *out, struct dlb_error *err)
{
    const struct dlb_backend_ops *o = dlb_backend_ops_of(p->be);
    struct slot *cur = &p->slot[p->cur], *nxt = &p->slot[p->cur ^ 1u];
    struct dlb_batch b;
    dlb_status s;
    if ((s = o->upload_wait(p->be, cur->up)))
        return be_fail(p, s, "upload_wait", err);
    cur->waited = 1;
    /* Batch k's memory goes back to the source at the next call. */
    if ((s = o->upload_sync(p->be, cur->up)))
        return be_fail(p, s, "upload_sync", err);
    if ((s = dlb_batches_next(src, &b, err)) ||
        (s = upload(p, nxt, &b, err)))
        return s;
    *out = (struct dlb_dev_batch){cur->images, cur->labels, cur->n};
    p->cur ^= 1u;
    return DLB_OK;
}

void dlb_prefetch_close(struct dlb_prefetch *p)
{
    if (!p)
        return;
    const struct dlb_backend_ops *o = dlb_backend_ops_of(p->be);
    for (int i = 0; i < 2; i++) {
        o->upload_destroy(p->be, p->slot[i].up); /* waits for its copy */
        o->buffer_free(p->be, p->slot[i].images);
        o->buffer_free(p->be, p->slot[i].labels);
    }
    free(p);
}

void dlb_prefetch_figures(const struct dlb_prefetch *p,
                          struct dlb_prefetch_figures *out)
{
    *out = p ? p->fig : (struct dlb_prefetch_figures){0, 0, 0.0, 0.0, 0.0};
}
