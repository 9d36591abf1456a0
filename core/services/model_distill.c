/* A distillation step: the baseline's forward, the blended gradient at the
 * logits (a few kilobytes, combined on the host), the baseline's backward
 * from there and its SGD update. */
#include "services/model_distill.h"

#include <stdlib.h>

#include "backend/backend.h"
#include "train/distill_loss.h"
#include "model/model_impl.h"

/* `count` elements of `b` as fp32 on the host, through a cast when the
 * buffer has another type (logits of a low-precision layer). */
static dlb_status to_host(struct dlb_model *m, struct dlb_buffer *b,
                          size_t count, float *out, const char *what,
                          struct dlb_error *err)
{
    struct dlb_buffer *f32 = b;
    dlb_status s = DLB_OK;
    if (dlb_buffer_dtype(b) != DLB_F32 &&
        (s = dlb_model_cast_new(m, b, DLB_F32, count, what, &f32, err)))
        return s;
    s = dlb_backend_ops_of(m->be)->copy_to_host(m->be, out, f32, 0,
                                                count * sizeof *out);
    if (f32 != b)
        dlb_model_step_free(m, &f32);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, what, "download", err);
}

dlb_status dlb_model_logits(struct dlb_model *m, const float *images,
                            uint32_t n, float *logits, struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    dlb_status s;
    if (n == 0 || nl < 2 || m->spec->layers[nl - 1].kind != DLB_LAYER_LOGSOFTMAX)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: logits need a non-empty "
                          "batch and a logsoftmax last layer", m->spec->path);
    dlb_model_step_release(m);
    m->n = n;
    if ((s = dlb_model_prec_begin(m, err)) ||
        (s = dlb_model_upload_input(m, images, n, &m->act[0], err)))
        return s;
    m->own[0] = 1;
    /* As dlb_model_infer, one layer short: the logits are the input of
     * the logsoftmax, which every other layer's output leads to. */
    s = dlb_model_infer_pass(m, nl - 1, NULL, NULL, err);
    if (s == DLB_OK)
        s = to_host(m, m->act[nl - 1],
                    (size_t)n * dlb_model_act_size(m, nl - 1), logits,
                    m->spec->layers[nl - 2].name, err);
    dlb_model_step_release(m);
    return s;
}

/* The blended loss from the host's logits; the KL term reads z itself
 * when there is no teacher (alpha = 0), where it is 0. */
static double blended_loss(const float *z, const float *t,
                           const int32_t *labels, uint32_t n, uint32_t classes,
                           float temperature, float alpha)
{
    size_t count = (size_t)n * classes;
    double *zd = malloc(2 * count * sizeof *zd), loss;
    if (!zd)
        return 0.0;
    for (size_t k = 0; k < count; k++) {
        zd[k] = z[k];
        zd[count + k] = t ? t[k] : z[k];
    }
    loss = dlb_distill_loss(zd, zd + count, labels, n, classes, temperature,
                            alpha);
    free(zd);
    return loss;
}

/* dy += the soft term's gradient; *loss when asked. */
static dlb_status add_soft_term(struct dlb_model *m, struct dlb_buffer *dy,
                                const int32_t *labels, const float *t,
                                float temperature, float alpha, double *loss,
                                struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    const char *name = m->spec->layers[nl - 1].name;
    uint32_t classes = m->spec->layers[nl - 1].in_c;
    size_t count = (size_t)m->n * classes;
    float *z = malloc(2 * count * sizeof *z), *g;
    dlb_status s;
    if (!z)
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory for the "
                          "logits", name);
    g = z + count;
    s = to_host(m, m->act[nl - 1], count, z, name, err);
    if (s == DLB_OK && alpha > 0.0f &&
        (s = to_host(m, dy, count, g, name, err)) == DLB_OK) {
        dlb_distill_soft_grad(z, t, m->n, classes, temperature, alpha, g);
        s = dlb_backend_ops_of(m->be)->copy_from_host(m->be, dy, 0, g,
                                                      count * sizeof *g);
        if (s != DLB_OK)
            s = dlb_model_be_fail(m, s, name, "upload", err);
    }
    if (s == DLB_OK && loss)
        *loss = blended_loss(z, alpha > 0.0f ? t : NULL, labels, m->n,
                             classes, temperature, alpha);
    free(z);
    return s;
}

