/* A configuration's settings as JSON, typed as their parameters are. */
#ifndef DLB_CORE_CONFIG_JSON_H
#define DLB_CORE_CONFIG_JSON_H

#include <jansson.h>
#include "plan/plan.h"

/* { "batch": 64, "mode": "train", "amp.precision": "bf16", ... }: every
 * core key, and every key of each plugin active in the suite. */
json_t *dlb_config_to_json(const struct dlb_plan *p, const struct dlb_config *c);

/* One value as JSON: INT/SIZE/BOOL integers or booleans, FLOAT/TIME reals,
 * ENUM/STRING strings. */
json_t *dlb_value_to_json(const struct dlb_param_def *def, const struct dlb_value *v);

#endif
