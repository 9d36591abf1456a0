/* Inference and test-set evaluation. */
#include "model/model_impl.h"

#include <stdlib.h>

#include "backend/backend.h"
#include "data/augment.h"
#include "util/hexbits.h"

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

/* Reads of activation t by layers before `upto`, and one more for the
 * caller when t is what the pass leaves. */
static uint32_t reads_of(const struct dlb_model *m, size_t t, size_t upto)
{
    uint32_t r = t == upto;
    for (size_t i = t; i < upto; i++) /* readers of t come after it */
        for (unsigned k = 0; k < m->spec->layers[i].n_inputs; k++)
            r += dlb_model_in(m, i, k) == t;
    return r;
}

/* One read of activation t done: its buffer goes with the last read of
 * it or of any activation that is the same buffer. */
static void read_done(struct dlb_model *m, size_t t, size_t upto)
{
    size_t r = m->root[t];
    if (m->reads_left[r] == 0 || --m->reads_left[r] > 0)
        return;
    for (size_t u = r; u <= upto; u++)
        if (m->root[u] == r && u != r)
            m->act[u] = NULL;
    if (m->own[r])
        dlb_model_step_free(m, &m->act[r]);
    m->act[r] = NULL;
    m->own[r] = 0;
}

/* The input a layer that made no buffer handed on: its first, or for an
 * add fused into the convolution before it, that convolution's output
 * (the other input's buffer became it: model_fuse.c). */
static size_t handed_on(const struct dlb_model *m, size_t i)
{
    for (unsigned k = 0; k < m->spec->layers[i].n_inputs; k++)
        if (m->act[dlb_model_in(m, i, k)] == m->act[i + 1])
            return dlb_model_in(m, i, k);
    return dlb_model_in(m, i, 0);
}

dlb_status dlb_model_infer_pass(struct dlb_model *m, size_t upto,
                                dlb_model_seen_fn seen, void *ctx,
                                struct dlb_error *err)
{
    dlb_status s = DLB_OK;
    m->root[0] = 0;
    m->reads_left[0] = reads_of(m, 0, upto);
    /* Only passes over the whole network fuse (model_fuse.c), with the
     * batch norms folded into the convolutions before them where they
     * can (model_fold.c). */
    if (upto == m->spec->n_layers && !seen) {
        if ((s = dlb_model_fold_refresh(m, err)) != DLB_OK)
            return s;
        dlb_model_fuse_begin(m);
    }
    for (size_t i = 0; i < upto && s == DLB_OK; i++) {
        const struct dlb_layer_spec *L = m->layers[i].spec;
        if ((seen && (s = seen(m, i, ctx, err))) ||
            (s = dlb_model_node_fwd(m, i, 0, err)))
            break;
        /* A layer that handed its input on made no buffer: its readers
         * are that buffer's readers too. */
        size_t r = m->own[i + 1] ? i + 1 : m->root[handed_on(m, i)];
        if (r == i + 1)
            m->reads_left[r] = 0;
        m->root[i + 1] = r;
        m->reads_left[r] += reads_of(m, i + 1, upto);
        for (unsigned k = 0; k < L->n_inputs; k++)
            read_done(m, dlb_model_in(m, i, k), upto);
    }
    if (s == DLB_OK && seen)
        s = seen(m, upto, ctx, err);
    if (m->fuse)
        dlb_model_fuse_end(m);
    return s;
}

dlb_status dlb_model_infer(struct dlb_model *m, const float *images, uint32_t n,
                           float *logprobs, struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    dlb_status s;
    dlb_model_step_release(m);
    m->n = n;
    if ((s = dlb_model_prec_begin(m, err)) ||
        (s = dlb_model_upload_input(m, images, n, &m->act[0], err)))
        return s;
    m->own[0] = 1;
    s = dlb_model_infer_pass(m, nl, NULL, NULL, err);
    if (s == DLB_OK && logprobs)
        s = download(m, m->act[nl], (size_t)n * dlb_model_act_size(m, nl),
                     logprobs, err);
    dlb_model_step_release(m);
    return s;
}

/* Images start .. start + n - 1 scored: their loss and hits summed, and
 * each hit marked in `marks` (may be NULL). */
static void score(const float *lp, const int32_t *labels, uint32_t start,
                  uint32_t n, uint32_t classes, double *loss_sum,
                  uint64_t *correct, uint8_t *marks)
{
    for (uint32_t i = 0; i < n; i++) {
        const float *row = lp + (size_t)i * classes;
        uint32_t best = 0;
        for (uint32_t k = 1; k < classes; k++)
            if (row[k] > row[best])
                best = k; /* ties keep the first, as argmax does */
        int hit = best == (uint32_t)labels[i];
        *correct += (uint64_t)hit;
        if (marks)
            dlb_hexbits_set(marks, (size_t)start + i, hit);
        *loss_sum -= row[labels[i]];
    }
}

dlb_status dlb_model_evaluate(struct dlb_model *m, const struct dlb_dataset *d,
                              uint32_t batch, double *loss, double *accuracy,
                              uint8_t *correct_marks, struct dlb_error *err)
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
            score(lp, labels, start, nb, sp->classes, &loss_sum, &correct,
                  correct_marks);
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
