/* Auto-selection: the best configuration that meets every constraint of
 * the suite, the configurations statistically tied with it, the Pareto
 * front over throughput, accuracy and peak memory, and (for suites that
 * combine plugins) the attribution of the speedup to each plugin.
 *
 * The result is struct dlb_selection (results/selection.h): one group per
 * workload with its baseline, winner, ties and front, a verdict per
 * setting, and each configuration's figures. The report, the plots, the
 * summary and best.ini read the struct; dlb_selection_write puts it into
 * results.json as "selection" (doc/results-schema.md, "Selection"). */
#ifndef DLB_CORE_SELECT_H
#define DLB_CORE_SELECT_H

#include <stddef.h>
#include <jansson.h>
#include "util/error.h"
#include "plan/plan.h"
#include "results/selection.h"

#define DLB_SEL_MAX_WORKLOAD 32

/* The suite's selection keys (core/suite/suite_keys.c), resolved. */
struct dlb_select_settings {
    /* The keys that define the workload (workload_axes): configurations
     * that differ in one are never compared; the rest are settings. */
    struct dlb_keyref workload[DLB_SEL_MAX_WORKLOAD];
    size_t n_workload;
    enum dlb_objective objective;
    size_t baseline;          /* position in plan->configs */
    double max_accuracy_drop; /* points (the accuracy_tolerance key) */
    double accuracy_noise;    /* points: the suite's stated sd of one
                                 paired difference; 0 = not stated */
    double memory_budget;     /* bytes, 0 = none */
    double target_accuracy;   /* %, time_to_accuracy only */
    double significance;
};

/* Read and check the selection keys of `plan` (core/select/select_suite.c). The
 * baseline names axis values ("batch=64 amp.enable=off", any order, a
 * subset when that is unique); "" is the plan's first configuration.
 * Errors name the suite line (or the --set) at fault. */
dlb_status dlb_select_settings(const struct dlb_plan *plan,
                               struct dlb_select_settings *out,
                               struct dlb_error *err);

/* The plan's configurations grouped by workload: the groups in order of
 * their first configuration, each with its baseline, the configuration
 * that holds the suite baseline's value on every setting (every key that
 * is not a workload key). */
struct dlb_sel_groups {
    size_t n;
    size_t *of;   /* per plan position: its group */
    size_t *base; /* per group: its baseline's plan position, or
                   * DLB_SEL_NO_BASE when the plan has none (skip/only) */
    char **label; /* per group: the workload keys that vary across the
                   * plan, with its values ("model=lenet batch=64"); ""
                   * when every configuration is one workload */
    char **keys;  /* those keys' names */
    size_t n_keys;
};
#define DLB_SEL_NO_BASE ((size_t)-1)

dlb_status dlb_sel_groups_build(const struct dlb_plan *plan,
                                const struct dlb_select_settings *set,
                                struct dlb_sel_groups *out,
                                struct dlb_error *err);
void dlb_sel_groups_free(struct dlb_sel_groups *g);

/* Whether key (ns, k) is one of set's workload keys. */
int dlb_sel_is_workload(const struct dlb_select_settings *set, unsigned ns,
                        unsigned k);
/* Whether a and b hold the same values on every key that is not a
 * workload key: the same settings, on two workloads or one. */
int dlb_sel_same_settings(const struct dlb_plan *p,
                          const struct dlb_select_settings *set,
                          const struct dlb_config *a, const struct dlb_config *b);

/* Whether every workload group of a selection has a winner. */
int dlb_select_complete(const struct dlb_selection *selection);

/* Select over `records` (the run's records in plan order) into `out`
 * (present 1; free with dlb_selection_free, also on failure). The suite's
 * objective and constraint keys come from the plan's configurations. */
dlb_status dlb_select(const struct dlb_plan *plan, json_t *records,
                      struct dlb_selection *out, struct dlb_error *err);

/* Write DIR/best.ini: the winner as a suite fragment that
 * `dlbench run DIR/best.ini` runs again; nothing when there is no winner.
 * Several workloads: DIR/best-N.ini for the N-th group's winner.
 * `origin` (the suite file as the user named it, may be NULL) helps find
 * the model file, which best.ini names by its path. */
dlb_status dlb_select_write_best(const char *dir, const struct dlb_plan *plan,
                                 const struct dlb_selection *selection,
                                 const char *origin, struct dlb_error *err);

#endif
