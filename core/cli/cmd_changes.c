/* `dlbench changes DB`: change points over every series of the store,
 * grouped by commit range, matched against the alerts (new ones stored as
 * candidates, candidates found again raised), printed; exit 1 when a
 * raised alert of these series is a slowdown beyond its threshold. */
#include "cli/hist_args.h"

#include <stdlib.h>
#include <string.h>
#include "history/changes_doc.h"

struct eval {
    struct dlb_series_set set;
    struct dlb_threshold_rule *rules;
    size_t n_rules;
    struct dlb_change *ch;
    size_t n_ch;
    struct dlb_change_group *g;
    size_t ng;
    long long *alert_of;
    struct dlb_alert_counts counts;
    struct dlb_alert_row *alerts;
    size_t n_alerts;
};

static void eval_free(struct eval *e)
{
    dlb_series_set_free(&e->set);
    dlb_threshold_rules_free(e->rules, e->n_rules);
    free(e->ch);
    dlb_change_groups_free(e->g, e->ng);
    free(e->alert_of);
    dlb_alert_rows_free(e->alerts, e->n_alerts);
}

/* Read, detect, group and (unless no_record) reconcile, all in one
 * transaction: a writer adding runs meanwhile is seen whole or not at
 * all, and two evaluations at once do not raise one alert twice. */
static dlb_status evaluate(struct dlb_store *st, const struct dlb_hist_args *a,
                           const struct dlb_cp_opts *o, struct eval *e,
                           struct dlb_error *err)
{
    struct dlb_series_filter f = {a->suite, a->config, a->machine};
    dlb_status s = a->no_record ? dlb_db_begin_read(st->db, err)
                                : dlb_db_begin_write(st->db, err);
    if (s != DLB_OK)
        return s;
    s = dlb_store_series(st, &f, &e->set, err);
    if (s == DLB_OK)
        s = dlb_store_thresholds_read(st, &e->rules, &e->n_rules, err);
    if (s == DLB_OK)
        s = dlb_changes_find(&e->set, o, e->rules, e->n_rules, &e->ch, &e->n_ch, err);
    if (s == DLB_OK)
        s = dlb_changes_group(&e->set, e->ch, e->n_ch, &e->g, &e->ng, err);
    if (s == DLB_OK && !a->no_record) {
        if (!(e->alert_of = calloc(e->ng + 1, sizeof *e->alert_of)))
            s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        if (s == DLB_OK)
            s = dlb_alerts_reconcile(st, &e->set, e->ch, e->g, e->ng, e->alert_of,
                                     &e->counts, err);
    }
    if (s == DLB_OK)
        s = dlb_store_alerts_read(st, &e->alerts, &e->n_alerts, err);
    if (s == DLB_OK)
        return dlb_db_commit(st->db, err);
    dlb_db_rollback(st->db);
    return s;
}

int dlb_cmd_changes(struct dlb_hist_args *a)
{
    if (a->n_pos != 1) {
        fprintf(stderr, "dlbench: changes: expected DB, e.g. dlbench changes results.db "
                "(--suite, --config and --machine take shell patterns)\n");
        return 2;
    }
    struct dlb_cp_opts o;
    dlb_cp_opts_default(&o);
    if (a->alpha > 0)
        o.alpha = a->alpha;
    if (a->seed >= 0)
        o.seed = (uint64_t)a->seed;
    /* alpha 1/(R+1) is the smallest p-value R permutations can give. */
    while ((double)(o.permutations + 1) * o.alpha < 2)
        o.permutations = o.permutations * 2 + 1;
    struct dlb_error err = {""};
    struct dlb_store *st = NULL;
    struct eval e;
    memset(&e, 0, sizeof e);
    dlb_status s = dlb_store_open(a->pos[0], DLB_DB_EXISTING, &st, &err);
    if (s == DLB_OK)
        s = evaluate(st, a, &o, &e, &err);
    json_t *doc = NULL;
    if (s == DLB_OK) {
        struct dlb_changes_eval ev = {dlb_db_where(st->db), &o, &e.set, e.ch, e.n_ch,
                                      e.g, e.ng, e.alert_of,
                                      a->no_record ? NULL : &e.counts, e.alerts,
                                      e.n_alerts};
        if (!(doc = dlb_changes_document(&ev)))
            s = dlb_errorf(&err, DLB_ERR_NOMEM, "out of memory");
    }
    int rc = 2;
    if (s == DLB_OK) {
        if (a->format == DLB_HIST_JSON) {
            json_dumpf(doc, stdout, JSON_INDENT(2));
            fputc('\n', stdout);
        } else {
            dlb_changes_print(stdout, doc, a->format == DLB_HIST_MARKDOWN);
        }
        rc = json_array_size(json_object_get(doc, "failing")) ? 1 : 0;
    } else {
        fprintf(stderr, "dlbench: changes: %s\n", err.msg);
    }
    json_decref(doc);
    eval_free(&e);
    dlb_store_close(st);
    return rc;
}
