/* Training batches: the baseline loader and the plugin adapter. */
#include "data/batches.h"

#include <stdlib.h>

#include "backend/backend.h"
#include "data/augment.h"
#include "data/batch_prefetch.h"

struct dlb_batches {
    const struct dlb_dataset *d;
    struct dlb_batch_spec spec;
    struct dlb_batch_plugin plugin;
    void *src;                 /* the plugin's source */
    uint32_t *order;           /* baseline: this epoch's order */
    uint64_t epoch;
    uint32_t pos, index;       /* next image of the order, batch in epoch */
    float *images;
    int32_t *labels;
    struct dlb_prefetch *pf;   /* pinned batches: uploads a step ahead */
};

dlb_status dlb_batches_open(const struct dlb_dataset *d,
                            const struct dlb_batch_spec *spec,
                            const struct dlb_batch_plugin *plugin,
                            struct dlb_batches **out, struct dlb_error *err)
{
    size_t per = (size_t)d->c * d->h * d->w;
    dlb_status s;
    *out = NULL;
    if (spec->batch == 0 || spec->batch > d->n)
        return dlb_errorf(err, DLB_ERR_INPUT, "batch %u: the training set %s "
                          "holds %u images; choose a batch between 1 and %u",
                          spec->batch, d->source, d->n, d->n);
    struct dlb_batches *b = calloc(1, sizeof *b);
    if (!b)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    b->d = d;
    b->spec = *spec;
    if (plugin && plugin->hooks) {
        b->plugin = *plugin;
        s = plugin->hooks->open(plugin->state, plugin->host, d, spec, &b->src);
        if (s != DLB_OK) {
            free(b);
            return dlb_errorf(err, s, "batch source: open failed (%s)",
                              dlb_status_name(s));
        }
        *out = b;
        return DLB_OK;
    }
    b->order = malloc((size_t)d->n * sizeof *b->order);
    b->images = malloc((size_t)spec->batch * per * sizeof *b->images);
    b->labels = malloc((size_t)spec->batch * sizeof *b->labels);
    if (!b->order || !b->images || !b->labels) {
        dlb_batches_close(b);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory for batch %u",
                          spec->batch);
    }
    dlb_epoch_order(b->order, d->n, spec->seed, 0, spec->shuffle);
    *out = b;
    return DLB_OK;
}

dlb_status dlb_batches_fill(const struct dlb_dataset *d, const uint32_t *indices,
                            uint32_t n, int augment, uint64_t seed,
                            uint64_t epoch, uint64_t index, float *images,
                            int32_t *labels, int in_step)
{
    struct dlb_rng rng;
    dlb_rng_seed_stream(&rng, seed, DLB_BATCH_AUG_STREAM + (epoch << 32) + index);
    return in_step ? dlb_batch_fill_par(d, indices, n, augment, &rng, images,
                                        labels)
                   : dlb_batch_fill(d, indices, n, augment, &rng, images,
                                    labels);
}

static dlb_status baseline_next(struct dlb_batches *b, struct dlb_batch *out,
                                struct dlb_error *err)
{
    const struct dlb_dataset *d = b->d;
    uint32_t n = b->spec.batch;
    if (b->pos + n > d->n) {
        b->epoch++;
        b->pos = b->index = 0;
        dlb_epoch_order(b->order, d->n, b->spec.seed, b->epoch, b->spec.shuffle);
    }
    dlb_status s = dlb_batches_fill(d, b->order + b->pos, n, b->spec.augment,
                                    b->spec.seed, b->epoch, b->index,
                                    b->images, b->labels, 1);
    if (s != DLB_OK)
        return dlb_errorf(err, s, "filling a batch from %s failed", d->source);
    b->pos += n;
    b->index++;
    *out = (struct dlb_batch){b->images, b->labels, n, d->c, d->h, d->w};
    return DLB_OK;
}

dlb_status dlb_batches_next(struct dlb_batches *b, struct dlb_batch *out,
                            struct dlb_error *err)
{
    if (!b->plugin.hooks)
        return baseline_next(b, out, err);
    dlb_status s = b->plugin.hooks->next(b->src, out);
    if (s != DLB_OK)
        return dlb_errorf(err, s, "batch source: next failed (%s)",
                          dlb_status_name(s));
    if (out->n == 0 || out->c != b->d->c || out->h != b->d->h ||
        out->w != b->d->w)
        return dlb_errorf(err, DLB_ERR_PLUGIN, "batch source: returned a batch "
                          "of %ux%ux%ux%u; the data are %ux%ux%u", out->n, out->c,
                          out->h, out->w, b->d->c, b->d->h, b->d->w);
    return DLB_OK;
}

void dlb_batches_close(struct dlb_batches *b)
{
    if (!b)
        return;
    dlb_prefetch_close(b->pf); /* its copies read the source's memory */
    if (b->plugin.hooks && b->src)
        b->plugin.hooks->close(b->src);
    free(b->order);
    free(b->images);
    free(b->labels);
    free(b);
}

/* A plugin batch whose images and labels lie in page-locked memory the
 * host lent it. */
static int pinned(const struct dlb_batches *b, const struct dlb_batch *x)
{
    const struct dlb_host *h = b->plugin.host;
    size_t img = (size_t)x->n * x->c * x->h * x->w * sizeof(float);
    return b->plugin.hooks && h && b->plugin.pinned_holds &&
           b->plugin.pinned_holds(h, x->images, img) &&
           b->plugin.pinned_holds(h, x->labels, (size_t)x->n * sizeof(int32_t));
}

dlb_status dlb_batches_take(struct dlb_batches *b, struct dlb_backend *be,
                            int device_ok, struct dlb_batch *host,
                            struct dlb_dev_batch *dev, int *on_device,
                            struct dlb_error *err)
{
    dlb_status s;
    *on_device = 0;
    if (b->pf) {
        *on_device = 1;
        return dlb_prefetch_next(b->pf, b, dev, err);
    }
    if ((s = dlb_batches_next(b, host, err)) != DLB_OK || !pinned(b, host))
        return s;
    if (!device_ok)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "batch source: pinned "
                          "batches (dataloader.pinned = on) with a step "
                          "executor, which copies the batch itself: set "
                          "pinned = off with it");
    if (!dlb_prefetch_supported(be))
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "batch source: pinned "
                          "batches on backend %s, which has no uploads on a "
                          "copy stream", dlb_backend_name(be));
    size_t per = (size_t)b->d->c * b->d->h * b->d->w;
    if ((s = dlb_prefetch_open(be, b->spec.batch, per, host, &b->pf, err)))
        return s;
    *on_device = 1;
    return dlb_prefetch_next(b->pf, b, dev, err);
}

void dlb_batches_upload_figures(const struct dlb_batches *b,
                                struct dlb_prefetch_figures *out)
{
    dlb_prefetch_figures(b ? b->pf : NULL, out);
}
