/* Replicas of a model for data parallelism: the same network on a backend
 * handle of its own, learnable tensors by number, and backward with a
 * per-layer callback as each layer's parameter gradients become final. */
#include "services/model_replica.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model_weights.h"
#include "model/model_impl.h"

/* The i-th tensor with a gradient, or NULL. */
static const struct dlb_model_param *learnable(const struct dlb_model *m,
                                               unsigned i)
{
    for (size_t k = 0; k < m->n_params; k++)
        if (m->params[k].grad && i-- == 0)
            return &m->params[k];
    return NULL;
}

unsigned dlb_model_n_learnable(const struct dlb_model *m)
{
    unsigned n = 0;
    for (size_t k = 0; k < m->n_params; k++)
        n += m->params[k].grad != NULL;
    return n;
}

dlb_status dlb_model_learnable(const struct dlb_model *m, unsigned i,
                               struct dlb_param_info *out)
{
    const struct dlb_model_param *p = learnable(m, i);
    if (!p)
        return DLB_ERR_INPUT;
    memset(out, 0, sizeof *out);
    memcpy(out->name, p->name, sizeof out->name);
    out->name[sizeof out->name - 1] = '\0';
    out->count = p->t.count;
    int index = (int)(p - m->params);
    for (size_t l = 0; l < m->spec->n_layers; l++)
        if (m->layers[l].weight == index || m->layers[l].bias == index)
            out->layer = (unsigned)l;
    return DLB_OK;
}

int dlb_model_learnable_id(const struct dlb_model *m, const char *name)
{
    struct dlb_param_info pi;
    for (unsigned i = 0; name[0] && i < dlb_model_n_learnable(m); i++)
        if (dlb_model_learnable(m, i, &pi) == DLB_OK && !strcmp(pi.name, name))
            return (int)i;
    return -1;
}

/* The spec with its own path and layers, for a replica that may outlive
 * the model it copies. */
static struct dlb_model_spec *spec_dup(const struct dlb_model_spec *s)
{
    struct dlb_model_spec *d = malloc(sizeof *d);
    if (!d)
        return NULL;
    *d = *s;
    d->weights = dlb_model_weights_ref(s->weights); /* the master's start */
    d->path = strdup(s->path ? s->path : "");
    d->layers = malloc((s->n_layers ? s->n_layers : 1) * sizeof *d->layers);
    if (!d->path || !d->layers) {
        dlb_model_spec_free(d);
        return NULL;
    }
    memcpy(d->layers, s->layers, s->n_layers * sizeof *d->layers);
    return d;
}

/* The master's mixed-precision policy (amp): every replica computes in
 * the same types, or a data-parallel step would mix precisions. Kinds the
 * network lacks keep the model's type. */
static dlb_status copy_precision(struct dlb_model *r, const struct dlb_model *m,
                                 struct dlb_error *err)
{
    enum dlb_dtype types[DLB_LAYER_KIND_COUNT];
    if (!m->lowp)
        return DLB_OK;
    for (int k = 0; k < DLB_LAYER_KIND_COUNT; k++)
        types[k] = m->dtype;
    for (size_t i = 0; i < m->spec->n_layers; i++)
        types[m->layers[i].spec->kind] = m->layers[i].ctype;
    return dlb_model_set_precision(r, types, m->master, err);
}

dlb_status dlb_model_replica_create(const struct dlb_model *m, const char *name,
                                    const struct dlb_backend_config *cfg,
                                    uint64_t seed, struct dlb_model **out,
                                    struct dlb_error *err)
{
    struct dlb_model_spec *spec = spec_dup(m->spec);
    struct dlb_backend *be = NULL;
    char why[512] = "";
    dlb_status s;
    *out = NULL;
    if (!spec)
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory for a "
                          "replica", m->spec->path);
    s = dlb_backend_open(name, cfg, &be, why, sizeof why);
    if (s != DLB_OK) {
        dlb_model_spec_free(spec);
        return dlb_errorf(err, s, "replica backend %s: %s", name,
                          why[0] ? why : dlb_status_name(s));
    }
    s = dlb_model_create(spec, be, m->dtype, seed, out, err);
    if (s != DLB_OK) {
        dlb_backend_close(be);
        dlb_model_spec_free(spec);
        return s;
    }
    dlb_model_set_sgd(*out, m->lr, m->momentum);
    s = copy_precision(*out, m, err);
    if (s != DLB_OK) {
        dlb_model_replica_destroy(*out);
        *out = NULL;
    }
    return s;
}

void dlb_model_replica_destroy(struct dlb_model *r)
{
    if (!r)
        return;
    struct dlb_model_spec *spec = (struct dlb_model_spec *)r->spec;
    struct dlb_backend *be = r->be;
    dlb_model_destroy(r);
    dlb_model_spec_free(spec);
    dlb_backend_close(be);
}

uint64_t dlb_model_weights_version(const struct dlb_model *m)
{
    return m->weights_version;
}

void dlb_model_copy_rng(struct dlb_model *dst, const struct dlb_model *src)
{
    dst->drop_rng = src->drop_rng;
}

void dlb_model_sgd_settings(const struct dlb_model *m, float *lr,
                            float *momentum)
{
    *lr = m->lr;
    *momentum = m->momentum;
}

dlb_status dlb_model_forward_backward_cb(struct dlb_model *m,
                                         const float *images,
                                         const int32_t *labels, uint32_t n,
                                         float loss_scale, double *loss,
                                         dlb_grad_ready_fn ready, void *ctx,
                                         struct dlb_error *err)
{
    err->msg[0] = '\0';
    m->grad_ready = ready;
    m->grad_ready_ctx = ctx;
    dlb_status s = dlb_model_forward_backward(m, images, labels, n, loss_scale,
                                              loss, err);
    m->grad_ready = NULL;
    m->grad_ready_ctx = NULL;
    /* model_bwd.c passes the callback's status on without words. */
    if (s != DLB_OK && !err->msg[0])
        dlb_errorf(err, s, "%s: backward stopped by the gradient-ready "
                   "callback (%s)", m->spec->path, dlb_status_name(s));
    return s;
}

/* A named model onto another backend: a replica there, given the
 * reference weights and statistics, and the dropout stream. */
dlb_status dlb_model_replica_move(const struct dlb_model *src,
                                  const char *backend,
                                  const struct dlb_backend_config *cfg,
                                  uint64_t seed, struct dlb_model **out,
                                  struct dlb_error *err)
{
    unsigned parts = DLB_STATE_WEIGHTS | DLB_STATE_STATS;
    size_t n = dlb_model_state_count(src, parts);
    float *flat = malloc((n ? n : 1) * sizeof *flat);
    dlb_status s = flat ? dlb_model_replica_create(src, backend, cfg, seed,
                                                   out, err)
                        : dlb_errorf(err, DLB_ERR_NOMEM, "open: out of "
                                     "memory moving a model to %s", backend);
    if (s == DLB_OK)
        s = dlb_model_state_io((struct dlb_model *)(uintptr_t)src, parts,
                               flat, n, 0, err);
    if (s == DLB_OK)
        s = dlb_model_state_io(*out, parts, flat, n, 1, err);
    if (s == DLB_OK)
        dlb_model_copy_rng(*out, src);
    if (s != DLB_OK && *out) {
        dlb_model_replica_destroy(*out);
        *out = NULL;
    }
    free(flat);
    return s;
}
