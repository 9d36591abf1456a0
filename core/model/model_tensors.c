/* Every tensor of a model by id (model_api.h's tensor_count_all,
 * tensor_desc and tensor_io): the learnable tensors, the batch-norm
 * running statistics, and the optimizer state (SGD momentum) of each
 * learnable tensor, in that order. The same buffers state_io copies as
 * its parts, so the two views of a model's state agree. */
#include "model/model_tensors.h"

#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model_impl.h"

/* The k-th learnable (or, learnable 0, statistics) param, or -1. */
static long nth(const struct dlb_model *m, unsigned k, int learnable)
{
    for (size_t i = 0; i < m->n_params; i++)
        if ((m->params[i].grad != NULL) == learnable && k-- == 0)
            return (long)i;
    return -1;
}

static unsigned n_with_grad(const struct dlb_model *m, int learnable)
{
    unsigned n = 0;
    for (size_t i = 0; i < m->n_params; i++)
        n += (m->params[i].grad != NULL) == learnable;
    return n;
}

static unsigned n_stats(const struct dlb_model *m)
{
    return n_with_grad(m, 0);
}

static unsigned n_learn(const struct dlb_model *m)
{
    return n_with_grad(m, 1);
}

unsigned dlb_model_tensor_count_all(const struct dlb_model *m)
{
    return 2 * n_learn(m) + n_stats(m);
}

/* Id `id`'s param, its kind and the buffer holding its values. */
static const struct dlb_model_param *
resolve(const struct dlb_model *m, unsigned id, enum dlb_tensor_kind *kind,
        struct dlb_buffer **buf, int *of)
{
    unsigned nl = n_learn(m), ns = n_stats(m);
    long k;
    *of = -1;
    if (id < nl) {
        *kind = DLB_TENSOR_KIND_WEIGHTS;
        k = nth(m, id, 1);
    } else if (id < nl + ns) {
        *kind = DLB_TENSOR_KIND_STATISTICS;
        k = nth(m, id - nl, 0);
    } else if (id < 2 * nl + ns) {
        *kind = DLB_TENSOR_KIND_OPTIMIZER;
        *of = (int)(id - nl - ns);
        k = nth(m, id - nl - ns, 1);
    } else {
        return NULL;
    }
    if (k < 0)
        return NULL;
    *buf = *kind == DLB_TENSOR_KIND_OPTIMIZER ? m->params[k].mom
                                              : m->params[k].t.buf;
    return &m->params[k];
}

static unsigned layer_of(const struct dlb_model *m, long index)
{
    for (size_t l = 0; l < m->spec->n_layers; l++) {
        const struct dlb_model_layer *ml = &m->layers[l];
        if (ml->weight == index || ml->bias == index ||
            ml->run_mean == index || ml->run_var == index)
            return (unsigned)l;
    }
    return 0;
}

static dlb_status no_id(const struct dlb_model *m, unsigned id,
                        struct dlb_error *err)
{
    return dlb_errorf(err, DLB_ERR_INPUT, "%s: no tensor %u (the model has "
                      "%u: %u learnable, %u statistics, %u optimizer state)",
                      m->spec->path, id, dlb_model_tensor_count_all(m),
                      n_learn(m), n_stats(m),
                      n_learn(m));
}

dlb_status dlb_model_tensor_desc(const struct dlb_model *m, unsigned id,
                                 struct dlb_tensor_desc *out,
                                 struct dlb_error *err)
{
    enum dlb_tensor_kind kind;
    struct dlb_buffer *buf;
    int of;
    const struct dlb_model_param *p = resolve(m, id, &kind, &buf, &of);
    if (!p)
        return no_id(m, id, err);
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    snprintf(out->name, sizeof out->name, "%.80s%s", p->name,
             kind == DLB_TENSOR_KIND_OPTIMIZER ? ".momentum" : "");
    out->kind = kind;
    out->dtype = m->dtype;
    out->ndim = p->t.ndim;
    memcpy(out->shape, p->t.shape, sizeof out->shape);
    out->count = p->t.count;
    out->layer = layer_of(m, p - m->params);
    out->of = of;
    return DLB_OK;
}

dlb_status dlb_model_tensor_id_io(struct dlb_model *m, unsigned id,
                                  float *host, size_t count, int write,
                                  struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    enum dlb_tensor_kind kind;
    struct dlb_buffer *buf;
    int of;
    const struct dlb_model_param *p = resolve(m, id, &kind, &buf, &of);
    dlb_status s;
    if (!p)
        return no_id(m, id, err);
    if (!host || count != p->t.count)
        return dlb_errorf(err, DLB_ERR_INPUT, "tensor %u (%s%s) has %zu "
                          "elements, not %zu", id, p->name,
                          kind == DLB_TENSOR_KIND_OPTIMIZER ? ".momentum" : "",
                          p->t.count, host ? count : 0);
    if (m->dtype != DLB_F32)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "tensor %u (%s): only "
                          "fp32 models can be read or written as fp32", id,
                          p->name);
    s = write ? ops->copy_from_host(m->be, buf, 0, host, count * sizeof *host)
              : ops->copy_to_host(m->be, host, buf, 0, count * sizeof *host);
    if (s == DLB_OK && !write)
        s = DLB_BE_CALL0(m->be, synchronize);
    if (s != DLB_OK)
        return dlb_model_be_fail(m, s, p->name, write ? "tensor write"
                                                      : "tensor read", err);
    /* What state_io's write of the same part does: weights and statistics
     * are a change from outside; momentum is the optimizer's own. */
    if (write && kind != DLB_TENSOR_KIND_OPTIMIZER)
        dlb_model_weights_changed(m);
    return DLB_OK;
}
