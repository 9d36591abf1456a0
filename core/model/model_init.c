/* Seeded initialisation with PyTorch's defaults, or the weights that came
 * with the model file. */
#include "model/model_impl.h"

#include <math.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "backend/dtype.h"
#include "model/model_weights.h"

/* Host doubles into a device buffer of the model's type: F32 and F64 are
 * converted here; other float types go through an F32 buffer and the
 * backend's cast, which defines their rounding. */
static dlb_status put_values(struct dlb_model *m, struct dlb_buffer *dst,
                             const double *v, size_t n, const char *layer,
                             struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    size_t esz = m->dtype == DLB_F64 ? 8 : 4;
    struct dlb_buffer *tmp = NULL;
    dlb_status s;
    void *host = malloc(n * esz + 1);
    if (!host)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory initialising "
                          "layer '%s'", layer);
    for (size_t i = 0; i < n; i++) {
        if (m->dtype == DLB_F64)
            ((double *)host)[i] = v[i];
        else
            ((float *)host)[i] = (float)v[i];
    }
    if (m->dtype == DLB_F32 || m->dtype == DLB_F64) {
        s = ops->copy_from_host(m->be, dst, 0, host, n * esz);
    } else {
        s = ops->buffer_alloc(m->be, DLB_F32, n, &tmp);
        if (s == DLB_OK)
            s = ops->copy_from_host(m->be, tmp, 0, host, n * esz);
        if (s == DLB_OK)
            s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_CAST,
                    .count = n, .x = tmp, .y = dst});
        /* The cast is enqueued: wait before the source is freed. */
        if (s == DLB_OK)
            s = ops->synchronize(m->be);
        ops->buffer_free(m->be, tmp);
    }
    free(host);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, layer, "initialising", err);
}

/* kaiming_uniform_(a = sqrt(5)) gives gain sqrt(2 / 6) and bound
 * gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in); PyTorch's bias bound is the
 * same 1 / sqrt(fan_in). */
static dlb_status init_uniform(struct dlb_model *m, int index, double bound,
                               struct dlb_rng *r, const char *layer,
                               struct dlb_error *err)
{
    const struct dlb_model_param *p = &m->params[index];
    double *v = malloc(p->t.count * sizeof *v + 1);
    if (!v)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory initialising "
                          "layer '%s'", layer);
    for (size_t i = 0; i < p->t.count; i++)
        v[i] = bound * (2.0 * dlb_rng_double(r) - 1.0);
    dlb_status s = put_values(m, p->t.buf, v, p->t.count, layer, err);
    free(v);
    return s;
}

static dlb_status fill(struct dlb_model *m, struct dlb_buffer *b, double value,
                       const char *layer, struct dlb_error *err)
{
    dlb_status s = dlb_backend_run(m->be, &(struct dlb_op){
                       .kind = DLB_OP_FILL, .count = dlb_buffer_count(b),
                       .y = b, .value = value});
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, layer, "fill", err);
}

static dlb_status init_layer(struct dlb_model *m, size_t i, uint64_t seed,
                             struct dlb_error *err)
{
    const struct dlb_model_layer *ml = &m->layers[i];
    const struct dlb_layer_spec *L = ml->spec;
    struct dlb_rng r;
    double fan_in, bound;
    dlb_status s = DLB_OK;
    dlb_rng_seed_stream(&r, seed, DLB_MODEL_INIT_STREAM + i);
    switch (L->kind) {
    case DLB_LAYER_CONV:
    case DLB_LAYER_LINEAR:
        /* PyTorch's default: a grouped filter's fan-in is its group's */
        fan_in = L->kind == DLB_LAYER_CONV
                     ? (double)(L->in_c / (L->groups ? L->groups : 1)) *
                           L->size * L->size
                     : (double)L->in_c;
        bound = fan_in > 0 ? 1.0 / sqrt(fan_in) : 0.0;
        s = init_uniform(m, ml->weight, bound, &r, L->name, err);
        if (s == DLB_OK && ml->bias >= 0)
            s = init_uniform(m, ml->bias, bound, &r, L->name, err);
        return s;
    case DLB_LAYER_BATCHNORM:
        if ((s = fill(m, m->params[ml->weight].t.buf, 1.0, L->name, err)) ||
            (s = fill(m, m->params[ml->bias].t.buf, 0.0, L->name, err)) ||
            (s = fill(m, m->params[ml->run_mean].t.buf, 0.0, L->name, err)))
            return s;
        return fill(m, m->params[ml->run_var].t.buf, 1.0, L->name, err);
    default:
        return DLB_OK;
    }
}

/* The weights the model file brought (an ONNX model's initializers):
 * every tensor of the model must be there with its element count, which
 * the importer made sure of. */
static dlb_status load_file_weights(struct dlb_model *m, struct dlb_error *err)
{
    const struct dlb_model_weights *w = m->spec->weights;
    for (size_t i = 0; i < m->n_params; i++) {
        const struct dlb_model_param *p = &m->params[i];
        const struct dlb_weight *t = dlb_model_weights_find(w, p->name);
        if (!t || t->count != p->t.count)
            return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: no tensor %s of %zu "
                              "values among the file's weights", w->source,
                              p->name, p->t.count);
        double *v = malloc(t->count * sizeof *v + 1);
        if (!v)
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory loading %s",
                              p->name);
        for (size_t k = 0; k < t->count; k++)
            v[k] = t->data[k];
        dlb_status s = put_values(m, p->t.buf, v, t->count, p->name, err);
        free(v);
        if (s != DLB_OK)
            return s;
    }
    return DLB_OK;
}

dlb_status dlb_model_init(struct dlb_model *m, uint64_t seed,
                          struct dlb_error *err)
{
    dlb_status s;
    if (m->spec->weights) {
        if ((s = load_file_weights(m, err)) != DLB_OK)
            return s;
    } else {
        for (size_t i = 0; i < m->spec->n_layers; i++)
            if ((s = init_layer(m, i, seed, err)) != DLB_OK)
                return s;
    }
    for (size_t i = 0; i < m->n_params; i++)
        if (m->params[i].mom &&
            (s = fill(m, m->params[i].mom, 0.0, m->params[i].name, err)))
            return s;
    dlb_rng_seed_stream(&m->drop_rng, seed, DLB_MODEL_DROP_STREAM);
    dlb_model_weights_changed(m);
    return DLB_OK;
}
