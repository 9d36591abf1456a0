/* One training step of the reference CNN with the hook points of
 * doc/plugin-guide.md's table: the batch from dlb_batches (baseline or
 * plugin loader), the precision policy's loss scale and overflow check,
 * and a step executor that may take the whole step over (data
 * parallelism). */
#ifndef DLB_CORE_MODEL_TRAINER_H
#define DLB_CORE_MODEL_TRAINER_H

#include <dlbench/plugin.h>

#include "util/error.h"
#include "data/batches.h"
#include "model/model.h"

struct dlb_trainer {
    struct dlb_model *model;
    struct dlb_batches *batches;
    /* Optional hook points (NULL: the baseline). */
    const struct dlb_precision_hooks *precision;
    void *precision_state;
    unsigned precision_abi_minor;  /* the plugin's: which hooks exist */
    const struct dlb_executor_hooks *executor;
    void *executor_state;
    const struct dlb_host *executor_host;
    /* Figures. */
    double last_loss;          /* of the last step that read it */
    uint64_t steps, skipped;   /* skipped: updates the precision hook vetoed */
    /* The gradient scaler on the device (model_scaler.h): the last step's
     * overflow flag is still to be read (dlb_trainer_settle); host_scaler
     * keeps the check on the host where the device could do it. */
    int scaler_pending;
    int host_scaler;
    /* cuda.graphs (model_graph.h): the baseline step is replayed from a
     * graph, made on the first step and closed by dlb_trainer_close_graph
     * (a copy of the trainer must start with graph NULL). */
    int graphs;
    struct dlb_model_graph *graph;
};

/* DLB_OK when t->graphs can be honoured, else DLB_ERR_UNSUPPORTED with
 * the reason (a step executor, a host-side overflow check, a backend
 * without graphs). */
dlb_status dlb_trainer_graphs_check(const struct dlb_trainer *t,
                                    struct dlb_error *err);
void dlb_trainer_close_graph(struct dlb_trainer *t);

/* Train on the next batch. With `want_loss` the step reads the loss back
 * into t->last_loss (a device wait); otherwise nothing waits for the
 * device. */
dlb_status dlb_trainer_step(struct dlb_trainer *t, int want_loss,
                            struct dlb_error *err);

/* Read the last step's overflow flag where the device kept it, and give
 * it to the precision hook, as the host path does inside the step: a
 * step the device skipped but the hook wants applied (loss_scale = none)
 * is applied now, from the same gradients. The next step does this
 * first; call it after the last step and before reading the model or the
 * hook's figures. A hook that vetoes a step with finite gradients cannot
 * be honoured there (the device applied it): DLB_ERR_INTERNAL. */
dlb_status dlb_trainer_settle(struct dlb_trainer *t, struct dlb_error *err);

/* Give the model the precision hook's policy (compute type per layer
 * kind, master weights); the loss layer stays in the model's type, since
 * the loss and its scaled gradient are fp32. Nothing without a hook. */
dlb_status dlb_trainer_set_precision(struct dlb_trainer *t,
                                     struct dlb_error *err);

/* Put the precision hook's state (the loss scaler) back to its start, for
 * a training run from the seed. */
void dlb_trainer_reset_precision(struct dlb_trainer *t);

#endif
