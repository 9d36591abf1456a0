/* The int8 forward pass of a quantised model, layer by layer
 * (model_quant_plan.c decides each layer's part), and the extra quant.observe:
 * an inference pass that hands the plugin the input of every conv and
 * linear layer, dequantised where it is int8. */
#include "model/model_quant.h"

#include <stdlib.h>

#include "backend/backend.h"
#include "model/model_impl.h"

static int is_int8(enum dlb_dtype t)
{
    return t == DLB_S8 || t == DLB_U8;
}

/* Layer i in int8 into y; with `add` (a conv), as CONV2D_INT8_ADD onto
 * y's contents (dlb_model_int8_add_span). */
static dlb_status int8_layer(struct dlb_model *m, size_t i,
                             struct dlb_buffer *x, struct dlb_buffer *y,
                             const struct dlb_op *add, struct dlb_error *err)
{
    const struct dlb_model_layer *ml = &m->layers[i];
    const struct dlb_model_qlayer *q = ml->q;
    const struct dlb_layer_spec *L = ml->spec;
    struct dlb_buffer *xq = NULL;
    size_t in = (size_t)m->n * dlb_model_act_size(m, dlb_model_in(m, i, 0));
    dlb_status s = DLB_OK;
    /* An int8 input comes from the int8 layer before, requantised with
     * this layer's scale; an fp32 one the kernel quantises on the way in
     * (the backend may fuse it); other types are quantised here. */
    if (dlb_buffer_dtype(x) != q->in_type && dlb_buffer_dtype(x) != DLB_F32) {
        if (is_int8(dlb_buffer_dtype(x)))
            return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: layer '%s' gets "
                              "int8 data of another type", m->spec->path,
                              L->name);
        if ((s = dlb_model_step_alloc(m, q->in_type, in, L->name, &xq, err)))
            return s;
        s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_QUANTIZE,
                .count = in, .x = x, .y = xq, .alpha = q->d.x_scale,
                .zero_point = q->d.x_zero_point});
        x = xq;
    }
    if (s == DLB_OK && L->kind == DLB_LAYER_CONV) {
        struct dlb_conv2d_desc d = dlb_model_conv_desc(L, m->n);
        s = dlb_backend_run(m->be, &(struct dlb_op){
                .kind = add ? DLB_OP_CONV2D_INT8_ADD : DLB_OP_CONV2D_INT8,
                .prop = DLB_PROP_FWD_INFER, .conv = d, .q = q->d, .x = x,
                .w = q->w, .w_scale = q->w_scale, .b = q->b, .y = y,
                .relu = add ? add->relu : 0,
                .relu_max = add ? add->relu_max : 0.0f});
    } else if (s == DLB_OK) {
        struct dlb_linear_desc d = dlb_model_linear_desc(L, m->n);
        s = dlb_backend_run(m->be, &(struct dlb_op){
                .kind = DLB_OP_LINEAR_INT8, .prop = DLB_PROP_FWD_INFER,
                .linear = d, .q = q->d, .x = x, .w = q->w,
                .w_scale = q->w_scale, .b = q->b, .y = y});
    }
    dlb_model_step_free(m, &xq);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, L->name, "int8 forward",
                                               err);
}

dlb_status dlb_model_quant_fwd(struct dlb_model *m, size_t i, int train,
                               struct dlb_buffer *x, struct dlb_buffer **y,
                               int *owned, struct dlb_error *err)
{
    const struct dlb_model_layer *ml = &m->layers[i];
    const struct dlb_layer_spec *L = ml->spec;
    size_t count = (size_t)m->n * dlb_model_act_size(m, i + 1);
    dlb_status s;
    *y = NULL;
    *owned = 0;
    if (train)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: layer '%s' runs in "
                          "int8 for inference; a quantised model cannot be "
                          "trained (clear the quantisation first)",
                          m->spec->path, L->name);
    if (ml->q->role == DLB_QROLE_SKIP) {
        *y = x;
        return DLB_OK;
    }
    enum dlb_dtype t = ml->q->role == DLB_QROLE_POOL ? dlb_buffer_dtype(x)
                                                     : ml->q->out_type;
    /* the residual add after it and its ReLU, in the same pass: the sum
     * onto the other branch's buffer, which it takes over */
    struct dlb_op add = {.kind = DLB_OP_CONV2D_INT8_ADD,
                         .prop = DLB_PROP_FWD_INFER,
                         .conv = L->kind == DLB_LAYER_CONV
                                     ? dlb_model_conv_desc(L, m->n)
                                     : (struct dlb_conv2d_desc){0},
                         .q = ml->q->d};
    if (ml->q->role == DLB_QROLE_INT8 && L->kind == DLB_LAYER_CONV &&
        t == DLB_F32 && dlb_model_int8_add_span(m, i, &add, y) > 0) {
        *owned = 1;
        return int8_layer(m, i, x, *y, &add, err);
    }
    if ((s = dlb_model_step_alloc(m, t, count, L->name, y, err)))
        return s;
    *owned = 1;
    if (ml->q->role == DLB_QROLE_INT8)
        return int8_layer(m, i, x, *y, NULL, err);
    struct dlb_pool_desc d = dlb_model_pool_desc(L, m->n);
    s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_POOL,
            .prop = DLB_PROP_FWD_INFER, .pool = d, .x = x, .y = *y});
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, L->name, "int8 forward",
                                               err);
}

