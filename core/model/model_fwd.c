/* The forward pass of one layer, in training or inference mode. */
#include "model/model_impl.h"

#include "backend/backend.h"
#include "model/model_prune.h"
#include "model/model_quant.h"

static const struct dlb_buffer *opt_buf(const struct dlb_model *m, int index)
{
    return index >= 0 ? m->params[index].t.buf : NULL;
}

static struct dlb_buffer *buf(const struct dlb_model *m, int index)
{
    return m->params[index].t.buf;
}

/* Whether training batch norm i takes the ReLU after it into its own
 * passes: the ReLU reads the batch norm's output as it is (no cast
 * between them) and the backend has a kernel for the fused operation
 * `op` (a batch norm's training forward, its kind made BATCHNORM_RELU). */
static int bn_takes_relu(const struct dlb_model *m, size_t i,
                         const struct dlb_op *op)
{
    const struct dlb_model_layer *r = &m->layers[i + 1];
    enum dlb_dtype t = dlb_model_out_type(m, i);
    return dlb_model_spec_feeds_next(m->spec, i) &&
           r->spec->kind == DLB_LAYER_RELU && r->spec->relu_max == 0 &&
           !r->q && dlb_model_layer_type(m, i + 1) == t &&
           dlb_model_out_type(m, i + 1) == t &&
           dlb_backend_kernel_for(m->be, op) != NULL;
}

static dlb_status fwd_bn(struct dlb_model *m, struct dlb_model_layer *ml,
                         int train, struct dlb_buffer *x, struct dlb_buffer *y,
                         struct dlb_error *err)
{
    const struct dlb_layer_spec *L = ml->spec;
    size_t i = (size_t)(ml - m->layers);
    dlb_status s;
    struct dlb_op op = {.kind = DLB_OP_BATCHNORM,
                        .prop = train ? DLB_PROP_FWD_TRAIN : DLB_PROP_FWD_INFER,
                        .label = L->name, .bn = dlb_model_bn_desc(L, m->n),
                        .x = x, .w = buf(m, ml->weight), .b = buf(m, ml->bias),
                        .mean = buf(m, ml->run_mean), .var = buf(m, ml->run_var),
                        .y = y};
    if (train) {
        dlb_model_params_moved(m); /* the running statistics move */
        if ((s = dlb_model_step_alloc(m, m->dtype, L->in_c, L->name,
                                      &ml->save_mean, err)) ||
            (s = dlb_model_step_alloc(m, m->dtype, L->in_c, L->name,
                                      &ml->save_invstd, err)))
            return s;
        op.save_mean = ml->save_mean;
        op.save_invstd = ml->save_invstd;
        op.kind = DLB_OP_BATCHNORM_RELU;
        if (!bn_takes_relu(m, i, &op))
            op.kind = DLB_OP_BATCHNORM;
    }
    /* Set on every forward, so that an inference pass in between runs the
     * ReLU itself; only the layer this one alone feeds can be its ReLU. */
    if (dlb_model_spec_feeds_next(m->spec, i))
        m->layers[i + 1].relu_in_bn = op.kind == DLB_OP_BATCHNORM_RELU;
    s = dlb_backend_run(m->be, &op);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, L->name, "forward", err);
}

static dlb_status fwd_pool(struct dlb_model *m, struct dlb_model_layer *ml,
                           int train, struct dlb_buffer *x, struct dlb_buffer *y,
                           struct dlb_error *err)
{
    const struct dlb_layer_spec *L = ml->spec;
    struct dlb_pool_desc d = dlb_model_pool_desc(L, m->n);
    size_t count = (size_t)m->n * L->out_c * L->out_h * L->out_w;
    dlb_status s;
    /* Backward of max pooling reads where each maximum was. */
    if (train && L->kind == DLB_LAYER_MAXPOOL &&
        (s = dlb_model_step_alloc(m, DLB_S32, count, L->name, &ml->ws, err)))
        return s;
    s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
            .kind = DLB_OP_POOL, .prop = DLB_PROP_FWD_TRAIN, .pool = d,
            .x = x, .y = y, .ws = ml->ws});
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, L->name, "forward", err);
}

