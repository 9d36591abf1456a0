/* Auto-selection: the best configuration that meets every constraint of
 * the suite, the configurations statistically tied with it, the Pareto
 * front over throughput, accuracy and peak memory, and (for suites that
 * combine plugins) the attribution of the speedup to each plugin.
 *
 * The result is a JSON object, written into results.json as "selection"
 * and read by the plots and the report:
 *   { "objective": "throughput" | "latency" | "time_to_accuracy",
 *     "workload_axes": [KEY ...],     the workload keys the plan varies
 *     "groups": [ {"workload": "model=lenet batch=64", "configs": [ID ...],
 *                  "baseline", "winner", "winner_index", "fastest",
 *                  "ties", "why", "pareto", "winner_doubtful": true and
 *                  "winner_doubtful_why" when the winner's record or its
 *                  baseline's is doubtful} ... ],   one per workload
 *     "winners": [ID ...],            each group's, when it has one
 *     "verdicts": [ ... ],            each setting against its baselines
 *                                     (select_verdict.c)
 *     "baseline": ID | null,          the suite's baseline configuration
 *     "winner": ID | null, "winner_index": N,   one workload only: its
 *                                     winner, as in "groups"; else null
 *     "ties": [ID ...],               not significantly different, simpler first
 *     "why": "one sentence",
 *     "violations": [ {"id", "constraint", "value", "limit"} ... ],
 *     "pareto": [ID ...],
 *     "per_config": { ID: {"group": n, "baseline": ID, "speedup": x,
 *                          "speedup_ci": [lo, hi], "accuracy_drop": pts
 *                          (only on equal training, else "accuracy_note"),
 *                          "trained_images": n, "changes": n,
 *                          "doubtful": true, "doubtful_why" (it or its
 *                          baseline measured on a busy machine)} },
 *     "attribution": [ {"plugin", "speedup_alone", ...} ] } */
#ifndef DLB_CORE_SELECT_H
#define DLB_CORE_SELECT_H

#include <stddef.h>
#include <jansson.h>
#include "util/error.h"
#include "plan/plan.h"

enum dlb_objective {
    DLB_OBJ_THROUGHPUT,      /* samples/s, higher is better */
    DLB_OBJ_LATENCY,         /* median step time, lower is better */
    DLB_OBJ_TIME_TO_ACCURACY /* s to target_accuracy, lower is better */
};

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
    json_t *keys; /* those keys' names, a JSON array */
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
int dlb_select_complete(json_t *selection);

/* Select over `records` (the run's records in plan order). The suite's
 * objective and constraint keys come from the plan's configurations. */
dlb_status dlb_select(const struct dlb_plan *plan, json_t *records,
                      json_t **selection, struct dlb_error *err);

/* Write DIR/best.ini: the winner as a suite fragment that
 * `dlbench run DIR/best.ini` runs again; nothing when there is no winner.
 * Several workloads: DIR/best-N.ini for the N-th group's winner.
 * `origin` (the suite file as the user named it, may be NULL) helps find
 * the model file, which best.ini names by its path. */
dlb_status dlb_select_write_best(const char *dir, const struct dlb_plan *plan,
                                 json_t *selection, const char *origin,
                                 struct dlb_error *err);

#endif
