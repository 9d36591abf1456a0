/* A configuration's inference scenario (scenario = singlestream, offline,
 * server): run in its process after the step measurement, on the same
 * clock, its step as the system under test. */
#ifndef DLB_CORE_CHILD_SCENARIO_H
#define DLB_CORE_CHILD_SCENARIO_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "stats/measure.h"
#include "suite/core_settings.h"

/* Before any work: DLB_ERR_UNSUPPORTED, with the reason in `why`, when the
 * configuration's keys rule its scenario out (training; single-stream at a
 * batch other than 1). DLB_OK when it has none. */
dlb_status dlb_child_scenario_check(const struct dlb_core_settings *set,
                                    char *why, size_t len);

/* What the scenario runs on. */
struct dlb_child_scenario_sut {
    dlb_step_fn step;          /* one step: samples_per_step samples */
    void *step_ctx;
    double samples_per_step;
    double step_s;             /* the measured median step time */
    dlb_clock_fn now;          /* the workload's clock; NULL: monotonic */
    void *now_ctx;
    uint64_t seed;
};

/* Run the scenario of `set` (not none) and return its record member in
 * *out. On failure `why` says what went wrong. */
dlb_status dlb_child_scenario_run(const struct dlb_core_settings *set,
                                  const struct dlb_child_scenario_sut *sut,
                                  json_t **out, char *why, size_t len);

#endif
