/* dlbench public SDK: masks, physical removal of units, sparse linear
 * layers and fine-tuning, for the prune plugin (ABI 1.2, h->prune_ops).
 * See model_ops.h.
 *
 * The core does the mechanics; the plugin decides what to prune (it reads
 * the weights with model_ops->tensor_read and ranks them itself):
 *   set_mask      unstructured: weights zeroed where a mask is 0, and kept
 *                 zero through later training steps
 *   remove_units  structured: conv filters or linear units taken out of the
 *                 network, which is rebuilt with smaller tensors
 *   set_sparse    a linear layer runs as a sparse (CSR) matrix product in
 *                 inference: off, on, or auto (measured against dense)
 *   finetune      training steps on the training set after pruning
 * Calls fail with a logged reason (DLB_ERR_INPUT for a bad request,
 * DLB_ERR_UNSUPPORTED for what this backend cannot do). */
#ifndef DLBENCH_PRUNE_OPS_H
#define DLBENCH_PRUNE_OPS_H

#include <dlbench/model_ops.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a linear layer with zeros in its weights runs in inference. */
enum dlb_prune_sparse_mode {
    DLB_PRUNE_SPARSE_OFF,  /* the dense kernel, zeros and all */
    DLB_PRUNE_SPARSE_ON,   /* the backend's CSR kernel at every batch size */
    DLB_PRUNE_SPARSE_AUTO  /* per batch size, whichever of the two was
                              faster when the layer first ran at that size
                              (both are timed once, on the real input) */
};

/* The output units (conv filters, linear units) of one layer that stay. */
struct dlb_prune_keep {
    unsigned layer;        /* index of a conv or linear layer */
    const uint32_t *keep;  /* ascending, distinct, below the unit count */
    uint32_t n_keep;       /* at least 1 */
};

/* What set_sparse made of a layer, and what it ran as at the batch size
 * it ran most inferences at (the measured steps', not the evaluation's). */
struct dlb_prune_sparse_info {
    enum dlb_prune_sparse_mode mode;
    size_t nnz, count;     /* nonzero weights in the CSR form, all weights */
    uint32_t batch;        /* that batch size; 0: no inference yet */
    uint64_t calls;        /* inferences at that batch size */
    int sparse;            /* 1 when they ran the CSR kernel */
    double dense_s;        /* auto: one dense call at that batch, seconds */
    double sparse_s;       /* auto: one CSR call at that batch; both 0 when
                              not measured (mode on or off) */
};

struct dlb_prune_finetune {
    uint64_t steps;        /* SGD steps; 0 does nothing */
    uint32_t batch;        /* images per step */
    float lr;              /* 0: the configuration's lr */
};

struct dlb_prune_ops {
    uint32_t struct_size;

    /* Zero weight k of conv or linear layer `layer` where mask[k] is 0
     * (mask has the weight tensor's element count, [out][in][kh][kw] or
     * [out][in]), and again after every SGD update from then on, so that
     * fine-tuning keeps the zeros. A later call replaces the mask; NULL
     * drops it (the weights stay as they are). */
    dlb_status (*set_mask)(const struct dlb_host *h, struct dlb_model *m,
                           unsigned layer, const uint8_t *mask, size_t count);

    /* Keep only the listed output units of each of the `n` layers and
     * remove the others from the network: the layer's weights and bias,
     * the matching channels of batch-norm layers after it, and the
     * matching inputs of the next conv or linear layer (for a linear layer
     * after a flatten, the blocks of h x w features of each channel).
     * Layers between may only be batchnorm, relu, pooling, dropout or
     * flatten; a layer that feeds the class scores cannot lose units. The
     * model is rebuilt with the smaller shapes (layer_info reports them,
     * with their parameters and FLOPs); its outputs equal those of the
     * original with the removed units' inputs to the next layer zeroed.
     * Momentum starts again from zero; a precision policy is kept. Models
     * with masks or sparse layers are refused: remove units first. */
    dlb_status (*remove_units)(const struct dlb_host *h, struct dlb_model *m,
                               const struct dlb_prune_keep *sel, unsigned n);

    /* How linear layer `layer` runs in inference from now on. The CSR form
     * is built from the weights as they are at each inference after they
     * changed. DLB_ERR_UNSUPPORTED for mode on when the backend has no
     * sparse kernel; auto then always picks dense. */
    dlb_status (*set_sparse)(const struct dlb_host *h, struct dlb_model *m,
                             unsigned layer, enum dlb_prune_sparse_mode mode);
    dlb_status (*sparse_info)(const struct dlb_host *h,
                              const struct dlb_model *m, unsigned layer,
                              struct dlb_prune_sparse_info *out);

    /* Train `m` for ft->steps steps of plain SGD (the configuration's
     * momentum, momentum buffers zeroed first, fp32) on the training set
     * from the start of a shuffled epoch order of its own seed, masks kept.
     * *last_loss (may be NULL): the last step's loss; *seconds (may be
     * NULL): wall time of the steps. */
    dlb_status (*finetune)(const struct dlb_host *h, struct dlb_model *m,
                           const struct dlb_prune_finetune *ft,
                           double *last_loss, double *seconds);
};

#ifdef __cplusplus
}
#endif
#endif
