/* The model's layers as ONNX nodes (doc/onnx.md, "Export"): one node per
 * layer as the importer maps them back (onnx_ops.c), the weights the
 * model holds now (a pruned model's zeros or its smaller rebuilt layers),
 * dropout left out (inference), the final logsoftmax left out (the output
 * is the logits; the importer adds the loss back), and the int8 layers of
 * a quantised model in the QDQ form: their input through
 * QuantizeLinear/DequantizeLinear with the calibrated scale and zero
 * point, their weights (batch normalisation folded in, as the int8 model
 * runs them) stored as int8 and their bias as int32 behind
 * DequantizeLinear, per tensor or per output channel. */
#include "model/onnx_write.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/dtype.h"
#include "model/model_impl.h"
#include "model/model_quant.h"
#include "model/onnx_write_impl.h"

struct wctx {
    struct ow w;
    struct dlb_model *m;
    const struct dlb_model_spec *sp;
    const char **val;      /* per layer: the value holding its output */
    size_t top;            /* the layer whose output is "logits" */
    const char *path;
    struct dlb_error *err;
};

/* A layer whose output is its input in the exported graph: dropout (an
 * inference graph) and a batch normalisation folded into the int8 layer
 * before it. */
static int passes(const struct dlb_model *m, size_t i)
{
    const struct dlb_layer_spec *L = &m->spec->layers[i];
    return L->kind == DLB_LAYER_DROPOUT ||
           (L->kind == DLB_LAYER_BATCHNORM && m->layers[i].q &&
            m->layers[i].q->role == DLB_QROLE_SKIP);
}

static int int8_layer(const struct dlb_model *m, size_t i)
{
    return m->layers[i].q && m->layers[i].q->role == DLB_QROLE_INT8;
}

static const char *in_name(const struct wctx *c, size_t i, unsigned k)
{
    int32_t from = c->sp->layers[i].inputs[k];
    return from == DLB_LAYER_INPUT ? "input" : c->val[from];
}

/* Tensor `idx` of the model (a params index) as an fp32 initializer. */
static dlb_status param_init(struct wctx *c, int idx, const int64_t *dims,
                             size_t ndim)
{
    const struct dlb_model_param *p = &c->m->params[idx];
    float *v = malloc(p->t.count * sizeof *v);
    if (!v)
        return dlb_errorf(c->err, DLB_ERR_NOMEM, "%s: out of memory for '%s'",
                          c->path, p->name);
    dlb_status s = dlb_model_tensor_io(c->m, p->name, v, p->t.count, 0, c->err);
    if (s == DLB_OK)
        ow_init_floats(&c->w, p->name, v, dims, ndim);
    free(v);
    return s;
}

/* The weight dims of conv or linear layer L, and how many there are. */
static size_t weight_dims(const struct dlb_layer_spec *L, int64_t d[4])
{
    if (L->kind == DLB_LAYER_LINEAR) {
        d[0] = L->out_c;
        d[1] = (int64_t)L->in_c * L->in_h * L->in_w;
        return 2;
    }
    d[0] = L->out_c;
    d[1] = L->in_c / (L->groups ? L->groups : 1);
    d[2] = d[3] = L->size;
    return 4;
}

/* Conv's or Gemm's attributes. */
static void matmul_attrs(struct wctx *c, Onnx__NodeProto *n,
                         const struct dlb_layer_spec *L)
{
    if (L->kind == DLB_LAYER_LINEAR) {
        ow_attr_int(&c->w, n, "transB", 1);
        return;
    }
    int64_t k[2] = {L->size, L->size}, s[2] = {L->stride, L->stride};
    int64_t p[4] = {L->pad, L->pad, L->pad, L->pad};
    ow_attr_ints(&c->w, n, "kernel_shape", k, 2);
    ow_attr_ints(&c->w, n, "strides", s, 2);
    ow_attr_ints(&c->w, n, "pads", p, 4);
    ow_attr_int(&c->w, n, "group", L->groups ? L->groups : 1);
}

