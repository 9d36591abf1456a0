/* The prune transform: choose the layers, rank their weights, hand masks
 * or the units to keep to the core, fine-tune, set sparse layers; the
 * figures before and after come from prune_figures.c. Filter methods
 * prune the layers whose outputs meet at an add as one group
 * (prune_groups.h) and leave, with the reason in the log, those that
 * cannot lose units. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prune.h"
#include "prune_groups.h"

static const char *const layer_set_names[] = { "all", "conv", "linear" };

static int weighted(enum dlb_layer_kind k)
{
    return k == DLB_LAYER_CONV || k == DLB_LAYER_LINEAR;
}

/* The layers the settings select, in order; 0 when none. Filter methods
 * select whole groups (prune_groups.h) and say why each layer they leave
 * is left; `refused` counts those. */
static unsigned select_layers(const struct prune_state *s,
                              const struct dlb_host *h,
                              const struct prune_net *net,
                              const struct prune_groups *g, unsigned *out,
                              unsigned *refused)
{
    unsigned n = 0;
    *refused = 0;
    for (unsigned i = 0; i < net->n; i++) {
        enum dlb_layer_kind k = net->li[i].kind;
        if (!weighted(k) ||
            (s->layers == PRUNE_LAYERS_CONV && k != DLB_LAYER_CONV) ||
            (s->layers == PRUNE_LAYERS_LINEAR && k != DLB_LAYER_LINEAR))
            continue;
        if (!prune_structured(s)) {
            out[n++] = i;
            continue;
        }
        if (g->group[i] < 0) /* depthwise: follows its producer */
            continue;
        const char *why = g->why[i];
        char left[160];
        for (unsigned j = 0; !why[0] && j < net->n; j++) {
            enum dlb_layer_kind kj = net->li[j].kind;
            if (g->group[j] == g->group[i] &&
                ((s->layers == PRUNE_LAYERS_CONV && kj != DLB_LAYER_CONV) ||
                 (s->layers == PRUNE_LAYERS_LINEAR &&
                  kj != DLB_LAYER_LINEAR))) {
                snprintf(left, sizeof left, "its outputs meet those of '%s', "
                         "which layers = %s leaves out", net->li[j].name,
                         layer_set_names[s->layers]);
                why = left;
            }
        }
        if (why[0]) {
            h->log(h, DLB_LOG_INFO, "filters: '%s' kept whole: %s",
                   net->li[i].name, why);
            ++*refused;
            continue;
        }
        out[n++] = i;
    }
    return n;
}

/* The weights of the selected layers, read from the model. */
static dlb_status read_weights(const struct dlb_host *h, struct dlb_model *m,
                               const struct prune_net *net,
                               const unsigned *sel,
                               unsigned n, float **w)
{
    for (unsigned k = 0; k < n; k++) {
        const struct dlb_layer_info *li = &net->li[sel[k]];
        if (!(w[k] = malloc(li->weight_count * sizeof *w[k] + 1)))
            return DLB_ERR_NOMEM;
        dlb_status s = h->model_api->tensor_io(h, m, (unsigned)li->weight_id,
                                               DLB_TENSOR_VALUE, w[k],
                                               li->weight_count, 0);
        if (s != DLB_OK)
            return s;
    }
    return DLB_OK;
}

static dlb_status mask_layers(const struct prune_state *s,
                              const struct dlb_host *h, struct dlb_model *m,
                              const struct prune_net *net, const unsigned *sel,
                              unsigned n, float **w, double *zeros_set)
{
    size_t *cnt = calloc(n, sizeof *cnt);
    uint8_t **mask = calloc(n, sizeof *mask);
    dlb_status st = cnt && mask ? DLB_OK : DLB_ERR_NOMEM;
    *zeros_set = 0;
    for (unsigned k = 0; st == DLB_OK && k < n; k++) {
        cnt[k] = net->li[sel[k]].weight_count;
        if (!(mask[k] = malloc(cnt[k] + 1)))
            st = DLB_ERR_NOMEM;
    }
    if (st == DLB_OK && s->method == PRUNE_MAGNITUDE_GLOBAL) {
        size_t z = dlb_prune_magnitude((const float *const *)w, cnt, n,
                                       s->sparsity, mask);
        st = z == (size_t)-1 ? DLB_ERR_NOMEM : DLB_OK;
        *zeros_set = (double)z;
    }
    for (unsigned k = 0; st == DLB_OK && s->method == PRUNE_MAGNITUDE && k < n;
         k++) {
        size_t z = dlb_prune_magnitude((const float *const *)&w[k], &cnt[k], 1,
                                       s->sparsity, &mask[k]);
        st = z == (size_t)-1 ? DLB_ERR_NOMEM : DLB_OK;
        *zeros_set += (double)z;
    }
    for (unsigned k = 0; st == DLB_OK && k < n; k++) {
        struct dlb_rewrite rw = {.node = sel[k], .kind = DLB_REWRITE_MASK,
                                 .u.mask = {mask[k], cnt[k]}};
        st = h->model_api->rewrite(h, m, &rw, 1, NULL);
    }
    for (unsigned k = 0; mask && k < n; k++)
        free(mask[k]);
    free(mask);
    free(cnt);
    return st;
}

