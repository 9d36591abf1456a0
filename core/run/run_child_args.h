/* What the parent tells a configuration's child: its command line. */
#ifndef DLB_CORE_RUN_CHILD_ARGS_H
#define DLB_CORE_RUN_CHILD_ARGS_H

#include "options/options.h"
#include "plan/plan.h"

/* The --set options a round may add: time_cap, the training budget,
 * warmup, measure_only, screen_accuracy. */
#define DLB_ROUND_SETS 5

/* A search round's share of the budget (core/search/search.h's round). */
struct dlb_round_budget {
    double scale;     /* 1 except in halving's screening rounds */
    int measure_only; /* speed only: no training run */
    int accuracy;     /* with measure_only: the accuracy all the same */
};

/* `--set` options giving repetition `rep` of configuration `c` its share
 * of the budget in a round: keys that are axes keep theirs, as a --set
 * would collapse the axis and renumber the plan. Unused slots are "". */
void dlb_child_round_sets(const struct dlb_plan *p, const struct dlb_config *c,
                          const struct dlb_round_budget *rd, int rep,
                          char sets[DLB_ROUND_SETS][64]);

struct dlb_child_cmd {
    const struct dlb_options *opts;
    const char *suite_copy; /* RUN_DIR/suite.ini */
    const char *origin;     /* the suite file as the user named it, or NULL */
    const char *peak_file;  /* the run's roofline (DIR/peak.json), or NULL */
    int seed_rep;           /* > 0: a training from another seed (seeds.h) */
};

/* The child's argv (NULL-terminated, malloc'ed array of borrowed
 * strings, one free; `idx` and `sets` must outlive it). "%FD%" stands for the
 * record pipe's descriptor, which the runner fills in. */
char **dlb_child_argv(const struct dlb_child_cmd *r, const struct dlb_config *c,
                      char idx[32], char sets[DLB_ROUND_SETS][64]);

#endif