/* QuantizeLinear then DequantizeLinear of layer i's input, per tensor;
 * the dequantised value's name (NULL: out of memory). */
static const char *input_qdq(struct wctx *c, size_t i, float scale,
                             int32_t zero, enum dlb_dtype type)
{
    struct ow *w = &c->w;
    const char *nm = c->sp->layers[i].name;
    char *xs = ow_cat(w, nm, ".x_scale"), *xz = ow_cat(w, nm, ".x_zero_point");
    char *xq = ow_cat(w, nm, ".x_q"), *xd = ow_cat(w, nm, ".x_dq");
    if (w->oom)
        return NULL;
    uint8_t zb = (uint8_t)zero;  /* an s8 zero point is 0 (model_api.h) */
    ow_init_floats(w, xs, &scale, NULL, 0);
    ow_init_bytes(w, xz, type == DLB_U8 ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
                                        : ONNX__TENSOR_PROTO__DATA_TYPE__INT8,
                  &zb, NULL, 0);
    const char *qin[3] = {in_name(c, i, 0), xs, xz}, *din[3] = {xq, xs, xz};
    ow_node(w, "QuantizeLinear", xq, qin, 3, xq);
    ow_node(w, "DequantizeLinear", xd, din, 3, xd);
    return w->oom ? NULL : xd;
}

static dlb_status emit_matmul(struct wctx *c, size_t i)
{
    const struct dlb_layer_spec *L = &c->sp->layers[i];
    const struct dlb_model_layer *ml = &c->m->layers[i];
    int64_t d[4];
    size_t nd = weight_dims(L, d);
    const char *in[3] = {in_name(c, i, 0), c->m->params[ml->weight].name,
                         ml->bias >= 0 ? c->m->params[ml->bias].name : ""};
    /* a QDQ model read back keeps its simulated input quantisation */
    if (L->in_q_scale > 0 &&
        !(in[0] = input_qdq(c, i, L->in_q_scale, L->in_q_zero, L->in_q_type)))
        return dlb_errorf(c->err, DLB_ERR_NOMEM, "%s: out of memory", c->path);
    dlb_status s = param_init(c, ml->weight, d, nd);
    if (s == DLB_OK && ml->bias >= 0)
        s = param_init(c, ml->bias, d, 1);
    if (s != DLB_OK)
        return s;
    Onnx__NodeProto *n = ow_node(&c->w, L->kind == DLB_LAYER_LINEAR ? "Gemm"
                                                                    : "Conv",
                                 L->name, in, ml->bias >= 0 ? 3 : 2, c->val[i]);
    matmul_attrs(c, n, L);
    return DLB_OK;
}

