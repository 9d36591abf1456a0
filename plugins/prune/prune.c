/* prune: magnitude (unstructured) and filter (structured) pruning of the
 * trained model before evaluation and inference, with optional
 * fine-tuning and sparse execution of linear layers.
 *
 * The plugin decides what to prune from the weights it reads
 * (prune_rank.c); the core does the mechanics through h->model_api:
 * masks that stay through training, physical removal of filters and
 * units (a smaller network with smaller tensors, so dense kernels get
 * faster), CSR linear layers, fine-tuning. Every figure that users of
 * other tools find missing is recorded beside the nominal ones: zeros
 * counted on the model, parameters, size and FLOPs before and after,
 * accuracy before, after pruning and after fine-tuning, and which layers
 * ran sparse at what measured cost.
 *
 * Figures (prune.NAME in the results):
 *   sparsity_nominal        the setting
 *   sparsity_measured       zeros / weights of the pruned layers, counted
 *                           on the model (magnitude); units removed / units
 *                           (filters), read from the model's shapes
 *   zeros_set, zeros_counted, weights_targeted      (magnitude)
 *   units_targeted, units_removed, weights_removed_fraction   (filters)
 *   params_before, params_after, nonzero_params_after
 *   size_before_bytes, size_after_bytes   fp32 dense storage
 *   size_csr_bytes          the pruned tensors in CSR instead (magnitude)
 *   flops_before, flops_after            forward FLOPs per image
 *   accuracy_dense, accuracy_pruned, accuracy_finetuned   test set, %
 *   finetune_s, finetune_loss_last
 *   sparse_layers; per linear layer L with a sparse mode: sparse.L (1 when
 *   it ran CSR at the batch size it ran most), and for auto
 *   sparse_dense_us.L, sparse_csr_us.L, sparse_speedup.L (the timings
 *   that decided). */
#include <stdio.h>
#include <stdlib.h>

#include "prune.h"

static const char *const prune_methods[] = {
    "magnitude", "magnitude_global", "filters_l1", "filters_l2", NULL };
static const char *const prune_layer_sets[] = { "all", "conv", "linear",
                                               NULL };
static const char *const prune_sparse_modes[] = { "off", "on", "auto", NULL };

enum { P_METHOD, P_SPARSITY, P_LAYERS, P_STEPS, P_BATCH, P_LR, P_SPARSE,
       P_COUNT };

/* The bound 1 itself is excluded: pruning everything is no model. */
#define PRUNE_UPTO_1 (DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX | \
                      DLB_PARAM_MAX_EXCLUSIVE)

static const struct dlb_param_def prune_params[P_COUNT] = {
    [P_METHOD] = {
        .name = "method", .type = DLB_PARAM_ENUM, .def = "magnitude",
        .choices = prune_methods,
        .help = "magnitude: the smallest |w| of each layer; magnitude_global: "
                "the smallest |w| over all selected layers; filters_l1, "
                "filters_l2: whole conv filters and linear units of smallest "
                "L1/L2 norm, removed from the network",
    },
    [P_SPARSITY] = {
        .name = "sparsity", .type = DLB_PARAM_FLOAT, .def = "0.5",
        .flags = PRUNE_UPTO_1, .min = 0, .max = 1, .unit = "fraction",
        .help = "fraction of the weights zeroed (magnitude methods) or of the "
                "filters and units removed per layer (filter methods), in "
                "[0, 1)",
    },
    [P_LAYERS] = {
        .name = "layers", .type = DLB_PARAM_ENUM, .def = "all",
        .choices = prune_layer_sets,
        .help = "which layers are pruned: all conv and linear layers, or "
                "one kind (filter methods skip the layer giving the class "
                "scores)",
    },
    [P_STEPS] = {
        .name = "finetune_steps", .type = DLB_PARAM_INT, .def = "0",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 0, .max = 1e9,
        .unit = "steps",
        .help = "SGD steps on the training set after pruning, masks kept "
                "(937 = one epoch of Fashion-MNIST at batch 64)",
    },
    [P_BATCH] = {
        .name = "finetune_batch", .type = DLB_PARAM_INT, .def = "64",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1,
        .max = 65536, .unit = "images",
        .help = "batch of the fine-tuning steps (the reference weights are "
                "trained at 64; an inference suite's batch is another thing)",
    },
    [P_LR] = {
        .name = "finetune_lr", .type = DLB_PARAM_FLOAT, .def = "0",
        .flags = DLB_PARAM_HAS_MIN, .min = 0,
        .help = "learning rate of the fine-tuning steps; 0 = the suite's lr "
                "(momentum is the suite's)",
    },
    [P_SPARSE] = {
        .name = "sparse", .type = DLB_PARAM_ENUM, .def = "off",
        .choices = prune_sparse_modes,
        .help = "masked linear layers in inference: off (dense kernel), on "
                "(CSR kernel), auto (whichever measured faster at the run's "
                "batch size)",
    },
};

