/* Layers fused into one backend pass where the backend has a kernel for
 * the fused operation (CONV2D_POOL): a convolution and the max pooling
 * after it, and in inference the ReLU after that too; in inference a
 * convolution and the ReLU after it (CONV2D_RELU), and a convolution, the
 * residual add that alone reads it and the ReLU after that (CONV2D_ADD,
 * summed onto the other branch's buffer; CONV2D_INT8_ADD for an int8
 * convolution with an fp32 output), and a 1x1 convolution with the
 * depthwise one after it, each with its ReLU (CONV2D_DW). In inference a
 * batch norm after a convolution is folded into its weights first
 * (model_fold.c), and the fusions look past it. Every layer of a fusion
 * computes in one type: F32, or in inference BF16 too (a mixed-precision
 * network: amp's policy keeps its layers between the convolutions in the
 * convolutions' type). The output of the first is never written:
 * for LeNet's conv1 the pass saves a write and a read of the largest
 * activation; for a residual block, two passes over its output.
 *
 * Only passes over the whole network fuse, between dlb_model_fuse_begin
 * and dlb_model_fuse_end: the training step's forward and inference,
 * whose callers read the last output and backward's saved state. The
 * int8 calibration looks at every layer's output, and a pipeline stage
 * runs part of the layers, so they do not. A training pass keeps the
 * ReLU apart (its backward reads its output) and has the pooling's
 * workspace written for the pooling's backward; after a first layer the
 * two backward passes are one as well (pool_bwd). In inference a
 * convolution that fuses nothing runs as FWD_INFER, where a backend may
 * have kernels that round otherwise than training's: training keeps one
 * kernel per layer, so that a pipeline's stages and one worker compute
 * the same bits. */
#include "model/model_impl.h"
#include "model/model_quant.h"

#include "backend/backend.h"

static void clear_marks(struct dlb_model *m)
{
    for (size_t i = 0; i < m->spec->n_layers; i++)
        m->layers[i].in_conv_pool = 0;
}

void dlb_model_fuse_begin(struct dlb_model *m)
{
    clear_marks(m);
    m->fuse = 1;
    m->fused_layers = 0;
}

void dlb_model_fuse_end(struct dlb_model *m)
{
    clear_marks(m);
    m->fuse = 0;
}

/* Layers i + 1 .. i + span pass their input through in this pass (the
 * marks were cleared when it began). */
static void mark(struct dlb_model *m, size_t i, size_t span)
{
    for (size_t k = 1; k <= span; k++)
        m->layers[i + k].in_conv_pool = 1;
    m->fused_layers += span;
}

int dlb_model_plain_layer(const struct dlb_model *m, size_t i, enum dlb_dtype t)
{
    /* a QDQ model's simulated quantisation runs before the layer alone */
    return !m->layers[i].q && !(m->layers[i].spec->in_q_scale > 0) &&
           dlb_model_layer_type(m, i) == t && dlb_model_out_type(m, i) == t;
}

int dlb_model_f32_layer(const struct dlb_model *m, size_t i)
{
    return dlb_model_plain_layer(m, i, DLB_F32);
}

int dlb_model_chain_type(const struct dlb_model *m, size_t i, int train,
                         enum dlb_dtype *t)
{
    *t = dlb_model_layer_type(m, i);
    if (*t != DLB_F32 && (train || *t != DLB_BF16))
        return 0;
    return dlb_model_plain_layer(m, i, *t);
}

/* How many layers after convolution i the fusion covers (0: none): a max
 * pooling the backend fuses with it (op: the fused forward, its pooling
 * descriptor and ReLU filled in), then in inference a ReLU if one
 * follows. Every layer involved computes in F32 and none is quantised. */
