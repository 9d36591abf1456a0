/* h->model_api's rewrite and extras (ABI 2.1): the one hook that changes
 * how nodes compute (int8 for quant; masks, removed units and sparse
 * nodes for prune), and the services only one plugin needs, by name. */
#include <stdlib.h>
#include <string.h>

#include "child/host.h"
#include "child/host_api.h"
#include "services/model_range.h"
#include "model/model_prune.h"
#include "model/model_quant.h"
#include "services/model_distill.h"
#include "services/model_replica.h"

/* An int8 rewrite names every node in order: the core's plan is of the
 * whole network. */
static dlb_status rewrite_int8(struct dlb_model *m,
                               const struct dlb_rewrite *rw,
                               unsigned n, struct dlb_quant_summary *sum,
                               struct dlb_error *err)
{
    struct dlb_quant_layer *ql = calloc(n ? n : 1, sizeof *ql);
    dlb_status s = DLB_OK;
    if (!ql)
        return dlb_errorf(err, DLB_ERR_NOMEM, "rewrite: out of memory");
    for (unsigned k = 0; s == DLB_OK && k < n; k++)
        if (rw[k].node != k)
            s = dlb_errorf(err, DLB_ERR_INPUT, "rewrite: an int8 rewrite "
                           "gives every node in order; entry %u is node %u",
                           k, rw[k].node);
        else
            ql[k] = rw[k].u.quant;
    if (s == DLB_OK)
        s = dlb_model_quant_apply(m, ql, n, sum, err);
    free(ql);
    return s;
}

static dlb_status rewrite_keep(struct dlb_model *m,
                               const struct dlb_rewrite *rw,
                               unsigned n, struct dlb_error *err)
{
    struct dlb_prune_keep *sel = calloc(n ? n : 1, sizeof *sel);
    if (!sel)
        return dlb_errorf(err, DLB_ERR_NOMEM, "rewrite: out of memory");
    for (unsigned k = 0; k < n; k++)
        sel[k] = (struct dlb_prune_keep){rw[k].node, rw[k].u.keep.units,
                                         rw[k].u.keep.n};
    /* The network is rebuilt smaller: kept range passes would outlive
     * the nodes and tensors they hold. */
    dlb_model_ranges_drop(m);
    dlb_status s = dlb_model_prune_remove(m, sel, n, err);
    free(sel);
    return s;
}

static dlb_status rewrite_one(struct dlb_model *m, const struct dlb_rewrite *r,
                              struct dlb_error *err)
{
    if (r->kind == DLB_REWRITE_MASK)
        return dlb_model_prune_set_mask(m, r->node, r->u.mask.mask,
                                        r->u.mask.count, err);
    if ((unsigned)r->u.sparse > DLB_PRUNE_SPARSE_AUTO)
        return dlb_errorf(err, DLB_ERR_INPUT, "rewrite: unknown sparse mode "
                          "%d for node %u", (int)r->u.sparse, r->node);
    return dlb_model_prune_set_sparse(m, r->node, r->u.sparse, err);
}

static dlb_status rewrite(const struct dlb_host *h, struct dlb_model *m,
                          const struct dlb_rewrite *rw, unsigned n,
                          void *result)
{
    struct dlb_error err = {""};
    dlb_status s = DLB_OK;
    if (!m || (n && !rw))
        return dlb_host_null(h, "rewrite");
    for (unsigned k = 1; k < n; k++)
        if (rw[k].kind != rw[0].kind)
            return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INPUT, "rewrite: "
                                 "entries of one call are of one kind"), &err);
    struct dlb_host_shared *sh = ((const struct dlb_host_priv *)h)->shared;
    int workload_model = !dlb_model_lend_holds(&sh->models, m);
    if (n && rw[0].kind == DLB_REWRITE_INT8) {
        s = rewrite_int8(m, rw, n, result, &err);
        if (s == DLB_OK && workload_model)
            sh->int8_rewritten = 1;
    } else if (n && rw[0].kind == DLB_REWRITE_KEEP) {
        s = rewrite_keep(m, rw, n, &err);
    } else if (n && rw[0].kind == DLB_REWRITE_FP32) {
        dlb_model_quant_clear(m);
        if (workload_model)
            sh->int8_rewritten = 0;
    } else {
        for (unsigned k = 0; s == DLB_OK && k < n; k++)
            s = rewrite_one(m, &rw[k], &err);
    }
    return dlb_host_fail(h, s, &err);
}

/* ---- extras --------------------------------------------------------- */

static dlb_status x_observe(const struct dlb_host *h, struct dlb_model *m,
                            const float *images, uint32_t n,
                            dlb_quant_observe_fn fn, void *ctx)
{
    DLB_HOST_CALL("quant.observe", m && images && n && fn,
                  dlb_model_quant_observe(m, images, n, fn, ctx, &err));
}

