/* quant_ops (ABI 1.2): int8 execution of conv and linear layers, for the
 * quant plugin, over core/model/model_quant*.c. Failures are logged
 * under the plugin's name with the reason (dlb_host_fail). */
#include <dlbench/quant_ops.h>

#include "util/error.h"
#include "child/host.h"
#include "model/model_quant.h"

static dlb_status qo_observe(const struct dlb_host *h, struct dlb_model *m,
                             const float *images, uint32_t n,
                             dlb_quant_observe_fn fn, void *ctx)
{
    struct dlb_error err = {""};
    dlb_status s = !m || !images || !n || !fn
        ? dlb_errorf(&err, DLB_ERR_INTERNAL, "observe: model, images (n > 0) "
                     "and an observer are required")
        : dlb_model_quant_observe(m, images, n, fn, ctx, &err);
    return dlb_host_fail(h, s, &err);
}

static dlb_status qo_layer_weights(const struct dlb_host *h,
                                   struct dlb_model *m, unsigned i, float *w,
                                   size_t w_count, float *b, size_t b_count)
{
    struct dlb_error err = {""};
    dlb_status s = !m || !w || !b
        ? dlb_errorf(&err, DLB_ERR_INTERNAL, "layer_weights: model, w and b "
                     "are required")
        : dlb_model_quant_weights(m, i, w, w_count, b, b_count, &err);
    return dlb_host_fail(h, s, &err);
}

static dlb_status qo_apply(const struct dlb_host *h, struct dlb_model *m,
                           const struct dlb_quant_layer *layers, unsigned n,
                           struct dlb_quant_summary *out)
{
    struct dlb_error err = {""};
    dlb_status s = !m || !layers
        ? dlb_errorf(&err, DLB_ERR_INTERNAL, "apply: model and layers are "
                     "required")
        : dlb_model_quant_apply(m, layers, n, out, &err);
    return dlb_host_fail(h, s, &err);
}

static void qo_clear(const struct dlb_host *h, struct dlb_model *m)
{
    (void)h;
    if (m)
        dlb_model_quant_clear(m);
}

const struct dlb_quant_ops dlb_host_quant_ops = {
    .struct_size = sizeof(struct dlb_quant_ops),
    .observe = qo_observe,
    .layer_weights = qo_layer_weights,
    .apply = qo_apply,
    .clear = qo_clear,
};