static size_t span_of(struct dlb_model *m, size_t i, int train,
                      struct dlb_op *op)
{
    size_t nl = m->spec->n_layers;
    op->relu = 0;
    if (!dlb_model_spec_feeds_next(m->spec, i) ||
        m->layers[i + 1].spec->kind != DLB_LAYER_MAXPOOL ||
        !dlb_model_f32_layer(m, i + 1))
        return 0;
    op->pool = dlb_model_pool_desc(m->layers[i + 1].spec, m->n);
    if (!train && i + 2 < nl && dlb_model_spec_feeds_next(m->spec, i + 1) &&
        m->layers[i + 2].spec->kind == DLB_LAYER_RELU &&
        m->layers[i + 2].spec->relu_max == 0 && dlb_model_f32_layer(m, i + 2))
        op->relu = 1;
    if (!dlb_backend_kernel_for(m->be, op))
        return 0;
    return op->relu ? 2 : 1;
}

/* In inference, a convolution whose output only a ReLU reads: one
 * CONV2D_RELU (op filled in) where the backend has a kernel for it, as an
 * ONNX model's Conv -> Relu with the batch norm folded into the weights
 * is. Returns the layers it covers after the convolution (0 or 1). */
static size_t relu_span(struct dlb_model *m, size_t i, enum dlb_dtype t,
                        struct dlb_op *op)
{
    if (!dlb_model_spec_feeds_next(m->spec, i) ||
        m->layers[i + 1].spec->kind != DLB_LAYER_RELU ||
        !dlb_model_plain_layer(m, i + 1, t))
        return 0;
    struct dlb_op fused = *op;
    fused.kind = DLB_OP_CONV2D_RELU;
    fused.relu_max = m->layers[i + 1].spec->relu_max;
    if (!dlb_backend_kernel_for(m->be, &fused))
        return 0;
    *op = fused;
    return 1;
}

/* In inference, a 1x1 convolution (layer i), the ReLU after it if only
 * that reads it, then the depthwise 3x3 convolution that alone reads
 * that, and its ReLU if only that reads it: one CONV2D_DW (op filled in)
 * where the backend has a kernel, as MobileNetV2's inverted residual
 * blocks begin (the expansion and the depthwise convolution, each with
 * its ReLU6). Returns the layers it covers after i (2 to 4). */
static size_t dw_span(struct dlb_model *m, size_t i, enum dlb_dtype t,
                      struct dlb_op *op)
{
    const struct dlb_model_spec *sp = m->spec;
    struct dlb_op fused = *op;
    size_t j = i + 1;
    if (!dlb_model_spec_feeds_next(sp, i))
        return 0;
    fused.kind = DLB_OP_CONV2D_DW;
    fused.relu = 0;
    fused.relu_max = 0.0f;
    if (m->layers[j].spec->kind == DLB_LAYER_RELU) {
        if (!dlb_model_plain_layer(m, j, t) || !dlb_model_spec_feeds_next(sp, j))
            return 0;
        fused.relu = 1;
        fused.relu_max = m->layers[j].spec->relu_max;
        j++;
    }
    if (m->layers[j].spec->kind != DLB_LAYER_CONV || !dlb_model_plain_layer(m, j, t))
        return 0;
    const struct dlb_model_layer *dw = &m->layers[j];
    fused.dwconv = dlb_model_conv_desc(dw->spec, m->n);
    if (!dlb_conv2d_dw_pair(&fused.conv, &fused.dwconv))
        return 0;
    fused.w2 = dlb_model_layer_weights(m, j);
    fused.b2 = dw->bias >= 0 ? m->params[dw->bias].t.buf : NULL;
    if (dlb_model_folded(m, j, &fused.w2, &fused.b2))
        j++; /* its batch norm, in its weights */
    if (dlb_model_spec_feeds_next(sp, j) &&
        m->layers[j + 1].spec->kind == DLB_LAYER_RELU &&
        dlb_model_plain_layer(m, j + 1, t)) {
        fused.relu2 = 1;
        fused.relu2_max = m->layers[j + 1].spec->relu_max;
        j++;
    }
    if (!dlb_backend_kernel_for(m->be, &fused))
        return 0;
    *op = fused;
    return j - i;
}

