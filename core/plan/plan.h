/* The plan: every configuration of a suite, as the cartesian product of its
 * axes (first axis varies slowest), after `skip`/`only` filters. */
#ifndef DLB_CORE_PLAN_H
#define DLB_CORE_PLAN_H

#include <stddef.h>
#include "suite/core_settings.h"
#include "suite/suite.h"

/* Command-line overrides: `--set KEY=VALUE` replaces a fixed setting, or
 * collapses an axis to that single value; --quick applies [quick]. */
struct dlb_overrides {
    char **sets;      /* "key=value" strings */
    size_t n_sets;
    int quick;
};

struct dlb_config {
    size_t index;              /* position in the full plan, before filters */
    char *id;                  /* axis values only: "batch=64 amp.precision=bf16" */
    struct dlb_value **values; /* values[ns][param], every parameter resolved */
    struct dlb_core_settings core; /* values[0], typed: what stages read */
};

struct dlb_plan {
    const struct dlb_suite *suite;
    struct dlb_config *configs;
    size_t n;
    size_t n_filtered;         /* dropped by skip/only */
};

/* Build the plan. Errors name the --set option or the suite line at fault;
 * an empty plan (every configuration filtered out) is an error. */
dlb_status dlb_plan_build(const struct dlb_suite *s,
                          const struct dlb_overrides *ov,
                          struct dlb_plan *out, struct dlb_error *err);
void dlb_plan_free(struct dlb_plan *p);

/* Whether plugin namespace `ns` is enabled in the configuration. */
int dlb_config_plugin_enabled(const struct dlb_plan *p,
                              const struct dlb_config *c, unsigned ns);

#endif
