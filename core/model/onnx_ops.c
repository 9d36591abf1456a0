/* One mapping per ONNX operator: its attributes checked (an attribute or
 * value dlbench cannot compute is refused by name, never ignored), then
 * the layer it becomes, or an alias when it computes nothing dlbench
 * needs (Identity, a Flatten of what is flat already, inference's
 * Dropout as a dropout layer that inference skips). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/onnx_impl.h"

/* ---- operators --------------------------------------------------------- */

static dlb_status op_conv(struct onnx_map *m)
{
    static const char *const known[] = { "auto_pad", "dilations", "group",
        "kernel_shape", "pads", "strides", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_STRING,
        A_INTS, A_INT, A_INTS, A_INTS, A_INTS };
    const struct onnx_value *x;
    const Onnx__TensorProto *w, *b = NULL;
    struct window win;
    uint32_t c, h, wd;
    int flat;
    char buf[96];
    if (onnx_check_attrs(m, known, types) || !(x = onnx_data_input(m, 0)) ||
        !(w = onnx_const_input(m, 1, "weight")) ||
        (m->node->n_input > 2 && *m->node->input[2] &&
         !(b = onnx_const_input(m, 2, "bias"))))
        return DLB_ERR_INPUT;
    onnx_value_shape(m, x, &c, &h, &wd, &flat);
    if (w->n_dims != 4)
        return onnx_unsupported(m, "weight '%.100s' has %zu dimensions; "
                                "dlbench supports 2-D convolutions", w->name,
                                w->n_dims);
    int64_t group = onnx_attr_int(m->node, "group", 1);
    if (group < 1 || group > 65536 || w->dims[0] < 1 || w->dims[0] > 65536 ||
        w->dims[0] % group)
        return onnx_fail(m, DLB_ERR_INPUT, "attribute group = %lld does not "
                         "divide the %lld filters", (long long)group,
                         (long long)w->dims[0]);
    if (w->dims[1] * group != (int64_t)c)
        return onnx_fail(m, DLB_ERR_INPUT, "the shapes do not infer: weight "
                         "'%.100s' is %s, which reads %lld channels, but the "
                         "input has %u", w->name, onnx_ints_text(buf, sizeof buf,
                         w->dims, 4), (long long)(w->dims[1] * group), c);
    if (onnx_read_window(m, w->dims[2], w->dims[3], h, wd, &win))
        return DLB_ERR_INPUT;
    struct dlb_layer_spec *L = onnx_layer(m, DLB_LAYER_CONV, "",
                                          onnx_value_layer(x));
    if (!L)
        return DLB_ERR_NOMEM;
    L->filters = (uint32_t)w->dims[0];
    L->size = win.size, L->stride = win.stride, L->pad = win.pad;
    L->groups = (uint32_t)group;
    L->bias = b != NULL;
    uint64_t ws[4] = { L->filters, c / L->groups, L->size, L->size };
    if (onnx_finish(m, L) || onnx_weight(m, L, "weight", w, 4, ws, 0) ||
        (b && onnx_weight(m, L, "bias", b, 1, ws, 0)))
        return DLB_ERR_INPUT;
    return onnx_bind(m, 0, OV_LAYER, (int32_t)(L - m->spec->layers), NULL);
}

