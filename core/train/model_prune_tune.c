/* Fine-tuning after pruning: the core's trainer on the training set,
 * without hook points, for a fixed number of steps. Unlike dlb_train_run
 * it does not re-initialise the model. The momentum buffers start from
 * zero, as a new optimizer does when users fine-tune after pruning (and a
 * rebuilt model has no history anyway); masks stay on through
 * dlb_model_sgd_step. */
#include "model/model_prune.h"

#include <time.h>

#include "backend/backend.h"
#include "model/model_impl.h"
#include "train/trainer.h"
#include "util/rng.h"

/* Fine-tuning's batches: a stream of the configuration's seed apart from
 * the reference training's. */
#define PRUNE_TUNE_STREAM 0x54554e45000000ull

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static dlb_status zero_momentum(struct dlb_model *m, struct dlb_error *err)
{
    for (size_t i = 0; i < m->n_params; i++) {
        struct dlb_model_param *p = &m->params[i];
        if (!p->mom)
            continue;
        dlb_status s = dlb_backend_run(m->be, &(struct dlb_op){
                           .kind = DLB_OP_FILL, .count = p->t.count,
                           .y = p->mom, .value = 0.0});
        if (s != DLB_OK)
            return dlb_model_be_fail(m, s, p->name, "fill", err);
    }
    return DLB_OK;
}

dlb_status dlb_model_finetune(struct dlb_model *m,
                              const struct dlb_dataset *train,
                              const struct dlb_batch_spec *spec,
                              uint64_t steps, float lr, double *last_loss,
                              double *seconds, struct dlb_error *err)
{
    static const struct dlb_batch_plugin baseline = {NULL, NULL, NULL, NULL};
    struct dlb_trainer t = {.model = m};
    float saved_lr = m->lr;
    dlb_status s = DLB_OK;
    if (last_loss)
        *last_loss = 0.0;
    if (seconds)
        *seconds = 0.0;
    if (steps == 0)
        return DLB_OK;
    if ((s = zero_momentum(m, err)) ||
        (s = dlb_batches_open(train, spec, &baseline, &t.batches, err)))
        return s;
    if (lr > 0)
        m->lr = lr;
    double t0 = mono_now();
    for (uint64_t i = 0; i < steps && s == DLB_OK; i++)
        s = dlb_trainer_step(&t, i + 1 == steps, err);
    if (s == DLB_OK && (s = DLB_BE_CALL0(m->be, synchronize)) != DLB_OK)
        s = dlb_errorf(err, s, "synchronize: %s", dlb_backend_last_error(m->be));
    if (seconds)
        *seconds = mono_now() - t0;
    if (last_loss)
        *last_loss = t.last_loss;
    m->lr = saved_lr;
    dlb_batches_close(t.batches);
    return s;
}

dlb_status dlb_model_finetune_seeded(struct dlb_model *m,
                                     const struct dlb_dataset *train,
                                     const struct dlb_prune_finetune *ft,
                                     uint64_t seed, double *last_loss,
                                     double *seconds, struct dlb_error *err)
{
    struct dlb_rng r;
    dlb_rng_seed_stream(&r, seed, PRUNE_TUNE_STREAM);
    struct dlb_batch_spec spec = {ft->batch, 1, 0, 1, dlb_rng_u64(&r)};
    return dlb_model_finetune(m, train, &spec, ft->steps, ft->lr, last_loss,
                              seconds, err);
}
