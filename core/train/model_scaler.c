/* The gradient scaler on the device (model_scaler.h). */
#include "train/model_scaler.h"

#include "backend/backend.h"
#include "model/model_impl.h"
#include "model/model_prune.h"

int dlb_model_device_scaler(const struct dlb_model *m)
{
    const struct dlb_backend_ops *o = dlb_backend_ops_of(m->be);
    return dlb_backend_has_kind(m->be, DLB_OP_UNSCALE_CHECK) &&
           dlb_backend_has_kind(m->be, DLB_OP_SGD_IF_FINITE) && o->flag_post &&
           o->flag_wait && (!m->lowp || m->master);
}

static dlb_status clear_flag(struct dlb_model *m, struct dlb_error *err)
{
    dlb_status s = DLB_OK;
    if (!m->found)
        s = dlb_backend_ops_of(m->be)->buffer_alloc(m->be, DLB_S32, 1,
                                                    &m->found);
    if (s == DLB_OK)
        s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_FILL,
                .count = 1, .y = m->found, .value = 0.0});
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, "gradients",
                                               "overflow flag", err);
}

dlb_status dlb_model_scaled_update(struct dlb_model *m, float loss_scale,
                                   struct dlb_error *err)
{
    dlb_status s = dlb_model_scaled_apply(m, loss_scale, err);
    return s == DLB_OK ? dlb_model_scaled_post(m, err) : s;
}

dlb_status dlb_model_scaled_post(struct dlb_model *m, struct dlb_error *err)
{
    dlb_status s = DLB_BE_CALL(m->be, flag_post, m->found);
    if (s != DLB_OK)
        return dlb_model_be_fail(m, s, "gradients", "flag_post", err);
    m->found_posted = 1;
    return DLB_OK;
}

dlb_status dlb_model_scaled_apply(struct dlb_model *m, float loss_scale,
                                  struct dlb_error *err)
{
    /* The reciprocal the host path multiplies by, so both round alike. */
    float inv = loss_scale != 1.0f ? 1.0f / loss_scale : 1.0f;
    dlb_status s = clear_flag(m, err);
    for (size_t i = 0; i < m->n_params && s == DLB_OK; i++) {
        struct dlb_model_param *p = &m->params[i];
        if (p->grad &&
            (s = dlb_backend_run(m->be, &(struct dlb_op){
                     .kind = DLB_OP_UNSCALE_CHECK, .count = p->t.count,
                     .y = p->grad, .alpha = inv, .found = m->found})) != DLB_OK)
            return dlb_model_be_fail(m, s, p->name, "unscale gradients", err);
    }
    for (size_t i = 0; i < m->n_params && s == DLB_OK; i++) {
        struct dlb_model_param *p = &m->params[i];
        struct dlb_sgd_desc d = {p->t.count, m->lr, m->momentum, 0.0f};
        if (p->grad &&
            (s = dlb_backend_run(m->be, &(struct dlb_op){
                     .kind = DLB_OP_SGD_IF_FINITE, .sgd = d,
                     .param = p->t.buf, .g = p->grad, .v = p->mom,
                     .found = m->found})) != DLB_OK)
            return dlb_model_be_fail(m, s, p->name, "sgd_update_if_finite",
                                     err);
    }
    /* As dlb_model_sgd_step ends: both passes leave weights that did not
     * change as they were (masks reapplied, low-precision copies marked
     * for a cast that gives the same values). */
    if (s == DLB_OK)
        s = dlb_model_prune_after_update(m, err);
    if (s == DLB_OK)
        s = dlb_model_prec_updated(m, err);
    return s;
}

dlb_status dlb_model_scaled_result(struct dlb_model *m, int *found_nonfinite,
                                   struct dlb_error *err)
{
    int32_t v = 0;
    dlb_status s;
    *found_nonfinite = 0;
    if (!m->found_posted)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: no overflow flag was "
                          "posted", m->spec->path);
    m->found_posted = 0;
    if ((s = DLB_BE_CALL(m->be, flag_wait, &v)) != DLB_OK)
        return dlb_model_be_fail(m, s, "gradients", "flag_wait", err);
    *found_nonfinite = v != 0;
    return DLB_OK;
}
