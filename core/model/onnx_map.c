/* The ONNX graph onto dlbench's: the image input, the constants, one
 * layer (or an alias) per node in the file's order (ONNX sorts nodes
 * topologically, as dlbench's layers read earlier layers only), then the
 * output and the loss. */
#include "model/onnx_map.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/onnx_impl.h"

const char dlb_onnx_supported_ops[] =
    "Conv, BatchNormalization, Relu, Clip (as ReLU or ReLU6), Add, Concat, "
    "MaxPool, AveragePool, GlobalAveragePool, Flatten, Reshape (to 2-D), "
    "Gemm, MatMul, Softmax and LogSoftmax (last), Dropout, Identity, "
    "Constant, QuantizeLinear and DequantizeLinear (QDQ: of initializers, "
    "or pairs before Conv and Gemm)";

int dlb_onnx_is_path(const char *path)
{
    size_t n = strlen(path);
    return n > 5 && !strcasecmp(path + n - 5, ".onnx");
}

static dlb_status vfail(struct onnx_map *m, dlb_status s, const char *tail,
                        const char *fmt, va_list ap)
{
    char what[768], nb[32];
    vsnprintf(what, sizeof what, fmt, ap);
    if (!m->node)
        return dlb_errorf(m->err, s, "%s: %s%s", m->o.name, what, tail);
    if (!m->node->name || !*m->node->name)
        snprintf(nb, sizeof nb, "#%zu", m->node_index + 1);
    return dlb_errorf(m->err, s, "%s: node '%.200s' (%.64s): %s%s", m->o.name,
                      m->node->name && *m->node->name ? m->node->name : nb,
                      m->node->op_type ? m->node->op_type : "", what, tail);
}

dlb_status onnx_fail(struct onnx_map *m, dlb_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s = vfail(m, s, "", fmt, ap);
    va_end(ap);
    return s;
}

dlb_status onnx_unsupported(struct onnx_map *m, const char *fmt, ...)
{
    char tail[sizeof dlb_onnx_supported_ops + 32];
    va_list ap;
    snprintf(tail, sizeof tail, "; supported ops: %s", dlb_onnx_supported_ops);
    va_start(ap, fmt);
    dlb_status s = vfail(m, DLB_ERR_INPUT, tail, fmt, ap);
    va_end(ap);
    return s;
}

const char *onnx_why(const struct onnx_map *m, const char *msg)
{
    size_t n = strlen(m->o.name);
    if (!strncmp(msg, m->o.name, n) && !strncmp(msg + n, ": ", 2))
        return msg + n + 2;
    return msg;
}

/* ---- values ----------------------------------------------------------- */

static struct onnx_value *find_value(struct onnx_map *m, const char *name)
{
    /* Later bindings win: a name is produced once in valid ONNX, and an
     * alias rebinding is the newest. */
    for (size_t i = m->n_vals; i-- > 0;)
        if (!strcmp(m->vals[i].name, name))
            return &m->vals[i];
    return NULL;
}

static dlb_status add_value(struct onnx_map *m, const char *name,
                            enum onnx_value_kind kind, int32_t layer,
                            const Onnx__TensorProto *t)
{
    if (m->n_vals == m->cap_vals) {
        size_t cap = m->cap_vals ? 2 * m->cap_vals : 64;
        struct onnx_value *v = realloc(m->vals, cap * sizeof *v);
        if (!v)
            return onnx_fail(m, DLB_ERR_NOMEM, "out of memory");
        m->vals = v;
        m->cap_vals = cap;
    }
    m->vals[m->n_vals++] = (struct onnx_value){ name, kind, layer, t, 0.0f,
                                                0, DLB_F32 };
    return DLB_OK;
}

const struct onnx_value *onnx_input(struct onnx_map *m, size_t k)
{
    const Onnx__NodeProto *n = m->node;
    if (k >= n->n_input || !n->input[k] || !*n->input[k]) {
        onnx_fail(m, DLB_ERR_INPUT, "input %zu is missing", k + 1);
        return NULL;
    }
    const struct onnx_value *v = find_value(m, n->input[k]);
    if (!v)
        onnx_fail(m, DLB_ERR_INPUT, "input '%.200s' is produced by no earlier "
                  "node, initializer or graph input", n->input[k]);
    else if (v->kind == OV_SOFTMAX)
        onnx_unsupported(m, "reads '%.200s', the output of a Softmax or "
                         "LogSoftmax, which dlbench supports only as the "
                         "graph's last node", n->input[k]);
    else if (v->kind == OV_QUANT && strcmp(n->op_type, "DequantizeLinear"))
        onnx_unsupported(m, "reads '%.200s', the output of a QuantizeLinear; "
                         "dlbench reads QuantizeLinear only as the first of "
                         "a QuantizeLinear/DequantizeLinear pair",
                         n->input[k]);
    else if (v->kind == OV_FQ && (k != 0 || (strcmp(n->op_type, "Conv") &&
                                             strcmp(n->op_type, "Gemm"))))
        onnx_unsupported(m, "reads '%.200s', a QuantizeLinear/"
                         "DequantizeLinear pair's output; dlbench reads such "
                         "pairs only as the data input of Conv or Gemm",
                         n->input[k]);
    else
        return v->kind != OV_SOFTMAX ? v : NULL;
    return NULL;
}

