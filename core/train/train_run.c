/* A fixed training budget from the start. */
#include "train/train_run.h"

#include <time.h>

#include "backend/backend.h"

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

dlb_status dlb_train_run(const struct dlb_trainer *tpl,
                         const struct dlb_dataset *train,
                         const struct dlb_batch_spec *spec,
                         const struct dlb_batch_plugin *plugin, uint64_t steps,
                         double *last_loss, double *seconds,
                         struct dlb_error *err)
{
    struct dlb_trainer t = *tpl;
    struct dlb_backend *be = dlb_model_backend(t.model);
    /* A graph of its own: the template's may be replaying still. */
    t.graph = NULL;
    dlb_status s = dlb_model_init(t.model, spec->seed, err);
    if (s != DLB_OK)
        return s;
    if ((s = dlb_batches_open(train, spec, plugin, &t.batches, err)) != DLB_OK)
        return s;
    t.steps = t.skipped = 0;
    /* A flag left by earlier steps belongs to weights just replaced. */
    t.scaler_pending = 0;
    dlb_trainer_reset_precision(&t);
    t.last_loss = 0.0;
    double t0 = mono_now();
    for (uint64_t i = 0; i < steps && s == DLB_OK; i++)
        s = dlb_trainer_step(&t, i + 1 == steps, err);
    if (s == DLB_OK)
        s = dlb_trainer_settle(&t, err);
    if (s == DLB_OK && (s = DLB_BE_CALL0(be, synchronize)) != DLB_OK)
        s = dlb_errorf(err, s, "synchronize: %s", dlb_backend_last_error(be));
    if (seconds)
        *seconds = mono_now() - t0;
    if (last_loss)
        *last_loss = t.last_loss;
    dlb_trainer_close_graph(&t);
    dlb_batches_close(t.batches);
    return s;
}
