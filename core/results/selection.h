/* The selection's output, results.json's "selection" (doc/results-schema.md,
 * "Selection"), as a typed struct: its groups (one per workload), winners,
 * ties, Pareto front, violations, attribution and verdicts. The report,
 * the plots, the summary and `best.ini` read this struct, never the keys;
 * dlb_selection_read is its one reader. (select/ still assembles the JSON
 * itself.) The per-configuration entries are read one at a time by
 * dlb_record_selection (record.h).
 *
 * Strings and the JSON members kept as they are are borrowed from the
 * document the selection was read from (or, for one built in memory, from
 * whoever built it); NULL when absent or null. Figures that are absent are
 * NAN, counts -1, flags -1. */
#ifndef DLB_CORE_SELECTION_H
#define DLB_CORE_SELECTION_H

#include <stddef.h>
#include <jansson.h>
#include "util/error.h"

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
    const char *workload, *verdict, *why, *accuracy_note;
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

struct dlb_selection {
    json_t *json;               /* the object read (a reference), or NULL */
    int present;                /* 0: the document had no selection */
    const char *objective, *winner, *fastest, *why, *baseline;
    long long winner_index;
    struct dlb_sel_ids winners, ties, pareto;
    struct dlb_sel_group *groups;
    size_t n_groups;
    struct dlb_sel_verdict *verdicts;
    size_t n_verdicts;
    struct dlb_sel_violation *violations;
    size_t n_violations;
    struct dlb_sel_attribution *attribution;
    size_t n_attribution;
};

/* Read `json` (NULL: no selection, an empty one with present 0) into
 * `out`. A member of the wrong type is an error naming it ("selection:
 * \"groups[1].ties\" is a string; expected an array"). Free with
 * dlb_selection_free. */
dlb_status dlb_selection_read(json_t *json, struct dlb_selection *out,
                              struct dlb_error *err);
void dlb_selection_free(struct dlb_selection *s);

/* Whether `id` is in `ids`. */
int dlb_sel_ids_has(const struct dlb_sel_ids *ids, const char *id);

/* The group a selection without groups stands for: its top-level winner,
 * why and baseline. */
struct dlb_sel_group dlb_selection_top(const struct dlb_selection *s);

#endif
