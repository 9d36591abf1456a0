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
 * original computes with those inputs of the next layer zeroed.
 *
 * The network is a graph: the channels are followed from each layer's
 * input to its output in layer order. A depthwise conv's filter c reads
 * channel c alone, so it keeps its producer's channels (its filters and
 * groups shrink with them) and cannot be selected itself. An add sums its
 * inputs channel by channel, so every input must keep the same channels:
 * the convs whose outputs meet there (and a shortcut's projection) are
 * removed as one group, with one keep list, or the plan is refused naming
 * the add. A grouped (not depthwise) conv and a concat refuse removals
 * that reach them: the groups and the channel offsets would change. */
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

/* A conv whose every filter reads one channel of its own: its channels
 * are its producer's, so they follow a removal before it. */
static int depthwise(const struct dlb_layer_spec *L)
{
    return L->kind == DLB_LAYER_CONV && L->groups > 1 &&
           L->groups == L->in_c && L->filters == L->in_c;
}

/* Masks, sparse and int8 forms index the current shapes: refuse them. */
static dlb_status check_model(const struct dlb_model *m, struct dlb_error *err)
{
    for (size_t i = 0; i < m->spec->n_layers; i++) {
        const struct dlb_model_pruned *pr = m->layers[i].pr;
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

/* The kept channels of every activation (act[0] the network's input,
 * act[i + 1] layer i's output; NULL: all), pointing into the plan's
 * lists, and the layer each removal comes from. */
struct walk {
    const uint32_t **cur;
    uint32_t *n_cur;
    int *from;
};

static int same_list(const uint32_t *a, uint32_t na, const uint32_t *b,
                     uint32_t nb)
{
    if (!a || !b)
        return !a && !b;
    return na == nb && memcmp(a, b, na * sizeof *a) == 0;
}

/* An add sums its inputs channel by channel: they must keep the same
 * channels (model_api.h: the layers meeting there are pruned as one
 * group), and its output keeps them. */
static dlb_status walk_add(const struct dlb_model *m, size_t i,
                           struct walk *w, struct dlb_prune_plan *p,
                           struct dlb_error *err)
{
    const struct dlb_layer_spec *L = &m->spec->layers[i];
    size_t a = dlb_model_in(m, i, 0);
    for (unsigned k = 1; k < L->n_inputs; k++) {
        size_t b = dlb_model_in(m, i, k);
        if (same_list(w->cur[a], w->n_cur[a], w->cur[b], w->n_cur[b]))
            continue;
        int f = w->from[a] >= 0 ? w->from[a] : w->from[b];
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' adds channels "
                          "kept differently on its inputs ('%s' removes "
                          "units the other side keeps); the layers whose "
                          "outputs meet at an add must keep the same units",
                          m->spec->path, L->name, m->spec->layers[f].name);
    }
    if (w->cur[a]) {
        if (!(p->keep_out[i] = copy_list(w->cur[a], w->n_cur[a])))
            return DLB_ERR_NOMEM;
        p->n_out[i] = w->n_cur[a];
    }
    return DLB_OK;
}

/* A conv or linear layer consumes its input's channels and sets its own
 * output's; a depthwise conv hands its input's on. */
static dlb_status walk_matmul(const struct dlb_model *m, size_t i,
                              const uint32_t *sel_keep, uint32_t sel_n,
                              const struct walk *w, struct dlb_prune_plan *p,
                              struct dlb_error *err)
{
    const struct dlb_layer_spec *L = &m->spec->layers[i];
    size_t a = dlb_model_in(m, i, 0);
    p->n_out[i] = units_of(L);
    if (depthwise(L)) {
        if (sel_keep)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' is a "
                              "depthwise convolution: its channels follow "
                              "its producer's; remove units there instead",
                              m->spec->path, L->name);
        if (w->cur[a]) {
            if (!(p->keep_out[i] = copy_list(w->cur[a], w->n_cur[a])))
                return DLB_ERR_NOMEM;
            p->n_out[i] = w->n_cur[a];
        }
        return DLB_OK;
    }
    if (L->kind == DLB_LAYER_CONV && L->groups > 1 &&
        (w->cur[a] || sel_keep))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' is a grouped "
                          "convolution (groups = %u): removing %s would "
                          "change its groups; prune.method = magnitude masks "
                          "weights instead", m->spec->path, L->name,
                          L->groups, sel_keep ? "its units" : "its inputs");
    if (w->cur[a]) {
        if (!(p->keep_in[i] = copy_list(w->cur[a], w->n_cur[a])))
            return DLB_ERR_NOMEM;
        p->n_in[i] = w->n_cur[a];
    }
    if (sel_keep && sel_n < units_of(L)) {
        if (!(p->keep_out[i] = copy_list(sel_keep, sel_n)))
            return DLB_ERR_NOMEM;
        p->n_out[i] = sel_n;
    }
    return DLB_OK;
}

