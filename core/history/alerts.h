/* The alerts' lifecycle over the store (store_alerts.h has the rows).
 *
 * A group of change points (changes.h) with a member beyond its threshold
 * becomes an alert in state `candidate`. It is raised (`new`) only when a
 * later evaluation finds it again with more runs after the change than
 * when it was first found: the next night's run, or a run made at once to
 * confirm it (the nightly workflow reruns the suite on the same commit).
 * A candidate that a later evaluation does not find becomes `unconfirmed`
 * and is never raised. People move a raised alert on: `acknowledged`
 * (someone owns it), `dismissed` (not to be acted on; the note says why),
 * or back to `new` (reopened). Every change of state is kept as an event
 * with its note and time. */
#ifndef DLB_CORE_ALERTS_H
#define DLB_CORE_ALERTS_H

#include "history/changes.h"

struct dlb_alert_counts {
    long long created, confirmed, updated, unconfirmed;
};

/* Match this evaluation's groups against the stored alerts and write the
 * changes (inside the caller's write transaction). A group matches an
 * alert when they name the same commit range, or share a series whose
 * runs around the change overlap; each alert matches one group at most.
 * Only candidates with a member among the set's series (those this
 * evaluation covered) can be found unconfirmed. alert_of[k]: the alert
 * group k is (-1: none, within its thresholds). */
dlb_status dlb_alerts_reconcile(struct dlb_store *st, const struct dlb_series_set *set,
                                const struct dlb_change *ch,
                                const struct dlb_change_group *g, size_t ng,
                                long long *alert_of, struct dlb_alert_counts *counts,
                                struct dlb_error *err);

/* Whether any member (JSON array text) of an alert is one of the set's
 * series. */
int dlb_alert_in_set(const char *members, const struct dlb_series_set *set);

enum dlb_alert_action { DLB_ALERT_ACK, DLB_ALERT_DISMISS, DLB_ALERT_REOPEN };

/* Move alert `id` on, in its own transaction, with `note` (required to
 * dismiss). An unknown id, a candidate or unconfirmed alert, or a move
 * the state does not allow is DLB_ERR_INPUT saying what is possible. */
dlb_status dlb_alert_act(struct dlb_store *st, long long id, enum dlb_alert_action a,
                         const char *note, struct dlb_error *err);

#endif