static dlb_status op_batchnorm(struct onnx_map *m)
{
    static const char *const known[] = { "epsilon", "momentum", "spatial",
        "training_mode", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_FLOAT,
        A_FLOAT, A_INT, A_INT };
    static const char *const roles[] = { "scale", "bias", "mean", "var" };
    static const char *const names[] = { "weight", "bias", "running_mean",
        "running_var" };
    const struct onnx_value *x;
    const Onnx__TensorProto *t[4];
    if (onnx_check_attrs(m, known, types) || !(x = onnx_data_input(m, 0)))
        return DLB_ERR_INPUT;
    for (int k = 0; k < 4; k++)
        if (!(t[k] = onnx_const_input(m, (size_t)k + 1, roles[k])))
            return DLB_ERR_INPUT;
    if (onnx_attr_int(m->node, "training_mode", 0) != 0 ||
        onnx_attr_int(m->node, "spatial", 1) != 1)
        return onnx_unsupported(m, "attribute %s is not supported (dlbench "
                                "reads inference-mode, spatial batch "
                                "normalization and trains it itself)",
                                onnx_attr_int(m->node, "spatial", 1) != 1
                                    ? "spatial = 0" : "training_mode = 1");
    float eps = onnx_attr_float(m->node, "epsilon", 1e-5f);
    float mom = onnx_attr_float(m->node, "momentum", 0.9f);
    if (!(eps > 0 && eps <= 1) || !(mom >= 0 && mom <= 1))
        return onnx_unsupported(m, "attribute epsilon = %g or momentum = %g is "
                                "not supported (epsilon in (0, 1], momentum "
                                "in [0, 1])", eps, mom);
    struct dlb_layer_spec *L = onnx_layer(m, DLB_LAYER_BATCHNORM, "",
                                          onnx_value_layer(x));
    if (!L)
        return DLB_ERR_NOMEM;
    L->eps = eps;
    /* ONNX keeps momentum * running + (1 - momentum) * batch; PyTorch and
     * dlbench weigh the batch by their momentum. */
    L->momentum = 1.0f - mom;
    if (onnx_finish(m, L))
        return DLB_ERR_INPUT;
    uint64_t shape[1] = { L->in_c };
    for (int k = 0; k < 4; k++)
        if (onnx_weight(m, L, names[k], t[k], 1, shape, 0))
            return DLB_ERR_INPUT;
    return onnx_bind(m, 0, OV_LAYER, (int32_t)(L - m->spec->layers), NULL);
}

/* A layer of `kind` on input 0, nothing else to read. */
static dlb_status simple(struct onnx_map *m, enum dlb_layer_kind kind,
                         float relu_max)
{
    const struct onnx_value *x = onnx_data_input(m, 0);
    if (!x)
        return DLB_ERR_INPUT;
    struct dlb_layer_spec *L = onnx_layer(m, kind, "", onnx_value_layer(x));
    if (!L)
        return DLB_ERR_NOMEM;
    L->relu_max = relu_max;
    if (onnx_finish(m, L))
        return DLB_ERR_INPUT;
    return onnx_bind(m, 0, OV_LAYER, (int32_t)(L - m->spec->layers), NULL);
}

static dlb_status op_relu(struct onnx_map *m)
{
    static const char *const known[] = { NULL };
    return onnx_check_attrs(m, known, NULL) ? DLB_ERR_INPUT
                                       : simple(m, DLB_LAYER_RELU, 0);
}

static dlb_status op_global_avgpool(struct onnx_map *m)
{
    static const char *const known[] = { NULL };
    return onnx_check_attrs(m, known, NULL) ? DLB_ERR_INPUT
                                       : simple(m, DLB_LAYER_GLOBAL_AVGPOOL, 0);
}

/* Clip(0, 6) is ReLU6 and Clip(0) ReLU; bounds are attributes before
 * opset 11 and inputs from it. */
static dlb_status op_clip(struct onnx_map *m)
{
    static const char *const known[] = { "min", "max", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_FLOAT,
        A_FLOAT };
    const Onnx__NodeProto *n = m->node;
    double lo = -INFINITY, hi = INFINITY;
    const Onnx__TensorProto *t;
    if (onnx_check_attrs(m, known, types))
        return DLB_ERR_INPUT;
    if (onnx_attr(n, "min"))
        lo = onnx_attr_float(n, "min", 0);
    if (onnx_attr(n, "max"))
        hi = onnx_attr_float(n, "max", 0);
    if (n->n_input > 1 && *n->input[1] &&
        (!(t = onnx_const_input(m, 1, "min")) || onnx_scalar(m, t, "min", &lo)))
        return DLB_ERR_INPUT;
    if (n->n_input > 2 && *n->input[2] &&
        (!(t = onnx_const_input(m, 2, "max")) || onnx_scalar(m, t, "max", &hi)))
        return DLB_ERR_INPUT;
    if (lo != 0 || !(hi == 6 || isinf(hi)))
        return onnx_unsupported(m, "Clip(min = %g, max = %g) is not supported "
                                "(dlbench maps Clip(0, 6) to ReLU6 and Clip(0) "
                                "to ReLU)", lo, hi);
    return simple(m, DLB_LAYER_RELU, isinf(hi) ? 0.0f : 6.0f);
}

