/* The backward pass of one layer: the gradient of its input (when a layer
 * before it needs one) and of its parameters. */
#include "model/model_impl.h"

#include <stdlib.h>

#include "backend/backend.h"

struct bwd_io {
    struct dlb_buffer *x, *y, *dy; /* the layer's input, output, d output */
    struct dlb_buffer *dx;         /* out: d input, NULL when not needed */
    int dx_owned;                  /* out: dx was allocated for it */
    int need_dx;
};

static struct dlb_model_param *par(struct dlb_model *m, int index)
{
    return index >= 0 ? &m->params[index] : NULL;
}

/* The weight gradient a conv or linear backward writes: the master's
 * gradient, or, for a layer computing in a low precision, a step buffer of
 * that type that weight_grad_done casts into the master's gradient (as
 * autocast's cast back to the fp32 parameter does). */
static dlb_status weight_grad(struct dlb_model *m, struct dlb_model_layer *ml,
                              struct dlb_buffer **dw, struct dlb_error *err)
{
    struct dlb_model_param *w = par(m, ml->weight);
    *dw = w->grad;
    if (!ml->w_lp)
        return DLB_OK;
    return dlb_model_step_alloc(m, dlb_buffer_dtype(ml->w_lp), w->t.count,
                                ml->spec->name, dw, err);
}

static dlb_status weight_grad_done(struct dlb_model *m,
                                   struct dlb_model_layer *ml,
                                   struct dlb_buffer **dw, dlb_status s,
                                   struct dlb_error *err)
{
    struct dlb_model_param *w = par(m, ml->weight);
    if (*dw == w->grad)
        return s;
    if (s == DLB_OK)
        s = dlb_model_cast(m, w->t.count, *dw, w->grad, ml->spec->name, err);
    dlb_model_step_free(m, dw);
    return s;
}

static dlb_status bwd_conv(struct dlb_model *m, struct dlb_model_layer *ml,
                           struct bwd_io *io, struct dlb_error *err)
{
    struct dlb_conv2d_desc d = dlb_model_conv_desc(ml->spec, m->n);
    struct dlb_model_param *b = par(m, ml->bias);
    struct dlb_buffer *wb = dlb_model_layer_weights(m, (size_t)(ml - m->layers));
    struct dlb_buffer *dw = NULL;
    dlb_status s = weight_grad(m, ml, &dw, err);
    if (s != DLB_OK)
        return s;
    if (ml->pool_bwd) {
        /* io->dy is the pooling's gradient, passed through (layer_bwd) */
        struct dlb_model_layer *pool = ml + 1;
        s = dlb_backend_run(m->be, &(struct dlb_op){
                .kind = DLB_OP_CONV2D_POOL, .prop = DLB_PROP_BWD_WEIGHTS,
                .label = ml->spec->name, .conv = d,
                .pool = dlb_model_pool_desc(pool->spec, m->n), .x = io->x,
                .dy = io->dy, .ws = pool->ws, .dw = dw,
                .db = b ? b->grad : NULL});
        dlb_model_step_free(m, &pool->ws);
        ml->pool_bwd = 0;
        if (s != DLB_OK)
            s = dlb_model_be_fail(m, s, ml->spec->name, "backward", err);
        return weight_grad_done(m, ml, &dw, s, err);
    }
    if (io->need_dx)
        s = dlb_backend_run(m->be, &(struct dlb_op){.label = ml->spec->name,
                .kind = DLB_OP_CONV2D, .prop = DLB_PROP_BWD_DATA, .conv = d,
                .w = wb, .dy = io->dy, .dx = io->dx});
    if (s == DLB_OK)
        s = dlb_backend_run(m->be, &(struct dlb_op){.label = ml->spec->name,
                .kind = DLB_OP_CONV2D, .prop = DLB_PROP_BWD_WEIGHTS,
                .conv = d, .x = io->x, .dy = io->dy, .dw = dw,
                .db = b ? b->grad : NULL});
    if (s != DLB_OK)
        s = dlb_model_be_fail(m, s, ml->spec->name, "backward", err);
    return weight_grad_done(m, ml, &dw, s, err);
}

