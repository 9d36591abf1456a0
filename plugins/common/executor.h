/* The state an engine-driven step executor (dp, mp) keeps between the
 * core's hooks: its settings, read from the parameters at init, and the
 * engine they chose with that engine's state. The plugin says how to read
 * its settings and start its engine; the rest of init, the training step
 * and fini are these. */
#ifndef DLB_EXECUTOR_H
#define DLB_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/plugin.h>

/* The chosen engine's state and the hooks that need nothing else. */
struct dlb_exec_engine {
    void *state;
    dlb_status (*step)(void *state, struct dlb_model *model,
                       const struct dlb_batch *batch);
    void (*fini)(void *state);
};

struct dlb_exec_ops {
    unsigned n_params;      /* fewer parameters: the core is not ours */
    size_t settings_size;
    void (*read)(const struct dlb_params *p, void *settings);
    /* Start the engine the settings choose: fill *e, state included. */
    dlb_status (*start)(const struct dlb_host *h, const void *settings,
                        struct dlb_exec_engine *e);
};

struct dlb_exec {
    void *settings;          /* settings_size bytes */
    struct dlb_exec_engine engine;
    struct dlb_model *model; /* the model the steps ran on */
    uint32_t global_batch;   /* the last step's batch */
};

/* The plugin's init: *state is a struct dlb_exec. */
dlb_status dlb_exec_init(const struct dlb_exec_ops *ops,
                         const struct dlb_host *h, const struct dlb_params *p,
                         void **state);
void dlb_exec_fini(void *state);
dlb_status dlb_exec_train_step(void *state, const struct dlb_host *h,
                               struct dlb_model *model,
                               const struct dlb_batch *batch);

#endif
