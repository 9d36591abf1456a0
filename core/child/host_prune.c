/* prune_ops (ABI 1.2): masks, physical removal of units, sparse linear
 * layers and fine-tuning, for the prune plugin, over model_prune*.c and
 * the workload's training set. */
#include <dlbench/prune_ops.h>

#include "util/error.h"
#include "child/host.h"
#include "model/model_prune.h"
#include "util/rng.h"

/* Fine-tuning's batches: a stream of the configuration's seed apart from
 * the reference training's, so it does not replay that epoch's order. */
#define PRUNE_TUNE_STREAM 0x54554e45000000ull

static dlb_status po_set_mask(const struct dlb_host *h, struct dlb_model *m,
                              unsigned layer, const uint8_t *mask, size_t count)
{
    struct dlb_error err = {""};
    if (!m)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INTERNAL, "no model"),
                             &err);
    return dlb_host_fail(h, dlb_model_prune_set_mask(m, layer, mask, count,
                                                     &err), &err);
}

static dlb_status po_remove_units(const struct dlb_host *h, struct dlb_model *m,
                                  const struct dlb_prune_keep *sel, unsigned n)
{
    struct dlb_error err = {""};
    if (!m || (n && !sel))
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INTERNAL, "no model "
                                           "or selection"), &err);
    return dlb_host_fail(h, dlb_model_prune_remove(m, sel, n, &err), &err);
}

static dlb_status po_set_sparse(const struct dlb_host *h, struct dlb_model *m,
                                unsigned layer, enum dlb_prune_sparse_mode mode)
{
    struct dlb_error err = {""};
    if (!m || (unsigned)mode > DLB_PRUNE_SPARSE_AUTO)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INTERNAL, "no model "
                                           "or unknown mode %d", (int)mode),
                             &err);
    return dlb_host_fail(h, dlb_model_prune_set_sparse(m, layer, mode, &err),
                         &err);
}

static dlb_status po_sparse_info(const struct dlb_host *h,
                                 const struct dlb_model *m, unsigned layer,
                                 struct dlb_prune_sparse_info *out)
{
    struct dlb_error err = {""};
    if (!m || !out)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INTERNAL, "no model"),
                             &err);
    return dlb_host_fail(h, dlb_model_prune_sparse_info(m, layer, out, &err),
                         &err);
}

static dlb_status po_finetune(const struct dlb_host *h, struct dlb_model *m,
                              const struct dlb_prune_finetune *ft,
                              double *last_loss, double *seconds)
{
    struct dlb_error err = {""};
    const struct dlb_host_data *d =
        ((const struct dlb_host_priv *)h)->shared->data;
    const struct dlb_dataset *train = NULL;
    dlb_status s = DLB_OK;
    if (!m || !ft || ft->batch == 0)
        s = dlb_errorf(&err, DLB_ERR_INTERNAL, "no model, or batch 0");
    else if (ft->steps == 0)
        return DLB_OK;
    else if (!d || !d->dataset)
        s = dlb_errorf(&err, DLB_ERR_UNSUPPORTED, "this workload lends no "
                       "training set to fine-tune on");
    else
        s = d->dataset(d->ctx, 1, &train, &err);
    if (s == DLB_OK) {
        struct dlb_rng r;
        dlb_rng_seed_stream(&r, h->seed, PRUNE_TUNE_STREAM);
        struct dlb_batch_spec spec = {ft->batch, 1, 0, 1, dlb_rng_u64(&r)};
        s = dlb_model_finetune(m, train, &spec, ft->steps, ft->lr, last_loss,
                               seconds, &err);
    }
    return dlb_host_fail(h, s, &err);
}

const struct dlb_prune_ops dlb_host_prune_ops = {
    .struct_size = sizeof(struct dlb_prune_ops),
    .set_mask = po_set_mask,
    .remove_units = po_remove_units,
    .set_sparse = po_set_sparse,
    .sparse_info = po_sparse_info,
    .finetune = po_finetune,
};
