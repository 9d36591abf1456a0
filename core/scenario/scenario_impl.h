/* Private to core/scenario/: the arrival schedule's generator, shared by
 * dlb_scen_arrivals and the server run so that both draw the same times. */
#ifndef DLB_CORE_SCENARIO_IMPL_H
#define DLB_CORE_SCENARIO_IMPL_H

#include "scenario/scenario.h"
#include "util/rng.h"

void dlb_scen_schedule_seed(struct dlb_rng *r, uint64_t seed);
/* The next exponential inter-arrival time of a Poisson process of rate qps. */
double dlb_scen_next_gap(struct dlb_rng *r, double qps);

#endif