/* Two or more computed inputs of one layer kind (Add, Concat). */
static dlb_status join(struct onnx_map *m, enum dlb_layer_kind kind)
{
    const Onnx__NodeProto *n = m->node;
    if (n->n_input < 2 || n->n_input > DLB_LAYER_MAX_INPUTS)
        return onnx_unsupported(m, "%zu inputs are not supported (2 to %d)",
                                n->n_input, DLB_LAYER_MAX_INPUTS);
    struct dlb_layer_spec *L = onnx_layer(m, kind, "", 0);
    if (!L)
        return DLB_ERR_NOMEM;
    L->n_inputs = (uint32_t)n->n_input;
    for (size_t k = 0; k < n->n_input; k++) {
        const struct onnx_value *v = onnx_input(m, k);
        if (!v)
            return DLB_ERR_INPUT;
        if (v->kind == OV_CONST)
            return onnx_unsupported(m, "input '%.100s' is a constant; dlbench "
                                    "%s computed tensors (a constant added to "
                                    "a MatMul is its bias)", n->input[k],
                                    kind == DLB_LAYER_ADD ? "adds" : "joins");
        L->inputs[k] = onnx_value_layer(v);
    }
    if (onnx_finish(m, L))
        return DLB_ERR_INPUT;
    return onnx_bind(m, 0, OV_LAYER, (int32_t)(L - m->spec->layers), NULL);
}

/* How many node inputs and graph outputs read the value `name`. */
static size_t readers(const struct onnx_map *m, const char *name)
{
    const Onnx__GraphProto *g = m->o.model->graph;
    size_t n = 0;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_input; k++)
            n += g->node[i]->input[k] && !strcmp(g->node[i]->input[k], name);
    for (size_t i = 0; i < g->n_output; i++)
        n += g->output[i]->name && !strcmp(g->output[i]->name, name);
    return n;
}

/* MatMul then Add of a constant vector: the linear layer's bias. */
static dlb_status add_bias(struct onnx_map *m, const struct onnx_value *x,
                           const Onnx__TensorProto *b)
{
    struct dlb_model_spec *s = m->spec;
    struct dlb_layer_spec *L = &s->layers[x->layer];
    uint64_t shape[1] = { L->out };
    if (onnx_weight(m, L, "bias", b, 1, shape, 0))
        return DLB_ERR_INPUT;
    L->bias = 1;
    L->params += L->out;
    s->params += L->out;
    return onnx_bind(m, 0, OV_LAYER, x->layer, NULL);
}

static dlb_status op_add(struct onnx_map *m)
{
    static const char *const known[] = { NULL };
    const Onnx__NodeProto *n = m->node;
    if (onnx_check_attrs(m, known, NULL))
        return DLB_ERR_INPUT;
    if (n->n_input == 2) {
        const struct onnx_value *a = onnx_input(m, 0), *b;
        size_t ai = 0; /* which input `a` is */
        if (!a || !(b = onnx_input(m, 1)))
            return DLB_ERR_INPUT;
        if (a->kind == OV_CONST) {
            const struct onnx_value *t = a;
            a = b, b = t;
            ai = 1;
        }
        /* Only a bias-free linear layer that nothing read yet (the last
         * one made) and nothing else will read can take the constant as
         * its bias. */
        if (b->kind == OV_CONST && a->kind == OV_LAYER &&
            a->layer + 1 == (int32_t)m->spec->n_layers &&
            m->spec->layers[a->layer].kind == DLB_LAYER_LINEAR &&
            !m->spec->layers[a->layer].bias &&
            m->spec->layers[a->layer].n_uses == 0 && b->t->n_dims <= 2 &&
            readers(m, n->input[ai]) == 1)
            return add_bias(m, a, b->t);
    }
    return join(m, DLB_LAYER_ADD);
}