/* The members of group `grp` among the selected layers. */
static unsigned members(const struct prune_groups *g, int grp,
                        const unsigned *sel, unsigned n, unsigned *out)
{
    unsigned c = 0;
    for (unsigned k = 0; k < n; k++)
        if (g->group[sel[k]] == grp)
            out[c++] = k;
    return c;
}

/* One keep list per group, ranked on every member's filters together,
 * handed to each member. */
static dlb_status remove_units(const struct prune_state *s,
                               const struct dlb_host *h, struct dlb_model *m,
                               const struct prune_net *net,
                               const struct prune_groups *g,
                               const unsigned *sel, unsigned n, float **w)
{
    struct dlb_rewrite *keep = calloc(n ? n : 1, sizeof *keep);
    unsigned *mem = calloc(n ? n : 1, sizeof *mem);
    const float **mw = calloc(n ? n : 1, sizeof *mw);
    size_t *per = calloc(n ? n : 1, sizeof *per);
    dlb_status st = keep && mem && mw && per ? DLB_OK : DLB_ERR_NOMEM;
    enum dlb_prune_norm norm = s->method == PRUNE_FILTERS_L1
                                   ? DLB_PRUNE_NORM_L1 : DLB_PRUNE_NORM_L2;
    for (unsigned k = 0; st == DLB_OK && k < n; k++) {
        const struct dlb_layer_info *li = &net->li[sel[k]];
        if (g->group[sel[k]] != (int)sel[k])
            continue; /* ranked with its group's first layer */
        unsigned c = members(g, (int)sel[k], sel, n, mem);
        for (unsigned j = 0; j < c; j++) {
            const struct dlb_layer_info *lj = &net->li[sel[mem[j]]];
            mw[j] = w[mem[j]];
            per[j] = lj->weight_count / lj->out_c;
        }
        uint32_t *list = malloc(li->out_c * sizeof *list + 1);
        uint32_t kept = list ? dlb_prune_rank_group(mw, per, c, li->out_c,
                                                    norm, s->sparsity, list)
                             : 0;
        if (!kept) {
            free(list);
            st = DLB_ERR_NOMEM;
            break;
        }
        if (c > 1)
            h->log(h, DLB_LOG_INFO, "filters: '%s' and %u more layer%s "
                   "whose outputs meet at adds keep the same %u of %u units",
                   li->name, c - 1, c == 2 ? "" : "s", kept, li->out_c);
        for (unsigned j = 0; j < c && st == DLB_OK; j++) {
            uint32_t *mine = j ? malloc(kept * sizeof *mine) : list;
            if (!mine) {
                st = DLB_ERR_NOMEM;
                break;
            }
            if (j)
                memcpy(mine, list, kept * sizeof *mine);
            keep[mem[j]] = (struct dlb_rewrite){.node = sel[mem[j]],
                                                .kind = DLB_REWRITE_KEEP,
                                                .u.keep = {mine, kept}};
        }
    }
    if (st == DLB_OK)
        st = h->model_api->rewrite(h, m, keep, n, NULL);
    for (unsigned k = 0; keep && k < n; k++)
        free((void *)keep[k].u.keep.units);
    free(keep);
    free(mem);
    free(mw);
    free(per);
    return st;
}

static dlb_status set_sparse(struct prune_state *s, const struct dlb_host *h,
                             struct dlb_model *m, const struct prune_net *net,
                             const unsigned *sel, unsigned n)
{
    if (s->sparse == DLB_PRUNE_SPARSE_OFF)
        return DLB_OK;
    if (prune_structured(s)) {
        h->log(h, DLB_LOG_INFO, "sparse = %s ignored: filter methods leave "
               "no zeros to skip", s->sparse == DLB_PRUNE_SPARSE_ON ? "on"
                                                                    : "auto");
        return DLB_OK;
    }
    free(s->sparse_layers);
    s->n_sparse = 0;
    if (!(s->sparse_layers = calloc(n ? n : 1, sizeof *s->sparse_layers)))
        return DLB_ERR_NOMEM;
    for (unsigned k = 0; k < n; k++) {
        if (net->li[sel[k]].kind != DLB_LAYER_LINEAR)
            continue;
        struct dlb_rewrite rw = {.node = sel[k], .kind = DLB_REWRITE_SPARSE,
                                 .u.sparse = s->sparse};
        dlb_status st = h->model_api->rewrite(h, m, &rw, 1, NULL);
        if (st != DLB_OK)
            return st;
        s->sparse_layers[s->n_sparse++] = sel[k];
    }
    return DLB_OK;
}

