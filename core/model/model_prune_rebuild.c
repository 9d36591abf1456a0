/* Structured pruning, the surgery: a new model of the smaller spec on the
 * same backend, every tensor gathered from the old one through the plan's
 * channel lists, and the new model's contents moved into the caller's
 * handle, which keeps its identity (the workload, the trainer and plugins
 * hold the pointer). The model owns the smaller spec from then on. Dense
 * kernels see smaller shapes; the cpu backend creates primitives for them
 * on first use as for any new shape. */
#include "model/model_prune.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/dtype.h"
#include "model/model_impl.h"

/* dst[a][b][inner] = src[k0[a]][k1[b]][inner] over the kept indices (a
 * NULL list keeps all d0 or d1); elements of esz bytes. */
struct slice {
    size_t d0, n0, d1, n1, inner, esz;
    const uint32_t *k0, *k1;
};

static void gather(const unsigned char *src, unsigned char *dst,
                   const struct slice *g)
{
    size_t run = g->inner * g->esz;
    for (size_t a = 0; a < g->n0; a++) {
        size_t oa = g->k0 ? g->k0[a] : a;
        for (size_t b = 0; b < g->n1; b++) {
            size_t ob = g->k1 ? g->k1[b] : b;
            memcpy(dst + (a * g->n1 + b) * run, src + (oa * g->d1 + ob) * run,
                   run);
        }
    }
}

/* Copy parameter `from` of the old model into `to` of the new one. */
static dlb_status move_param(struct dlb_model *old, int from,
                             struct dlb_model *nm, int to,
                             const struct slice *g, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(old->be);
    const struct dlb_model_param *a = &old->params[from];
    const struct dlb_model_param *b = &nm->params[to];
    if (g->n0 * g->n1 * g->inner != b->t.count ||
        g->d0 * g->d1 * g->inner != a->t.count)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: tensor '%s': %zu "
                          "elements planned, %zu allocated", old->spec->path,
                          b->name, g->n0 * g->n1 * g->inner, b->t.count);
    unsigned char *src = malloc(a->t.count * g->esz + 1);
    unsigned char *dst = malloc(b->t.count * g->esz + 1);
    dlb_status s = src && dst ? DLB_OK : DLB_ERR_NOMEM;
    if (s == DLB_OK)
        s = ops->copy_to_host(old->be, src, a->t.buf, 0, a->t.count * g->esz);
    if (s == DLB_OK) {
        gather(src, dst, g);
        s = ops->copy_from_host(nm->be, b->t.buf, 0, dst, b->t.count * g->esz);
        /* The host copy is reused at once, but the old buffers are freed
         * before the next pass: wait for the device. */
        if (s == DLB_OK)
            s = ops->synchronize(nm->be);
    }
    free(src);
    free(dst);
    if (s == DLB_ERR_NOMEM)
        return dlb_errorf(err, s, "out of memory moving tensor '%s'", a->name);
    return s == DLB_OK ? s : dlb_model_be_fail(old, s, a->name, "move", err);
}

