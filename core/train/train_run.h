/* Training a model for a fixed number of steps from the start of the
 * seeded data order: what makes accuracy figures comparable between
 * configurations (same budget, same seed, same data) and what produces the
 * cached reference weights. */
#ifndef DLB_CORE_MODEL_TRAIN_RUN_H
#define DLB_CORE_MODEL_TRAIN_RUN_H

#include <stdint.h>

#include "train/trainer.h"

/* Re-initialise `tpl->model` from spec->seed, open a fresh batch stream
 * over `train` (the plugin's source when `plugin` has hooks), and run
 * `steps` steps with tpl's hook points. *last_loss (may be NULL) is the
 * loss of the last step; *seconds (may be NULL) the wall time of the
 * steps, the device synchronised at the end. */
dlb_status dlb_train_run(const struct dlb_trainer *tpl,
                         const struct dlb_dataset *train,
                         const struct dlb_batch_spec *spec,
                         const struct dlb_batch_plugin *plugin, uint64_t steps,
                         double *last_loss, double *seconds,
                         struct dlb_error *err);

#endif
