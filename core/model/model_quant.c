/* Turning a trained fp32 model into its int8 form (model_api.h's
 * DLB_REWRITE_INT8):
 * the settings checked, batch normalisation folded into the layer before,
 * the weights and biases quantised and uploaded, and each layer's part in
 * the int8 forward pass planned (model_quant_plan.c). */
#include "model/model_quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model_impl.h"

static int is_matmul(enum dlb_layer_kind k)
{
    return k == DLB_LAYER_CONV || k == DLB_LAYER_LINEAR;
}

/* A batch normalisation right after conv or linear layer i is folded. */
static int folds_bn(const struct dlb_model *m, size_t i)
{
    return dlb_model_spec_feeds_next(m->spec, i) &&
           m->spec->layers[i + 1].kind == DLB_LAYER_BATCHNORM;
}

static dlb_status read_param(struct dlb_model *m, int idx, float *dst,
                             struct dlb_error *err)
{
    struct dlb_model_param *p = &m->params[idx];
    return dlb_model_tensor_io(m, p->name, dst, p->t.count, 0, err);
}

dlb_status dlb_model_quant_weights(struct dlb_model *m, size_t i, float *w,
                                   size_t w_count, float *b, size_t b_count,
                                   struct dlb_error *err)
{
    const struct dlb_model_spec *sp = m->spec;
    if (i >= sp->n_layers || !is_matmul(sp->layers[i].kind))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer %zu is not a conv "
                          "or linear layer", sp->path, i);
    const struct dlb_model_layer *ml = &m->layers[i];
    size_t wn = m->params[ml->weight].t.count, out = sp->layers[i].out_c;
    if (w_count != wn || b_count != out)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' has %zu weights "
                          "and %zu outputs, not %zu and %zu", sp->path,
                          ml->spec->name, wn, out, w_count, b_count);
    dlb_status s = read_param(m, ml->weight, w, err);
    if (s == DLB_OK && ml->bias >= 0)
        s = read_param(m, ml->bias, b, err);
    else if (s == DLB_OK)
        memset(b, 0, out * sizeof *b);
    if (s == DLB_OK && folds_bn(m, i))
        s = dlb_model_bn_fold(m, i, w, b, err);
    return s;
}

/* The settings of every layer, before anything changes. */
static dlb_status check(const struct dlb_model *m,
                        const struct dlb_quant_layer *ql, size_t n,
                        struct dlb_error *err)
{
    const struct dlb_model_spec *sp = m->spec;
    if (n != sp->n_layers)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %zu layer settings for %zu "
                          "layers", sp->path, n, sp->n_layers);
    for (size_t i = 0; i < n; i++) {
        const struct dlb_layer_spec *L = &sp->layers[i];
        const struct dlb_quant_layer *q = &ql[i];
        if (q->act_type == DLB_F32)
            continue;
        if (!is_matmul(L->kind))
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' (%s) cannot "
                              "run in int8: only conv and linear layers can",
                              sp->path, L->name, dlb_layer_kind_name(L->kind));
        if (q->act_type != DLB_U8 && q->act_type != DLB_S8)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s': int8 "
                              "activations are u8 or s8", sp->path, L->name);
        if (!(q->act_scale > 0.0f) || !isfinite(q->act_scale) ||
            (q->act_type == DLB_U8 ? q->act_zero_point < 0 ||
                                         q->act_zero_point > 255
                                   : q->act_zero_point != 0))
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s': input scale "
                              "%g must be finite and > 0, zero point %d in "
                              "[0, 255] for u8 and 0 for s8", sp->path, L->name,
                              (double)q->act_scale, (int)q->act_zero_point);
        if (!q->w_scale || (q->n_w_scale != 1 && q->n_w_scale != L->out_c))
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s': %u weight "
                              "scales for %u output channels (1 per tensor or "
                              "one per channel)", sp->path, L->name,
                              q->n_w_scale, L->out_c);
        for (uint32_t k = 0; k < q->n_w_scale; k++)
            if (!(q->w_scale[k] > 0.0f) || !isfinite(q->w_scale[k]))
                return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s': weight "
                                  "scale %u is %g; it must be finite and > 0",
                                  sp->path, L->name, k, (double)q->w_scale[k]);
    }
    return DLB_OK;
}

static dlb_status upload(struct dlb_model *m, const char *layer,
                         enum dlb_dtype t, size_t count, const void *src,
                         size_t bytes, struct dlb_buffer **out,
                         struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    dlb_status s = ops->buffer_alloc(m->be, t, count, out);
    if (s == DLB_OK)
        s = ops->copy_from_host(m->be, *out, 0, src, bytes);
    return s == DLB_OK ? s
                       : dlb_model_be_fail(m, s, layer, "int8 weights", err);
}