/* b's first count values as fp32 on the host; int8 data is dequantised
 * with (scale, zp). */
static dlb_status to_host(struct dlb_model *m, struct dlb_buffer *b,
                          size_t count, float scale, int32_t zp, float *out,
                          struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    enum dlb_dtype t = dlb_buffer_dtype(b);
    struct dlb_buffer *f = NULL;
    dlb_status s;
    if (is_int8(t)) {
        unsigned char *raw = malloc(count ? count : 1);
        if (!raw)
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory observing");
        s = ops->copy_to_host(m->be, raw, b, 0, count);
        for (size_t k = 0; s == DLB_OK && k < count; k++) {
            int32_t q = t == DLB_U8 ? raw[k] : (signed char)raw[k];
            out[k] = scale * (float)(q - zp);
        }
        free(raw);
    } else {
        if (t != DLB_F32 &&
            (s = dlb_model_cast_new(m, b, DLB_F32, count, "observe", &f, err)))
            return s;
        s = ops->copy_to_host(m->be, out, f ? f : b, 0, count * sizeof *out);
        dlb_model_step_free(m, &f);
    }
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, "observe", "download",
                                               err);
}

/* What an observation pass hands on: the observer and a host array as
 * large as the largest observed activation. */
struct observe {
    dlb_quant_observe_fn fn;
    void *ctx;
    float *host;
};

static int observed(const struct dlb_model *m, size_t i)
{
    return i == m->spec->n_layers ||
           m->spec->layers[i].kind == DLB_LAYER_CONV ||
           m->spec->layers[i].kind == DLB_LAYER_LINEAR;
}

/* Hand the input of layer i (i == n_layers: the output) to the observer,
 * before the layer runs. */
static dlb_status show(struct dlb_model *m, size_t i, void *arg,
                       struct dlb_error *err)
{
    const struct observe *o = arg;
    size_t nl = m->spec->n_layers, t = i < nl ? dlb_model_in(m, i, 0) : nl;
    size_t per = dlb_model_act_size(m, t);
    if (!observed(m, i))
        return DLB_OK;
    const struct dlb_model_qlayer *q = i < nl ? m->layers[i].q : NULL;
    float scale = q && q->role == DLB_QROLE_INT8 ? q->d.x_scale : 1.0f;
    int32_t zp = q && q->role == DLB_QROLE_INT8 ? q->d.x_zero_point : 0;
    dlb_status s = to_host(m, m->act[t], m->n * per, scale, zp, o->host, err);
    if (s == DLB_OK &&
        (s = o->fn(o->ctx, (unsigned)i, o->host, m->n, per)) != DLB_OK)
        dlb_errorf(err, s, "%s: the observer of layer %zu failed (%s)",
                   m->spec->path, i, dlb_status_name(s));
    return s;
}

dlb_status dlb_model_quant_observe(struct dlb_model *m, const float *images,
                                   uint32_t n, dlb_quant_observe_fn fn,
                                   void *ctx, struct dlb_error *err)
{
    size_t nl = m->spec->n_layers, most = 0;
    struct observe o = {fn, ctx, NULL};
    dlb_status s;
    for (size_t i = 0; i <= nl; i++)
        if (observed(m, i) &&
            dlb_model_act_size(m, i < nl ? dlb_model_in(m, i, 0) : nl) > most)
            most = dlb_model_act_size(m, i < nl ? dlb_model_in(m, i, 0) : nl);
    o.host = malloc((size_t)n * most * sizeof *o.host);
    if (!o.host)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory observing %u "
                          "images", n);
    dlb_model_step_release(m);
    m->n = n;
    if ((s = dlb_model_prec_begin(m, err)) == DLB_OK &&
        (s = dlb_model_upload_input(m, images, n, &m->act[0], err)) == DLB_OK) {
        m->own[0] = 1;
        s = dlb_model_infer_pass(m, nl, show, &o, err);
    }
    dlb_model_step_release(m);
    free(o.host);
    return s;
}