/* In inference, a convolution (layer c) whose output, as layer i's
 * (c itself, or its folded batch norm), only the add after it reads, with
 * one other input g that nothing reads after the add: one CONV2D_ADD (op
 * filled in) summing onto g's own buffer, which the convolution takes
 * over (*y), and the ReLU after the add too when only that reads the sum.
 * Returns the layers it covers after i (0, 1 or 2). Only an inference
 * pass calls it, whose lifetimes (model_infer.c) say who reads g still:
 * its readers before this layer have all run, so reads_left 1 is the
 * add's. A convolution that reads g itself cannot write over it. */
static size_t add_span(struct dlb_model *m, size_t c, size_t i,
                       enum dlb_dtype t, struct dlb_op *op, struct dlb_buffer **y)
{
    const struct dlb_model_spec *sp = m->spec;
    size_t a = i + 1;
    if (a >= sp->n_layers || sp->layers[i].n_uses != 1 ||
        sp->layers[a].kind != DLB_LAYER_ADD || sp->layers[a].n_inputs != 2 ||
        !dlb_model_plain_layer(m, a, t))
        return 0;
    size_t in0 = dlb_model_in(m, a, 0), in1 = dlb_model_in(m, a, 1);
    size_t j = in0 == a ? in1 : in0;
    if ((in0 != a && in1 != a) || j == a)
        return 0;
    size_t r = m->root[j];
    struct dlb_buffer *g = m->act[j];
    if (!g || m->act[r] != g || !m->own[r] || m->reads_left[r] != 1 ||
        m->root[dlb_model_in(m, c, 0)] == r || dlb_buffer_dtype(g) != t)
        return 0;
    struct dlb_op fused = *op;
    if (fused.kind != DLB_OP_CONV2D_INT8_ADD)
        fused.kind = DLB_OP_CONV2D_ADD;
    fused.relu = 0;
    fused.relu_max = 0.0f;
    size_t span = 1;
    if (dlb_model_spec_feeds_next(sp, a) &&
        m->layers[a + 1].spec->kind == DLB_LAYER_RELU &&
        dlb_model_plain_layer(m, a + 1, t)) {
        fused.relu = 1;
        fused.relu_max = m->layers[a + 1].spec->relu_max;
        span = 2;
    }
    if (!dlb_backend_kernel_for(m->be, &fused))
        return 0;
    /* g's buffer is the convolution's now: the activations that were it
     * are read by nothing more, and the add's read of g frees nothing */
    for (size_t u = r; u <= c; u++)
        if (m->root[u] == r)
            m->act[u] = NULL;
    m->own[r] = 0;
    m->reads_left[r] = 0;
    *op = fused;
    *y = g;
    return span;
}

size_t dlb_model_int8_add_span(struct dlb_model *m, size_t i,
                               struct dlb_op *op, struct dlb_buffer **y)
{
    const struct dlb_model_spec *sp = m->spec;
    if (!m->fuse || op->kind != DLB_OP_CONV2D_INT8_ADD)
        return 0;
    /* past the batch norms folded into it */
    size_t e = i;
    while (dlb_model_spec_feeds_next(sp, e) && e + 1 < sp->n_layers &&
           m->layers[e + 1].q && m->layers[e + 1].q->role == DLB_QROLE_SKIP)
        e++;
    size_t span = add_span(m, i, e, DLB_F32, op, y);
    if (span)
        mark(m, i, span + e - i);
    return span ? span + e - i : 0;
}

float dlb_model_fused_add_relu(struct dlb_model *m, size_t i, int train,
                               size_t count, enum dlb_dtype t)
{
    if (!m->fuse || train || (t != DLB_F32 && t != DLB_BF16) ||
        !dlb_model_spec_feeds_next(m->spec, i) ||
        m->layers[i + 1].spec->kind != DLB_LAYER_RELU ||
        !dlb_model_plain_layer(m, i + 1, t))
        return -1.0f;
    struct dlb_op op = {.kind = DLB_OP_ADD_RELU, .count = count,
                        .relu_max = m->layers[i + 1].spec->relu_max};
    if (!dlb_backend_kernel_for(m->be, &op))
        return -1.0f;
    mark(m, i, 1);
    return op.relu_max;
}