/* Layers whose backward pass reads their input. */
/* A QDQ model's quantise-dequantise of layer i's input (in_q_scale),
 * simulated in fp32: *xd the new input (a step buffer), or x unchanged. */
static dlb_status fake_quant(struct dlb_model *m, size_t i,
                             struct dlb_buffer *x, struct dlb_buffer **xd,
                             struct dlb_error *err)
{
    const struct dlb_layer_spec *L = m->layers[i].spec;
    size_t in = (size_t)m->n * dlb_model_act_size(m, dlb_model_in(m, i, 0));
    struct dlb_buffer *q = NULL;
    *xd = NULL;
    dlb_status s = dlb_model_step_alloc(m, L->in_q_type, in, L->name, &q, err);
    if (s == DLB_OK)
        s = dlb_model_step_alloc(m, DLB_F32, in, L->name, xd, err);
    if (s != DLB_OK) {
        dlb_model_step_free(m, &q);
        return s;
    }
    s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
            .kind = DLB_OP_QUANTIZE, .count = in, .x = x, .y = q,
            .alpha = L->in_q_scale, .zero_point = L->in_q_zero});
    if (s == DLB_OK)
        s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                .kind = DLB_OP_DEQUANTIZE, .count = in, .x = q, .y = *xd,
                .alpha = L->in_q_scale, .zero_point = L->in_q_zero});
    dlb_model_step_free(m, &q);
    if (s == DLB_OK)
        return s;
    dlb_model_step_free(m, xd);
    return dlb_model_be_fail(m, s, L->name, "QuantizeLinear/DequantizeLinear",
                             err);
}

static int keeps_input(enum dlb_layer_kind k)
{
    return k == DLB_LAYER_CONV || k == DLB_LAYER_LINEAR ||
           k == DLB_LAYER_BATCHNORM;
}

static dlb_status run_fwd(struct dlb_model *m, size_t i, int train,
                          struct dlb_buffer *x, struct dlb_buffer *y,
                          struct dlb_error *err)
{
    struct dlb_model_layer *ml = &m->layers[i];
    const struct dlb_layer_spec *L = ml->spec;
    size_t count = (size_t)m->n * dlb_model_act_size(m, i + 1);
    struct dlb_conv2d_desc cd;
    struct dlb_linear_desc ld;
    struct dlb_dropout_desc dd;
    struct dlb_loss_desc sd = {m->n, L->in_c};
    dlb_status s;
    switch (L->kind) {
    case DLB_LAYER_CONV:
        cd = dlb_model_conv_desc(L, m->n);
        s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                .kind = DLB_OP_CONV2D, .prop = DLB_PROP_FWD_TRAIN,
                .conv = cd, .x = x, .w = dlb_model_layer_weights(m, i),
                .b = opt_buf(m, ml->bias), .y = y});
        break;
    case DLB_LAYER_MAXPOOL:
    case DLB_LAYER_AVGPOOL:
    case DLB_LAYER_GLOBAL_AVGPOOL:
        return fwd_pool(m, ml, train, x, y, err);
    case DLB_LAYER_RELU:
        s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                .kind = DLB_OP_RELU, .prop = DLB_PROP_FWD_TRAIN,
                .count = count, .relu_max = L->relu_max, .x = x, .y = y});
        break;
    case DLB_LAYER_DROPOUT:
        dd = dlb_model_drop_desc(L, m->n, ml->drop_seed);
        s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                .kind = DLB_OP_DROPOUT, .prop = DLB_PROP_FWD_TRAIN,
                .drop = dd, .x = x, .y = y});
        break;
    case DLB_LAYER_BATCHNORM:
        return fwd_bn(m, ml, train, x, y, err);
    case DLB_LAYER_LINEAR:
        if (!train && ml->pr) /* pruned: maybe sparse (model_prune_sparse.c) */
            return dlb_model_prune_linear_fwd(m, i, x, y, err);
        ld = dlb_model_linear_desc(L, m->n);
        s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                .kind = DLB_OP_LINEAR, .prop = DLB_PROP_FWD_TRAIN,
                .linear = ld, .x = x, .w = dlb_model_layer_weights(m, i),
                .b = opt_buf(m, ml->bias), .y = y});
        break;
    case DLB_LAYER_LOGSOFTMAX:
        s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                .kind = DLB_OP_LOGSOFTMAX, .prop = DLB_PROP_FWD_TRAIN,
                .loss = sd, .x = x, .y = y});
        break;
    default:
        s = DLB_ERR_INTERNAL;
        break;
    }
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, L->name, "forward", err);
}

