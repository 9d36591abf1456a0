/* The training step and its hook points. */
#include "train/trainer.h"

#include "data/batch_prefetch.h"
#include "train/model_graph.h"
#include "train/model_scaler.h"

static int device_scaler(const struct dlb_trainer *t)
{
    return t->precision && !t->host_scaler &&
           dlb_model_device_scaler(t->model);
}

dlb_status dlb_trainer_graphs_check(const struct dlb_trainer *t,
                                    struct dlb_error *err)
{
    if (!t->graphs)
        return DLB_OK;
    if (t->executor && t->executor->train_step)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "cuda.graphs = on: a step "
                          "executor (dp) runs the step itself");
    return dlb_model_graph_check(t->model, t->precision != NULL,
                                 device_scaler(t), err);
}

void dlb_trainer_close_graph(struct dlb_trainer *t)
{
    dlb_model_graph_close(t->graph);
    t->graph = NULL;
}

/* The baseline step replayed from a graph: the same hook calls around
 * it, the loss read back only when asked. */
static dlb_status graph_step(struct dlb_trainer *t, const struct dlb_batch *b,
                             const struct dlb_dev_batch *dev, int want_loss,
                             struct dlb_error *err)
{
    float scale = 1.0f;
    dlb_status s = dlb_trainer_settle(t, err);
    if (s == DLB_OK && !t->graph &&
        (s = dlb_trainer_graphs_check(t, err)) == DLB_OK)
        s = dlb_model_graph_open(t->model, device_scaler(t), &t->graph, err);
    if (s != DLB_OK)
        return s;
    if (t->precision && t->precision->loss_scale)
        scale = t->precision->loss_scale(t->precision_state);
    s = dev ? dlb_model_graph_step_dev(t->graph, dev->images, dev->labels,
                                       dev->n, scale, err)
            : dlb_model_graph_step(t->graph, b->images, b->labels, b->n, scale,
                                   err);
    t->scaler_pending = s == DLB_OK && device_scaler(t);
    if (s == DLB_OK && want_loss)
        s = dlb_model_graph_loss(t->graph, &t->last_loss, err);
    return s;
}

static dlb_status baseline_step(struct dlb_trainer *t,
                                const struct dlb_batch *b,
                                const struct dlb_dev_batch *dev, int want_loss,
                                struct dlb_error *err)
{
    float scale = 1.0f;
    int nonfinite = 0, apply = 1;
    double loss = 0.0;
    dlb_status s = dlb_trainer_settle(t, err); /* this step's scale needs it */
    if (s != DLB_OK)
        return s;
    /* A gradient scaler multiplies the loss before backward; the update is
     * applied only when the unscaled gradients are finite (torch.amp). The
     * per-kind compute types were given to the model by
     * dlb_trainer_set_precision. */
    if (t->precision && t->precision->loss_scale)
        scale = t->precision->loss_scale(t->precision_state);
    s = dev ? dlb_model_forward_backward_dev(t->model, dev->images,
                                             dev->labels, dev->n, scale,
                                             want_loss ? &loss : NULL, err)
            : dlb_model_forward_backward(t->model, b->images, b->labels, b->n,
                                         scale, want_loss ? &loss : NULL, err);
    if (s != DLB_OK)
        return s;
    if (want_loss)
        t->last_loss = loss;
    /* On a GPU the device decides and the hook hears of it next step. */
    if (t->precision && !t->host_scaler && dlb_model_device_scaler(t->model)) {
        s = dlb_model_scaled_update(t->model, scale, err);
        t->scaler_pending = s == DLB_OK;
        return s;
    }
    if (t->precision) {
        s = dlb_model_unscale_grads(t->model, scale, &nonfinite, err);
        if (s != DLB_OK)
            return s;
        if (t->precision->after_backward)
            apply = t->precision->after_backward(t->precision_state,
                                                 nonfinite);
    }
    if (!apply) {
        t->skipped++;
        return DLB_OK;
    }
    return dlb_model_sgd_step(t->model, err);
}

dlb_status dlb_trainer_settle(struct dlb_trainer *t, struct dlb_error *err)
{
    int nonfinite = 0, apply = 1;
    if (!t->scaler_pending)
        return DLB_OK;
    t->scaler_pending = 0;
    dlb_status s = dlb_model_scaled_result(t->model, &nonfinite, err);
    if (s != DLB_OK)
        return s;
    if (t->precision && t->precision->after_backward)
        apply = t->precision->after_backward(t->precision_state, nonfinite);
    if (!apply && !nonfinite)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "the precision hook skipped "
                          "a step whose gradients were finite, which the "
                          "device applied already (its gradient scaler skips "
                          "only steps with inf/NaN gradients)");
    if (!apply) {
        t->skipped++;
        return DLB_OK;
    }
    /* Nothing has touched the gradients since: the host path's update. */
    return nonfinite ? dlb_model_sgd_step(t->model, err) : DLB_OK;
}

dlb_status dlb_trainer_step(struct dlb_trainer *t, int want_loss,
                            struct dlb_error *err)
{
    struct dlb_batch b;
    struct dlb_dev_batch dev;
    int on_device = 0;
    int executor = t->executor && t->executor->train_step;
    /* Pinned batches arrive on the device, uploaded during the step
     * before (batch_prefetch.h). */
    dlb_status s = dlb_batches_take(t->batches, dlb_model_backend(t->model),
                                    !executor, &b, &dev, &on_device, err);
    if (s != DLB_OK)
        return s;
    t->steps++;
    if (t->executor && t->executor->train_step) {
        s = t->executor->train_step(t->executor_state, t->executor_host,
                                    t->model, &b);
        return s == DLB_OK ? s : dlb_errorf(err, s,
                                            "step executor: train_step "
                                            "failed (%s)", dlb_status_name(s));
    }
    if (t->graphs)
        return graph_step(t, &b, on_device ? &dev : NULL, want_loss, err);
    return baseline_step(t, &b, on_device ? &dev : NULL, want_loss, err);
}

dlb_status dlb_trainer_set_precision(struct dlb_trainer *t,
                                     struct dlb_error *err)
{
    const struct dlb_precision_hooks *h = t->precision;
    enum dlb_dtype types[DLB_LAYER_KIND_COUNT];
    int master = 1;
    /* A step executor (plugin dp) runs forward, backward and the update
     * itself, in the types set below (its replicas copy them), but no
     * gradient scaler: a scaled loss would be applied unchecked and the
     * precision plugin's skip figures would be wrong. */
    if (h && h->loss_scale && t->executor && t->executor->train_step &&
        h->loss_scale(t->precision_state) != 1.0f)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "a step executor (plugin "
                          "dp) runs the training step itself and does not "
                          "apply the precision plugin's loss scaling (plugin "
                          "amp, loss scale %g): data parallelism runs mixed "
                          "precision without a scaler only (amp.loss_scale = "
                          "none, as bf16 needs)",
                          (double)h->loss_scale(t->precision_state));
    if (!h || !h->compute_type)
        return DLB_OK;
    for (int k = 0; k < DLB_LAYER_KIND_COUNT; k++)
        types[k] = h->compute_type(t->precision_state, (enum dlb_layer_kind)k);
    types[DLB_LAYER_LOGSOFTMAX] = dlb_model_dtype(t->model);
    if (h->master_weights)
        master = h->master_weights(t->precision_state) != 0;
    return dlb_model_set_precision(t->model, types, master, err);
}

void dlb_trainer_reset_precision(struct dlb_trainer *t)
{
    if (t->precision && t->precision->reset)
        t->precision->reset(t->precision_state);
}