/* Quantised layer i: its QDQ form (the header's comment). */
static dlb_status emit_int8(struct wctx *c, size_t i)
{
    const struct dlb_layer_spec *L = &c->sp->layers[i];
    const struct dlb_model_layer *ml = &c->m->layers[i];
    const struct dlb_model_qlayer *q = ml->q;
    struct ow *w = &c->w;
    const char *nm = L->name;
    size_t wn = c->m->params[ml->weight].t.count, out = L->out_c;
    size_t per = wn / out, ns = dlb_buffer_count(q->w_scale);
    float *wf = malloc(wn * sizeof *wf), *b = malloc(out * sizeof *b);
    float *sw = malloc(ns * sizeof *sw), *sb = malloc(ns * sizeof *sb);
    signed char *qw = malloc(wn);
    int32_t *qb = malloc(out * sizeof *qb), *zb = calloc(ns, sizeof *zb);
    signed char *zw = calloc(ns, 1);
    dlb_status s = DLB_OK;
    if (!wf || !b || !sw || !sb || !qw || !qb || !zb || !zw)
        s = dlb_errorf(c->err, DLB_ERR_NOMEM, "%s: out of memory for '%s'",
                       c->path, nm);
    if (s == DLB_OK)
        s = dlb_model_quant_weights(c->m, i, wf, wn, b, out, c->err);
    if (s == DLB_OK &&
        (s = dlb_backend_ops_of(c->m->be)->copy_to_host(
             c->m->be, sw, q->w_scale, 0, ns * sizeof *sw)) != DLB_OK)
        s = dlb_model_be_fail(c->m, s, nm, "weight scales", c->err);
    /* As model_quant.c quantises them: symmetric int8 weights in
     * [-127, 127], the bias in accumulator units (x scale x w scale). */
    for (size_t o = 0; s == DLB_OK && o < out; o++) {
        double sc = sw[ns == 1 ? 0 : o];
        for (size_t k = 0; k < per; k++) {
            double v = nearbyint(wf[o * per + k] / sc);
            qw[o * per + k] = (signed char)(v < -127 ? -127 : v > 127 ? 127 : v);
        }
        double v = nearbyint(b[o] / ((double)q->d.x_scale * sc));
        qb[o] = (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v);
    }
    for (size_t o = 0; s == DLB_OK && o < ns; o++)
        sb[o] = (float)((double)q->d.x_scale * sw[o]);
    if (s == DLB_OK) {
        int64_t d[4], dn = (int64_t)ns;
        size_t nd = weight_dims(L, d), sd = ns == 1 ? 0 : 1;
        const char *xd = input_qdq(c, i, q->d.x_scale, q->d.x_zero_point,
                                   q->d.x_type);
        char *wq = ow_cat(w, nm, ".weight_q"), *ws = ow_cat(w, nm, ".weight_scale");
        char *wz = ow_cat(w, nm, ".weight_zero_point");
        char *wd = ow_cat(w, nm, ".weight_dq");
        char *bq = ow_cat(w, nm, ".bias_q"), *bs = ow_cat(w, nm, ".bias_scale");
        char *bz = ow_cat(w, nm, ".bias_zero_point"), *bd = ow_cat(w, nm, ".bias_dq");
        if (w->oom || !xd) {
            s = dlb_errorf(c->err, DLB_ERR_NOMEM, "%s: out of memory", c->path);
            goto out;
        }
        ow_init_bytes(w, wq, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, qw, d, nd);
        ow_init_floats(w, ws, sw, &dn, sd);
        ow_init_bytes(w, wz, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, zw, &dn, sd);
        int64_t dout = (int64_t)out;
        ow_init_int32(w, bq, qb, &dout, 1);
        ow_init_floats(w, bs, sb, &dn, sd);
        ow_init_int32(w, bz, zb, &dn, sd);
        const char *dwin[3] = {wq, ws, wz};
        const char *dbin[3] = {bq, bs, bz}, *mm[3] = {xd, wd, bd};
        Onnx__NodeProto *dw = ow_node(w, "DequantizeLinear", wd, dwin, 3, wd);
        Onnx__NodeProto *db = ow_node(w, "DequantizeLinear", bd, dbin, 3, bd);
        if (ns > 1) {
            ow_attr_int(w, dw, "axis", 0);
            ow_attr_int(w, db, "axis", 0);
        }
        Onnx__NodeProto *n = ow_node(w, L->kind == DLB_LAYER_LINEAR ? "Gemm"
                                                                    : "Conv",
                                     nm, mm, 3, c->val[i]);
        matmul_attrs(c, n, L);
    }
out:
    free(wf);
    free(b);
    free(sw);
    free(sb);
    free(qw);
    free(qb);
    free(zb);
    free(zw);
    return s;
}

