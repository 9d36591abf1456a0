/* Building and releasing a model: its tensors on the device, named as
 * PyTorch names them in a state dict, and the small accessors. */
#include "model/model_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/dtype.h"
#include "model/model_prune.h"
#include "model/model_quant.h"

dlb_status dlb_model_be_fail(struct dlb_model *m, dlb_status s,
                             const char *layer, const char *op,
                             struct dlb_error *err)
{
    const char *why = dlb_backend_last_error(m->be);
    return dlb_errorf(err, s, "%s: layer '%s': %s: %s", m->spec->path, layer,
                      op, why[0] ? why : dlb_status_name(s));
}

/* Append a tensor of `shape` (trailing zeros end it) to m->params. */
static dlb_status add_param(struct dlb_model *m, const char *layer,
                            const char *suffix, int learnable,
                            const uint64_t *shape, int *index,
                            struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    struct dlb_model_param *p = &m->params[m->n_params];
    dlb_status s;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s.%s", layer, suffix);
    p->t.name = p->name;
    p->t.count = 1;
    for (unsigned k = 0; k < 4 && shape[k]; k++) {
        p->t.shape[k] = shape[k];
        p->t.count *= shape[k];
        p->t.ndim = k + 1;
    }
    *index = (int)m->n_params++;
    s = ops->buffer_alloc(m->be, m->dtype, p->t.count, &p->t.buf);
    if (s == DLB_OK && learnable)
        s = ops->buffer_alloc(m->be, m->dtype, p->t.count, &p->grad);
    if (s == DLB_OK && learnable)
        s = ops->buffer_alloc(m->be, m->dtype, p->t.count, &p->mom);
    if (s != DLB_OK)
        return dlb_model_be_fail(m, s, layer, "allocating parameters", err);
    return DLB_OK;
}

static dlb_status add_layer_params(struct dlb_model *m, size_t i,
                                   struct dlb_error *err)
{
    const struct dlb_layer_spec *L = &m->spec->layers[i];
    struct dlb_model_layer *ml = &m->layers[i];
    uint64_t w[4] = {0}, b[4] = {0};
    dlb_status s = DLB_OK;
    ml->spec = L;
    ml->weight = ml->bias = ml->run_mean = ml->run_var = -1;
    switch (L->kind) {
    case DLB_LAYER_CONV:
        /* each filter reads its group's channels, as PyTorch's weight */
        w[0] = L->filters, w[1] = L->in_c / (L->groups ? L->groups : 1);
        w[2] = L->size, w[3] = L->size;
        b[0] = L->filters;
        break;
    case DLB_LAYER_LINEAR:
        w[0] = L->out, w[1] = L->in_c;
        b[0] = L->out;
        break;
    case DLB_LAYER_BATCHNORM:
        /* PyTorch calls gamma and beta weight and bias. */
        w[0] = b[0] = L->in_c;
        if ((s = add_param(m, L->name, "weight", 1, w, &ml->weight, err)) ||
            (s = add_param(m, L->name, "bias", 1, b, &ml->bias, err)) ||
            (s = add_param(m, L->name, "running_mean", 0, b, &ml->run_mean,
                           err)))
            return s;
        return add_param(m, L->name, "running_var", 0, b, &ml->run_var, err);
    default:
        return DLB_OK;
    }
    if ((s = add_param(m, L->name, "weight", 1, w, &ml->weight, err)))
        return s;
    if (L->bias)
        s = add_param(m, L->name, "bias", 1, b, &ml->bias, err);
    return s;
}

