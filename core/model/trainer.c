/* The training step and its hook points. */
#include "model/trainer.h"

static dlb_status baseline_step(struct dlb_trainer *t, const struct dlb_batch *b,
                                int want_loss, struct dlb_error *err)
{
    float scale = 1.0f;
    int nonfinite = 0, apply = 1;
    double loss = 0.0;
    dlb_status s;
    /* A gradient scaler multiplies the loss before backward; the update is
     * applied only when the unscaled gradients are finite (torch.amp). The
     * policy's per-kind compute types are for backends and models that
     * hold low-precision copies; fp32 weights ignore them. */
    if (t->precision && t->precision->loss_scale)
        scale = t->precision->loss_scale(t->precision_state);
    s = dlb_model_forward_backward(t->model, b->images, b->labels, b->n, scale,
                                   want_loss ? &loss : NULL, err);
    if (s != DLB_OK)
        return s;
    if (want_loss)
        t->last_loss = loss;
    if (t->precision) {
        s = dlb_model_unscale_grads(t->model, scale, &nonfinite, err);
        if (s != DLB_OK)
            return s;
        if (t->precision->after_backward)
            apply = t->precision->after_backward(t->precision_state, nonfinite);
    }
    if (!apply) {
        t->skipped++;
        return DLB_OK;
    }
    return dlb_model_sgd_step(t->model, err);
}

dlb_status dlb_trainer_step(struct dlb_trainer *t, int want_loss,
                            struct dlb_error *err)
{
    struct dlb_batch b;
    dlb_status s = dlb_batches_next(t->batches, &b, err);
    if (s != DLB_OK)
        return s;
    t->steps++;
    if (t->executor && t->executor->train_step) {
        s = t->executor->train_step(t->executor_state, t->executor_host,
                                    t->model, &b);
        return s == DLB_OK ? s : dlb_errorf(err, s, "step executor: train_step "
                                            "failed (%s)", dlb_status_name(s));
    }
    return baseline_step(t, &b, want_loss, err);
}