const struct onnx_value *onnx_data_input(struct onnx_map *m, size_t k)
{
    const struct onnx_value *v = onnx_input(m, k);
    if (v && v->kind == OV_CONST) {
        onnx_unsupported(m, "input %zu '%.200s' is an initializer or a "
                         "Constant; dlbench needs data computed from the "
                         "graph's input there", k + 1, m->node->input[k]);
        return NULL;
    }
    return v;
}

const Onnx__TensorProto *onnx_const_input(struct onnx_map *m, size_t k,
                                          const char *role)
{
    const struct onnx_value *v = onnx_input(m, k);
    if (v && v->kind != OV_CONST) {
        onnx_unsupported(m, "the %s '%.200s' is computed by the graph; dlbench "
                         "needs it as an initializer or a Constant", role,
                         m->node->input[k]);
        return NULL;
    }
    return v ? v->t : NULL;
}

dlb_status onnx_bind(struct onnx_map *m, size_t k, enum onnx_value_kind kind,
                     int32_t layer, const Onnx__TensorProto *t)
{
    const Onnx__NodeProto *n = m->node;
    if (k >= n->n_output || !n->output[k] || !*n->output[k])
        return onnx_fail(m, DLB_ERR_INPUT, "has no output %zu", k + 1);
    return add_value(m, n->output[k], kind, layer, t);
}

int32_t onnx_value_layer(const struct onnx_value *v)
{
    return v->kind == OV_INPUT ? DLB_LAYER_INPUT : v->layer;
}

/* The QDQ pair before the current node, as its layer's simulated input
 * quantisation (model_file.h's in_q_*). */
static void take_qdq(struct onnx_map *m, struct dlb_layer_spec *L)
{
    const Onnx__NodeProto *n = m->node;
    if (!n || !n->n_input || !n->input[0] ||
        (L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR))
        return;
    const struct onnx_value *v = find_value(m, n->input[0]);
    if (!v || v->kind != OV_FQ)
        return;
    L->in_q_scale = v->q_scale;
    L->in_q_zero = v->q_zero;
    L->in_q_type = v->q_type;
}

void onnx_value_shape(const struct onnx_map *m, const struct onnx_value *v,
                      uint32_t *c, uint32_t *h, uint32_t *w, int *flat)
{
    const struct dlb_model_spec *s = m->spec;
    if (v->kind == OV_INPUT || v->layer == DLB_LAYER_INPUT) {
        *c = s->in_c, *h = s->in_h, *w = s->in_w, *flat = 0;
        return;
    }
    const struct dlb_layer_spec *L = &s->layers[v->layer];
    *c = L->out_c, *h = L->out_h, *w = L->out_w, *flat = L->flat_out;
}

/* ---- layers ------------------------------------------------------------ */

static int name_taken(const struct dlb_model_spec *s, const char *name)
{
    if (!strcmp(name, "net") || !strcmp(name, "cross_entropy"))
        return 1;
    for (size_t i = 0; i < s->n_layers; i++)
        if (!strcmp(s->layers[i].name, name))
            return 1;
    return 0;
}

/* The node's name as the layer's when it is plain and short enough to be
 * a tensor name's prefix (torch's "/layer1/layer1.0/conv1/Conv" loses its
 * leading '/'), else OP_INDEX; made unique with the node's index. */
