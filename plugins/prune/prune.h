/* The prune plugin's state, shared by its descriptor (prune.c) and its
 * transform (prune_apply.c). */
#ifndef DLB_PRUNE_H
#define DLB_PRUNE_H

#include <dlbench/plugin.h>
#include <dlbench/model_api.h>

#include "prune_rank.h"

enum prune_method { PRUNE_MAGNITUDE, PRUNE_MAGNITUDE_GLOBAL, PRUNE_FILTERS_L1,
                    PRUNE_FILTERS_L2 };
enum prune_layers { PRUNE_LAYERS_ALL, PRUNE_LAYERS_CONV, PRUNE_LAYERS_LINEAR };

struct prune_state {
    enum prune_method method;
    double sparsity;
    enum prune_layers layers;
    struct dlb_prune_finetune ft;
    enum dlb_prune_sparse_mode sparse;
    /* Set by apply: the model (valid until the workload's teardown, after
     * the metrics hook) and the linear layers given a sparse mode. */
    struct dlb_model *model;
    unsigned *sparse_layers;
    unsigned n_sparse;
};

static inline int prune_structured(const struct prune_state *s)
{
    return s->method == PRUNE_FILTERS_L1 || s->method == PRUNE_FILTERS_L2;
}

/* The transform: prune, fine-tune, set sparse layers, record figures. */
dlb_status prune_apply(void *state, const struct dlb_host *h,
                       struct dlb_model *model);

/* ---- figures (prune_figures.c) ---------------------------------------- */

/* The network as the plugin sees it, and its totals per image. */
struct prune_net {
    struct dlb_layer_info *li;
    unsigned n;
};

struct prune_totals {
    double params, flops;
};

/* Read every layer's description (net->li is replaced). */
dlb_status prune_read_net(const struct dlb_host *h, struct dlb_model *m,
                          struct prune_net *net, struct prune_totals *t);
/* Test-set accuracy now, recorded as figure `name`. */
dlb_status prune_accuracy(const struct dlb_host *h, struct dlb_model *m,
                          const char *name, double *acc);
/* Structured: units and weights of the selected layers, `was` vs `now`. */
void prune_removal_figures(const struct dlb_host *h,
                           const struct prune_net *was,
                           const struct prune_net *now, const unsigned *sel,
                           unsigned n);
/* Zeros counted, parameters, size and FLOPs after pruning. */
dlb_status prune_after_figures(const struct prune_state *s,
                               const struct dlb_host *h, struct dlb_model *m,
                               const struct prune_net *net,
                               const unsigned *sel,
                               unsigned n, const struct prune_totals *after);

#endif
