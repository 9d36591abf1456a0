/* An evaluation of the store as a document ("dlbench-changes", version
 * 1), which `dlbench changes` prints as a table, markdown or JSON, and
 * whose exit status comes from its "failing" list:
 *   { "schema": "dlbench-changes", "schema_version": 1, "store": WHERE,
 *     "method": { "name": "e-divisive means", "alpha", "permutations",
 *                 "min_size", "seed" },
 *     "series": N, "change_points": N,
 *     "groups": [ { "good_commit", "bad_commit", "good_utc", "bad_utc",
 *                   "direction": "slower" | "faster" | "within",
 *                   "worst_ratio", "beyond",
 *                   "alert": { "id", "state", "note" } | null,
 *                   "members": [ as an alert's members (doc/history.md) ] } ],
 *     "alerts": { "created", "confirmed", "updated", "unconfirmed" } | null,
 *     "to_confirm": [ { "alert", "suite", "machine" } ],
 *     "failing": [ alert ids: raised (new), slower beyond threshold ] } */
#ifndef DLB_CORE_CHANGES_DOC_H
#define DLB_CORE_CHANGES_DOC_H

#include <stdio.h>
#include <jansson.h>
#include "history/alerts.h"

struct dlb_changes_eval {
    const char *where;
    const struct dlb_cp_opts *opts;
    const struct dlb_series_set *set;
    const struct dlb_change *ch;
    size_t n_ch;
    const struct dlb_change_group *g;
    size_t ng;
    const long long *alert_of;          /* per group, -1: none; NULL: not recorded */
    const struct dlb_alert_counts *counts; /* NULL: not recorded */
    const struct dlb_alert_row *alerts; /* the store's, after the evaluation */
    size_t n_alerts;
};

json_t *dlb_changes_document(const struct dlb_changes_eval *e);

/* The document as a console table (markdown 0) or markdown for a CI
 * summary (markdown 1). */
void dlb_changes_print(FILE *f, json_t *doc, int markdown);

#endif