static void layer_name(struct onnx_map *m, const char *suffix, char *out,
                       size_t len)
{
    const Onnx__NodeProto *n = m->node;
    if (!n) { /* the loss's own layer: its caller names it */
        snprintf(out, len, "%s", suffix);
        return;
    }
    const char *base = n->name ? n->name : "";
    int plain = 1;
    while (*base == '/')
        base++;
    for (const char *p = base; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789_.-/", *p))
            plain = 0;
    if (!plain || !*base || strlen(base) + strlen(suffix) + 8 >= len)
        snprintf(out, len, "%.24s_%zu%s", n->op_type ? n->op_type : "node",
                 m->node_index, suffix);
    else
        snprintf(out, len, "%s%s", base, suffix);
    if (name_taken(m->spec, out)) {
        size_t at = strlen(out);
        snprintf(out + at, len - at, "_%zu", m->node_index);
    }
}

struct dlb_layer_spec *onnx_layer(struct onnx_map *m, enum dlb_layer_kind kind,
                                  const char *suffix, int32_t from)
{
    struct dlb_model_spec *s = m->spec;
    if (s->n_layers == m->cap_layers) {
        size_t cap = m->cap_layers ? 2 * m->cap_layers : 32;
        struct dlb_layer_spec *l = realloc(s->layers, cap * sizeof *l);
        if (!l) {
            onnx_fail(m, DLB_ERR_NOMEM, "out of memory");
            return NULL;
        }
        s->layers = l;
        m->cap_layers = cap;
    }
    struct dlb_layer_spec *L = &s->layers[s->n_layers];
    memset(L, 0, sizeof *L);
    L->kind = kind;
    layer_name(m, suffix, L->name, sizeof L->name);
    L->line = (int)m->node_index + 1;
    L->n_inputs = 1;
    L->inputs[0] = from;
    L->stride = 1;
    L->groups = 1;
    take_qdq(m, L);
    return L;
}

/* "FILE:LINE: layer 'NAME': what" from the shape pass, as "what". */
static const char *shape_why(const char *msg)
{
    const char *p = strstr(msg, "layer '");
    if (p && (p = strstr(p, "': ")))
        return p + 3;
    return msg;
}

dlb_status onnx_finish(struct onnx_map *m, struct dlb_layer_spec *L)
{
    struct dlb_model_spec *s = m->spec;
    struct dlb_error e = { "" };
    dlb_status st;
    s->n_layers++;
    if ((st = dlb_model_layer_infer(s, s->n_layers - 1, &e)) != DLB_OK)
        return onnx_fail(m, st, "the shapes do not infer: %s (dlbench layer "
                         "'%s')", shape_why(e.msg), L->name);
    return DLB_OK;
}

/* ---- the graph ------------------------------------------------------- */

static int is_initializer(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name))
            return 1;
    return 0;
}

/* The image: the first graph input that is not an initializer, float
 * N x C x H x W with C, H, W known (N may be symbolic). */
static dlb_status read_input(struct onnx_map *m)
{
    const Onnx__GraphProto *g = m->o.model->graph;
    const Onnx__ValueInfoProto *in = NULL;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *v = g->input[i];
        if (!v->name || is_initializer(g, v->name))
            continue;
        if (in)
            return onnx_fail(m, DLB_ERR_INPUT, "graph input '%.200s' is "
                             "neither the image ('%.200s') nor an initializer; "
                             "dlbench feeds one input", v->name, in->name);
        in = v;
    }
    if (!in)
        return onnx_fail(m, DLB_ERR_INPUT, "the graph has no input image");
    const Onnx__TypeProto *t = in->type;
    const Onnx__TensorShapeProto *sh =
        t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
        t->tensor_type ? t->tensor_type->shape : NULL;
    if (!sh || t->tensor_type->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return onnx_fail(m, DLB_ERR_INPUT, "graph input '%.200s' is not a "
                         "float tensor of known rank; dlbench reads float N x "
                         "C x H x W images", in->name);
    if (sh->n_dim != 4)
        return onnx_fail(m, DLB_ERR_INPUT, "graph input '%.200s' has %zu "
                         "dimensions; dlbench reads N x C x H x W images",
                         in->name, sh->n_dim);
    uint32_t d[3];
    for (int k = 0; k < 3; k++) {
        const Onnx__TensorShapeProto__Dimension *dim = sh->dim[k + 1];
        if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
            dim->dim_value < 1 || dim->dim_value > 65536)
            return onnx_fail(m, DLB_ERR_INPUT, "graph input '%.200s': dimension "
                             "%d (%s) must be a number from 1 to 65536; only "
                             "the batch may be symbolic", in->name, k + 2,
                             k == 0 ? "C" : k == 1 ? "H" : "W");
        d[k] = (uint32_t)dim->dim_value;
    }
    m->spec->in_c = d[0], m->spec->in_h = d[1], m->spec->in_w = d[2];
    return add_value(m, in->name, OV_INPUT, DLB_LAYER_INPUT, NULL);
}

/* The one graph output: the last layer's, maybe through a Softmax that
 * was dropped; then the loss's own logsoftmax. */