dlb_status dlb_model_create(const struct dlb_model_spec *spec,
                            struct dlb_backend *be, enum dlb_dtype dtype,
                            uint64_t seed, struct dlb_model **out,
                            struct dlb_error *err)
{
    size_t nl = spec->n_layers;
    dlb_status s;
    *out = NULL;
    if (!dlb_dtype_is_float(dtype))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: a model cannot hold %s "
                          "parameters", spec->path, dlb_dtype_name(dtype));
    struct dlb_model *m = calloc(1, sizeof *m);
    if (!m)
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", spec->path);
    m->spec = spec;
    m->be = be;
    m->dtype = dtype;
    m->lr = 0.01f;
    m->momentum = 0.9f;
    m->layers = calloc(nl ? nl : 1, sizeof *m->layers);
    m->params = calloc(4 * (nl ? nl : 1), sizeof *m->params); /* <= 4 each */
    m->act = calloc(nl + 1, sizeof *m->act);
    m->own = calloc(nl + 1, 1);
    m->reads_left = calloc(nl + 1, sizeof *m->reads_left);
    m->root = calloc(nl + 1, sizeof *m->root);
    if (!m->layers || !m->params || !m->act || !m->own || !m->reads_left ||
        !m->root) {
        dlb_model_destroy(m);
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory", spec->path);
    }
    for (size_t i = 0; i < nl; i++)
        if ((s = add_layer_params(m, i, err)) != DLB_OK) {
            dlb_model_destroy(m);
            return s;
        }
    if ((s = dlb_model_init(m, seed, err)) != DLB_OK) {
        dlb_model_destroy(m);
        return s;
    }
    *out = m;
    return DLB_OK;
}

void dlb_model_destroy(struct dlb_model *m)
{
    if (!m)
        return;
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    if (m->ranges_free)
        m->ranges_free(m); /* they hold step buffers of m's backend */
    if (m->act && m->own)
        dlb_model_step_release(m);
    dlb_model_prec_free(m);
    dlb_model_fold_free(m);
    dlb_model_quant_clear(m);
    for (size_t i = 0; i < m->n_params; i++) {
        ops->buffer_free(m->be, m->params[i].t.buf);
        ops->buffer_free(m->be, m->params[i].grad);
        ops->buffer_free(m->be, m->params[i].mom);
    }
    dlb_model_prune_free(m);
    ops->buffer_free(m->be, m->found);
    free(m->params);
    free(m->layers);
    free(m->act);
    free(m->own);
    free(m->reads_left);
    free(m->root);
    dlb_model_spec_free(m->own_spec);
    free(m);
}

void dlb_model_set_sgd(struct dlb_model *m, float lr, float momentum)
{
    m->lr = lr;
    m->momentum = momentum;
}

size_t dlb_model_n_tensors(const struct dlb_model *m) { return m->n_params; }

const struct dlb_model_tensor *dlb_model_tensor_at(const struct dlb_model *m,
                                                   size_t i)
{
    return i < m->n_params ? &m->params[i].t : NULL;
}

const struct dlb_model_spec *dlb_model_spec_of(const struct dlb_model *m)
{
    return m->spec;
}

struct dlb_backend *dlb_model_backend(const struct dlb_model *m)
{
    return m->be;
}

enum dlb_dtype dlb_model_dtype(const struct dlb_model *m) { return m->dtype; }

dlb_status dlb_model_find(struct dlb_model *m, const char *name,
                          struct dlb_buffer **value, struct dlb_buffer **grad,
                          struct dlb_buffer **momentum)
{
    for (size_t i = 0; i < m->n_params; i++) {
        struct dlb_model_param *p = &m->params[i];
        if (strcmp(p->name, name) != 0)
            continue;
        if (value) {
            *value = p->t.buf;
            dlb_model_weights_changed(m); /* the caller may write it */
        }
        if (grad)
            *grad = p->grad;
        if (momentum)
            *momentum = p->mom;
        return DLB_OK;
    }
    return DLB_ERR_INPUT;
}

size_t dlb_model_act_size(const struct dlb_model *m, size_t i)
{
    const struct dlb_model_spec *s = m->spec;
    if (i == 0)
        return (size_t)s->in_c * s->in_h * s->in_w;
    const struct dlb_layer_spec *L = &s->layers[i - 1];
    return (size_t)L->out_c * L->out_h * L->out_w;
}