dlb_status dlb_model_layer_fwd(struct dlb_model *m, size_t i, int train,
                               struct dlb_buffer *x, struct dlb_buffer **y,
                               int *owned, struct dlb_error *err)
{
    struct dlb_model_layer *ml = &m->layers[i];
    const struct dlb_layer_spec *L = ml->spec;
    size_t count = (size_t)m->n * dlb_model_act_size(m, i + 1);
    enum dlb_dtype t = dlb_model_layer_type(m, i);
    struct dlb_buffer *xc = NULL;
    dlb_status s;

    *y = NULL;
    *owned = 0;
    /* Before the int8 check: a convolution's forward marks the layers
     * after it whether it fuses or not (model_fuse.c). */
    if (dlb_model_fused_fwd(m, i, train, x, y, owned, &s, err))
        return s;
    if (m->fuse && ml->in_conv_pool) {
        *y = x;
        return DLB_OK;
    }
    if (ml->q) /* int8 inference (model_quant_fwd.c) */
        return dlb_model_quant_fwd(m, i, train, x, y, owned, err);
    if (L->kind == DLB_LAYER_FLATTEN || (L->kind == DLB_LAYER_DROPOUT && !train) ||
        (L->kind == DLB_LAYER_RELU && train && ml->relu_in_bn)) {
        *y = x;
        return DLB_OK;
    }
    /* An fp32 model's simulated quantisation comes before any cast;
     * backward reads the quantised input (a straight-through estimate). */
    if (L->in_q_scale > 0 && dlb_buffer_dtype(x) == DLB_F32) {
        if ((s = fake_quant(m, i, x, &xc, err)) != DLB_OK)
            return s;
        x = xc;
    }
    /* The input in the layer's type; backward reads the same copy. */
    if (dlb_buffer_dtype(x) != t) {
        struct dlb_buffer *fq = xc;
        size_t in = (size_t)m->n * dlb_model_act_size(m, dlb_model_in(m, i, 0));
        s = dlb_model_cast_new(m, x, t, in, L->name, &xc, err);
        dlb_model_step_free(m, &fq);
        if (s != DLB_OK)
            return s;
        x = xc;
    }
    s = dlb_model_step_alloc(m, dlb_model_out_type(m, i), count, L->name, y,
                             err);
    if (s == DLB_OK) {
        *owned = 1;
        s = run_fwd(m, i, train, x, *y, err);
    }
    if (xc && train && keeps_input(L->kind) && s == DLB_OK)
        ml->x_in = xc;
    else
        dlb_model_step_free(m, &xc);
    return s;
}

/* An add: its inputs, each in the layer's type (cast copies freed after),
 * summed left to right into a new output. */