static dlb_status emit_bn(struct wctx *c, size_t i)
{
    const struct dlb_layer_spec *L = &c->sp->layers[i];
    const struct dlb_model_layer *ml = &c->m->layers[i];
    int64_t d = L->in_c;
    int idx[4] = {ml->weight, ml->bias, ml->run_mean, ml->run_var};
    const char *in[5] = {in_name(c, i, 0)};
    for (int k = 0; k < 4; k++) {
        dlb_status s = param_init(c, idx[k], &d, 1);
        if (s != DLB_OK)
            return s;
        in[k + 1] = c->m->params[idx[k]].name;
    }
    Onnx__NodeProto *n = ow_node(&c->w, "BatchNormalization", L->name, in, 5,
                                 c->val[i]);
    ow_attr_float(&c->w, n, "epsilon", L->eps);
    /* ONNX's momentum weighs the running value, dlbench's the batch's. */
    ow_attr_float(&c->w, n, "momentum", 1.0f - L->momentum);
    return DLB_OK;
}

static dlb_status emit_pool(struct wctx *c, size_t i, const char *op)
{
    const struct dlb_layer_spec *L = &c->sp->layers[i];
    const char *in[1] = {in_name(c, i, 0)};
    Onnx__NodeProto *n = ow_node(&c->w, op, L->name, in, 1, c->val[i]);
    int64_t k[2] = {L->size, L->size}, s[2] = {L->stride, L->stride};
    int64_t p[4] = {L->pad, L->pad, L->pad, L->pad};
    ow_attr_ints(&c->w, n, "kernel_shape", k, 2);
    ow_attr_ints(&c->w, n, "strides", s, 2);
    ow_attr_ints(&c->w, n, "pads", p, 4);
    /* dlbench's average divides by the whole window, padding included */
    if (!strcmp(op, "AveragePool") && L->pad)
        ow_attr_int(&c->w, n, "count_include_pad", 1);
    return DLB_OK;
}

static dlb_status emit_relu(struct wctx *c, size_t i)
{
    const struct dlb_layer_spec *L = &c->sp->layers[i];
    const char *in[3] = {in_name(c, i, 0), NULL, NULL};
    if (L->relu_max == 0) {
        ow_node(&c->w, "Relu", L->name, in, 1, c->val[i]);
        return DLB_OK;
    }
    /* ReLU6: Clip with its bounds as constant inputs (opset 11 on). */
    char *lo = ow_cat(&c->w, L->name, ".min"), *hi = ow_cat(&c->w, L->name, ".max");
    float zero = 0.0f;
    if (!lo || !hi)
        return dlb_errorf(c->err, DLB_ERR_NOMEM, "%s: out of memory", c->path);
    ow_init_floats(&c->w, lo, &zero, NULL, 0);
    ow_init_floats(&c->w, hi, &L->relu_max, NULL, 0);
    in[1] = lo;
    in[2] = hi;
    ow_node(&c->w, "Clip", L->name, in, 3, c->val[i]);
    return DLB_OK;
}

/* ONNX's Add takes two inputs: a sum of more is a chain of them. */
static dlb_status emit_add(struct wctx *c, size_t i)
{
    const struct dlb_layer_spec *L = &c->sp->layers[i];
    const char *acc = in_name(c, i, 0);
    for (unsigned k = 1; k < L->n_inputs; k++) {
        char part[32];
        snprintf(part, sizeof part, ".sum%u", k);
        const char *out = k + 1 == L->n_inputs ? c->val[i]
                                               : ow_cat(&c->w, L->name, part);
        const char *name = k == 1 ? L->name : ow_cat(&c->w, L->name, part);
        const char *in[2] = {acc, in_name(c, i, k)};
        if (!out || !name)
            return dlb_errorf(c->err, DLB_ERR_NOMEM, "%s: out of memory", c->path);
        ow_node(&c->w, "Add", name, in, 2, out);
        acc = out;
    }
    return DLB_OK;
}

