/* Batch normalisation folded into the convolution before it, for
 * inference: w' = w * gamma / sqrt(var + eps) per output channel and
 * b' = (b - mean) * that + beta, as an exporter does when it writes a
 * network for inference. The batch norm then costs nothing, and the
 * convolution's output goes on to the fusions that follow a bare
 * convolution (model_fuse.c): its ReLU, the residual add, the depthwise
 * convolution after a 1x1 one. A shipped model file keeps its batch norms
 * between the convolution and the ReLU (a training network), so without
 * the fold none of those fusions would apply to it.
 *
 * The folded weights are copies beside the layer's own, which training
 * keeps learning: they are made again before an inference pass whenever
 * any parameter or running statistic may have moved since
 * (dlb_model_params_moved: a write from outside, an update, a training
 * forward). Folding is a change of rounding: a folded pass agrees with
 * the unfolded one within a few ulps of fp32, not bit for bit. A
 * mixed-precision network (bf16 between its convolutions) folds too: the
 * weights are folded in fp32 and rounded to bf16 once, where the unfolded
 * pass rounds the convolution's output before normalising it. */
#include "model/model_impl.h"

#include <math.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "backend/dtype.h"

void dlb_model_params_moved(struct dlb_model *m)
{
    m->params_epoch++;
}

/* The master weights are fp32 (a model of another type has none to fold
 * from); the convolution and its batch norm compute in one type, fp32 or
 * a mixed-precision network's bf16 (dlb_model_chain_type). */
int dlb_model_fold_applies(const struct dlb_model *m, size_t i)
{
    const struct dlb_model_spec *sp = m->spec;
    enum dlb_dtype t;
    return m->dtype == DLB_F32 && i + 1 < sp->n_layers &&
           sp->layers[i].kind == DLB_LAYER_CONV &&
           dlb_model_spec_feeds_next(sp, i) &&
           sp->layers[i + 1].kind == DLB_LAYER_BATCHNORM &&
           dlb_model_chain_type(m, i, 0, &t) && dlb_model_plain_layer(m, i + 1, t);
}

static dlb_status read_param(struct dlb_model *m, int idx, float *dst,
                             struct dlb_error *err)
{
    const struct dlb_model_param *p = &m->params[idx];
    dlb_status s = dlb_backend_ops_of(m->be)->copy_to_host(
        m->be, dst, p->t.buf, 0, p->t.count * sizeof *dst);
    return s == DLB_OK ? s
                       : dlb_model_be_fail(m, s, p->name, "reading for the fold", err);
}

/* A buffer of n elements of type t for layer i's fold, kept while its
 * size and type hold. */
static dlb_status fold_buffer(struct dlb_model *m, size_t i, struct dlb_buffer **b,
                              enum dlb_dtype t, size_t n, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    if (*b && dlb_buffer_count(*b) == n && dlb_buffer_dtype(*b) == t)
        return DLB_OK;
    ops->buffer_free(m->be, *b);
    *b = NULL;
    dlb_status s = ops->buffer_alloc(m->be, t, n, b);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, m->layers[i].spec->name,
                                               "allocating the folded weights", err);
}

dlb_status dlb_model_bn_fold(struct dlb_model *m, size_t i, float *w, float *b,
                             struct dlb_error *err)
{
    const struct dlb_model_layer *bn = &m->layers[i + 1];
    size_t out = m->spec->layers[i].out_c;
    size_t per = m->params[m->layers[i].weight].t.count / out;
    float *t = malloc(4 * out * sizeof *t);
    if (!t)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory folding '%s'",
                          bn->spec->name);
    int idx[4] = {bn->weight, bn->bias, bn->run_mean, bn->run_var};
    dlb_status s = DLB_OK;
    for (int k = 0; k < 4 && s == DLB_OK; k++)
        s = read_param(m, idx[k], t + (size_t)k * out, err);
    if (s == DLB_OK && (s = DLB_BE_CALL0(m->be, synchronize)) != DLB_OK)
        s = dlb_model_be_fail(m, s, bn->spec->name, "reading for the fold", err);
    for (size_t o = 0; s == DLB_OK && o < out; o++) {
        double f = t[o] / sqrt((double)t[3 * out + o] + bn->spec->eps);
        for (size_t k = 0; k < per; k++)
            w[o * per + k] = (float)(w[o * per + k] * f);
        b[o] = (float)((b[o] - (double)t[2 * out + o]) * f + t[out + o]);
    }
    free(t);
    return s;
}