static dlb_status bwd_linear(struct dlb_model *m, struct dlb_model_layer *ml,
                             struct bwd_io *io, struct dlb_error *err)
{
    struct dlb_linear_desc d = dlb_model_linear_desc(ml->spec, m->n);
    struct dlb_model_param *b = par(m, ml->bias);
    struct dlb_buffer *wb = dlb_model_layer_weights(m, (size_t)(ml - m->layers));
    struct dlb_buffer *dw = NULL;
    dlb_status s = weight_grad(m, ml, &dw, err);
    if (s != DLB_OK)
        return s;
    s = dlb_backend_run(m->be, &(struct dlb_op){.label = ml->spec->name,
            .kind = DLB_OP_LINEAR, .prop = DLB_PROP_BWD, .linear = d,
            .x = io->x, .w = wb, .dy = io->dy, .dx = io->dx, .dw = dw,
            .db = b ? b->grad : NULL});
    if (s != DLB_OK)
        s = dlb_model_be_fail(m, s, ml->spec->name, "backward", err);
    return weight_grad_done(m, ml, &dw, s, err);
}

static dlb_status bwd_bn(struct dlb_model *m, struct dlb_model_layer *ml,
                         struct bwd_io *io)
{
    size_t i = (size_t)(ml - m->layers);
    /* Forward fused the ReLU after it: io->y is the ReLU's output and
     * io->dy its gradient (the ReLU passed it through). */
    int relu = i + 1 < m->spec->n_layers && m->layers[i + 1].relu_in_bn;
    return dlb_backend_run(m->be, &(struct dlb_op){
               .kind = relu ? DLB_OP_BATCHNORM_RELU : DLB_OP_BATCHNORM,
               .prop = DLB_PROP_BWD, .label = ml->spec->name,
               .bn = dlb_model_bn_desc(ml->spec, m->n), .x = io->x,
               .y = io->y, .dy = io->dy, .w = m->params[ml->weight].t.buf,
               .b = m->params[ml->bias].t.buf, .save_mean = ml->save_mean,
               .save_invstd = ml->save_invstd, .dx = io->dx,
               .dw = m->params[ml->weight].grad,
               .db = m->params[ml->bias].grad});
}

static dlb_status run_bwd(struct dlb_model *m, struct dlb_model_layer *ml,
                          struct bwd_io *io, struct dlb_error *err)
{
    const struct dlb_layer_spec *L = ml->spec;
    size_t count = (size_t)m->n * dlb_model_act_size(m, (size_t)(ml - m->layers) + 1);
    struct dlb_pool_desc pd;
    struct dlb_dropout_desc dd;
    switch (L->kind) {
    case DLB_LAYER_CONV: return bwd_conv(m, ml, io, err);
    case DLB_LAYER_LINEAR: return bwd_linear(m, ml, io, err);
    case DLB_LAYER_BATCHNORM: return bwd_bn(m, ml, io);
    case DLB_LAYER_MAXPOOL:
    case DLB_LAYER_AVGPOOL:
    case DLB_LAYER_GLOBAL_AVGPOOL:
        pd = dlb_model_pool_desc(L, m->n);
        return dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                   .kind = DLB_OP_POOL, .prop = DLB_PROP_BWD, .pool = pd,
                   .dy = io->dy, .ws = ml->ws, .dx = io->dx});
    case DLB_LAYER_RELU:
        return dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                   .kind = DLB_OP_RELU, .prop = DLB_PROP_BWD, .count = count,
                   .relu_max = L->relu_max, .y = io->y, .dy = io->dy,
                   .dx = io->dx});
    case DLB_LAYER_DROPOUT:
        dd = dlb_model_drop_desc(L, m->n, ml->drop_seed);
        return dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                   .kind = DLB_OP_DROPOUT, .prop = DLB_PROP_BWD, .drop = dd,
                   .dy = io->dy, .dx = io->dx});
    default:
        return DLB_ERR_INTERNAL;
    }
}

