/* The roofline a run's shares of peak are taken against: chosen once in
 * the parent (peak/peak.h's dlb_peak_for_run under the suite's
 * peak_max_age and peak_tolerance), kept in DIR/peak.json, and read from
 * there by every configuration's process and by --resume, so that every
 * record of a run is measured against the same figures and the run says
 * which probe they came from and how old it was. */
#ifndef DLB_CORE_RUN_ROOFLINE_H
#define DLB_CORE_RUN_ROOFLINE_H

#include <jansson.h>

#include "peak/peak.h"
#include "plan/session.h"
#include "util/error.h"

#define DLB_RUN_PEAK_FILE "peak.json"

struct dlb_run_roofline {
    int have;                      /* 0: none (a plugin's workload, or the
                                      probe failed: said on stderr) */
    struct dlb_peak_choice choice;
    json_t *json;                  /* dlb_peak_choice_json, or DIR/peak.json
                                      as a --resume found it */
};

/* Choose the roofline for `ses`'s run; resume_dir: the run directory of a
 * --resume, whose peak.json (where it has one) is kept. Only the built-in
 * workloads count FLOPs: others get none. Problems are warnings on
 * stderr, never errors: the run goes on without shares of peak. */
void dlb_run_roofline_choose(const struct dlb_session *ses,
                             const char *resume_dir,
                             struct dlb_run_roofline *out);

/* DIR/peak.json, where a roofline was chosen and DIR does not hold it yet. */
dlb_status dlb_run_roofline_write(const char *dir,
                                  const struct dlb_run_roofline *rf,
                                  struct dlb_error *err);

void dlb_run_roofline_free(struct dlb_run_roofline *rf);

#endif
