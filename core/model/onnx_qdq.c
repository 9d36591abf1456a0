/* QuantizeLinear and DequantizeLinear: the QDQ form of a quantised model
 * (what onnxruntime's quantiser and dlbench export write), read as an
 * fp32 model that simulates the quantisation. A DequantizeLinear of an
 * initializer (int8 weights, an int32 bias) is folded into a float
 * constant, (q - zero point) x scale, per tensor or along `axis`; a
 * QuantizeLinear/DequantizeLinear pair on computed data before a Conv or
 * Gemm becomes that layer's input quantisation (model_file.h's in_q_*),
 * which the forward pass quantises and dequantises in fp32, as ONNX
 * defines them: saturate(round_half_even(x / scale) + zero point). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/onnx_impl.h"

void onnx_made_free(struct onnx_map *m)
{
    for (size_t i = 0; i < m->n_made; i++) {
        free(m->made[i]->float_data);
        free(m->made[i]);
    }
    free(m->made);
    m->made = NULL;
    m->n_made = 0;
}

/* Input k (a constant) as floats or integers, its count in *n. */
static dlb_status const_floats(struct onnx_map *m, size_t k, const char *role,
                               float **v, size_t *n)
{
    struct dlb_error e = {""};
    const Onnx__TensorProto *t = onnx_const_input(m, k, role);
    if (!t)
        return DLB_ERR_INPUT;
    char what[160];
    snprintf(what, sizeof what, "the %s '%.100s'", role, t->name ? t->name : "");
    dlb_status s = dlb_onnx_tensor_floats(&m->o, t, what, v, n, &e);
    return s ? onnx_fail(m, s, "%s", onnx_why(m, e.msg)) : DLB_OK;
}

static dlb_status const_ints(struct onnx_map *m, const Onnx__TensorProto *t,
                             const char *role, int64_t **v, size_t *n)
{
    struct dlb_error e = {""};
    char what[160];
    snprintf(what, sizeof what, "the %s '%.100s'", role, t->name ? t->name : "");
    dlb_status s = dlb_onnx_tensor_ints(&m->o, t, what, v, n, &e);
    return s ? onnx_fail(m, s, "%s", onnx_why(m, e.msg)) : DLB_OK;
}

/* The per-tensor scale and zero point of inputs 1 and 2 (an absent zero
 * point is uint8 0, as ONNX says). */
static dlb_status scalar_q(struct onnx_map *m, float *scale, int32_t *zero,
                           enum dlb_dtype *type)
{
    const Onnx__NodeProto *n = m->node;
    float *sv = NULL;
    int64_t *zv = NULL;
    size_t ns = 0, nz = 1;
    dlb_status s = const_floats(m, 1, "scale", &sv, &ns);
    const Onnx__TensorProto *zt = NULL;
    *type = DLB_U8;
    *zero = 0;
    if (s == DLB_OK && n->n_input > 2 && *n->input[2]) {
        if (!(zt = onnx_const_input(m, 2, "zero point")))
            s = DLB_ERR_INPUT;
        else if (zt->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 &&
                 zt->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT8)
            s = onnx_unsupported(m, "zero point '%.100s' of data type %d: "
                                 "dlbench quantises data to UINT8 or INT8",
                                 zt->name ? zt->name : "", (int)zt->data_type);
        else if ((s = const_ints(m, zt, "zero point", &zv, &nz)) == DLB_OK) {
            *type = zt->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8
                        ? DLB_S8 : DLB_U8;
            *zero = nz == 1 ? (int32_t)zv[0] : 0;
        }
    }
    if (s == DLB_OK && (ns != 1 || nz != 1))
        s = onnx_unsupported(m, "%zu scales and %zu zero points: dlbench "
                             "quantises computed data per tensor (one each)",
                             ns, nz);
    else if (s == DLB_OK && (!(sv[0] > 0) || !isfinite(sv[0])))
        s = onnx_fail(m, DLB_ERR_INPUT, "scale %g: it must be finite and > 0",
                      (double)sv[0]);
    if (s == DLB_OK)
        *scale = sv[0];
    free(sv);
    free(zv);
    return s;
}

static dlb_status check_axis_attr(struct onnx_map *m)
{
    static const char *const known[] = { "axis", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_INT };
    return onnx_check_attrs(m, known, types);
}

dlb_status onnx_op_quantize(struct onnx_map *m)
{
    const struct onnx_value *x;
    float scale;
    int32_t zero;
    enum dlb_dtype type;
    if (check_axis_attr(m) || !(x = onnx_input(m, 0)))
        return DLB_ERR_INPUT;
    if (x->kind != OV_LAYER && x->kind != OV_INPUT)
        return onnx_unsupported(m, "QuantizeLinear of '%.100s', which is not "
                                "computed data; dlbench reads quantised "
                                "weights as INT8 initializers behind a "
                                "DequantizeLinear", m->node->input[0]);
    dlb_status s = scalar_q(m, &scale, &zero, &type);
    if (s != DLB_OK)
        return s;
    if ((s = onnx_bind(m, 0, OV_QUANT, onnx_value_layer(x), NULL)) == DLB_OK) {
        struct onnx_value *v = &m->vals[m->n_vals - 1];
        v->q_scale = scale;
        v->q_zero = zero;
        v->q_type = type;
    }
    return s;
}

