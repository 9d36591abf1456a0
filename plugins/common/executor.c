/* The state of an engine-driven step executor (executor.h). */
#include "executor.h"

#include <stdlib.h>

dlb_status dlb_exec_init(const struct dlb_exec_ops *ops,
                         const struct dlb_host *h, const struct dlb_params *p,
                         void **state)
{
    if (!p || p->count < ops->n_params)
        return DLB_ERR_INTERNAL;
    struct dlb_exec *x = calloc(1, sizeof *x);
    if (!x || !(x->settings = calloc(1, ops->settings_size))) {
        free(x);
        return DLB_ERR_NOMEM;
    }
    ops->read(p, x->settings);
    dlb_status s = ops->start(h, x->settings, &x->engine);
    if (s != DLB_OK) {
        free(x->settings);
        free(x);
        return s;
    }
    *state = x;
    return DLB_OK;
}

void dlb_exec_fini(void *state)
{
    struct dlb_exec *x = state;
    if (!x)
        return;
    x->engine.fini(x->engine.state);
    free(x->settings);
    free(x);
}

dlb_status dlb_exec_train_step(void *state, const struct dlb_host *h,
                               struct dlb_model *model,
                               const struct dlb_batch *batch)
{
    struct dlb_exec *x = state;
    (void)h;
    x->model = model;
    x->global_batch = batch->n;
    return x->engine.step(x->engine.state, model, batch);
}