static dlb_status op_concat(struct onnx_map *m)
{
    static const char *const known[] = { "axis", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_INT };
    if (onnx_check_attrs(m, known, types))
        return DLB_ERR_INPUT;
    int64_t axis = onnx_attr_int(m->node, "axis", 0);
    if (!onnx_attr(m->node, "axis") || (axis != 1 && axis != -3))
        return onnx_unsupported(m, "attribute axis = %lld is not supported "
                                "(dlbench joins the channels: axis 1)",
                                (long long)axis);
    return join(m, DLB_LAYER_CONCAT);
}

static dlb_status op_pool(struct onnx_map *m, enum dlb_layer_kind kind)
{
    static const char *const known[] = { "auto_pad", "ceil_mode",
        "count_include_pad", "dilations", "kernel_shape", "pads",
        "storage_order", "strides", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_STRING,
        A_INT, A_INT, A_INTS, A_INTS, A_INTS, A_INT, A_INTS };
    const Onnx__NodeProto *n = m->node;
    const struct onnx_value *x;
    struct window w;
    uint32_t c, h, wd;
    int flat;
    if (onnx_check_attrs(m, known, types) || !(x = onnx_data_input(m, 0)))
        return DLB_ERR_INPUT;
    int is_max = kind == DLB_LAYER_MAXPOOL;
    if ((is_max && onnx_attr(n, "count_include_pad")) ||
        (!is_max && (onnx_attr(n, "storage_order") || onnx_attr(n, "dilations"))))
        return onnx_unsupported(m, "attribute '%s' is not one of %s's",
                                is_max ? "count_include_pad"
                                       : onnx_attr(n, "dilations") ? "dilations"
                                                              : "storage_order",
                                n->op_type);
    if (n->n_output > 1 && n->output[1] && *n->output[1])
        return onnx_unsupported(m, "output 'Indices' is not supported");
    if (onnx_attr_int(n, "storage_order", 0) != 0)
        return onnx_unsupported(m, "attribute storage_order = 1 is not "
                                "supported (dlbench supports 0)");
    onnx_value_shape(m, x, &c, &h, &wd, &flat);
    if (onnx_read_window(m, 0, 0, h, wd, &w))
        return DLB_ERR_INPUT;
    if (!is_max && w.pad > 0 && onnx_attr_int(n, "count_include_pad", 0) == 0)
        return onnx_unsupported(m, "attribute count_include_pad = 0 with pads "
                                "%u is not supported (dlbench's average "
                                "divides by the whole window: "
                                "count_include_pad = 1)", w.pad);
    if (onnx_attr_int(n, "ceil_mode", 0) != 0) {
        /* ceil_mode changes nothing where the windows tile exactly. */
        uint32_t span[2] = { h + 2 * w.pad, wd + 2 * w.pad };
        for (int k = 0; k < 2; k++)
            if (span[k] >= w.size && (span[k] - w.size) % w.stride)
                return onnx_unsupported(m, "attribute ceil_mode = 1 is not "
                                        "supported here (the windows do not "
                                        "tile the %ux%u input; dlbench rounds "
                                        "down: ceil_mode 0)", h, wd);
    }
    struct dlb_layer_spec *L = onnx_layer(m, kind, "", onnx_value_layer(x));
    if (!L)
        return DLB_ERR_NOMEM;
    L->size = w.size, L->stride = w.stride, L->pad = w.pad;
    if (onnx_finish(m, L))
        return DLB_ERR_INPUT;
    return onnx_bind(m, 0, OV_LAYER, (int32_t)(L - m->spec->layers), NULL);
}

static dlb_status op_maxpool(struct onnx_map *m)
{
    return op_pool(m, DLB_LAYER_MAXPOOL);
}

static dlb_status op_avgpool(struct onnx_map *m)
{
    return op_pool(m, DLB_LAYER_AVGPOOL);
}

/* x as a flat feature vector: itself when flat, else a flatten layer
 * named after the node with `suffix`. */
static dlb_status flat_of(struct onnx_map *m, const struct onnx_value *x,
                          const char *suffix, int32_t *layer)
{
    uint32_t c, h, w;
    int flat;
    onnx_value_shape(m, x, &c, &h, &w, &flat);
    if (flat) {
        *layer = onnx_value_layer(x);
        return DLB_OK;
    }
    struct dlb_layer_spec *L = onnx_layer(m, DLB_LAYER_FLATTEN, suffix,
                                          onnx_value_layer(x));
    if (!L)
        return DLB_ERR_NOMEM;
    if (onnx_finish(m, L))
        return DLB_ERR_INPUT;
    *layer = (int32_t)(L - m->spec->layers);
    return DLB_OK;
}