/* Follow the channels through layer i. */
static dlb_status walk_layer(const struct dlb_model *m, size_t i,
                             const uint32_t *sel_keep, uint32_t sel_n,
                             struct walk *w, struct dlb_prune_plan *p,
                             struct dlb_error *err)
{
    const struct dlb_layer_spec *L = &m->spec->layers[i];
    size_t a = dlb_model_in(m, i, 0);
    dlb_status s = DLB_OK;
    w->from[i + 1] = w->from[a];
    p->n_out[i] = L->out_c;
    switch (L->kind) {
    case DLB_LAYER_CONV:
    case DLB_LAYER_LINEAR:
        s = walk_matmul(m, i, sel_keep, sel_n, w, p, err);
        if (sel_keep && !depthwise(L))
            w->from[i + 1] = (int)i;
        break;
    case DLB_LAYER_ADD:
        s = walk_add(m, i, w, p, err);
        break;
    case DLB_LAYER_CONCAT:
        for (unsigned k = 0; k < L->n_inputs; k++)
            if (w->cur[dlb_model_in(m, i, k)])
                return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' joins "
                                  "channels that %s removed: removals are not "
                                  "followed across a concat", m->spec->path,
                                  L->name, m->spec->layers[w->from[
                                      dlb_model_in(m, i, k)]].name);
        break;
    case DLB_LAYER_FLATTEN:
        if (w->cur[a]) {
            uint32_t hw = L->in_h * L->in_w;
            if (!(p->keep_out[i] = flatten_list(w->cur[a], w->n_cur[a], hw)))
                return DLB_ERR_NOMEM;
            p->n_out[i] = w->n_cur[a] * hw;
        }
        break;
    case DLB_LAYER_LOGSOFTMAX:
        if (w->cur[a])
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' gives the "
                              "class scores: its units cannot be removed",
                              m->spec->path, m->spec->layers[w->from[a]].name);
        break;
    default:
        /* batchnorm, relu, pooling, dropout: per channel */
        if (w->cur[a]) {
            if (!(p->keep_out[i] = copy_list(w->cur[a], w->n_cur[a])))
                return DLB_ERR_NOMEM;
            p->n_out[i] = w->n_cur[a];
        }
        break;
    }
    w->cur[i + 1] = p->keep_out[i];
    w->n_cur[i + 1] = p->n_out[i];
    return s;
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
        if (depthwise(&sp->layers[i]))
            L->groups = p->n_out[i];
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
    struct walk w = {calloc(nl + 1, sizeof *w.cur),
                     calloc(nl + 1, sizeof *w.n_cur),
                     malloc((nl + 1) * sizeof *w.from)};
    dlb_status s = alloc_plan(out, nl);
    if (s == DLB_OK && (!by_layer || !seen || !w.cur || !w.n_cur || !w.from))
        s = DLB_ERR_NOMEM;
    if (s == DLB_OK)
        s = check_model(m, err);
    for (unsigned k = 0; s == DLB_OK && k < n; k++) {
        if ((s = check_one(m, &sel[k], seen, err)) == DLB_OK) {
            seen[sel[k].layer] = 1;
            by_layer[sel[k].layer] = &sel[k];
        }
    }
    if (w.from)
        w.from[0] = -1;
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
    free(w.cur);
    free(w.n_cur);
    free(w.from);
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