/* Backward of layer i. io->dy stays the caller's; io->dx is new, or io->dy
 * itself for a flatten (dx_owned 0). */
static dlb_status layer_bwd(struct dlb_model *m, size_t i, struct bwd_io *io,
                            struct dlb_error *err)
{
    struct dlb_model_layer *ml = &m->layers[i];
    const struct dlb_layer_spec *L = ml->spec;
    int has_params = ml->weight >= 0;
    dlb_status s;
    io->dx = NULL;
    io->dx_owned = 0;
    /* A pooling whose first layer's backward reads its gradient
     * (pool_bwd, model_fuse.c) hands it through as it is. */
    if (L->kind == DLB_LAYER_FLATTEN ||
        (L->kind == DLB_LAYER_RELU && ml->relu_in_bn) ||
        (i == 1 && m->layers[0].pool_bwd)) {
        io->dx = io->dy;
        return DLB_OK;
    }
    if (L->kind == DLB_LAYER_LOGSOFTMAX)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: layer '%s': logsoftmax "
                          "is only supported as the last layer",
                          m->spec->path, L->name);
    if (!io->need_dx && !has_params)
        return DLB_OK;
    /* Batchnorm's backward always produces dx. */
    size_t in = dlb_model_in(m, i, 0);
    size_t in_count = (size_t)m->n * dlb_model_act_size(m, in);
    if (io->need_dx || L->kind == DLB_LAYER_BATCHNORM) {
        /* A convolution's backward data writes dx in any float type from
         * fp32 accumulators, as its forward writes y: straight in the type
         * of the layer before, with no cast pass after it. */
        enum dlb_dtype dxt = L->kind == DLB_LAYER_CONV
                                 ? dlb_buffer_dtype(m->act[in])
                                 : dlb_model_layer_type(m, i);
        s = dlb_model_step_alloc(m, dxt, in_count, L->name, &io->dx, err);
        if (s != DLB_OK)
            return s;
        io->dx_owned = 1;
    }
    /* The input as the layer saw it: the cast copy when there was one. */
    if (ml->x_in)
        io->x = ml->x_in;
    s = run_bwd(m, ml, io, err);
    if (s != DLB_OK && L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR)
        s = dlb_model_be_fail(m, s, L->name, "backward", err);
    dlb_model_step_free(m, &ml->ws);
    dlb_model_step_free(m, &ml->save_mean);
    dlb_model_step_free(m, &ml->save_invstd);
    dlb_model_step_free(m, &ml->x_in);
    if (!io->need_dx)
        dlb_model_step_free(m, &io->dx);
    /* The gradient in the type of the input's producer (its output's). */
    else if (s == DLB_OK)
        s = dlb_model_cast_to(m, &io->dx, &io->dx_owned,
                              dlb_buffer_dtype(m->act[in]), in_count, L->name,
                              err);
    return s;
}