static dlb_status move_layer(struct dlb_model *old, struct dlb_model *nm,
                             const struct dlb_prune_plan *p, size_t i,
                             struct dlb_error *err)
{
    const struct dlb_layer_spec *L = old->layers[i].spec;
    const struct dlb_model_layer *ol = &old->layers[i], *nl = &nm->layers[i];
    size_t esz = dlb_dtype_size(old->dtype);
    uint32_t units = L->out_c;
    struct slice ch = {units, p->keep_out[i] ? p->n_out[i] : units, 1, 1, 1,
                       esz, p->keep_out[i], NULL};
    struct slice w = ch;
    dlb_status s = DLB_OK;
    switch (L->kind) {
    case DLB_LAYER_CONV:
    case DLB_LAYER_LINEAR:
        /* [out][in / groups][k][k]: a depthwise filter's one input
         * channel is its own, never sliced (keep_in is NULL there) */
        w.d1 = L->kind == DLB_LAYER_CONV ? L->in_c / L->groups : L->in_c;
        w.n1 = p->keep_in[i] ? p->n_in[i] : w.d1;
        w.k1 = p->keep_in[i];
        w.inner = L->kind == DLB_LAYER_CONV ? (size_t)L->size * L->size : 1;
        s = move_param(old, ol->weight, nm, nl->weight, &w, err);
        if (s == DLB_OK && ol->bias >= 0)
            s = move_param(old, ol->bias, nm, nl->bias, &ch, err);
        return s;
    case DLB_LAYER_BATCHNORM:
        if ((s = move_param(old, ol->weight, nm, nl->weight, &ch, err)) ||
            (s = move_param(old, ol->bias, nm, nl->bias, &ch, err)) ||
            (s = move_param(old, ol->run_mean, nm, nl->run_mean, &ch, err)))
            return s;
        return move_param(old, ol->run_var, nm, nl->run_var, &ch, err);
    default:
        return DLB_OK;
    }
}

/* The precision policy of `m` per layer kind, to give the new model. */
static int policy_of(const struct dlb_model *m,
                     enum dlb_dtype types[DLB_LAYER_KIND_COUNT])
{
    for (int k = 0; k < DLB_LAYER_KIND_COUNT; k++)
        types[k] = m->dtype;
    for (size_t i = 0; i < m->spec->n_layers; i++)
        types[m->layers[i].spec->kind] = m->layers[i].ctype;
    return m->lowp;
}

static void swap_network(struct dlb_model *a, struct dlb_model *b)
{
    const struct dlb_model_spec *spec = a->spec;
    struct dlb_model_spec *own = a->own_spec;
    struct dlb_model_layer *layers = a->layers;
    struct dlb_model_param *params = a->params;
    size_t n = a->n_params;
    a->spec = b->spec, a->own_spec = b->own_spec, a->layers = b->layers;
    a->params = b->params, a->n_params = b->n_params;
    b->spec = spec, b->own_spec = own, b->layers = layers;
    b->params = params, b->n_params = n;
}

dlb_status dlb_model_prune_remove(struct dlb_model *m,
                                  const struct dlb_prune_keep *sel, unsigned n,
                                  struct dlb_error *err)
{
    struct dlb_prune_plan p;
    struct dlb_model *nm = NULL;
    enum dlb_dtype types[DLB_LAYER_KIND_COUNT];
    dlb_status s = dlb_prune_plan_make(m, sel, n, &p, err);
    if (s != DLB_OK)
        return s;
    int changes = 0;
    for (size_t i = 0; i < p.n_layers; i++)
        changes |= p.keep_out[i] != NULL;
    if (!changes) { /* every unit kept (sparsity 0): nothing to rebuild */
        dlb_prune_plan_free(&p);
        return DLB_OK;
    }
    dlb_model_step_release(m);
    s = dlb_model_create(p.spec, m->be, m->dtype, 0, &nm, err);
    for (size_t i = 0; s == DLB_OK && i < m->spec->n_layers; i++)
        s = move_layer(m, nm, &p, i, err);
    if (s != DLB_OK) {
        dlb_model_destroy(nm);
        dlb_prune_plan_free(&p);
        return s;
    }
    int lowp = policy_of(m, types), master = m->master;
    /* m takes the new network's layers and tensors and keeps everything
     * else (settings, timers, the dropout stream, what other modules hang
     * on it); nm leaves with the old ones (and any spec m owned). */
    swap_network(m, nm);
    m->own_spec = p.spec;
    p.spec = NULL;
    dlb_model_destroy(nm);
    dlb_prune_plan_free(&p);
    dlb_model_weights_changed(m);
    /* The new layers compute in the model's type until told otherwise. */
    m->lowp = 0;
    return lowp ? dlb_model_set_precision(m, types, master, err) : DLB_OK;
}
