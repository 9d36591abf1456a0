/* Resolving the suite's `model` key to a network file. */
#ifndef DLB_CORE_MODEL_FIND_H
#define DLB_CORE_MODEL_FIND_H

#include <stddef.h>

#include "util/error.h"

/* `model` is a path when it contains '/' or ends in ".ini" or ".onnx";
 * otherwise the name NAME is looked up as models/NAME.ini, then
 * models/NAME.onnx, beside each of the suite files
 * `suite_paths` (NULL entries are skipped), in ./suites, in each directory
 * of $DLBENCH_SUITE_PATH (colon-separated), then in `installed_dir` (the
 * installed suites). Returns a malloc'ed path, or NULL with err listing
 * where it looked. */
char *dlb_model_file_find(const char *model, const char *const *suite_paths,
                          size_t n_suite_paths, const char *installed_dir,
                          struct dlb_error *err);

/* DLB_OK when model file `model`, found as above, exists and parses; else
 * `reason` says where it looked or what is wrong in it. A plugin's check
 * (struct dlb_config_view) and its host (model_api's find) both ask. */
dlb_status dlb_model_file_check(const char *model,
                                const char *const *suite_paths,
                                size_t n_suite_paths, const char *installed_dir,
                                char *reason, size_t len);

#endif