dlb_status dlb_model_loss_grad(struct dlb_model *m, float loss_scale,
                               struct dlb_buffer **out, int *owned,
                               struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    const struct dlb_layer_spec *last = &m->spec->layers[nl - 1];
    struct dlb_loss_desc ld = {m->n, last->in_c};
    struct dlb_buffer *dy = NULL;
    int dy_owned = 1;
    size_t count = (size_t)m->n * last->in_c;
    *out = NULL;
    *owned = 0;
    dlb_status s = dlb_model_step_alloc(m, dlb_buffer_dtype(m->act[nl]), count,
                                        last->name, &dy, err);
    if (s != DLB_OK)
        return s;
    s = dlb_backend_run(m->be, &(struct dlb_op){.label = last->name,
            .kind = DLB_OP_LOGSOFTMAX_NLL, .prop = DLB_PROP_BWD, .loss = ld,
            .x = m->act[nl], .labels = m->labels, .alpha = loss_scale,
            .dx = dy});
    if (s != DLB_OK) {
        dlb_model_step_free(m, &dy);
        return dlb_model_be_fail(m, s, last->name, "backward", err);
    }
    /* The loss is fp32; the logits may come from a low-precision layer. */
    if ((s = dlb_model_cast_to(m, &dy, &dy_owned, dlb_buffer_dtype(m->act[nl - 1]),
                               count, last->name, err)) != DLB_OK) {
        dlb_model_step_free(m, &dy);
        return s;
    }
    /* Each activation is released once the last layer that reads it is
     * done, as an eager framework frees its saved tensors. */
    if (m->own[nl])
        dlb_model_step_free(m, &m->act[nl]);
    m->own[nl] = 0;
    *out = dy;
    *owned = dy_owned;
    return DLB_OK;
}

dlb_status dlb_model_backward(struct dlb_model *m, float loss_scale,
                              struct dlb_error *err)
{
    struct dlb_buffer *dy = NULL;
    int dy_owned = 0;
    dlb_status s = dlb_model_loss_grad(m, loss_scale, &dy, &dy_owned, err);
    if (s != DLB_OK)
        return s;
    return dlb_model_backward_from(m, m->spec->n_layers - 1, dy, dy_owned, err);
}

dlb_status dlb_model_backward_from(struct dlb_model *m, size_t top,
                                   struct dlb_buffer *dy, int dy_owned,
                                   struct dlb_error *err)
{
    return dlb_model_backward_range(m, 0, top, dy, dy_owned, NULL, NULL, err);
}

/* ---- the graph's backward: gradients handed on and summed --------- */

/* A gradient buffer and the activations' gradients that hold it: a layer
 * that hands its gradient on unchanged (flatten, an add) shares it, and
 * only a buffer held once is summed into in place. */
struct gbuf {
    struct dlb_buffer *buf;
    int owned;        /* allocated by the step: freed with the last hold */
    unsigned holds;
};

struct grads {
    struct dlb_model *m;
    size_t bottom, top;
    int *slot;          /* per activation t in [bottom, top]: a gbuf, -1 */
    struct gbuf *g;     /* 2 * (top - bottom + 1) + 1 entries */
    size_t n_g;
};

static int gbuf_new(struct grads *G, struct dlb_buffer *b, int owned)
{
    size_t k = 0;
    while (k < G->n_g && G->g[k].holds)
        k++;
    G->g[k] = (struct gbuf){b, owned, 0};
    return (int)k;
}

static void drop(struct grads *G, size_t t)
{
    int k = G->slot[t - G->bottom];
    G->slot[t - G->bottom] = -1;
    if (k >= 0 && --G->g[k].holds == 0 && G->g[k].owned)
        dlb_model_step_free(G->m, &G->g[k].buf);
}

/* Activation t's gradient gets gbuf k's contribution: held as it is when
 * t has none yet, else summed (into t's buffer when it alone holds it). */
static dlb_status give(struct grads *G, size_t t, int k, const char *layer,
                       struct dlb_error *err)
{
    struct dlb_model *m = G->m;
    int *have = &G->slot[t - G->bottom];
    G->g[k].holds++;
    if (*have < 0) {
        *have = k;
        return DLB_OK;
    }
    struct gbuf *a = &G->g[*have], *b = &G->g[k];
    struct dlb_buffer *sum = a->buf;
    size_t count = (size_t)m->n * dlb_model_act_size(m, t);
    dlb_status s = DLB_OK;
    if (!(a->owned && a->holds == 1))
        s = dlb_model_step_alloc(m, dlb_buffer_dtype(a->buf), count, layer,
                                 &sum, err);
    if (s == DLB_OK &&
        (s = dlb_backend_run(m->be, &(struct dlb_op){.label = layer,
             .kind = DLB_OP_ADD, .count = count, .x = a->buf, .g = b->buf,
             .y = sum})) != DLB_OK)
        s = dlb_model_be_fail(m, s, layer, "summing gradients", err);
    if (s != DLB_OK && sum != a->buf)
        dlb_model_step_free(m, &sum);
    if (--b->holds == 0 && b->owned)
        dlb_model_step_free(m, &b->buf);
    if (s == DLB_OK && sum != a->buf) {
        drop(G, t);
        G->slot[t - G->bottom] = gbuf_new(G, sum, 1);
        G->g[G->slot[t - G->bottom]].holds = 1;
    }
    return s;
}

