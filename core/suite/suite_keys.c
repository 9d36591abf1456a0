/* The keys of a suite's [suite] section (suite_keys.def): the table that
 * validates suite files, fills defaults, answers "did you mean" and prints
 * `dlbench plugin-help suite`, and the typed settings of a configuration
 * (core_settings.h), both from the one list. */
#include "suite/core_settings.h"
#include "suite/param.h"
#include "suite/suite.h"

#define MIN_ DLB_PARAM_HAS_MIN
#define MAX_ DLB_PARAM_HAS_MAX
#define XMIN_ (DLB_PARAM_HAS_MIN | DLB_PARAM_MIN_EXCLUSIVE)
#define XMAX_ (DLB_PARAM_HAS_MAX | DLB_PARAM_MAX_EXCLUSIVE)
#define FIXED_ DLB_PARAM_NO_SWEEP

const char *const dlb_mode_names[] = {"train", "infer", NULL};
const char *const dlb_data_source_names[] = {"auto", "fashion-mnist",
                                             "synthetic", "folder:PATH", NULL};
const char *const dlb_backend_kind_names[] = {"ref", "cpu", "cuda", NULL};
const char *const dlb_malloc_policy_names[] = {"steady", "fresh", "glibc",
                                               NULL};
const char *const dlb_cudnn_algo_names[] = {"heuristic", "search", NULL};
const char *const dlb_profile_names[] = {"off", "ops", NULL};
const char *const dlb_scenario_names[] = {"none", "singlestream", "offline",
                                          "server", NULL};
const char *const dlb_objective_names[] = {"throughput", "latency",
                                           "time_to_accuracy", NULL};

/* An enum's values are the indices of its choices. */
#define SAME_LENGTH(names, count)                                            \
    _Static_assert(sizeof names / sizeof names[0] == (count) + 1,             \
                   #names " and its enum differ in length")
SAME_LENGTH(dlb_mode_names, DLB_MODE_COUNT);
SAME_LENGTH(dlb_data_source_names, DLB_DATA_COUNT);
SAME_LENGTH(dlb_backend_kind_names, DLB_BACKEND_KIND_COUNT);
SAME_LENGTH(dlb_malloc_policy_names, DLB_MALLOC_COUNT);
SAME_LENGTH(dlb_cudnn_algo_names, DLB_CUDNN_COUNT);
SAME_LENGTH(dlb_profile_names, DLB_PROFILE_COUNT);
SAME_LENGTH(dlb_scenario_names, DLB_SCENARIO_COUNT);
SAME_LENGTH(dlb_objective_names, DLB_OBJ_COUNT);

const struct dlb_param_def dlb_suite_keys[] = {
#define DLB_CORE_KEY(field, name, type, ctype, def, flags, min, max, choices, \
                     unit, help)                                             \
    {name, DLB_PARAM_##type, def, flags, min, max, choices, unit, help},
#include "suite/suite_keys.def"
#undef DLB_CORE_KEY
};

const unsigned dlb_suite_n_keys = DLB_CORE_N_KEYS;
_Static_assert(sizeof dlb_suite_keys / sizeof dlb_suite_keys[0] ==
                   DLB_CORE_N_KEYS, "the key table and the key indices differ");

/* Each field's C type is its key type's, so that the fill below neither
 * truncates nor reinterprets a value. */
#define TYPE_OK_INT(x) _Generic((x), int64_t: 1, default: 0)
#define TYPE_OK_SIZE(x) _Generic((x), int64_t: 1, default: 0)
#define TYPE_OK_FLOAT(x) _Generic((x), double: 1, default: 0)
#define TYPE_OK_TIME(x) _Generic((x), double: 1, default: 0)
#define TYPE_OK_BOOL(x) _Generic((x), bool: 1, default: 0)
#define TYPE_OK_STRING(x) _Generic((x), const char *: 1, default: 0)
#define TYPE_OK_ENUM(x)                                                      \
    _Generic((x), int64_t: 0, double: 0, bool: 0, const char *: 0, default: 1)
#define DLB_CORE_KEY(field, name, type, ...)                                  \
    _Static_assert(TYPE_OK_##type(((struct dlb_core_settings *)0)->field),     \
                   "core key " name ": the field's C type is not " #type "'s");
#include "suite/suite_keys.def"
#undef DLB_CORE_KEY

#define FROM_INT(v, ctype) (v)->i
#define FROM_SIZE(v, ctype) (v)->i
#define FROM_FLOAT(v, ctype) (v)->f
#define FROM_TIME(v, ctype) (v)->f
#define FROM_BOOL(v, ctype) ((v)->i != 0)
#define FROM_STRING(v, ctype) (v)->s
#define FROM_ENUM(v, ctype) (ctype)(v)->i

void dlb_core_settings_fill(struct dlb_core_settings *out,
                            const struct dlb_value *values)
{
#define DLB_CORE_KEY(field, name, type, ctype, ...)                           \
    out->field = FROM_##type(&values[DLB_KEY_##field], ctype);
#include "suite/suite_keys.def"
#undef DLB_CORE_KEY
}
