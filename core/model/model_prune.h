/* Pruning inside the model (model_prune*.c): unstructured masks kept
 * through training, physical removal of conv filters and linear units,
 * linear layers run as sparse (CSR) products, and fine-tuning. The public
 * side is <dlbench/model_api.h> (core/child/host_rewrite.c). */
#ifndef DLB_CORE_MODEL_PRUNE_H
#define DLB_CORE_MODEL_PRUNE_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/model_api.h>

#include "data/dataset.h"
#include "util/error.h"
#include "model/model.h"

/* The output units of one layer that stay (a DLB_REWRITE_KEEP). */
struct dlb_prune_keep {
    unsigned layer;        /* index of a conv or linear layer */
    const uint32_t *keep;  /* ascending, distinct, below the unit count */
    uint32_t n_keep;       /* at least 1 */
};

/* What a sparse-capable layer ran as, one entry per batch size seen (a
 * run uses two or three: the measured batch, the evaluation batch and its
 * remainder); when full, the least used entry is replaced. */
#define DLB_PRUNE_CHOICES 8

struct dlb_prune_choice {
    uint32_t n;
    int sparse;
    double dense_s, sparse_s;   /* auto: the timed calls; else 0 */
    uint64_t calls;
};

/* What a conv or linear layer carries once it is pruned (ml->pr). */
struct dlb_model_pruned {
    /* Unstructured: 1 keeps the weight, 0 zeroes it; NULL: no mask. */
    uint8_t *mask;
    size_t count;
    /* Sparse execution of a linear layer. */
    enum dlb_prune_sparse_mode mode;
    struct dlb_buffer *row_ptr, *col, *val;   /* the CSR form, or NULL */
    size_t nnz;
    int csr_stale;                            /* weights changed since */
    struct dlb_prune_choice choice[DLB_PRUNE_CHOICES];
    unsigned n_choice;
};

/* ---- masks (model_prune_mask.c) ------------------------------------- */

/* Zero weight k of layer `layer` (conv or linear) where mask[k] is 0, now
 * and after every update (dlb_model_prune_after_update); `count` must be
 * the weight count. NULL drops the mask. */
dlb_status dlb_model_prune_set_mask(struct dlb_model *m, unsigned layer,
                                    const uint8_t *mask, size_t count,
                                    struct dlb_error *err);
/* After an SGD update (dlb_model_sgd_step): masked weights back to zero. */
dlb_status dlb_model_prune_after_update(struct dlb_model *m,
                                        struct dlb_error *err);
/* Zero weights of layer `layer` and its weight count, counted on the
 * values the device holds. */
dlb_status dlb_model_prune_count_zeros(struct dlb_model *m, unsigned layer,
                                       size_t *zeros, size_t *count,
                                       struct dlb_error *err);
/* The per-layer state of layer i, created on first use. */
dlb_status dlb_model_prune_layer(struct dlb_model *m, unsigned i,
                                 struct dlb_model_pruned **out,
                                 struct dlb_error *err);
/* Weights were written (dlb_model_weights_changed): CSR forms are stale. */
void dlb_model_prune_weights_changed(struct dlb_model *m);
/* Release every layer's state (dlb_model_destroy). */
void dlb_model_prune_free(struct dlb_model *m);

/* ---- removal (model_prune_units.c, model_prune_rebuild.c) ----------- */

/* The channel map of a removal: for each layer, which of its input and
 * output channels (or flat features) of the original survive. */
struct dlb_prune_plan {
    size_t n_layers;
    uint32_t **keep_out;   /* per layer; NULL: all kept */
    uint32_t *n_out;       /* kept counts (all: the original count) */
    uint32_t **keep_in;    /* conv and linear inputs; NULL: all kept */
    uint32_t *n_in;
    struct dlb_model_spec *spec; /* the smaller network */
};

/* Check the selection against m's network and work out the plan; errors
 * name the layer and say why. */
dlb_status dlb_prune_plan_make(const struct dlb_model *m,
                               const struct dlb_prune_keep *sel, unsigned n,
                               struct dlb_prune_plan *out,
                               struct dlb_error *err);
void dlb_prune_plan_free(struct dlb_prune_plan *p);

/* Remove the units `sel` does not keep (model_api.h, DLB_REWRITE_KEEP). */
dlb_status dlb_model_prune_remove(struct dlb_model *m,
                                  const struct dlb_prune_keep *sel, unsigned n,
                                  struct dlb_error *err);

/* ---- sparse execution (model_prune_sparse.c) ------------------------ */

dlb_status dlb_model_prune_set_sparse(struct dlb_model *m, unsigned layer,
                                      enum dlb_prune_sparse_mode mode,
                                      struct dlb_error *err);
dlb_status dlb_model_prune_sparse_info(const struct dlb_model *m,
                                       unsigned layer,
                                       struct dlb_prune_sparse_info *out,
                                       struct dlb_error *err);
/* The inference forward of pruned linear layer i over m->n images: the
 * CSR kernel or the dense one, as its mode says. */
dlb_status dlb_model_prune_linear_fwd(struct dlb_model *m, size_t i,
                                      struct dlb_buffer *x,
                                      struct dlb_buffer *y,
                                      struct dlb_error *err);

/* ---- fine-tuning (model_prune_tune.c) -------------------------------- */

/* `steps` steps of the core's trainer (no hook points) on `train` with
 * batches of `spec`, momentum zeroed first, lr `lr` (0: the model's) for
 * these steps only. */
dlb_status dlb_model_finetune(struct dlb_model *m,
                              const struct dlb_dataset *train,
                              const struct dlb_batch_spec *spec,
                              uint64_t steps, float lr, double *last_loss,
                              double *seconds, struct dlb_error *err);
/* The extra prune.finetune's fine-tuning: dlb_model_finetune on
 * shuffled batches of ft->batch whose order comes from a stream of `seed`
 * apart from the reference training's, so that it does not replay that
 * epoch's order. */
dlb_status dlb_model_finetune_seeded(struct dlb_model *m,
                                     const struct dlb_dataset *train,
                                     const struct dlb_prune_finetune *ft,
                                     uint64_t seed, double *last_loss,
                                     double *seconds, struct dlb_error *err);

#endif