static dlb_status emit(struct wctx *c, size_t i)
{
    const struct dlb_layer_spec *L = &c->sp->layers[i];
    const char *in[DLB_LAYER_MAX_INPUTS];
    switch (L->kind) {
    case DLB_LAYER_CONV:
    case DLB_LAYER_LINEAR:
        return int8_layer(c->m, i) ? emit_int8(c, i) : emit_matmul(c, i);
    case DLB_LAYER_BATCHNORM: return emit_bn(c, i);
    case DLB_LAYER_RELU: return emit_relu(c, i);
    case DLB_LAYER_MAXPOOL: return emit_pool(c, i, "MaxPool");
    case DLB_LAYER_AVGPOOL: return emit_pool(c, i, "AveragePool");
    case DLB_LAYER_ADD: return emit_add(c, i);
    case DLB_LAYER_GLOBAL_AVGPOOL:
    case DLB_LAYER_FLATTEN:
    case DLB_LAYER_CONCAT: {
        for (unsigned k = 0; k < L->n_inputs; k++)
            in[k] = in_name(c, i, k);
        const char *op = L->kind == DLB_LAYER_CONCAT ? "Concat"
                         : L->kind == DLB_LAYER_FLATTEN ? "Flatten"
                                                        : "GlobalAveragePool";
        Onnx__NodeProto *n = ow_node(&c->w, op, L->name, in, L->n_inputs,
                                     c->val[i]);
        if (L->kind != DLB_LAYER_GLOBAL_AVGPOOL)
            ow_attr_int(&c->w, n, "axis", 1);
        return DLB_OK;
    }
    default:
        return dlb_errorf(c->err, DLB_ERR_UNSUPPORTED, "%s: layer '%s' (%s) "
                          "has no ONNX export (only a final logsoftmax is "
                          "left out); export a model without it", c->path,
                          L->name, dlb_layer_kind_name(L->kind));
    }
}

/* Name every layer's output value; the logits' layer's is "logits". */
static dlb_status name_values(struct wctx *c)
{
    const struct dlb_model_spec *sp = c->sp;
    int32_t t = (int32_t)sp->n_layers - 1;
    if (sp->layers[t].kind == DLB_LAYER_LOGSOFTMAX)
        t = sp->layers[t].inputs[0];
    while (t >= 0 && passes(c->m, (size_t)t))
        t = sp->layers[t].inputs[0];
    if (t < 0)
        return dlb_errorf(c->err, DLB_ERR_UNSUPPORTED, "%s: the model computes "
                          "nothing before its output; there is no graph to "
                          "export", c->path);
    c->top = (size_t)t;
    for (size_t i = 0; i < sp->n_layers; i++) {
        if (passes(c->m, i))
            c->val[i] = in_name(c, i, 0);
        else
            c->val[i] = i == c->top ? "logits" : ow_cat(&c->w, sp->layers[i].name,
                                                        ".out");
        if (!c->val[i])
            return dlb_errorf(c->err, DLB_ERR_NOMEM, "%s: out of memory",
                              c->path);
    }
    return DLB_OK;
}

dlb_status dlb_onnx_write_model(struct dlb_model *m, const char *path,
                                struct dlb_error *err)
{
    struct wctx c = {.m = m, .sp = m->spec, .path = path, .err = err};
    const struct dlb_model_spec *sp = m->spec;
    if (m->dtype != DLB_F32)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: the model holds %s "
                          "weights; ONNX export writes fp32 models", path,
                          dlb_dtype_name(m->dtype));
    c.val = calloc(sp->n_layers ? sp->n_layers : 1, sizeof *c.val);
    if (!c.val)
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
    dlb_status s = sp->n_layers ? name_values(&c)
                                : dlb_errorf(err, DLB_ERR_INPUT, "%s: the "
                                             "model has no layers", path);
    /* the last logsoftmax is not exported: the output is the logits */
    for (size_t i = 0; s == DLB_OK && i <= c.top; i++)
        if (!passes(m, i))
            s = emit(&c, i);
    if (s == DLB_OK && c.w.oom)
        s = dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory building the "
                       "ONNX graph", path);
    const int64_t chw[3] = {sp->in_c, sp->in_h, sp->in_w};
    if (s == DLB_OK)
        s = ow_write_file(&c.w, path, "dlbench", "input", chw, "logits",
                          sp->classes, err);
    ow_free(&c.w);
    free(c.val);
    return s;
}
