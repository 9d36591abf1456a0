/* Alerts and thresholds as the store keeps them (schema version 2). The
 * lifecycle itself, which change points become alerts and when an alert
 * is raised, is history/alerts.h's; this is the rows. */
#ifndef DLB_CORE_STORE_ALERTS_H
#define DLB_CORE_STORE_ALERTS_H

#include <stddef.h>
#include "store/store.h"

/* candidate: found once, waiting for a further run to confirm it;
 * new: confirmed, raised, nobody has looked at it;
 * acknowledged: someone owns it (a note may say who and why);
 * dismissed: not a regression to act on (the note says why);
 * unconfirmed: a candidate the next evaluation did not find again. */
enum dlb_alert_state {
    DLB_ALERT_CANDIDATE, DLB_ALERT_NEW, DLB_ALERT_ACKNOWLEDGED,
    DLB_ALERT_DISMISSED, DLB_ALERT_UNCONFIRMED,
};

const char *dlb_alert_state_name(enum dlb_alert_state s);
/* 0 and *s set, or -1 for a name that is not a state. */
int dlb_alert_state_parse(const char *name, enum dlb_alert_state *s);

struct dlb_alert_row {
    long long id;
    enum dlb_alert_state state;
    char *good_commit, *bad_commit, *good_utc, *bad_utc;
    char *direction;            /* "slower" or "faster" */
    double worst_ratio;         /* the member furthest from 1 */
    long long beyond;           /* members beyond their thresholds */
    char *members;              /* JSON array, see doc/history.md */
    long long runs_after;       /* runs after the change when first found */
    long long seen;             /* evaluations that found it */
    char *note, *created_utc, *updated_utc, *confirmed_utc;
};

/* Every alert, by id. */
dlb_status dlb_store_alerts_read(struct dlb_store *st, struct dlb_alert_row **out,
                                 size_t *n, struct dlb_error *err);
void dlb_alert_rows_free(struct dlb_alert_row *rows, size_t n);
/* Free one row's strings (the row itself is the caller's). */
void dlb_alert_row_clear(struct dlb_alert_row *a);

/* Insert `a` (its id set here) or write every member of an existing one
 * back; each records an event when `event_state` is not NULL. Inside a
 * write transaction the caller holds. */
dlb_status dlb_store_alert_insert(struct dlb_store *st, struct dlb_alert_row *a,
                                  struct dlb_error *err);
dlb_status dlb_store_alert_update(struct dlb_store *st, const struct dlb_alert_row *a,
                                  struct dlb_error *err);
dlb_status dlb_store_alert_event(struct dlb_store *st, long long id,
                                 enum dlb_alert_state state, const char *note,
                                 const char *at_utc, struct dlb_error *err);

/* One alert's events, oldest first: state, note and time per row. */
dlb_status dlb_store_alert_events(struct dlb_store *st, long long id,
                                  struct dlb_db_rows *rows, struct dlb_error *err);

/* A threshold: shell patterns over suite, configuration and machine, and
 * the slowdown (a fraction, 0.03 for 3%) beyond which a change there is
 * alerted on. */
struct dlb_threshold_rule {
    long long id;
    char *suite, *config, *machine;
    double slowdown;
};

dlb_status dlb_store_thresholds_read(struct dlb_store *st,
                                     struct dlb_threshold_rule **out, size_t *n,
                                     struct dlb_error *err);
void dlb_threshold_rules_free(struct dlb_threshold_rule *r, size_t n);
/* Set (insert or replace) or remove the rule for these three patterns;
 * each its own transaction. *removed: whether there was one. */
dlb_status dlb_store_threshold_set(struct dlb_store *st, const char *suite,
                                   const char *config, const char *machine,
                                   double slowdown, struct dlb_error *err);
dlb_status dlb_store_threshold_unset(struct dlb_store *st, const char *suite,
                                     const char *config, const char *machine,
                                     int *removed, struct dlb_error *err);

#endif