/* Whether input activation t of a layer in the range gets a gradient:
 * not the network's input, and the range's own input only when the
 * caller takes it. */
static int wants(const struct grads *G, size_t t, int dx_wanted)
{
    return t > 0 && t >= G->bottom && (t > G->bottom || dx_wanted);
}

/* An add hands its gradient to each input, cast where the input's type
 * differs. */
static dlb_status add_bwd(struct grads *G, size_t i, int k, int dx_wanted,
                          struct dlb_error *err)
{
    struct dlb_model *m = G->m;
    const struct dlb_layer_spec *L = m->layers[i].spec;
    dlb_status s = DLB_OK;
    for (unsigned j = 0; j < L->n_inputs && s == DLB_OK; j++) {
        size_t t = dlb_model_in(m, i, j);
        enum dlb_dtype want = dlb_buffer_dtype(m->act[t]);
        struct dlb_buffer *c = NULL;
        if (!wants(G, t, dx_wanted))
            continue;
        if (dlb_buffer_dtype(G->g[k].buf) == want) {
            s = give(G, t, k, L->name, err);
        } else if ((s = dlb_model_cast_new(m, G->g[k].buf, want,
                                           (size_t)m->n *
                                               dlb_model_act_size(m, t),
                                           L->name, &c, err)) == DLB_OK) {
            s = give(G, t, gbuf_new(G, c, 1), L->name, err);
        }
    }
    return s;
}

/* A concatenation hands each input its channels of the gradient, cast
 * where the input's type differs. */
static dlb_status concat_bwd(struct grads *G, size_t i, int k, int dx_wanted,
                             struct dlb_error *err)
{
    struct dlb_model *m = G->m;
    const struct dlb_layer_spec *L = m->layers[i].spec;
    const struct dlb_buffer *dy = G->g[k].buf;
    uint32_t hw = L->in_h * L->in_w, offset = 0;
    dlb_status s = DLB_OK;
    for (unsigned j = 0; j < L->n_inputs && s == DLB_OK; j++) {
        size_t t = dlb_model_in(m, i, j);
        uint32_t c = (uint32_t)(dlb_model_act_size(m, t) / hw);
        size_t count = (size_t)m->n * c * hw;
        struct dlb_buffer *dx = NULL;
        int owned = 1;
        if (wants(G, t, dx_wanted) &&
            (s = dlb_model_step_alloc(m, dlb_buffer_dtype(dy), count, L->name,
                                      &dx, err)) == DLB_OK) {
            s = dlb_backend_run(m->be, &(struct dlb_op){.label = L->name,
                    .kind = DLB_OP_CONCAT, .prop = DLB_PROP_BWD,
                    .concat = {m->n, c, L->out_c, offset, hw}, .dy = dy,
                    .dx = dx});
            if (s != DLB_OK)
                s = dlb_model_be_fail(m, s, L->name, "backward", err);
            if (s == DLB_OK)
                s = dlb_model_cast_to(m, &dx, &owned,
                                      dlb_buffer_dtype(m->act[t]), count,
                                      L->name, err);
            if (s == DLB_OK)
                s = give(G, t, gbuf_new(G, dx, owned), L->name, err);
            else if (owned)
                dlb_model_step_free(m, &dx);
        }
        offset += c;
    }
    return s;
}

