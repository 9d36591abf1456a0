/* The selection's output, results.json's "selection" (doc/results-schema.md,
 * "Selection"), as a typed struct: its groups (one per workload), winners,
 * ties, Pareto front, violations, attribution, verdicts and each
 * configuration's figures. select/ builds it (dlb_select); the report, the
 * plots, the summary and `best.ini` read it, never JSON keys; and it is
 * written to JSON once, by dlb_selection_write, into results.json.
 * dlb_selection_read reads one back from a results file.
 *
 * A selection built in memory owns its strings (`strings`); one read
 * borrows them from the document it was read from. Strings are NULL when
 * absent or null; figures that are absent are NAN, counts -1, flags -1. */
#ifndef DLB_CORE_SELECTION_H
#define DLB_CORE_SELECTION_H

#include <stddef.h>
#include <jansson.h>
#include "util/error.h"
#include "util/strpool.h"

struct dlb_sel_ids {            /* configuration ids, in their order */
    const char **id;
    size_t n;
};

struct dlb_sel_group {          /* one workload's part of the selection */
    const char *workload;       /* its values; "" for the only one */
    const char *baseline, *winner, *fastest, *why;
    const char *winner_doubtful_why; /* the winner's speedup rests on a
                                      * doubtful record: which, and why */
    long long winner_index;
    struct dlb_sel_ids configs, ties, pareto;
};

struct dlb_sel_verdict_row {    /* one setting on one workload */
    const char *workload, *id, *baseline, *verdict, *why, *accuracy_note;
    const char *doubtful_why;   /* rests on a doubtful record: which, why */
    const char *accuracy_effect;/* "gain", "loss", "no measurable effect",
                                 * "training noise not measured" */
    double speedup, speedup_ci_lo, speedup_ci_hi;
    double accuracy_change, accuracy_ci, memory_change;
    double accuracy_seeds;      /* paired seeds; NAN when absent */
};

struct dlb_sel_verdict {        /* one setting, over the workloads */
    const char *setting, *verdict, *summary;
    const char *doubtful_why;   /* a row's, when one is doubtful */
    struct dlb_sel_verdict_row *rows;   /* "workloads" */
    size_t n_rows;
};

struct dlb_sel_violation {      /* one broken constraint */
    const char *id, *constraint;
    double value, limit;
};

struct dlb_sel_attribution {    /* one plugin on one workload */
    const char *workload, *plugin, *alone;
    double speedup_alone, speedup_alone_ci_lo, speedup_alone_ci_hi;
    double speedup_winner, speedup_winner_ci_lo, speedup_winner_ci_hi;
    int in_winner;
};

struct dlb_sel_config {         /* "per_config": one configuration */
    const char *id;
    long long group, changes, eliminated_in_round;
    const char *baseline, *accuracy_note;
    const char *doubtful_why;   /* it or its baseline measured doubtful */
    const char *accuracy_effect, *accuracy_within; /* select.c's words */
    double speedup, speedup_ci_lo, speedup_ci_hi, accuracy_drop;
    double accuracy_drop_ci, accuracy_seeds;
    double trained_images, peak_memory;
    double objective, objective_ci_lo, objective_ci_hi;
};

struct dlb_sel_constraints {    /* the suite's, as the selection applied them */
    double max_accuracy_drop, memory_budget, target_accuracy, significance;
};

struct dlb_selection {
    json_t *json;               /* the object read (a reference), or NULL */
    int present;                /* 0: there is no selection */
    const char *objective, *winner, *fastest, *why, *baseline;
    long long winner_index;
    struct dlb_sel_ids workload_axes, winners, ties, pareto;
    struct dlb_sel_constraints constraints;
    struct dlb_sel_group *groups;
    size_t n_groups;
    struct dlb_sel_violation *violations;
    size_t n_violations;
    struct dlb_sel_config *configs;     /* "per_config", in its order */
    size_t n_configs;
    struct dlb_sel_verdict *verdicts;
    size_t n_verdicts;
    struct dlb_sel_attribution *attribution;
    size_t n_attribution;
    struct dlb_strpool strings; /* owned by one built in memory */
    const struct dlb_sel_config **by_id; /* configs by id (dlb_selection_index) */
    size_t n_by_id;
};

/* An empty selection (present 0): no groups, nothing chosen. */
void dlb_selection_init(struct dlb_selection *s);

/* A per-configuration entry with nothing in it: every figure absent. */
extern const struct dlb_sel_config dlb_sel_config_none;

/* Read `json` (NULL: no selection, an empty one with present 0) into
 * `out`. A member of the wrong type is an error naming it ("selection:
 * \"groups[1].ties\" is a string; expected an array"). Free with
 * dlb_selection_free. */
dlb_status dlb_selection_read(json_t *json, struct dlb_selection *out,
                              struct dlb_error *err);

/* The JSON form, the one written into results.json: a new object, every
 * member in its documented order, absent figures left out. */
json_t *dlb_selection_write(const struct dlb_selection *s);

/* Sort the per-configuration entries for dlb_selection_config; the
 * builder and the reader call it once the entries are final. */
dlb_status dlb_selection_index(struct dlb_selection *s);

void dlb_selection_free(struct dlb_selection *s);

/* The per-configuration entry of `id` (the last one of that id, as a JSON
 * object keeps it); an entry with every figure absent when there is none. */
const struct dlb_sel_config *dlb_selection_config(const struct dlb_selection *s,
                                                  const char *id);

/* Whether `id` is in `ids`. */
int dlb_sel_ids_has(const struct dlb_sel_ids *ids, const char *id);

/* The group a selection without groups stands for: its top-level winner,
 * why and baseline. */
struct dlb_sel_group dlb_selection_top(const struct dlb_selection *s);

#endif
