/* The alerts' lifecycle (alerts.h). */
#include "history/alerts.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *member_str(json_t *m, const char *k)
{
    const char *s = json_string_value(json_object_get(m, k));
    return s ? s : "";
}

/* Closed intervals of ISO 8601 times that share a moment. */
static int overlap(const char *a0, const char *a1, const char *b0, const char *b1)
{
    return strcmp(a0, b1) <= 0 && strcmp(b0, a1) <= 0;
}

/* Whether the stored alert `a` (its members parsed) is group g. */
static int matches(json_t *members, const struct dlb_alert_row *a,
                   const struct dlb_series_set *set, const struct dlb_change *ch,
                   const struct dlb_change_group *g)
{
    if (strcmp(g->good_commit, g->bad_commit) && !strcmp(a->good_commit, g->good_commit) &&
        !strcmp(a->bad_commit, g->bad_commit) && strcmp(g->good_commit, "unknown"))
        return 1;
    size_t i;
    json_t *m;
    json_array_foreach(members, i, m) {
        for (size_t k = 0; k < g->n; k++) {
            const struct dlb_change *c = &ch[g->members[k]];
            const struct dlb_series *s = &set->v[c->series];
            if (strcmp(member_str(m, "suite"), s->suite) ||
                strcmp(member_str(m, "config"), s->config) ||
                strcmp(member_str(m, "machine"), s->machine))
                continue;
            if (overlap(member_str(m, "good_utc"), member_str(m, "bad_utc"),
                        s->pts[c->at - 1].start_utc, s->pts[c->at].start_utc))
                return 1;
        }
    }
    return 0;
}

/* Whether any member of the alert is a series of this evaluation. */
static int evaluated(json_t *members, const struct dlb_series_set *set)
{
    size_t i;
    json_t *m;
    json_array_foreach(members, i, m)
        for (size_t k = 0; k < set->n; k++)
            if (!strcmp(member_str(m, "suite"), set->v[k].suite) &&
                !strcmp(member_str(m, "config"), set->v[k].config) &&
                !strcmp(member_str(m, "machine"), set->v[k].machine))
                return 1;
    return 0;
}

int dlb_alert_in_set(const char *members, const struct dlb_series_set *set)
{
    json_t *m = json_loads(members ? members : "[]", 0, NULL);
    int in = json_is_array(m) && evaluated(m, set);
    json_decref(m);
    return in;
}

static int replace(char **dst, const char *src)
{
    char *c = src ? strdup(src) : NULL;
    if (src && !c)
        return -1;
    free(*dst);
    *dst = c;
    return 0;
}

/* The group's figures into the alert row. */
static int fill(struct dlb_alert_row *a, const struct dlb_change_group *g,
                const char *members, const char *now)
{
    a->worst_ratio = g->worst_ratio;
    a->beyond = g->beyond;
    return replace(&a->good_commit, g->good_commit) | replace(&a->bad_commit, g->bad_commit) |
           replace(&a->good_utc, g->good_utc) | replace(&a->bad_utc, g->bad_utc) |
           replace(&a->direction, g->slower_beyond ? "slower" : "faster") |
           replace(&a->members, members) | replace(&a->updated_utc, now);
}

static dlb_status add_candidate(struct dlb_store *st, const struct dlb_change_group *g,
                                const char *members, const char *now, long long *id,
                                struct dlb_error *err)
{
    struct dlb_alert_row a;
    memset(&a, 0, sizeof a);
    a.state = DLB_ALERT_CANDIDATE;
    a.runs_after = g->runs_after;
    a.seen = 1;
    dlb_status s = fill(&a, g, members, now) || replace(&a.created_utc, now)
                   ? dlb_errorf(err, DLB_ERR_NOMEM, "out of memory") : DLB_OK;
    if (s == DLB_OK)
        s = dlb_store_alert_insert(st, &a, err);
    if (s == DLB_OK)
        s = dlb_store_alert_event(st, a.id, a.state, "found", now, err);
    *id = a.id;
    dlb_alert_row_clear(&a);
    return s;
}

/* One stored alert against this evaluation's groups: updated (and
 * confirmed) when a group matches, found unconfirmed when a candidate
 * is not found again. taken[k]: the alert group k matched already, or
 * -1. */
static dlb_status reconcile_one(struct dlb_store *st, struct dlb_alert_row *a,
                                const struct dlb_series_set *set,
                                const struct dlb_change *ch,
                                const struct dlb_change_group *g, size_t ng,
                                long long *taken, const char *now,
                                struct dlb_alert_counts *counts, struct dlb_error *err)
{
    json_t *members = json_loads(a->members ? a->members : "[]", 0, NULL);
    if (!json_is_array(members)) {
        json_decref(members);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: alert %lld's members are not a "
                          "JSON array: a damaged store", dlb_db_where(st->db), a->id);
    }
    size_t k = 0;
    while (k < ng && (taken[k] >= 0 || !g[k].beyond || !matches(members, a, set, ch, &g[k])))
        k++;
    dlb_status s = DLB_OK;
    if (k < ng) {
        taken[k] = a->id;
        char *text = dlb_change_group_members_json(set, ch, &g[k]);
        enum dlb_alert_state was = a->state;
        if (!text || fill(a, &g[k], text, now))
            s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        free(text);
        a->seen++;
        if (was == DLB_ALERT_CANDIDATE && g[k].runs_after > a->runs_after) {
            a->state = DLB_ALERT_NEW;
            if (replace(&a->confirmed_utc, now))
                s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
            counts->confirmed++;
        } else if (was == DLB_ALERT_UNCONFIRMED) {
            /* Found again after it vanished: a first sighting anew. */
            a->state = DLB_ALERT_CANDIDATE;
            a->runs_after = g[k].runs_after;
        }
        counts->updated++;
        if (s == DLB_OK)
            s = dlb_store_alert_update(st, a, err);
        if (s == DLB_OK && a->state != was)
            s = dlb_store_alert_event(st, a->id, a->state, a->state == DLB_ALERT_NEW
                                      ? "confirmed: found again with more runs after it"
                                      : "found again", now, err);
    } else if (a->state == DLB_ALERT_CANDIDATE && evaluated(members, set)) {
        a->state = DLB_ALERT_UNCONFIRMED;
        counts->unconfirmed++;
        if (replace(&a->updated_utc, now))
            s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        if (s == DLB_OK)
            s = dlb_store_alert_update(st, a, err);
        if (s == DLB_OK)
            s = dlb_store_alert_event(st, a->id, a->state, "not found again", now, err);
    }
    json_decref(members);
    return s;
}