static dlb_status read_output(struct onnx_map *m)
{
    const Onnx__GraphProto *g = m->o.model->graph;
    struct dlb_model_spec *s = m->spec;
    m->node = NULL;
    if (g->n_output != 1 || !g->output[0]->name)
        return onnx_fail(m, DLB_ERR_INPUT, "the graph has %zu outputs; dlbench "
                         "reads models with one (the class scores)", g->n_output);
    const char *name = g->output[0]->name;
    const struct onnx_value *v = find_value(m, name);
    if (!v || (v->kind != OV_LAYER && v->kind != OV_SOFTMAX))
        return onnx_fail(m, DLB_ERR_INPUT, "the graph output '%.200s' is not "
                         "computed by any node", name);
    if (v->layer + 1 != (int32_t)s->n_layers)
        return onnx_fail(m, DLB_ERR_INPUT, "the graph output '%.200s' is not "
                         "the last node's; dlbench needs the output computed "
                         "last", name);
    const struct dlb_layer_spec *last = &s->layers[v->layer];
    if (!last->flat_out || last->out_c < 2)
        return onnx_fail(m, DLB_ERR_INPUT, "the graph output '%.200s' is "
                         "%ux%ux%u%s; dlbench needs N x classes scores with 2 "
                         "or more classes", name, last->out_c, last->out_h,
                         last->out_w, last->flat_out ? "" : " (not flat)");
    s->classes = last->out_c;
    s->loss = DLB_LOSS_CROSS_ENTROPY;
    struct dlb_layer_spec *L = onnx_layer(m, DLB_LAYER_LOGSOFTMAX, "",
                                          v->layer);
    if (!L)
        return DLB_ERR_NOMEM;
    snprintf(L->name, sizeof L->name, "cross_entropy");
    L->line = 0;
    if (onnx_finish(m, L))
        return DLB_ERR_INPUT;
    struct dlb_error e = { "" };
    if (dlb_model_spec_check_uses(s, &e) != DLB_OK)
        return onnx_fail(m, DLB_ERR_INPUT, "%s (a node whose output nothing "
                         "reads)", shape_why(e.msg));
    return DLB_OK;
}

static dlb_status map_graph(struct onnx_map *m)
{
    const Onnx__GraphProto *g = m->o.model->graph;
    dlb_status s;
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name &&
            (s = add_value(m, g->initializer[i]->name, OV_CONST, 0,
                           g->initializer[i])))
            return s;
    if ((s = read_input(m)))
        return s;
    for (size_t i = 0; i < g->n_node; i++) {
        m->node = g->node[i];
        m->node_index = i;
        if ((s = onnx_map_node(m)))
            return s;
    }
    return read_output(m);
}

dlb_status dlb_onnx_parse(const char *name, const uint8_t *buf, size_t len,
                          const char *dir, struct dlb_model_spec **out,
                          struct dlb_error *err)
{
    struct onnx_map m = { .err = err };
    dlb_status s;
    *out = NULL;
    if ((s = dlb_onnx_read(name, buf, len, dir, &m.o, err)))
        return s;
    m.spec = calloc(1, sizeof *m.spec);
    m.w = dlb_model_weights_new(name);
    if (!m.spec || !m.w || !(m.spec->path = strdup(name))) {
        s = dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", name);
    } else {
        m.spec->weights = m.w;
        m.w = NULL;
        s = map_graph(&m);
    }
    if (s == DLB_OK)
        *out = m.spec;
    else if (m.spec)
        dlb_model_spec_free(m.spec);
    dlb_model_weights_unref(m.w);
    free(m.vals);
    onnx_made_free(&m);
    dlb_onnx_close(&m.o);
    return s;
}

dlb_status dlb_onnx_load(const char *path, struct dlb_model_spec **out,
                         struct dlb_error *err)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long size = -1;
    dlb_status s;
    *out = NULL;
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "%s: cannot open the model file: %s",
                          path, strerror(errno));
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)size + 1)) ||
        fread(buf, 1, (size_t)size, f) != (size_t)size) {
        s = dlb_errorf(err, buf || size < 0 ? DLB_ERR_IO : DLB_ERR_NOMEM,
                       "%s: cannot read the model file", path);
        free(buf);
        fclose(f);
        return s;
    }
    fclose(f);
    /* External data lies beside the model. */
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path ? slash - path : 1))
                      : strdup(".");
    if (!dir)
        s = dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", path);
    else
        s = dlb_onnx_parse(path, buf, (size_t)size, dir, out, err);
    free(dir);
    free(buf);
    return s;
}
