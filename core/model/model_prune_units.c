/* Structured pruning, the plan: which channels of every layer survive a
 * removal of conv filters and linear units, and the smaller network.
 *
 * A removed unit's output is a channel (a conv filter) or a feature (a
 * linear unit). Batch norm, ReLU, pooling and dropout act on each channel
 * alone, so the channel flows through them unchanged and batch norm's
 * per-channel tensors lose the same entries; a flatten turns channel c of
 * h x w into features c*h*w .. c*h*w + h*w - 1. The next conv or linear
 * layer is where the channel is consumed: it loses the matching inputs.
 * With those inputs gone, what the unit produced (after batch norm: beta
 * minus the normalised mean, passed through ReLU, rarely zero) no longer
 * reaches anything, which is why the smaller network computes what the
 * original computes with those inputs of the next layer zeroed. */
#include "model/model_prune.h"

#include <stdlib.h>
#include <string.h>

#include "model/model_impl.h"

static uint32_t units_of(const struct dlb_layer_spec *L)
{
    return L->kind == DLB_LAYER_CONV ? L->filters : L->out;
}

static uint32_t *copy_list(const uint32_t *src, uint32_t n)
{
    uint32_t *d = malloc((n ? n : 1) * sizeof *d);
    if (d && n)
        memcpy(d, src, n * sizeof *d);
    return d;
}

static dlb_status check_one(const struct dlb_model *m,
                            const struct dlb_prune_keep *k,
                            const unsigned char *seen, struct dlb_error *err)
{
    const struct dlb_model_spec *sp = m->spec;
    if (k->layer >= sp->n_layers)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer %u does not exist "
                          "(the model has %zu)", sp->path, k->layer,
                          sp->n_layers);
    const struct dlb_layer_spec *L = &sp->layers[k->layer];
    if (L->kind != DLB_LAYER_CONV && L->kind != DLB_LAYER_LINEAR)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' is a %s; only "
                          "conv filters and linear units can be removed",
                          sp->path, L->name, dlb_layer_kind_name(L->kind));
    if (seen[k->layer])
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' is selected "
                          "twice", sp->path, L->name);
    uint32_t units = units_of(L);
    if (k->n_keep == 0 || k->n_keep > units || !k->keep)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s': keeping %u of "
                          "its %u units; keep 1 to %u", sp->path, L->name,
                          k->n_keep, units, units);
    for (uint32_t j = 0; j < k->n_keep; j++)
        if (k->keep[j] >= units || (j && k->keep[j] <= k->keep[j - 1]))
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s': the units "
                              "to keep must be ascending, distinct and below "
                              "%u (entry %u is %u)", sp->path, L->name, units,
                              j, k->keep[j]);
    return DLB_OK;
}

/* Masks, sparse and int8 forms index the current shapes: refuse them.
 * The channels are followed along a chain; where outputs branch and join
 * (an add), the layers summed would have to lose the same channels. */
static dlb_status check_model(const struct dlb_model *m, struct dlb_error *err)
{
    if (!dlb_model_spec_is_chain(m->spec))
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: removing units "
                          "follows channels along a chain of layers, and "
                          "this network branches (a layer reads another "
                          "than the one before it); prune.method = magnitude "
                          "masks weights without removing units",
                          m->spec->path);
    for (size_t i = 0; i < m->spec->n_layers; i++) {
        const struct dlb_model_pruned *pr = m->layers[i].pr;
        const struct dlb_layer_spec *L = &m->spec->layers[i];
        if (L->kind == DLB_LAYER_CONV && L->groups > 1)
            return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: layer '%s' is a "
                              "grouped convolution (groups = %u): removing "
                              "units before it would change its groups; "
                              "prune.method = magnitude masks weights "
                              "instead", m->spec->path, L->name, L->groups);
        if (pr && (pr->mask || pr->mode != DLB_PRUNE_SPARSE_OFF))
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' has a mask "
                              "or a sparse form; remove units before masking",
                              m->spec->path, m->spec->layers[i].name);
        if (m->layers[i].q)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' runs in "
                              "int8; remove units before quantizing",
                              m->spec->path, m->spec->layers[i].name);
    }
    return DLB_OK;
}

/* Channel keep list -> feature keep list of a flatten over h*w planes. */
static uint32_t *flatten_list(const uint32_t *keep, uint32_t n, uint32_t hw)
{
    size_t count = (size_t)n * hw;
    uint32_t *f = malloc((count ? count : 1) * sizeof *f);
    if (!f)
        return NULL;
    for (uint32_t c = 0; c < n; c++)
        for (uint32_t k = 0; k < hw; k++)
            f[(size_t)c * hw + k] = keep[c] * hw + k;
    return f;
}

struct walk {
    const uint32_t *cur;   /* kept channels of the activation; NULL: all */
    uint32_t n_cur;
    int from;              /* the layer whose removal cur comes from */
};

/* Follow the channels through layer i; a conv or linear layer consumes
 * them and sets its own output's. */