/* Quantise layer i's weights and bias (model_api.h) and upload them. */
static dlb_status quantise(struct dlb_model *m, size_t i,
                           const struct dlb_quant_layer *ql,
                           struct dlb_model_qlayer *q, struct dlb_error *err)
{
    const struct dlb_model_layer *ml = &m->layers[i];
    const char *name = ml->spec->name;
    size_t wn = m->params[ml->weight].t.count, out = ml->spec->out_c;
    size_t per = wn / out;
    float *w = malloc(wn * sizeof *w), *b = malloc(out * sizeof *b);
    signed char *qw = malloc(wn);
    int32_t *qb = malloc(out * sizeof *qb);
    dlb_status s = DLB_OK;
    if (!w || !b || !qw || !qb)
        s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory quantising '%s'",
                       name);
    if (s == DLB_OK)
        s = dlb_model_quant_weights(m, i, w, wn, b, out, err);
    for (size_t o = 0; s == DLB_OK && o < out; o++) {
        double sw = ql->w_scale[ql->n_w_scale == 1 ? 0 : o];
        for (size_t k = 0; k < per; k++) {
            double v = nearbyint(w[o * per + k] / sw);
            qw[o * per + k] =
                (signed char)(v < -127 ? -127 : v > 127 ? 127 : v);
        }
        double v = nearbyint(b[o] / ((double)ql->act_scale * sw));
        qb[o] = (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX
                                                                   : v);
    }
    /* A layer without bias whose batch norm was not folded has none. */
    int bias = ml->bias >= 0 || folds_bn(m, i);
    if (s == DLB_OK)
        s = upload(m, name, DLB_S8, wn, qw, wn, &q->w, err);
    if (s == DLB_OK)
        s = upload(m, name, DLB_F32, ql->n_w_scale, ql->w_scale,
                   ql->n_w_scale * sizeof(float), &q->w_scale, err);
    if (s == DLB_OK && bias)
        s = upload(m, name, DLB_S32, out, qb, out * sizeof *qb, &q->b, err);
    free(w);
    free(b);
    free(qw);
    free(qb);
    return s;
}

void dlb_model_quant_clear(struct dlb_model *m)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    for (size_t i = 0; m->layers && i < m->spec->n_layers; i++) {
        struct dlb_model_qlayer *q = m->layers[i].q;
        if (!q)
            continue;
        ops->buffer_free(m->be, q->w);
        ops->buffer_free(m->be, q->w_scale);
        ops->buffer_free(m->be, q->b);
        free(q);
        m->layers[i].q = NULL;
    }
}

/* Bytes of every tensor in fp32, and as the int8 model holds them. */
static void sizes(const struct dlb_model *m, const struct dlb_quant_layer *ql,
                  struct dlb_quant_summary *out)
{
    for (size_t k = 0; k < m->n_params; k++)
        out->fp32_bytes += 4u * (uint64_t)m->params[k].t.count;
    out->int8_bytes = out->fp32_bytes;
    for (size_t i = 0; i < m->spec->n_layers; i++) {
        const struct dlb_model_layer *ml = &m->layers[i];
        if (!ml->q || ml->q->role != DLB_QROLE_INT8)
            continue;
        uint64_t wn = m->params[ml->weight].t.count, out_c = ml->spec->out_c;
        out->int8_bytes -= 4 * wn - wn;            /* int8 weights */
        out->int8_bytes += 4u * ql[i].n_w_scale + 8; /* scales, x scale/zp */
        if (folds_bn(m, i)) /* 4 tensors gone, an int32 bias where none was */
            out->int8_bytes -= 16 * out_c - (ml->bias >= 0 ? 0 : 4 * out_c);
    }
}

dlb_status dlb_model_quant_apply(struct dlb_model *m,
                                 const struct dlb_quant_layer *layers,
                                 size_t n, struct dlb_quant_summary *out,
                                 struct dlb_error *err)
{
    struct dlb_quant_summary sum;
    dlb_status s = check(m, layers, n, err);
    if (s != DLB_OK)
        return s;
    /* the int8 family comes whole (backend_kernels.h): its pooling too */
    if (!dlb_backend_has_kind(m->be, DLB_OP_CONV2D_INT8) ||
        !dlb_backend_has_kind(m->be, DLB_OP_LINEAR_INT8))
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "backend %s has no int8 "
                          "convolution, linear or pooling kernels",
                          dlb_backend_name(m->be));
    dlb_model_quant_clear(m);
    memset(&sum, 0, sizeof sum);
    s = dlb_model_quant_plan(m, layers, &sum, err);
    for (size_t i = 0; s == DLB_OK && i < n; i++)
        if (m->layers[i].q && m->layers[i].q->role == DLB_QROLE_INT8)
            s = quantise(m, i, &layers[i], m->layers[i].q, err);
    if (s != DLB_OK) {
        dlb_model_quant_clear(m);
        return s;
    }
    sizes(m, layers, &sum);
    if (out)
        *out = sum;
    return DLB_OK;
}
