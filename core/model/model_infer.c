/* Inference and test-set evaluation. */
#include "model/model_impl.h"

#include <stdlib.h>

#include "backend/backend.h"
#include "data/augment.h"

/* The last layer's output as F32 on the host. */
static dlb_status download(struct dlb_model *m, struct dlb_buffer *y,
                          size_t count, float *out, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    struct dlb_buffer *f32 = y;
    dlb_status s = DLB_OK;
    if (dlb_buffer_dtype(y) != DLB_F32) {
        if ((s = dlb_model_step_alloc(m, DLB_F32, count, "output", &f32, err)))
            return s;
        s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_CAST,
                .count = count, .x = y, .y = f32});
    }
    if (s == DLB_OK)
        s = ops->copy_to_host(m->be, out, f32, 0, count * sizeof *out);
    if (f32 != y)
        dlb_model_step_free(m, &f32);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, "output", "download", err);
}

dlb_status dlb_model_infer(struct dlb_model *m, const float *images, uint32_t n,
                           float *logprobs, struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    struct dlb_buffer *cur = NULL;
    int cur_owned = 1;
    dlb_status s;
    dlb_model_step_release(m);
    m->n = n;
    if ((s = dlb_model_prec_begin(m, err)) ||
        (s = dlb_model_upload_input(m, images, n, &cur, err)))
        return s;
    /* Only the current activation is alive: inference frees each input as
     * soon as the layer's output exists. Only the last output is read, so
     * layers may fuse (model_fuse.c). */
    dlb_model_fuse_begin(m);
    for (size_t i = 0; i < nl && s == DLB_OK; i++) {
        struct dlb_buffer *y = NULL;
        int owned = 0;
        s = dlb_model_layer_fwd(m, i, 0, cur, &y, &owned, err);
        if (owned) {
            if (cur_owned)
                dlb_model_step_free(m, &cur);
            cur = y;
            cur_owned = 1;
        }
    }
    dlb_model_fuse_end(m);
    if (s == DLB_OK && logprobs)
        s = download(m, cur, (size_t)n * dlb_model_act_size(m, nl), logprobs, err);
    if (cur_owned)
        dlb_model_step_free(m, &cur);
    dlb_model_step_release(m);
    return s;
}

static void score(const float *lp, const int32_t *labels, uint32_t n,
                  uint32_t classes, double *loss_sum, uint64_t *correct)
{
    for (uint32_t i = 0; i < n; i++) {
        const float *row = lp + (size_t)i * classes;
        uint32_t best = 0;
        for (uint32_t k = 1; k < classes; k++)
            if (row[k] > row[best])
                best = k; /* ties keep the first, as argmax does */
        *correct += best == (uint32_t)labels[i];
        *loss_sum -= row[labels[i]];
    }
}

dlb_status dlb_model_evaluate(struct dlb_model *m, const struct dlb_dataset *d,
                              uint32_t batch, double *loss, double *accuracy,
                              struct dlb_error *err)
{
    const struct dlb_model_spec *sp = m->spec;
    size_t per = (size_t)sp->in_c * sp->in_h * sp->in_w;
    double loss_sum = 0.0;
    uint64_t correct = 0;
    dlb_status s = DLB_OK;
    if (d->c != sp->in_c || d->h != sp->in_h || d->w != sp->in_w ||
        d->classes > sp->classes || d->n == 0 || batch == 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: the model takes %ux%ux%u "
                          "images in %u classes; the data set %s has %u of "
                          "%ux%ux%u in %u classes", sp->path, sp->in_c, sp->in_h,
                          sp->in_w, sp->classes, d->source ? d->source : "",
                          d->n, d->c, d->h, d->w, d->classes);
    if (batch > d->n)
        batch = d->n;
    /* Weights may have been written since the last pass (a checkpoint, a
     * transform): evaluation is not measured, so cast the copies again. */
    dlb_model_weights_changed(m);
    float *images = malloc((size_t)batch * per * sizeof *images);
    float *lp = malloc((size_t)batch * sp->classes * sizeof *lp);
    int32_t *labels = malloc((size_t)batch * sizeof *labels);
    uint32_t *idx = malloc((size_t)batch * sizeof *idx);
    if (!images || !lp || !labels || !idx)
        s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory evaluating %s",
                       sp->path);
    for (uint32_t start = 0; s == DLB_OK && start < d->n; start += batch) {
        uint32_t nb = d->n - start < batch ? d->n - start : batch;
        for (uint32_t i = 0; i < nb; i++)
            idx[i] = start + i;
        if ((s = dlb_batch_fill_par(d, idx, nb, 0, NULL, images, labels)) !=
            DLB_OK)
            s = dlb_errorf(err, s, "evaluating %s: bad batch", sp->path);
        else if ((s = dlb_model_infer(m, images, nb, lp, err)) == DLB_OK)
            score(lp, labels, nb, sp->classes, &loss_sum, &correct);
    }
    if (s == DLB_OK) {
        *loss = loss_sum / d->n;
        *accuracy = 100.0 * (double)correct / d->n;
    }
    free(images);
    free(lp);
    free(labels);
    free(idx);
    return s;
}
