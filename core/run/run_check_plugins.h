/* Plugins' own checks of their settings against each configuration's model
 * and batch (struct dlb_plugin's check, ABI 1.3), made once in the parent
 * before the run directory exists. */
#ifndef DLB_CORE_RUN_CHECK_PLUGINS_H
#define DLB_CORE_RUN_CHECK_PLUGINS_H

#include <stddef.h>

#include "util/error.h"
#include "plan/plan.h"

/* For the built-in cnn workload: every configuration's enabled plugins
 * with a check hook are asked; the first refusal is DLB_ERR_INPUT as
 * "SUITE:LINE: plugin NAME: configuration 'ID': reason", LINE being the
 * line that sets the parameter at fault. Models are found as
 * dlb_model_file_find does, beside `suite_paths`. */
dlb_status dlb_run_check_plugins(const struct dlb_plan *p,
                                 const char *const *suite_paths,
                                 size_t n_suite_paths, struct dlb_error *err);

#endif