static dlb_status prune_probe(const struct dlb_host *h,
                              const struct dlb_params *p, char *reason,
                              size_t reason_len)
{
    if (!p || p->count < P_COUNT)
        return DLB_ERR_INTERNAL;
    if (!h->model_api->extra(h, "prune.sparse_info") ||
        !h->model_api->extra(h, "prune.finetune")) {
        snprintf(reason, reason_len, "this dlbench core has no pruning "
                 "services (the extras prune.sparse_info and "
                 "prune.finetune)");
        return DLB_ERR_UNSUPPORTED;
    }
    return DLB_OK;
}

static dlb_status prune_init(const struct dlb_host *h,
                             const struct dlb_params *p, void **state)
{
    (void)h;
    if (!p || p->count < P_COUNT)
        return DLB_ERR_INTERNAL;
    struct prune_state *s = calloc(1, sizeof *s);
    if (!s)
        return DLB_ERR_NOMEM;
    s->method = (enum prune_method)p->values[P_METHOD].i;
    s->sparsity = p->values[P_SPARSITY].f;
    s->layers = (enum prune_layers)p->values[P_LAYERS].i;
    s->ft.steps = (uint64_t)p->values[P_STEPS].i;
    s->ft.batch = (uint32_t)p->values[P_BATCH].i;
    s->ft.lr = (float)p->values[P_LR].f;
    s->sparse = (enum dlb_prune_sparse_mode)p->values[P_SPARSE].i;
    *state = s;
    return DLB_OK;
}

static void prune_fini(void *state)
{
    struct prune_state *s = state;
    if (s)
        free(s->sparse_layers);
    free(s);
}

/* Which layers ran sparse: known only after the measured steps, since
 * sparse = auto decides per batch size on first use. */
static dlb_status prune_metrics(void *state, const struct dlb_host *h)
{
    const struct prune_state *s = state;
    unsigned running = 0;
    char name[128];
    dlb_extra_prune_sparse_info sparse_info = (dlb_extra_prune_sparse_info)
        h->model_api->extra(h, "prune.sparse_info");
    for (unsigned k = 0; sparse_info && s->model && k < s->n_sparse; k++) {
        struct dlb_layer_info li;
        struct dlb_prune_sparse_info si;
        if (h->model_api->node_info(h, s->model, s->sparse_layers[k], &li) ||
            sparse_info(h, s->model, s->sparse_layers[k], &si))
            continue;
        running += si.sparse != 0;
        snprintf(name, sizeof name, "sparse.%s", li.name);
        h->metric(h, name, "", si.sparse);
        if (si.dense_s > 0 && si.sparse_s > 0) {
            snprintf(name, sizeof name, "sparse_dense_us.%s", li.name);
            h->metric(h, name, "us", si.dense_s * 1e6);
            snprintf(name, sizeof name, "sparse_csr_us.%s", li.name);
            h->metric(h, name, "us", si.sparse_s * 1e6);
            snprintf(name, sizeof name, "sparse_speedup.%s", li.name);
            h->metric(h, name, "x", si.dense_s / si.sparse_s);
        }
    }
    return h->metric(h, "sparse_layers", "layers", running);
}

static const struct dlb_transform_hooks prune_transform = {
    .apply = prune_apply,
};

static const struct dlb_plugin prune_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "prune",
    .version = "1.0",
    .summary = "magnitude and filter pruning: masks, physically smaller "
               "networks, sparse linear layers, fine-tuning",
    .params = prune_params,
    .n_params = P_COUNT,
    .probe = prune_probe,
    .init = prune_init,
    .fini = prune_fini,
    .transform = &prune_transform,
    .metrics = prune_metrics,
};

DLB_PLUGIN_DEFINE(prune_plugin)