int dlb_model_fused_fwd(struct dlb_model *m, size_t i, int train,
                        struct dlb_buffer *x, struct dlb_buffer **y,
                        int *owned, dlb_status *st, struct dlb_error *err)
{
    struct dlb_model_layer *ml = &m->layers[i];
    if (ml->spec->kind != DLB_LAYER_CONV)
        return 0;
    if (train)
        ml->pool_bwd = 0;
    enum dlb_dtype t;
    struct dlb_buffer *xc = NULL;
    if (!m->fuse || !dlb_model_chain_type(m, i, train, &t) ||
        (train && dlb_buffer_dtype(x) != t))
        return 0;
    /* In inference an input of another type (a bf16 network's fp32
     * image) is cast first, as the layer alone would (model_fwd.c). */
    if (dlb_buffer_dtype(x) != t) {
        size_t in = (size_t)m->n * dlb_model_act_size(m, dlb_model_in(m, i, 0));
        if ((*st = dlb_model_cast_new(m, x, t, in, ml->spec->name, &xc, err)))
            return 1;
        x = xc;
    }
    /* the fused pass's operation, shaped before its tensors exist: the
     * kernels apply on types and shapes */
    struct dlb_op op = {
        .kind = DLB_OP_CONV2D_POOL,
        .prop = train ? DLB_PROP_FWD_TRAIN : DLB_PROP_FWD_INFER,
        .label = ml->spec->name, .conv = dlb_model_conv_desc(ml->spec, m->n),
        .x = x, .w = dlb_model_layer_weights(m, i),
        .b = ml->bias >= 0 ? m->params[ml->bias].t.buf : NULL};
    /* In inference the batch norm after it may be in its weights: the
     * fusions then look past it, at what reads layer e's output. */
    size_t e = i + (!train && dlb_model_folded(m, i, &op.w, &op.b));
    size_t span = t == DLB_F32 ? span_of(m, e, train, &op) : 0;
    /* Alone, an inference pass's convolution runs as FWD_INFER; in
     * training, as the layer's usual one (model_fwd.c). */
    if (!span && train)
        return 0;
    int taken = 0; /* *y is a buffer taken over, not allocated */
    if (!span) {
        op.kind = DLB_OP_CONV2D;
        if (!(span = dw_span(m, e, t, &op)))
            span = relu_span(m, e, t, &op);
        if (!span && (span = add_span(m, i, e, t, &op, y)) > 0)
            taken = 1;
    }
    span += e - i;
    mark(m, i, span);
    /* Backward of the pooling reads where each maximum was. */
    if ((span && train &&
         (*st = dlb_model_step_alloc(m, DLB_S32,
                                     (size_t)m->n * dlb_model_act_size(m, i + 2),
                                     m->layers[i + 1].spec->name,
                                     &m->layers[i + 1].ws, err))) ||
        (!taken &&
         (*st = dlb_model_step_alloc(m, t, (size_t)m->n *
                                         dlb_model_act_size(m, i + 1 + span),
                                     ml->spec->name, y, err)))) {
        dlb_model_step_free(m, &xc);
        return 1;
    }
    *owned = 1;
    op.y = *y;
    if (span && train)
        op.ws = m->layers[i + 1].ws;
    *st = dlb_backend_run(m->be, &op);
    dlb_model_step_free(m, &xc);
    if (*st != DLB_OK)
        *st = dlb_model_be_fail(m, *st, ml->spec->name, "forward", err);
    /* The first layer's input needs no gradient: its backward can take
     * the pooling's gradient as it is (model_bwd.c), where the backend
     * has that kernel. */
    else if (op.ws && i == 0) {
        struct dlb_op bwd = op;
        bwd.prop = DLB_PROP_BWD_WEIGHTS;
        bwd.dy = bwd.y;
        bwd.dw = (struct dlb_buffer *)bwd.w;
        ml->pool_bwd = dlb_backend_kernel_for(m->be, &bwd) != NULL;
    }
    return 1;
}