static dlb_status bind_flat(struct onnx_map *m, const struct onnx_value *x)
{
    int32_t layer;
    if (flat_of(m, x, "", &layer))
        return DLB_ERR_INPUT;
    if (layer == DLB_LAYER_INPUT)
        return onnx_fail(m, DLB_ERR_INPUT, "flattens the image itself; "
                         "dlbench needs a layer before a flatten");
    return onnx_bind(m, 0, OV_LAYER, layer, NULL);
}

static dlb_status op_flatten(struct onnx_map *m)
{
    static const char *const known[] = { "axis", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_INT };
    const struct onnx_value *x;
    if (onnx_check_attrs(m, known, types) || !(x = onnx_data_input(m, 0)))
        return DLB_ERR_INPUT;
    int64_t axis = onnx_attr_int(m->node, "axis", 1);
    if (axis != 1)
        return onnx_unsupported(m, "attribute axis = %lld is not supported "
                                "(dlbench flattens each image: axis 1)",
                                (long long)axis);
    return bind_flat(m, x);
}

/* Reshape to N x K with K the image's c * h * w (or -1): a flatten. */
static dlb_status op_reshape(struct onnx_map *m)
{
    static const char *const known[] = { "allowzero", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_INT };
    const struct onnx_value *x;
    const Onnx__TensorProto *t;
    int64_t *v = NULL;
    size_t n = 0;
    uint32_t c, h, w;
    int flat;
    char buf[128];
    struct dlb_error e = { "" };
    if (onnx_check_attrs(m, known, types) || !(x = onnx_data_input(m, 0)) ||
        !(t = onnx_const_input(m, 1, "shape")))
        return DLB_ERR_INPUT;
    if (dlb_onnx_tensor_ints(&m->o, t, "the shape", &v, &n, &e))
        return onnx_fail(m, DLB_ERR_INPUT, "%s", onnx_why(m, e.msg));
    onnx_value_shape(m, x, &c, &h, &w, &flat);
    int64_t k = (int64_t)c * h * w;
    int ok = n == 2 && (v[1] == -1 || v[1] == k) && v[0] >= -1 &&
             !(v[0] == -1 && v[1] == -1) &&
             !(onnx_attr_int(m->node, "allowzero", 0) && v[0] == 0);
    onnx_ints_text(buf, sizeof buf, v, n);
    free(v);
    if (!ok)
        return onnx_unsupported(m, "Reshape to %s is not supported (dlbench "
                                "reshapes only to 2-D, N x %lld: [0,-1], "
                                "[-1,%lld] or [N,%lld])", buf, (long long)k,
                                (long long)k, (long long)k);
    return bind_flat(m, x);
}

/* Gemm (transA = 0, alpha = beta = 1) and MatMul with a constant 2-D
 * weight: a linear layer, flattening a c x h x w input first. */