/* Layer i's weights and bias with batch norm i + 1 folded in, into the
 * layer's copies: the weights in the type the convolution reads them in
 * (its low-precision copy's, bf16, rounded once from the folded fp32 as
 * that copy is from the master weights: dtype.h's conversion, the one
 * every backend's cast makes), the bias in fp32 as the layer's own. */
static dlb_status fold_layer(struct dlb_model *m, size_t i, float *w, float *b,
                             struct dlb_error *err)
{
    struct dlb_model_layer *ml = &m->layers[i];
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    size_t wn = m->params[ml->weight].t.count, out = ml->spec->out_c;
    enum dlb_dtype wt = dlb_buffer_dtype(dlb_model_layer_weights(m, i));
    uint16_t *h = NULL;
    dlb_status s = read_param(m, ml->weight, w, err);
    if (s == DLB_OK && ml->bias >= 0)
        s = read_param(m, ml->bias, b, err);
    else
        for (size_t o = 0; o < out; o++)
            b[o] = 0.0f;
    if (s == DLB_OK)
        s = dlb_model_bn_fold(m, i, w, b, err); /* waits for the reads too */
    if (s == DLB_OK && !(s = fold_buffer(m, i, &ml->fold_w, wt, wn, err)))
        s = fold_buffer(m, i, &ml->fold_b, DLB_F32, out, err);
    if (s != DLB_OK)
        return s;
    const void *src = w;
    if (wt == DLB_BF16) {
        if (!(h = malloc(wn * sizeof *h)))
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory folding '%s'",
                              m->layers[i + 1].spec->name);
        for (size_t k = 0; k < wn; k++)
            h[k] = dlb_f32_to_bf16(w[k]);
        src = h;
    }
    if ((s = ops->copy_from_host(m->be, ml->fold_w, 0, src, wn * dlb_dtype_size(wt))) ||
        (s = ops->copy_from_host(m->be, ml->fold_b, 0, b, out * sizeof *b)))
        s = dlb_model_be_fail(m, s, ml->spec->name, "writing the folded weights", err);
    free(h); /* copies from the host leave it free at once */
    return s;
}

dlb_status dlb_model_fold_refresh(struct dlb_model *m, struct dlb_error *err)
{
    const struct dlb_model_spec *sp = m->spec;
    if (m->fold_valid && m->fold_epoch == m->params_epoch)
        return DLB_OK;
    m->fold_valid = 0;
    size_t wmax = 0, cmax = 0;
    for (size_t i = 0; i < sp->n_layers; i++)
        if (dlb_model_fold_applies(m, i)) {
            size_t wn = m->params[m->layers[i].weight].t.count;
            wmax = wn > wmax ? wn : wmax;
            cmax = sp->layers[i].out_c > cmax ? sp->layers[i].out_c : cmax;
        }
    if (!wmax) {
        m->fold_valid = 1;
        m->fold_epoch = m->params_epoch;
        return DLB_OK;
    }
    float *w = malloc(wmax * sizeof *w), *bt = malloc(cmax * sizeof *bt);
    dlb_status s = w && bt ? DLB_OK
                           : dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory "
                                        "folding the batch norms", sp->path);
    for (size_t i = 0; s == DLB_OK && i < sp->n_layers; i++)
        if (dlb_model_fold_applies(m, i))
            s = fold_layer(m, i, w, bt, err); /* copies from the host: w reusable */
    free(w);
    free(bt);
    if (s != DLB_OK)
        return s;
    m->fold_valid = 1;
    m->fold_epoch = m->params_epoch;
    return DLB_OK;
}

int dlb_model_folded(const struct dlb_model *m, size_t i,
                     const struct dlb_buffer **w, const struct dlb_buffer **b)
{
    const struct dlb_model_layer *ml = &m->layers[i];
    if (!m->fold_valid || m->fold_epoch != m->params_epoch || !ml->fold_w ||
        !dlb_model_fold_applies(m, i))
        return 0;
    *w = ml->fold_w;
    *b = ml->fold_b;
    return 1;
}

void dlb_model_fold_free(struct dlb_model *m)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    for (size_t i = 0; m->layers && i < m->spec->n_layers; i++) {
        ops->buffer_free(m->be, m->layers[i].fold_w);
        ops->buffer_free(m->be, m->layers[i].fold_b);
        m->layers[i].fold_w = m->layers[i].fold_b = NULL;
    }
    m->fold_valid = 0;
}