/* DequantizeLinear of the pair's QuantizeLinear: the same scale and zero
 * point, or the pair is not a simulated quantisation. */
static dlb_status dequantize_pair(struct onnx_map *m, const struct onnx_value *q)
{
    float scale;
    int32_t zero;
    enum dlb_dtype type;
    dlb_status s = scalar_q(m, &scale, &zero, &type);
    if (s != DLB_OK)
        return s;
    if (scale != q->q_scale || zero != q->q_zero || type != q->q_type)
        return onnx_unsupported(m, "its scale %g and zero point %d differ from "
                                "its QuantizeLinear's (%g, %d); dlbench reads "
                                "pairs that dequantise what they quantised",
                                (double)scale, (int)zero, (double)q->q_scale,
                                (int)q->q_zero);
    if ((s = onnx_bind(m, 0, OV_FQ, q->layer, NULL)) == DLB_OK) {
        struct onnx_value *v = &m->vals[m->n_vals - 1];
        v->q_scale = scale;
        v->q_zero = zero;
        v->q_type = type;
    }
    return s;
}

/* A new float constant the map owns, of t's shape. */
static Onnx__TensorProto *made_tensor(struct onnx_map *m,
                                      const Onnx__TensorProto *t, float *v,
                                      size_t n)
{
    Onnx__TensorProto **a = realloc(m->made, (m->n_made + 1) * sizeof *a);
    Onnx__TensorProto *c = a ? calloc(1, sizeof *c) : NULL;
    if (a)
        m->made = a;
    if (!c)
        return NULL;
    onnx__tensor_proto__init(c);
    c->name = m->node->output[0];
    c->dims = t->dims;
    c->n_dims = t->n_dims;
    c->has_data_type = 1;
    c->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    c->float_data = v;
    c->n_float_data = n;
    m->made[m->n_made++] = c;
    return c;
}

/* DequantizeLinear of an initializer: folded into floats. */
static dlb_status dequantize_const(struct onnx_map *m,
                                   const Onnx__TensorProto *t)
{
    const Onnx__NodeProto *n = m->node;
    float *sv = NULL, *out = NULL;
    int64_t *qv = NULL, *zv = NULL;
    size_t ns = 0, nq = 0, nz = 0;
    dlb_status s = const_ints(m, t, "quantised tensor", &qv, &nq);
    if (s == DLB_OK)
        s = const_floats(m, 1, "scale", &sv, &ns);
    if (s == DLB_OK && n->n_input > 2 && *n->input[2]) {
        const Onnx__TensorProto *zt = onnx_const_input(m, 2, "zero point");
        s = zt ? const_ints(m, zt, "zero point", &zv, &nz) : DLB_ERR_INPUT;
    }
    /* per tensor, or one scale per index of `axis` (default 1) */
    int64_t axis = onnx_attr_int(n, "axis", 1), rank = (int64_t)t->n_dims;
    if (axis < 0)
        axis += rank;
    size_t inner = 1, len = 1;
    if (s == DLB_OK && ns > 1) {
        if (axis < 0 || axis >= rank || (size_t)t->dims[axis] != ns)
            s = onnx_fail(m, DLB_ERR_INPUT, "%zu scales for axis %lld of a "
                          "tensor of %lld dimensions: one per index of the "
                          "axis, or one", ns, (long long)axis,
                          (long long)rank);
        for (int64_t d = axis + 1; s == DLB_OK && d < rank; d++)
            inner *= (size_t)t->dims[d];
        len = ns;
    }
    if (s == DLB_OK && zv && nz != ns)
        s = onnx_fail(m, DLB_ERR_INPUT, "%zu zero points for %zu scales",
                      nz, ns);
    if (s == DLB_OK && !(out = malloc((nq ? nq : 1) * sizeof *out)))
        s = onnx_fail(m, DLB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; s == DLB_OK && i < nq; i++) {
        size_t c = ns > 1 ? (i / inner) % len : 0;
        out[i] = (float)(((double)qv[i] - (zv ? (double)zv[c] : 0.0)) *
                         (double)sv[c]);
    }
    if (s == DLB_OK && !made_tensor(m, t, out, nq))
        s = onnx_fail(m, DLB_ERR_NOMEM, "out of memory");
    if (s != DLB_OK)
        free(out);
    free(qv);
    free(sv);
    free(zv);
    if (s != DLB_OK)
        return s;
    return onnx_bind(m, 0, OV_CONST, 0, m->made[m->n_made - 1]);
}

dlb_status onnx_op_dequantize(struct onnx_map *m)
{
    const struct onnx_value *x;
    if (check_axis_attr(m) || !(x = onnx_input(m, 0)))
        return DLB_ERR_INPUT;
    if (x->kind == OV_QUANT)
        return dequantize_pair(m, x);
    if (x->kind == OV_CONST)
        return dequantize_const(m, x->t);
    return onnx_unsupported(m, "DequantizeLinear of '%.100s', which no "
                            "QuantizeLinear made and no initializer holds",
                            m->node->input[0]);
}