static dlb_status x_folded_weights(const struct dlb_host *h,
                                   struct dlb_model *m, unsigned i, float *w,
                                   size_t w_count, float *b, size_t b_count)
{
    DLB_HOST_CALL("quant.folded_weights", m && w && b,
                  dlb_model_quant_weights(m, i, w, w_count, b, b_count, &err));
}

static dlb_status x_sparse_info(const struct dlb_host *h,
                                const struct dlb_model *m, unsigned layer,
                                struct dlb_prune_sparse_info *out)
{
    DLB_HOST_CALL("prune.sparse_info", m && out,
                  dlb_model_prune_sparse_info(m, layer, out, &err));
}

static dlb_status x_finetune(const struct dlb_host *h, struct dlb_model *m,
                             const struct dlb_prune_finetune *ft,
                             double *last_loss, double *seconds)
{
    struct dlb_error err = {""};
    const struct dlb_host_data *d =
        ((const struct dlb_host_priv *)h)->shared->data;
    const struct dlb_dataset *train = NULL;
    dlb_status s;
    if (!m || !ft || ft->batch == 0)
        return dlb_host_null(h, "prune.finetune (or batch 0)");
    if (ft->steps == 0)
        return DLB_OK;
    if (!d || !d->dataset)
        s = dlb_errorf(&err, DLB_ERR_UNSUPPORTED, "this workload lends no "
                       "training set to fine-tune on");
    else if ((s = d->dataset(d->ctx, 1, &train, &err)) == DLB_OK)
        s = dlb_model_finetune_seeded(m, train, ft, h->seed, last_loss,
                                      seconds, &err);
    return dlb_host_fail(h, s, &err);
}

static dlb_status x_distill_step(const struct dlb_host *h, struct dlb_model *m,
                                 const struct dlb_batch *b,
                                 const float *teacher_logits,
                                 float temperature, float alpha, double *loss)
{
    DLB_HOST_CALL("distill.soft_target_step", m && b,
                  dlb_model_distill_step(m, b->images, b->labels, b->n,
                                         teacher_logits, temperature, alpha,
                                         loss, &err));
}

static dlb_status x_copy_rng(const struct dlb_host *h, struct dlb_model *dst,
                             const struct dlb_model *src)
{
    if (!dst || !src)
        return dlb_host_null(h, "model.copy_rng");
    dlb_model_copy_rng(dst, src);
    return DLB_OK;
}

static dlb_status x_world_join(const struct dlb_host *h,
                               const struct dlb_world *w)
{
    struct dlb_host_shared *sh = ((const struct dlb_host_priv *)h)->shared;
    struct dlb_error err = {""};
    if (!w || w->size < 1 || w->rank < 0 || w->rank >= w->size ||
        (w->size > 1 && !w->agree))
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INTERNAL, "world."
                             "join: a rank in [0, size) and, for more than "
                             "one process, agree"), &err);
    json_t *hosts = json_array();
    for (int r = 0; hosts && r < w->size; r++)
        json_array_append_new(hosts, json_string(w->hosts && w->hosts[r]
                                                     ? w->hosts[r] : "?"));
    json_t *world = json_pack("{s:i,s:o*}", "size", w->size, "hosts", hosts);
    if (!world)
        return DLB_ERR_NOMEM;
    json_decref(sh->world);
    sh->world = world;
    sh->rank = w->rank;
    sh->agree = w->size > 1 ? w->agree : NULL;
    sh->agree_ctx = w->ctx;
    return DLB_OK;
}

/* One line per extra; model_api.h documents each with its type. */
static const struct {
    const char *name;
    dlb_extra_fn fn;
} extras[] = {
    {"quant.observe", (dlb_extra_fn)x_observe},
    {"quant.folded_weights", (dlb_extra_fn)x_folded_weights},
    {"prune.sparse_info", (dlb_extra_fn)x_sparse_info},
    {"prune.finetune", (dlb_extra_fn)x_finetune},
    {"distill.soft_target_step", (dlb_extra_fn)x_distill_step},
    {"model.copy_rng", (dlb_extra_fn)x_copy_rng},
    {"world.join", (dlb_extra_fn)x_world_join},
};

static dlb_extra_fn extra(const struct dlb_host *h, const char *name)
{
    (void)h;
    for (size_t i = 0; name && i < sizeof extras / sizeof extras[0]; i++)
        if (!strcmp(extras[i].name, name))
            return extras[i].fn;
    return NULL;
}

void dlb_host_rewrite_entries(struct dlb_model_api *api)
{
    api->rewrite = rewrite;
    api->extra = extra;
}
