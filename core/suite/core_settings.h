/* The core's settings of one configuration, typed: a field per [suite]
 * key, generated from the same list as the key table (suite_keys.def), so
 * that a stage reads `cfg->core.batch` and a misspelt key is a compile
 * error rather than a NULL found at run time. The plan fills it once per
 * configuration (plan/plan.h, struct dlb_config's `core`). */
#ifndef DLB_CORE_SUITE_CORE_SETTINGS_H
#define DLB_CORE_SUITE_CORE_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <dlbench/param.h>

/* The enum keys' values, in the order of their choices (the *_names
 * arrays, NULL-terminated, are the key table's choices; suite_keys.c
 * checks that each has as many as its enum, the _COUNT below). */
enum dlb_mode { DLB_MODE_TRAIN, DLB_MODE_INFER };
enum dlb_data_source {
    DLB_DATA_AUTO, DLB_DATA_FASHION_MNIST, DLB_DATA_SYNTHETIC,
    DLB_DATA_FOLDER /* folder:PATH: the value's text holds the path */
};
enum dlb_backend_kind { DLB_BACKEND_REF, DLB_BACKEND_CPU, DLB_BACKEND_CUDA };
enum dlb_malloc_policy { DLB_MALLOC_STEADY, DLB_MALLOC_FRESH, DLB_MALLOC_GLIBC };
enum dlb_cudnn_algo { DLB_CUDNN_HEURISTIC, DLB_CUDNN_SEARCH };
enum dlb_profile { DLB_PROFILE_OFF, DLB_PROFILE_OPS };
enum dlb_scenario {
    DLB_SCENARIO_NONE, DLB_SCENARIO_SINGLESTREAM, DLB_SCENARIO_OFFLINE,
    DLB_SCENARIO_SERVER
};
enum dlb_objective {
    DLB_OBJ_THROUGHPUT,      /* samples/s, higher is better */
    DLB_OBJ_LATENCY,         /* median step time, lower is better */
    DLB_OBJ_TIME_TO_ACCURACY /* s to target_accuracy, lower is better */
};
#define DLB_MODE_COUNT (DLB_MODE_INFER + 1)
#define DLB_DATA_COUNT (DLB_DATA_FOLDER + 1)
#define DLB_BACKEND_KIND_COUNT (DLB_BACKEND_CUDA + 1)
#define DLB_MALLOC_COUNT (DLB_MALLOC_GLIBC + 1)
#define DLB_CUDNN_COUNT (DLB_CUDNN_SEARCH + 1)
#define DLB_PROFILE_COUNT (DLB_PROFILE_OPS + 1)
#define DLB_SCENARIO_COUNT (DLB_SCENARIO_SERVER + 1)
#define DLB_OBJ_COUNT (DLB_OBJ_TIME_TO_ACCURACY + 1)

extern const char *const dlb_mode_names[];
extern const char *const dlb_data_source_names[];
extern const char *const dlb_backend_kind_names[];
extern const char *const dlb_malloc_policy_names[];
extern const char *const dlb_cudnn_algo_names[];
extern const char *const dlb_profile_names[];
extern const char *const dlb_scenario_names[];
extern const char *const dlb_objective_names[];

/* A key's position in the key table (and in a configuration's values of
 * namespace 0): DLB_KEY_batch. */
enum dlb_core_key {
#define DLB_CORE_KEY(field, ...) DLB_KEY_##field,
#include "suite/suite_keys.def"
#undef DLB_CORE_KEY
    DLB_CORE_N_KEYS
};

/* Strings point into the configuration's values and live as long as it. */
struct dlb_core_settings {
#define DLB_CORE_KEY(field, name, type, ctype, ...) ctype field;
#include "suite/suite_keys.def"
#undef DLB_CORE_KEY
};

/* Fill `out` from the values of the core's keys, in table order (a
 * configuration's values[0]). */
void dlb_core_settings_fill(struct dlb_core_settings *out,
                            const struct dlb_value *values);

#endif