static dlb_status walk_layer(const struct dlb_model *m, size_t i,
                             const uint32_t *sel_keep, uint32_t sel_n,
                             struct walk *w, struct dlb_prune_plan *p,
                             struct dlb_error *err)
{
    const struct dlb_layer_spec *L = &m->spec->layers[i];
    switch (L->kind) {
    case DLB_LAYER_CONV:
    case DLB_LAYER_LINEAR:
        if (w->cur) {
            if (!(p->keep_in[i] = copy_list(w->cur, w->n_cur)))
                return DLB_ERR_NOMEM;
            p->n_in[i] = w->n_cur;
        }
        p->n_out[i] = units_of(L);
        w->cur = NULL;
        if (sel_keep && sel_n < units_of(L)) {
            if (!(p->keep_out[i] = copy_list(sel_keep, sel_n)))
                return DLB_ERR_NOMEM;
            p->n_out[i] = sel_n;
            w->cur = p->keep_out[i];
            w->n_cur = sel_n;
            w->from = (int)i;
        }
        return DLB_OK;
    case DLB_LAYER_FLATTEN:
        if (w->cur) {
            uint32_t hw = L->in_h * L->in_w;
            if (!(p->keep_out[i] = flatten_list(w->cur, w->n_cur, hw)))
                return DLB_ERR_NOMEM;
            p->n_out[i] = w->n_cur * hw;
            w->cur = p->keep_out[i];
            w->n_cur = p->n_out[i];
        }
        return DLB_OK;
    case DLB_LAYER_LOGSOFTMAX:
        if (w->cur)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' gives the "
                              "class scores: its units cannot be removed",
                              m->spec->path, m->spec->layers[w->from].name);
        return DLB_OK;
    default:
        /* batchnorm, relu, pooling, dropout: per channel */
        if (w->cur) {
            if (!(p->keep_out[i] = copy_list(w->cur, w->n_cur)))
                return DLB_ERR_NOMEM;
            p->n_out[i] = w->n_cur;
            w->cur = p->keep_out[i];
        }
        return DLB_OK;
    }
}

static dlb_status alloc_plan(struct dlb_prune_plan *p, size_t nl)
{
    memset(p, 0, sizeof *p);
    p->n_layers = nl;
    p->keep_out = calloc(nl, sizeof *p->keep_out);
    p->keep_in = calloc(nl, sizeof *p->keep_in);
    p->n_out = calloc(nl, sizeof *p->n_out);
    p->n_in = calloc(nl, sizeof *p->n_in);
    return p->keep_out && p->keep_in && p->n_out && p->n_in ? DLB_OK
                                                            : DLB_ERR_NOMEM;
}

/* A deep copy of `sp` with the kept unit counts and its shapes again. */
static dlb_status smaller_spec(const struct dlb_model_spec *sp,
                               struct dlb_prune_plan *p, struct dlb_error *err)
{
    struct dlb_model_spec *ns = calloc(1, sizeof *ns);
    if (!ns)
        return DLB_ERR_NOMEM;
    *ns = *sp;
    ns->path = NULL;
    /* The file's weights have the unpruned shapes; the rebuild copies the
     * kept units from the model instead. */
    ns->weights = NULL;
    ns->layers = malloc(sp->n_layers * sizeof *ns->layers);
    size_t len = strlen(sp->path) + 1;
    if (ns->layers)
        ns->path = malloc(len);
    if (!ns->layers || !ns->path) {
        dlb_model_spec_free(ns);
        return DLB_ERR_NOMEM;
    }
    memcpy(ns->path, sp->path, len);
    memcpy(ns->layers, sp->layers, sp->n_layers * sizeof *ns->layers);
    for (size_t i = 0; i < sp->n_layers; i++) {
        struct dlb_layer_spec *L = &ns->layers[i];
        if (L->kind == DLB_LAYER_CONV)
            L->filters = p->n_out[i];
        else if (L->kind == DLB_LAYER_LINEAR)
            L->out = p->n_out[i];
    }
    p->spec = ns;
    return dlb_model_spec_reshape(ns, err);
}

dlb_status dlb_prune_plan_make(const struct dlb_model *m,
                               const struct dlb_prune_keep *sel, unsigned n,
                               struct dlb_prune_plan *out,
                               struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    const struct dlb_prune_keep **by_layer = calloc(nl, sizeof *by_layer);
    unsigned char *seen = calloc(nl, 1);
    struct walk w = {NULL, 0, -1};
    dlb_status s = alloc_plan(out, nl);
    if (s == DLB_OK && (!by_layer || !seen))
        s = DLB_ERR_NOMEM;
    if (s == DLB_OK)
        s = check_model(m, err);
    for (unsigned k = 0; s == DLB_OK && k < n; k++) {
        if ((s = check_one(m, &sel[k], seen, err)) == DLB_OK) {
            seen[sel[k].layer] = 1;
            by_layer[sel[k].layer] = &sel[k];
        }
    }
    for (size_t i = 0; s == DLB_OK && i < nl; i++)
        s = walk_layer(m, i, by_layer[i] ? by_layer[i]->keep : NULL,
                       by_layer[i] ? by_layer[i]->n_keep : 0, &w, out, err);
    if (s == DLB_OK)
        s = smaller_spec(m->spec, out, err);
    if (s == DLB_ERR_NOMEM && !err->msg[0])
        dlb_errorf(err, s, "%s: out of memory planning a removal",
                   m->spec->path);
    free(by_layer);
    free(seen);
    if (s != DLB_OK)
        dlb_prune_plan_free(out);
    return s;
}

void dlb_prune_plan_free(struct dlb_prune_plan *p)
{
    for (size_t i = 0; i < p->n_layers; i++) {
        if (p->keep_out)
            free(p->keep_out[i]);
        if (p->keep_in)
            free(p->keep_in[i]);
    }
    free(p->keep_out);
    free(p->keep_in);
    free(p->n_out);
    free(p->n_in);
    dlb_model_spec_free(p->spec);
    memset(p, 0, sizeof *p);
}