static dlb_status linear(struct onnx_map *m, const Onnx__TensorProto *b,
                         int transposed, const Onnx__TensorProto *bias)
{
    const struct onnx_value *x = onnx_data_input(m, 0);
    int32_t from;
    uint32_t c, h, w;
    int flat;
    if (!x)
        return DLB_ERR_INPUT;
    if (b->n_dims != 2 || b->dims[0] < 1 || b->dims[1] < 1 ||
        b->dims[transposed ? 0 : 1] > (1 << 24))
        return onnx_unsupported(m, "weight '%.100s' has %zu dimensions; "
                                "dlbench maps a 2-D constant weight to a "
                                "linear layer", b->name, b->n_dims);
    onnx_value_shape(m, x, &c, &h, &w, &flat);
    if (!flat && !strcmp(m->node->op_type, "MatMul"))
        return onnx_unsupported(m, "MatMul of a %ux%ux%u input is not "
                                "supported (dlbench maps MatMul of flat "
                                "features by a 2-D weight)", c, h, w);
    if (flat_of(m, x, "_flatten", &from))
        return DLB_ERR_INPUT;
    struct dlb_layer_spec *L = onnx_layer(m, DLB_LAYER_LINEAR, "", from);
    if (!L)
        return DLB_ERR_NOMEM;
    L->out = (uint32_t)b->dims[transposed ? 0 : 1];
    L->bias = bias != NULL;
    if (onnx_finish(m, L))
        return DLB_ERR_INPUT;
    uint64_t ws[2] = { L->out, L->in_c };
    if (onnx_weight(m, L, "weight", b, 2, ws, !transposed) ||
        (bias && onnx_weight(m, L, "bias", bias, bias->n_dims == 2 ? 2 : 1,
                             bias->n_dims == 2 ? (uint64_t[]){ 1, L->out }
                                               : ws, 0)))
        return DLB_ERR_INPUT;
    if (bias && bias->n_dims == 2) {
        /* a 1 x out bias: stored as the layer's out */
        struct dlb_weight *last = &m->spec->weights->t[m->spec->weights->n - 1];
        last->ndim = 1;
        last->shape[0] = L->out;
    }
    return onnx_bind(m, 0, OV_LAYER, (int32_t)(L - m->spec->layers), NULL);
}

static dlb_status op_gemm(struct onnx_map *m)
{
    static const char *const known[] = { "alpha", "beta", "transA", "transB",
        NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_FLOAT,
        A_FLOAT, A_INT, A_INT };
    const Onnx__NodeProto *n = m->node;
    const Onnx__TensorProto *b, *c = NULL;
    if (onnx_check_attrs(m, known, types) || !(b = onnx_const_input(m, 1, "weight")) ||
        (n->n_input > 2 && *n->input[2] && !(c = onnx_const_input(m, 2, "bias"))))
        return DLB_ERR_INPUT;
    if (onnx_attr_float(n, "alpha", 1) != 1 || onnx_attr_float(n, "beta", 1) != 1 ||
        onnx_attr_int(n, "transA", 0) != 0)
        return onnx_unsupported(m, "attributes alpha = %g, beta = %g, transA "
                                "= %lld are not supported (dlbench maps Gemm "
                                "with alpha 1, beta 1, transA 0)",
                                onnx_attr_float(n, "alpha", 1),
                                onnx_attr_float(n, "beta", 1),
                                (long long)onnx_attr_int(n, "transA", 0));
    return linear(m, b, onnx_attr_int(n, "transB", 0) != 0, c);
}

static dlb_status op_matmul(struct onnx_map *m)
{
    static const char *const known[] = { NULL };
    const Onnx__TensorProto *b;
    if (onnx_check_attrs(m, known, NULL) || !(b = onnx_const_input(m, 1, "weight")))
        return DLB_ERR_INPUT;
    return linear(m, b, 0, NULL);
}

/* The output's Softmax or LogSoftmax over the classes: dropped, the loss
 * (cross-entropy on the logits) adds the logsoftmax itself. */
static dlb_status op_softmax(struct onnx_map *m)
{
    static const char *const known[] = { "axis", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_INT };
    const struct onnx_value *x;
    uint32_t c, h, w;
    int flat;
    if (onnx_check_attrs(m, known, types) || !(x = onnx_data_input(m, 0)))
        return DLB_ERR_INPUT;
    onnx_value_shape(m, x, &c, &h, &w, &flat);
    int64_t axis = onnx_attr_int(m->node, "axis", m->o.opset >= 13 ? -1 : 1);
    if (x->kind != OV_LAYER || !flat || (axis != 1 && axis != -1))
        return onnx_unsupported(m, "a softmax over axis %lld of a %s input is "
                                "not supported (dlbench drops the last "
                                "node's softmax over N x classes scores)",
                                (long long)axis, flat ? "flat" : "c x h x w");
    return onnx_bind(m, 0, OV_SOFTMAX, x->layer, NULL);
}

/* Dropout: a dropout layer (inference skips it). Opset 12 moved ratio
 * and training_mode from attributes to inputs. */
