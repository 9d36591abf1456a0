/* The training batches of a run: the baseline loader (synchronous fill,
 * normalise and augment on the calling thread) or a plugin's batch source.
 * Both visit the data in dlb_epoch_order's order from its start, so a run
 * of N steps sees the same images whichever loads them. */
#ifndef DLB_CORE_MODEL_BATCHES_H
#define DLB_CORE_MODEL_BATCHES_H

#include <dlbench/plugin.h>

#include "data/dataset.h"
#include "util/error.h"

/* Stream ids of the baseline's augmentation draws: batch b of epoch e uses
 * stream DLB_BATCH_AUG_STREAM + (e << 32) + b of the spec's seed. */
#define DLB_BATCH_AUG_STREAM 0x41554700000000ull

struct dlb_batches;

/* Batch `index` of epoch `epoch` from d->images[indices[i]], i < n, with the
 * augmentation draws of stream DLB_BATCH_AUG_STREAM + (epoch << 32) + index
 * of `seed`: the one derivation shared by the baseline and the host's
 * batch_fill service, so a plugin's batches are the baseline's bit for bit.
 * in_step: the fill is the step's own, on its thread (the baseline), and
 * may use that thread's OpenMP threads (dlb_batch_fill_par); a plugin's
 * workers pass 0. */
dlb_status dlb_batches_fill(const struct dlb_dataset *d, const uint32_t *indices,
                            uint32_t n, int augment, uint64_t seed,
                            uint64_t epoch, uint64_t index, float *images,
                            int32_t *labels, int in_step);

/* A plugin's batch source, or all NULL for the baseline. */
struct dlb_batch_plugin {
    const struct dlb_batch_source_hooks *hooks;
    void *state;
    const struct dlb_host *host;
    /* Whether `bytes` at `p` lie in page-locked memory `host` lent the
     * plugin (the child's host tables keep that list); NULL: none do. */
    int (*pinned_holds)(const struct dlb_host *host, const void *p, size_t bytes);
};

/* Start at epoch 0, batch 0. The baseline drops the last partial batch of
 * each epoch (spec->drop_last is honoured by plugins) and refuses a batch
 * larger than the data set. */
dlb_status dlb_batches_open(const struct dlb_dataset *d,
                            const struct dlb_batch_spec *spec,
                            const struct dlb_batch_plugin *plugin,
                            struct dlb_batches **out, struct dlb_error *err);
/* The next batch; its buffers stay valid until the next call. */
dlb_status dlb_batches_next(struct dlb_batches *b, struct dlb_batch *out,
                            struct dlb_error *err);
void dlb_batches_close(struct dlb_batches *b);

/* The next batch for a training step on backend `be`. A plugin's batch in
 * page-locked memory (plugin ABI 1.4) comes on the device (*dev, with
 * *on_device 1) through uploads one step ahead (batch_prefetch.h); any
 * other on the host (*host, *on_device 0) as dlb_batches_next gives it.
 * `device_ok` 0 (a step executor uploads the batch itself) refuses a
 * pinned batch with DLB_ERR_UNSUPPORTED: its asynchronous copy could
 * still read the memory when the source refills it. */
struct dlb_dev_batch;
struct dlb_prefetch_figures;
dlb_status dlb_batches_take(struct dlb_batches *b, struct dlb_backend *be,
                            int device_ok, struct dlb_batch *host,
                            struct dlb_dev_batch *dev, int *on_device,
                            struct dlb_error *err);
/* The uploads' figures (zero when batches came on the host). */
void dlb_batches_upload_figures(const struct dlb_batches *b,
                                struct dlb_prefetch_figures *out);

#endif
