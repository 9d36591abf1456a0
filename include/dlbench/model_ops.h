/* dlbench public SDK: model access for plugins (ABI 1.2).
 *
 * Transform plugins (quant, prune) and step executors (dp) work on the
 * core's network, `struct dlb_model`, which stays opaque: they reach it
 * through tables the host hands them, never through core symbols.
 *
 *   h->model_ops    inspect layers, read and write tensors (this header)
 *   h->quant_ops    int8 execution of conv and linear layers (quant_ops.h)
 *   h->prune_ops    masks, physical removal of units, sparse linear
 *                   layers, fine-tuning (prune_ops.h)
 *   h->replica_ops  replicas, per-replica forward/backward, gradients and
 *                   the optimizer step (replica_ops.h)
 *   h->train_ops    other models by name, logits, training against soft
 *                   targets (train_ops.h)
 *
 * Each table starts with its struct_size, so that entries added later can
 * be tested for. Every call returns a status; on failure the core logs the
 * reason under the plugin's name. Tensors cross the boundary as dense fp32
 * host arrays in the layouts of backend.h ([out][in][kh][kw] for conv
 * weights, [out][in] for linear weights), whatever the backend keeps. */
#ifndef DLBENCH_MODEL_OPS_H
#define DLBENCH_MODEL_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One layer as a plugin sees it. Shapes are per image; a flat tensor has
 * c = features and h = w = 1. */
struct dlb_layer_info {
    enum dlb_layer_kind kind;
    char name[64];                /* the section name in the model file */
    uint32_t in_c, in_h, in_w;
    uint32_t out_c, out_h, out_w;
    uint32_t size, stride, pad;   /* conv and pooling; 0 elsewhere */
    char weight[96], bias[96];    /* tensor names; "" when the layer has none */
    size_t weight_count, bias_count;
    uint64_t params;              /* learnable parameters */
    double flops_fwd;             /* per image */
};

struct dlb_model_ops {
    uint32_t struct_size;
    /* Layers of `m`, in order. */
    unsigned (*layer_count)(const struct dlb_host *h, const struct dlb_model *m);
    dlb_status (*layer_info)(const struct dlb_host *h, const struct dlb_model *m,
                             unsigned i, struct dlb_layer_info *out);
    /* Tensor `name` ("conv1.weight"): its element count, and its values
     * copied out or in as fp32. `count` must equal the tensor's size.
     * After tensor_write the core casts any low-precision copies again. */
    dlb_status (*tensor_count)(const struct dlb_host *h,
                               const struct dlb_model *m, const char *name,
                               size_t *count);
    dlb_status (*tensor_read)(const struct dlb_host *h, struct dlb_model *m,
                              const char *name, float *dst, size_t count);
    dlb_status (*tensor_write)(const struct dlb_host *h, struct dlb_model *m,
                               const char *name, const float *src,
                               size_t count);
    /* Inference over n images (NCHW fp32 on the host, normalised as the
     * data set is): log-probabilities into logprobs [n][classes] (may be
     * NULL). Uses whatever transform the model carries. */
    dlb_status (*infer)(const struct dlb_host *h, struct dlb_model *m,
                        const float *images, uint32_t n, float *logprobs);
    /* Test-set loss and top-1 accuracy in percent of `m` now (the
     * configuration's test set; under --quick its first images). */
    dlb_status (*evaluate)(const struct dlb_host *h, struct dlb_model *m,
                           double *loss, double *accuracy);
    /* The configuration's training (train = 1) or test set, opened on
     * first use; read it with the data services of struct dlb_host
     * (dataset_shape, epoch_order, batch_fill). */
    dlb_status (*dataset)(const struct dlb_host *h, int train,
                          const struct dlb_dataset **out);
};

#ifdef __cplusplus
}
#endif
#endif
