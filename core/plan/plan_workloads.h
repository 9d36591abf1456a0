/* The workloads built into the core, by name: what the parent checks a
 * suite's `workload` against. The child maps each name to its hooks
 * (workloads.h); plugins bring other workloads. */
#ifndef DLB_CORE_PLAN_WORKLOADS_H
#define DLB_CORE_PLAN_WORKLOADS_H

/* NULL-terminated: "cnn", the reference CNN of suites/models/. */
extern const char *const dlb_builtin_workload_names[];

/* Whether NAME is a built-in workload. */
int dlb_is_builtin_workload(const char *name);

#endif