static dlb_status check_args(const struct dlb_model *m, uint32_t n,
                             const float *t, float temperature, float alpha,
                             struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    if (n == 0 || nl < 2 || m->spec->layers[nl - 1].kind != DLB_LAYER_LOGSOFTMAX)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: distillation needs a "
                          "non-empty batch and a logsoftmax last layer",
                          m->spec->path);
    if (m->dtype != DLB_F32)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: distillation trains "
                          "fp32 models only", m->spec->path);
    if (!(temperature > 0.0f) || !(alpha >= 0.0f && alpha <= 1.0f) ||
        (alpha > 0.0f && !t))
        return dlb_errorf(err, DLB_ERR_INPUT, "distillation: temperature %g "
                          "must be above 0 and alpha %g within [0, 1], with "
                          "the teacher's logits when alpha > 0",
                          (double)temperature, (double)alpha);
    return DLB_OK;
}

dlb_status dlb_model_distill_forward_backward(struct dlb_model *m,
                                              const float *images,
                                              const int32_t *labels,
                                              uint32_t n, const float *t,
                                              float temperature, float alpha,
                                              double *loss,
                                              struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    struct dlb_buffer *dy = NULL;
    int dy_owned = 1;
    dlb_status s = check_args(m, n, t, temperature, alpha, err);
    if (s != DLB_OK)
        return s;
    const struct dlb_layer_spec *last = &m->spec->layers[nl - 1];
    struct dlb_loss_desc ld = {n, last->in_c};
    size_t count = (size_t)n * last->in_c;
    dlb_model_step_release(m);
    s = dlb_model_forward_train(m, images, labels, n, err);
    if (s == DLB_OK)
        s = dlb_model_step_alloc(m, dlb_buffer_dtype(m->act[nl]), count,
                                 last->name, &dy, err);
    /* The hard term exactly as dlb_model_backward computes it, with the
     * weight 1 - alpha where the loss scale goes (1 - 0 is exactly 1). */
    if (s == DLB_OK &&
        (s = dlb_backend_run(m->be, &(struct dlb_op){
                 .kind = DLB_OP_LOGSOFTMAX_NLL, .prop = DLB_PROP_BWD,
                 .loss = ld, .x = m->act[nl], .labels = m->labels,
                 .alpha = 1.0f - alpha, .dx = dy})) != DLB_OK)
        s = dlb_model_be_fail(m, s, last->name, "backward", err);
    if (s == DLB_OK && (alpha > 0.0f || loss))
        s = add_soft_term(m, dy, labels, t, temperature, alpha, loss, err);
    if (s == DLB_OK)
        s = dlb_model_cast_to(m, &dy, &dy_owned,
                              dlb_buffer_dtype(m->act[nl - 1]), count,
                              last->name, err);
    if (s == DLB_OK) {
        if (m->own[nl])
            dlb_model_step_free(m, &m->act[nl]);
        s = dlb_model_backward_from(m, nl - 1, dy, dy_owned, err);
    } else {
        dlb_model_step_free(m, &dy);
    }
    dlb_model_step_release(m);
    return s;
}

dlb_status dlb_model_distill_step(struct dlb_model *m, const float *images,
                                  const int32_t *labels, uint32_t n,
                                  const float *t, float temperature,
                                  float alpha, double *loss,
                                  struct dlb_error *err)
{
    dlb_status s = dlb_model_distill_forward_backward(
        m, images, labels, n, t, temperature, alpha, loss, err);
    return s == DLB_OK ? dlb_model_sgd_step(m, err) : s;
}