static dlb_status op_dropout(struct onnx_map *m)
{
    static const char *const known[] = { "ratio", "seed", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_FLOAT,
        A_INT };
    const Onnx__NodeProto *n = m->node;
    const Onnx__TensorProto *t;
    double ratio = onnx_attr_float(n, "ratio", 0.5f), train = 0;
    if (onnx_check_attrs(m, known, types))
        return DLB_ERR_INPUT;
    if (n->n_input > 1 && *n->input[1] &&
        (!(t = onnx_const_input(m, 1, "ratio")) ||
         onnx_scalar(m, t, "ratio", &ratio)))
        return DLB_ERR_INPUT;
    if (n->n_input > 2 && *n->input[2] &&
        (!(t = onnx_const_input(m, 2, "training_mode")) ||
         onnx_scalar(m, t, "training_mode", &train)))
        return DLB_ERR_INPUT;
    if (!(ratio >= 0 && ratio < 0.999) || train != 0)
        return onnx_unsupported(m, "ratio = %g, training_mode = %g is not "
                                "supported (ratio from 0 to 0.999, "
                                "training_mode false)", ratio, train);
    if (n->n_output > 1 && n->output[1] && *n->output[1])
        return onnx_unsupported(m, "output 'mask' is not supported");
    const struct onnx_value *x = onnx_data_input(m, 0);
    if (!x)
        return DLB_ERR_INPUT;
    struct dlb_layer_spec *L = onnx_layer(m, DLB_LAYER_DROPOUT, "",
                                          onnx_value_layer(x));
    if (!L)
        return DLB_ERR_NOMEM;
    L->p = (float)ratio;
    L->mode = DLB_DROPOUT_ELEMENT;
    if (onnx_finish(m, L))
        return DLB_ERR_INPUT;
    return onnx_bind(m, 0, OV_LAYER, (int32_t)(L - m->spec->layers), NULL);
}

static dlb_status op_identity(struct onnx_map *m)
{
    static const char *const known[] = { NULL };
    const struct onnx_value *x;
    if (onnx_check_attrs(m, known, NULL) || !(x = onnx_input(m, 0)))
        return DLB_ERR_INPUT;
    return onnx_bind(m, 0, x->kind, x->layer, x->t);
}

static dlb_status op_constant(struct onnx_map *m)
{
    static const char *const known[] = { "value", NULL };
    static const Onnx__AttributeProto__AttributeType types[] = { A_TENSOR };
    const Onnx__AttributeProto *a = onnx_attr(m->node, "value");
    if (onnx_check_attrs(m, known, types))
        return DLB_ERR_INPUT;
    if (!a || !a->t)
        return onnx_unsupported(m, "a Constant without a 'value' tensor is "
                                "not supported");
    return onnx_bind(m, 0, OV_CONST, 0, a->t);
}

static const struct {
    const char *op;
    dlb_status (*map)(struct onnx_map *m);
} ops[] = {
    { "Conv", op_conv }, { "BatchNormalization", op_batchnorm },
    { "Relu", op_relu }, { "Clip", op_clip }, { "Add", op_add },
    { "Concat", op_concat }, { "MaxPool", op_maxpool },
    { "AveragePool", op_avgpool }, { "GlobalAveragePool", op_global_avgpool },
    { "Flatten", op_flatten }, { "Reshape", op_reshape }, { "Gemm", op_gemm },
    { "MatMul", op_matmul }, { "Softmax", op_softmax },
    { "LogSoftmax", op_softmax }, { "Dropout", op_dropout },
    { "Identity", op_identity }, { "Constant", op_constant },
    { "QuantizeLinear", onnx_op_quantize },
    { "DequantizeLinear", onnx_op_dequantize },
};

dlb_status onnx_map_node(struct onnx_map *m)
{
    const Onnx__NodeProto *n = m->node;
    const char *d = n->domain ? n->domain : "";
    if (!n->op_type || (*d && strcmp(d, "ai.onnx")))
        return onnx_unsupported(m, "operator of domain '%.64s' is not "
                                "supported", d);
    if (n->n_output < 1 || !n->output[0] || !*n->output[0])
        return onnx_fail(m, DLB_ERR_INPUT, "has no output");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(n->op_type, ops[i].op))
            return ops[i].map(m);
    return onnx_unsupported(m, "operator %.64s is not supported", n->op_type);
}