/* Pruning proper, on the selected layers. */
static dlb_status prune_selected(struct prune_state *s,
                                 const struct dlb_host *h, struct dlb_model *m,
                                 struct prune_net *net,
                                 const struct prune_groups *g,
                                 const unsigned *sel, unsigned n)
{
    float **w = calloc(n, sizeof *w);
    double zeros_set = 0;
    dlb_status st = w ? read_weights(h, m, net, sel, n, w) : DLB_ERR_NOMEM;
    if (st == DLB_OK && prune_structured(s))
        st = remove_units(s, h, m, net, g, sel, n, w);
    else if (st == DLB_OK)
        st = mask_layers(s, h, m, net, sel, n, w, &zeros_set);
    for (unsigned k = 0; w && k < n; k++)
        free(w[k]);
    free(w);
    if (st == DLB_OK && !prune_structured(s))
        h->metric(h, "zeros_set", "weights", zeros_set);
    return st;
}

dlb_status prune_apply(void *state, const struct dlb_host *h,
                       struct dlb_model *m)
{
    struct prune_state *s = state;
    struct prune_net net = {NULL, 0}, was = {NULL, 0};
    struct prune_totals before, after;
    struct prune_groups groups = {NULL, NULL, 0};
    unsigned *sel = NULL, n = 0, refused = 0;
    double acc = 0, loss = 0, secs = 0;
    /* Speed only: the masks and removals make the speed; fine-tuning and
     * the accuracy evaluations serve the quality figures alone. */
    int quality = !(DLB_HOST_HAS(h, measure_only) && h->measure_only);
    dlb_extra_prune_finetune finetune = (dlb_extra_prune_finetune)
        h->model_api->extra(h, "prune.finetune");
    s->model = m;
    dlb_status st = prune_read_net(h, m, &net, &before);
    if (st == DLB_OK && !(sel = calloc(net.n ? net.n : 1, sizeof *sel)))
        st = DLB_ERR_NOMEM;
    if (st == DLB_OK && !prune_groups_find(net.li, net.n, &groups))
        st = DLB_ERR_NOMEM;
    if (st == DLB_OK &&
        !(n = select_layers(s, h, &net, &groups, sel, &refused))) {
        h->log(h, DLB_LOG_ERROR, "layers = %s selects no layer this model can "
               "prune%s", layer_set_names[s->layers], prune_structured(s)
               ? " (filter methods leave the layers giving the class scores; "
               "the log says why each layer was left)" : "");
        st = DLB_ERR_INPUT;
    }
    if (st == DLB_OK) {
        h->metric(h, "sparsity_nominal", "fraction", s->sparsity);
        if (prune_structured(s))
            h->metric(h, "layers_kept_whole", "layers", refused);
        h->metric(h, "params_before", "", before.params);
        h->metric(h, "size_before_bytes", "bytes", 4 * before.params);
        h->metric(h, "flops_before", "FLOP", before.flops);
        if (quality)
            st = prune_accuracy(h, m, "accuracy_dense", &acc);
    }
    if (st == DLB_OK)
        st = prune_selected(s, h, m, &net, &groups, sel, n);
    /* Removal renumbers nothing but changes shapes: read them again. */
    if (st == DLB_OK) {
        was = net;
        net.li = NULL;
        st = prune_read_net(h, m, &net, &after);
    }
    if (st == DLB_OK && prune_structured(s))
        prune_removal_figures(h, &was, &net, sel, n);
    if (st == DLB_OK && quality)
        st = prune_accuracy(h, m, "accuracy_pruned", &acc);
    if (st == DLB_OK && !quality && s->ft.steps > 0) {
        h->log(h, DLB_LOG_INFO, "measure_only: %llu fine-tuning steps and "
               "the accuracy evaluations skipped",
               (unsigned long long)s->ft.steps);
        /* the model is not the fine-tuned one: its accuracy says nothing */
        if (DLB_HOST_HAS(h, quality_work_skipped))
            h->quality_work_skipped(h);
    }
    if (st == DLB_OK && quality && s->ft.steps > 0 &&
        (st = finetune ? finetune(h, m, &s->ft, &loss, &secs)
                       : DLB_ERR_UNSUPPORTED) == DLB_OK) {
        h->metric(h, "finetune_s", "s", secs);
        h->metric(h, "finetune_loss_last", "", loss);
        st = prune_accuracy(h, m, "accuracy_finetuned", &acc);
    }
    if (st == DLB_OK)
        st = prune_after_figures(s, h, m, &net, sel, n, &after);
    if (st == DLB_OK)
        st = set_sparse(s, h, m, &net, sel, n);
    if (st == DLB_OK)
        h->log(h, DLB_LOG_INFO, "pruned %u layers: %.0f -> %.0f parameters, "
               "%.1f -> %.1f MFLOP per image, accuracy %.2f%%", n,
               before.params, after.params, before.flops * 1e-6,
               after.flops * 1e-6, acc);
    free(sel);
    free(net.li);
    free(was.li);
    prune_groups_free(&groups);
    return st;
}