/* Backward of layer i from its output's gradient (gbuf k), its input's
 * gradient handed to that activation. */
static dlb_status node_bwd(struct grads *G, size_t i, int k, int dx_wanted,
                           struct dlb_error *err)
{
    struct dlb_model *m = G->m;
    size_t in = dlb_model_in(m, i, 0);
    struct bwd_io io = {m->act[in], m->act[i + 1], G->g[k].buf, NULL, 0,
                        wants(G, in, dx_wanted)};
    dlb_status s = layer_bwd(m, i, &io, err);
    if (s != DLB_OK) {
        if (io.dx_owned)
            dlb_model_step_free(m, &io.dx);
        return s;
    }
    if (!io.dx || !io.need_dx) {
        if (io.dx_owned)
            dlb_model_step_free(m, &io.dx);
        return DLB_OK;
    }
    /* A layer that handed the gradient on shares its buffer. */
    return give(G, in, io.dx == G->g[k].buf ? k : gbuf_new(G, io.dx, io.dx_owned),
                m->layers[i].spec->name, err);
}

dlb_status dlb_model_backward_range(struct dlb_model *m, size_t bottom,
                                    size_t top, struct dlb_buffer *dy,
                                    int dy_owned, struct dlb_buffer **dx,
                                    int *dx_owned, struct dlb_error *err)
{
    size_t w = top - bottom + 1;
    struct grads G = {m, bottom, top, malloc(w * sizeof *G.slot),
                      calloc(2 * w + 1, sizeof *G.g), 2 * w + 1};
    dlb_status s = DLB_OK;
    if (dx) {
        *dx = NULL;
        *dx_owned = 0;
    }
    if (!G.slot || !G.g) {
        free(G.slot);
        free(G.g);
        if (dy_owned)
            dlb_model_step_free(m, &dy);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory for backward");
    }
    for (size_t t = 0; t < w; t++)
        G.slot[t] = -1;
    G.slot[top - bottom] = gbuf_new(&G, dy, dy_owned);
    G.g[G.slot[top - bottom]].holds = 1;
    for (size_t i = top; i-- > bottom && s == DLB_OK;) {
        int k = G.slot[i + 1 - bottom];
        if (k < 0) {
            s = dlb_errorf(err, DLB_ERR_INTERNAL, "%s: layer '%s' gets no "
                           "gradient", m->spec->path, m->layers[i].spec->name);
            break;
        }
        G.g[k].holds++; /* kept while the layer reads it */
        switch (m->layers[i].spec->kind) {
        case DLB_LAYER_ADD: s = add_bwd(&G, i, k, dx != NULL, err); break;
        case DLB_LAYER_CONCAT: s = concat_bwd(&G, i, k, dx != NULL, err); break;
        default: s = node_bwd(&G, i, k, dx != NULL, err); break;
        }
        drop(&G, i + 1);
        if (--G.g[k].holds == 0 && G.g[k].owned)
            dlb_model_step_free(m, &G.g[k].buf);
        /* Its output's readers are done: the activation goes. */
        if (m->own[i + 1])
            dlb_model_step_free(m, &m->act[i + 1]);
        m->own[i + 1] = 0;
        /* Its parameter gradients are final: a data-parallel executor
         * may start reducing them while the layers below run. */
        if (s == DLB_OK && m->grad_ready && m->layers[i].weight >= 0)
            s = m->grad_ready(m->grad_ready_ctx, (unsigned)i);
    }
    /* The range's input gradient goes to the caller; anything else still
     * held (after an error) is freed. */
    if (s == DLB_OK && dx && G.slot[0] >= 0 && bottom > 0) {
        struct gbuf *g = &G.g[G.slot[0]];
        *dx = g->buf;
        *dx_owned = g->owned;
        g->owned = 0;
    }
    for (size_t t = bottom; t <= top; t++)
        drop(&G, t);
    free(G.slot);
    free(G.g);
    return s;
}