static dlb_status add_fwd(struct dlb_model *m, size_t i, int train,
                          struct dlb_error *err)
{
    const struct dlb_layer_spec *L = m->layers[i].spec;
    size_t count = (size_t)m->n * dlb_model_act_size(m, i + 1);
    enum dlb_dtype t = dlb_model_layer_type(m, i);
    struct dlb_buffer *xc[DLB_LAYER_MAX_INPUTS] = {0}, *y = NULL;
    const struct dlb_buffer *x[DLB_LAYER_MAX_INPUTS];
    dlb_status s = DLB_OK;
    for (unsigned k = 0; k < L->n_inputs && s == DLB_OK; k++) {
        x[k] = m->act[dlb_model_in(m, i, k)];
        if (dlb_buffer_dtype(x[k]) != t &&
            (s = dlb_model_cast_new(m, x[k], t, count, L->name, &xc[k],
                                    err)) == DLB_OK)
            x[k] = xc[k];
    }
    if (s == DLB_OK)
        s = dlb_model_step_alloc(m, t, count, L->name, &y, err);
    /* in inference, the ReLU after it on the last sum (model_fuse.c) */
    float relu_max = s == DLB_OK ? dlb_model_fused_add_relu(m, i, train, count, t)
                                 : -1.0f;
    for (unsigned k = 1; k < L->n_inputs && s == DLB_OK; k++) {
        int last_relu = k + 1 == L->n_inputs && relu_max >= 0.0f;
        if ((s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                 .kind = last_relu ? DLB_OP_ADD_RELU : DLB_OP_ADD,
                 .count = count, .relu_max = last_relu ? relu_max : 0.0f,
                 .x = k == 1 ? x[0] : y, .g = x[k], .y = y})) != DLB_OK)
            s = dlb_model_be_fail(m, s, L->name, "forward", err);
    }
    for (unsigned k = 0; k < L->n_inputs; k++)
        dlb_model_step_free(m, &xc[k]);
    if (s != DLB_OK)
        dlb_model_step_free(m, &y);
    m->act[i + 1] = y;
    m->own[i + 1] = y != NULL;
    return s;
}

/* A concatenation: each input, in the layer's type, copied into its
 * channels of a new output. */
static dlb_status concat_fwd(struct dlb_model *m, size_t i,
                             struct dlb_error *err)
{
    const struct dlb_layer_spec *L = m->layers[i].spec;
    enum dlb_dtype t = dlb_model_layer_type(m, i);
    struct dlb_buffer *y = NULL;
    uint32_t hw = L->in_h * L->in_w, offset = 0;
    dlb_status s = dlb_model_step_alloc(m, t, (size_t)m->n * L->out_c * hw,
                                        L->name, &y, err);
    for (unsigned k = 0; k < L->n_inputs && s == DLB_OK; k++) {
        size_t in = dlb_model_in(m, i, k);
        const struct dlb_buffer *x = m->act[in];
        struct dlb_buffer *xc = NULL;
        uint32_t c = (uint32_t)(dlb_model_act_size(m, in) / hw);
        if (dlb_buffer_dtype(x) != t &&
            (s = dlb_model_cast_new(m, x, t, (size_t)m->n * c * hw, L->name,
                                    &xc, err)) == DLB_OK)
            x = xc;
        if (s == DLB_OK &&
            (s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                 .kind = DLB_OP_CONCAT, .prop = DLB_PROP_FWD_TRAIN,
                 .concat = {m->n, c, L->out_c, offset, hw}, .x = x,
                 .y = y})) != DLB_OK)
            s = dlb_model_be_fail(m, s, L->name, "forward", err);
        dlb_model_step_free(m, &xc);
        offset += c;
    }
    if (s != DLB_OK)
        dlb_model_step_free(m, &y);
    m->act[i + 1] = y;
    m->own[i + 1] = y != NULL;
    return s;
}

dlb_status dlb_model_node_fwd(struct dlb_model *m, size_t i, int train,
                              struct dlb_error *err)
{
    int owned = 0;
    dlb_status s;
    /* summed already by the convolution before it (model_fuse.c): the
     * sum is that convolution's output */
    if (m->fuse && m->layers[i].in_conv_pool) {
        m->act[i + 1] = m->act[i];
        m->own[i + 1] = 0;
        return DLB_OK;
    }
    if (m->layers[i].spec->kind == DLB_LAYER_ADD)
        return add_fwd(m, i, train, err);
    if (m->layers[i].spec->kind == DLB_LAYER_CONCAT)
        return concat_fwd(m, i, err);
    s = dlb_model_layer_fwd(m, i, train, m->act[dlb_model_in(m, i, 0)],
                            &m->act[i + 1], &owned, err);
    m->own[i + 1] = (unsigned char)owned;
    return s;
}
