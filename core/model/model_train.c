/* One training step: forward in training mode, loss, backward, and the
 * SGD-with-momentum update. */
#include "model/model_impl.h"

#include "backend/backend.h"
#include "model/model_prune.h"

/* The loss lives in a one-element buffer of the model's type. */
dlb_status dlb_model_read_loss(struct dlb_model *m, double *loss,
                               struct dlb_error *err)
{
    const struct dlb_layer_spec *last = &m->spec->layers[m->spec->n_layers - 1];
    struct dlb_loss_desc ld = {m->n, last->in_c};
    struct dlb_buffer *lb = NULL;
    dlb_status s = dlb_model_step_alloc(m, m->dtype, 1, "loss", &lb, err);
    if (s != DLB_OK)
        return s;
    s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_NLL_LOSS,
            .prop = DLB_PROP_FWD_TRAIN, .loss = ld,
            .x = m->act[m->spec->n_layers], .labels = m->labels, .y = lb});
    if (s == DLB_OK && m->dtype == DLB_F64) {
        s = dlb_backend_ops_of(m->be)->copy_to_host(m->be, loss, lb, 0, 8);
    } else if (s == DLB_OK) {
        float f = 0.0f;
        /* Any float type reads back as F32 through a cast. */
        struct dlb_buffer *f32 = lb;
        if (m->dtype != DLB_F32 &&
            (s = dlb_model_step_alloc(m, DLB_F32, 1, "loss", &f32, err)) == DLB_OK)
            s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_CAST,
                    .count = 1, .x = lb, .y = f32});
        if (s == DLB_OK)
            s = dlb_backend_ops_of(m->be)->copy_to_host(m->be, &f, f32, 0, 4);
        if (f32 != lb)
            dlb_model_step_free(m, &f32);
        *loss = f;
    }
    dlb_model_step_free(m, &lb);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, last->name, "loss", err);
}

/* The layers of a training forward pass over m->act[0]. */
static dlb_status forward_layers(struct dlb_model *m, struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    dlb_status s;
    /* One fresh seed per dropout layer per step; backward reuses it. */
    for (size_t i = 0; i < nl; i++)
        if (m->layers[i].spec->kind == DLB_LAYER_DROPOUT)
            m->layers[i].drop_seed = dlb_rng_u64(&m->drop_rng);
    /* The whole network: layers may fuse (model_fuse.c). */
    dlb_model_fuse_begin(m);
    s = DLB_OK;
    for (size_t i = 0; i < nl && s == DLB_OK; i++)
        s = dlb_model_node_fwd(m, i, 1, err);
    dlb_model_fuse_end(m);
    return s;
}

dlb_status dlb_model_forward_train(struct dlb_model *m, const float *images,
                                   const int32_t *labels, uint32_t n,
                                   struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    dlb_status s;
    m->n = n;
    if ((s = dlb_model_prec_begin(m, err)) ||
        (s = dlb_model_upload_input(m, images, n, &m->act[0], err)))
        return s;
    m->own[0] = 1;
    if ((s = dlb_model_step_alloc(m, DLB_S32, n, "labels", &m->labels, err)))
        return s;
    if ((s = ops->copy_from_host(m->be, m->labels, 0, labels,
                                 (size_t)n * sizeof *labels)))
        return dlb_model_be_fail(m, s, "labels", "upload", err);
    return forward_layers(m, err);
}

dlb_status dlb_model_forward_backward_dev(struct dlb_model *m,
                                          struct dlb_buffer *images,
                                          struct dlb_buffer *labels,
                                          uint32_t n, float loss_scale,
                                          double *loss, struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    dlb_status s;
    if (n == 0 || nl == 0 ||
        m->spec->layers[nl - 1].kind != DLB_LAYER_LOGSOFTMAX)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: training needs a "
                          "non-empty batch and a logsoftmax last layer",
                          m->spec->path);
    dlb_model_step_release(m);
    m->n = n;
    s = dlb_model_prec_begin(m, err);
    /* The caller's buffers are read, never freed: own[0] stays 0 and the
     * labels are taken back before the release. */
    if (s == DLB_OK && m->dtype == DLB_F32) {
        m->act[0] = images;
        m->own[0] = 0;
    } else if (s == DLB_OK &&
               (s = dlb_model_cast_new(m, images, m->dtype,
                                       (size_t)n * dlb_model_act_size(m, 0),
                                       "input", &m->act[0], err)) == DLB_OK) {
        m->own[0] = 1;
    }
    m->labels = labels;
    if (s == DLB_OK)
        s = forward_layers(m, err);
    if (s == DLB_OK && loss)
        s = dlb_model_read_loss(m, loss, err);
    if (s == DLB_OK)
        s = dlb_model_backward(m, loss_scale, err);
    m->labels = NULL;
    dlb_model_step_release(m);
    return s;
}

dlb_status dlb_model_forward_backward(struct dlb_model *m, const float *images,
                                      const int32_t *labels, uint32_t n,
                                      float loss_scale, double *loss,
                                      struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    dlb_status s;
    if (n == 0 || nl == 0 ||
        m->spec->layers[nl - 1].kind != DLB_LAYER_LOGSOFTMAX)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: training needs a "
                          "non-empty batch and a logsoftmax last layer",
                          m->spec->path);
    dlb_model_step_release(m);
    s = dlb_model_forward_train(m, images, labels, n, err);
    if (s == DLB_OK && loss)
        s = dlb_model_read_loss(m, loss, err);
    if (s == DLB_OK)
        s = dlb_model_backward(m, loss_scale, err);
    dlb_model_step_release(m);
    return s;
}

dlb_status dlb_model_unscale_grads(struct dlb_model *m, float loss_scale,
                                   int *found_nonfinite, struct dlb_error *err)
{
    dlb_status s = DLB_OK;
    if (found_nonfinite)
        *found_nonfinite = 0;
    for (size_t i = 0; i < m->n_params && s == DLB_OK; i++) {
        struct dlb_model_param *p = &m->params[i];
        int bad = 0;
        if (!p->grad)
            continue;
        if (loss_scale != 1.0f)
            s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_SCALE,
                    .count = p->t.count, .y = p->grad,
                    .alpha = 1.0f / loss_scale});
        if (s == DLB_OK && found_nonfinite &&
            (s = dlb_backend_run(m->be, &(struct dlb_op){
                     .kind = DLB_OP_CHECK_FINITE, .count = p->t.count,
                     .x = p->grad, .nonfinite = &bad})) ==
                DLB_OK && bad)
            *found_nonfinite = 1;
        if (s != DLB_OK)
            return dlb_model_be_fail(m, s, p->name, "unscale gradients", err);
    }
    return s;
}

dlb_status dlb_model_sgd_step(struct dlb_model *m, struct dlb_error *err)
{
    for (size_t i = 0; i < m->n_params; i++) {
        struct dlb_model_param *p = &m->params[i];
        struct dlb_sgd_desc d = {p->t.count, m->lr, m->momentum, 0.0f};
        if (!p->grad)
            continue;
        dlb_status s = dlb_backend_run(m->be, &(struct dlb_op){
                           .kind = DLB_OP_SGD, .sgd = d, .param = p->t.buf,
                           .g = p->grad, .v = p->mom});
        if (s != DLB_OK)
            return dlb_model_be_fail(m, s, p->name, "sgd_update", err);
    }
    dlb_status s = dlb_model_prune_after_update(m, err); /* masks kept */
    return s == DLB_OK ? dlb_model_prec_updated(m, err) : s;
}
