/* Checks a run makes before its run directory exists, so that a mistake in
 * an input every configuration shares is one error message and exit status
 * 2, not the same failure in each configuration. Plain C parsing only: the
 * parent initialises no library. */
#ifndef DLB_CORE_RUN_CHECK_H
#define DLB_CORE_RUN_CHECK_H

#include <stddef.h>

#include "util/error.h"
#include "plan/plan.h"
#include "plan/session.h"

/* For the built-in cnn workload: every Fashion-MNIST split a configuration
 * would read from files (dataset = fashion-mnist, or auto where files are
 * present) is read and checked as a child would (IDX headers, lengths,
 * gzip streams, label range, image and label counts), and its image shape
 * is checked against the configuration's model. Models are found as
 * dlb_model_file_find does, beside `suite_paths`. Errors name the file. */
dlb_status dlb_run_check_data(const struct dlb_plan *p,
                              const char *const *suite_paths,
                              size_t n_suite_paths, struct dlb_error *err);

/* The suite's workload is built in or provided by one of its plugins. */
dlb_status dlb_run_check_workload(const struct dlb_session *ses,
                                  struct dlb_error *err);

/* Every network file the plan names exists, beside `suite_paths` or
 * installed, and parses. */
dlb_status dlb_run_check_models(const struct dlb_plan *p,
                                const char *const *suite_paths,
                                size_t n_suite_paths, struct dlb_error *err);

/* The selection's keys (baseline, workload_axes, objective and its
 * target) name configurations of this plan (select.h). */
dlb_status dlb_run_check_selection(const struct dlb_plan *p,
                                   struct dlb_error *err);

#endif