dlb_status dlb_alerts_reconcile(struct dlb_store *st, const struct dlb_series_set *set,
                                const struct dlb_change *ch,
                                const struct dlb_change_group *g, size_t ng,
                                long long *taken, struct dlb_alert_counts *counts,
                                struct dlb_error *err)
{
    memset(counts, 0, sizeof *counts);
    char now[32];
    dlb_store_now_utc(now, sizeof now);
    struct dlb_alert_row *rows = NULL;
    size_t n = 0;
    for (size_t k = 0; k < ng; k++)
        taken[k] = -1;
    dlb_status s = dlb_store_alerts_read(st, &rows, &n, err);
    /* Raised alerts first, newest first: a group that could be either an
     * old alert or a stale candidate belongs to the one people see. */
    for (int pass = 0; pass < 2 && s == DLB_OK; pass++)
        for (size_t i = n; i-- > 0 && s == DLB_OK;) {
            int candidate = rows[i].state == DLB_ALERT_CANDIDATE ||
                            rows[i].state == DLB_ALERT_UNCONFIRMED;
            if (candidate == (pass == 1))
                s = reconcile_one(st, &rows[i], set, ch, g, ng, taken, now, counts, err);
        }
    for (size_t k = 0; k < ng && s == DLB_OK; k++) {
        if (taken[k] >= 0 || !g[k].beyond)
            continue;
        char *text = dlb_change_group_members_json(set, ch, &g[k]);
        s = text ? add_candidate(st, &g[k], text, now, &taken[k], err)
                 : dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        free(text);
        if (s == DLB_OK)
            counts->created++;
    }
    dlb_alert_rows_free(rows, n);
    return s;
}

dlb_status dlb_alert_act(struct dlb_store *st, long long id, enum dlb_alert_action act,
                         const char *note, struct dlb_error *err)
{
    static const char *const verbs[] = {"acknowledge", "dismiss", "reopen"};
    if (act == DLB_ALERT_DISMISS && (!note || !*note))
        return dlb_errorf(err, DLB_ERR_INPUT, "dismissing alert %lld needs --note "
                          "saying why (\"expected: the new kernel trades speed for "
                          "accuracy\")", id);
    struct dlb_alert_row *rows = NULL;
    size_t n = 0;
    dlb_status s = dlb_db_begin_write(st->db, err);
    if (s == DLB_OK)
        s = dlb_store_alerts_read(st, &rows, &n, err);
    struct dlb_alert_row *a = NULL;
    for (size_t i = 0; s == DLB_OK && i < n; i++)
        if (rows[i].id == id)
            a = &rows[i];
    if (s == DLB_OK && !a)
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: no alert %lld (dlbench alerts %s "
                       "--all lists them)", dlb_db_where(st->db), id, dlb_db_where(st->db));
    if (s == DLB_OK && (a->state == DLB_ALERT_CANDIDATE ||
                        a->state == DLB_ALERT_UNCONFIRMED))
        s = dlb_errorf(err, DLB_ERR_INPUT, "alert %lld is %s: it has not been raised, "
                       "so there is nothing to %s (a candidate is raised once a later "
                       "run confirms it)", id, dlb_alert_state_name(a->state), verbs[act]);
    enum dlb_alert_state to = act == DLB_ALERT_ACK ? DLB_ALERT_ACKNOWLEDGED
                              : act == DLB_ALERT_DISMISS ? DLB_ALERT_DISMISSED
                              : DLB_ALERT_NEW;
    if (s == DLB_OK && a->state == to)
        s = dlb_errorf(err, DLB_ERR_INPUT, "alert %lld is %s already", id,
                       dlb_alert_state_name(to));
    char now[32];
    dlb_store_now_utc(now, sizeof now);
    if (s == DLB_OK) {
        a->state = to;
        if (note && *note && replace(&a->note, note))
            s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        if (s == DLB_OK && replace(&a->updated_utc, now))
            s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    if (s == DLB_OK)
        s = dlb_store_alert_update(st, a, err);
    if (s == DLB_OK)
        s = dlb_store_alert_event(st, id, to, note, now, err);
    dlb_alert_rows_free(rows, n);
    if (s == DLB_OK)
        return dlb_db_commit(st->db, err);
    dlb_db_rollback(st->db);
    return s;
}
