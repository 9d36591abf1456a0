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
 * the unfolded one within a few ulps of fp32, not bit for bit. */
#include "model/model_impl.h"

#include <math.h>
#include <stdlib.h>

#include "backend/backend.h"

void dlb_model_params_moved(struct dlb_model *m)
{
    m->params_epoch++;
}

int dlb_model_fold_applies(const struct dlb_model *m, size_t i)
{
    const struct dlb_model_spec *sp = m->spec;
    return m->dtype == DLB_F32 && i + 1 < sp->n_layers &&
           sp->layers[i].kind == DLB_LAYER_CONV &&
           dlb_model_spec_feeds_next(sp, i) &&
           sp->layers[i + 1].kind == DLB_LAYER_BATCHNORM &&
           dlb_model_f32_layer(m, i) && dlb_model_f32_layer(m, i + 1);
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

/* A buffer of n floats for layer i's fold, kept while its size holds. */
static dlb_status fold_buffer(struct dlb_model *m, size_t i, struct dlb_buffer **b,
                              size_t n, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    if (*b && dlb_buffer_count(*b) == n)
        return DLB_OK;
    ops->buffer_free(m->be, *b);
    *b = NULL;
    dlb_status s = ops->buffer_alloc(m->be, DLB_F32, n, b);
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
 * layer's copies. */
static dlb_status fold_layer(struct dlb_model *m, size_t i, float *w, float *b,
                             struct dlb_error *err)
{
    struct dlb_model_layer *ml = &m->layers[i];
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    size_t wn = m->params[ml->weight].t.count, out = ml->spec->out_c;
    dlb_status s = read_param(m, ml->weight, w, err);
    if (s == DLB_OK && ml->bias >= 0)
        s = read_param(m, ml->bias, b, err);
    else
        for (size_t o = 0; o < out; o++)
            b[o] = 0.0f;
    if (s == DLB_OK)
        s = dlb_model_bn_fold(m, i, w, b, err); /* waits for the reads too */
    if (s == DLB_OK && !(s = fold_buffer(m, i, &ml->fold_w, wn, err)))
        s = fold_buffer(m, i, &ml->fold_b, out, err);
    if (s != DLB_OK)
        return s;
    if ((s = ops->copy_from_host(m->be, ml->fold_w, 0, w, wn * sizeof *w)) ||
        (s = ops->copy_from_host(m->be, ml->fold_b, 0, b, out * sizeof *b)))
        return dlb_model_be_fail(m, s, ml->spec->name, "writing the folded weights", err);
    return DLB_OK;
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
