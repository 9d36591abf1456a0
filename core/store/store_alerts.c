/* Alert and threshold rows (store_alerts.h). */
#include "store/store_alerts.h"

#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {
    [DLB_ALERT_CANDIDATE] = "candidate", [DLB_ALERT_NEW] = "new",
    [DLB_ALERT_ACKNOWLEDGED] = "acknowledged", [DLB_ALERT_DISMISSED] = "dismissed",
    [DLB_ALERT_UNCONFIRMED] = "unconfirmed",
};

const char *dlb_alert_state_name(enum dlb_alert_state s)
{
    return (size_t)s < sizeof state_names / sizeof *state_names ? state_names[s] : "?";
}

int dlb_alert_state_parse(const char *name, enum dlb_alert_state *s)
{
    for (size_t i = 0; name && i < sizeof state_names / sizeof *state_names; i++)
        if (!strcmp(name, state_names[i])) {
            *s = (enum dlb_alert_state)i;
            return 0;
        }
    return -1;
}

static char *dup(const struct dlb_db_rows *r, size_t row, size_t col)
{
    const char *s = dlb_db_text_at(r, row, col);
    return s ? strdup(s) : NULL;
}

void dlb_alert_rows_free(struct dlb_alert_row *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        dlb_alert_row_clear(&rows[i]);
    free(rows);
}

void dlb_alert_row_clear(struct dlb_alert_row *a)
{
    free(a->good_commit);
    free(a->bad_commit);
    free(a->good_utc);
    free(a->bad_utc);
    free(a->direction);
    free(a->members);
    free(a->note);
    free(a->created_utc);
    free(a->updated_utc);
    free(a->confirmed_utc);
    memset(a, 0, sizeof *a);
}

#define ALERT_COLUMNS "state, good_commit, bad_commit, good_utc, bad_utc, direction," \
    " worst_ratio, beyond, members, runs_after, seen, note, created_utc, updated_utc," \
    " confirmed_utc"

dlb_status dlb_store_alerts_read(struct dlb_store *st, struct dlb_alert_row **out,
                                 size_t *n, struct dlb_error *err)
{
    *out = NULL;
    *n = 0;
    struct dlb_db_rows r;
    dlb_status s = dlb_db_exec(st->db, "SELECT id, " ALERT_COLUMNS " FROM alerts"
                               " ORDER BY id", NULL, 0, &r, err);
    if (s != DLB_OK)
        return s;
    struct dlb_alert_row *v = calloc(r.n_rows + 1, sizeof *v);
    if (!v) {
        dlb_db_rows_free(&r);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < r.n_rows; i++) {
        struct dlb_alert_row *a = &v[i];
        a->id = dlb_db_int_at(&r, i, 0, -1);
        if (dlb_alert_state_parse(dlb_db_text_at(&r, i, 1), &a->state) != 0) {
            s = dlb_errorf(err, DLB_ERR_INPUT, "%s: alert %lld has the unknown state "
                           "'%s': a damaged store, or one a newer dlbench wrote",
                           dlb_db_where(st->db), a->id,
                           dlb_db_text_at(&r, i, 1) ? dlb_db_text_at(&r, i, 1) : "");
            break;
        }
        a->good_commit = dup(&r, i, 2);
        a->bad_commit = dup(&r, i, 3);
        a->good_utc = dup(&r, i, 4);
        a->bad_utc = dup(&r, i, 5);
        a->direction = dup(&r, i, 6);
        a->worst_ratio = dlb_db_real_at(&r, i, 7);
        a->beyond = dlb_db_int_at(&r, i, 8, 0);
        a->members = dup(&r, i, 9);
        a->runs_after = dlb_db_int_at(&r, i, 10, 0);
        a->seen = dlb_db_int_at(&r, i, 11, 0);
        a->note = dup(&r, i, 12);
        a->created_utc = dup(&r, i, 13);
        a->updated_utc = dup(&r, i, 14);
        a->confirmed_utc = dup(&r, i, 15);
    }
    size_t rows = r.n_rows;
    dlb_db_rows_free(&r);
    if (s != DLB_OK) {
        dlb_alert_rows_free(v, rows);
        return s;
    }
    *out = v;
    *n = rows;
    return DLB_OK;
}

/* The values of ALERT_COLUMNS, in order. */
static void alert_values(const struct dlb_alert_row *a, struct dlb_db_value *p)
{
    p[0] = dlb_db_text(dlb_alert_state_name(a->state));
    p[1] = dlb_db_text(a->good_commit);
    p[2] = dlb_db_text(a->bad_commit);
    p[3] = dlb_db_text(a->good_utc);
    p[4] = dlb_db_text(a->bad_utc);
    p[5] = dlb_db_text(a->direction);
    p[6] = dlb_db_real_or_null(a->worst_ratio);
    p[7] = dlb_db_int(a->beyond);
    p[8] = dlb_db_text(a->members);
    p[9] = dlb_db_int(a->runs_after);
    p[10] = dlb_db_int(a->seen);
    p[11] = dlb_db_text(a->note);
    p[12] = dlb_db_text(a->created_utc);
    p[13] = dlb_db_text(a->updated_utc);
    p[14] = dlb_db_text(a->confirmed_utc);
}

dlb_status dlb_store_alert_insert(struct dlb_store *st, struct dlb_alert_row *a,
                                  struct dlb_error *err)
{
    struct dlb_db_value p[15];
    alert_values(a, p);
    dlb_status s = dlb_db_exec(st->db, "INSERT INTO alerts (" ALERT_COLUMNS ") VALUES"
                               " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               p, 15, NULL, err);
    struct dlb_db_rows r;
    /* The writer holds the store's write lock: the largest id is this
     * row's, on both engines, without RETURNING. */
    if (s == DLB_OK && (s = dlb_db_exec(st->db, "SELECT MAX(id) FROM alerts", NULL, 0,
                                        &r, err)) == DLB_OK) {
        a->id = dlb_db_int_at(&r, 0, 0, -1);
        dlb_db_rows_free(&r);
    }
    return s;
}

dlb_status dlb_store_alert_update(struct dlb_store *st, const struct dlb_alert_row *a,
                                  struct dlb_error *err)
{
    struct dlb_db_value p[16];
    alert_values(a, p);
    p[15] = dlb_db_int(a->id);
    return dlb_db_exec(st->db, "UPDATE alerts SET state = ?, good_commit = ?,"
                       " bad_commit = ?, good_utc = ?, bad_utc = ?, direction = ?,"
                       " worst_ratio = ?, beyond = ?, members = ?, runs_after = ?,"
                       " seen = ?, note = ?, created_utc = ?, updated_utc = ?,"
                       " confirmed_utc = ? WHERE id = ?", p, 16, NULL, err);
}

dlb_status dlb_store_alert_event(struct dlb_store *st, long long id,
                                 enum dlb_alert_state state, const char *note,
                                 const char *at_utc, struct dlb_error *err)
{
    struct dlb_db_value p[] = {dlb_db_int(id), dlb_db_text(dlb_alert_state_name(state)),
                               dlb_db_text(note), dlb_db_text(at_utc)};
    return dlb_db_exec(st->db, "INSERT INTO alert_events (alert_id, state, note, at_utc)"
                       " VALUES (?, ?, ?, ?)", p, 4, NULL, err);
}

dlb_status dlb_store_alert_events(struct dlb_store *st, long long id,
                                  struct dlb_db_rows *rows, struct dlb_error *err)
{
    struct dlb_db_value p = dlb_db_int(id);
    return dlb_db_exec(st->db, "SELECT state, note, at_utc FROM alert_events WHERE"
                       " alert_id = ? ORDER BY id", &p, 1, rows, err);
}

void dlb_threshold_rules_free(struct dlb_threshold_rule *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++) {
        free(r[i].suite);
        free(r[i].config);
        free(r[i].machine);
    }
    free(r);
}

dlb_status dlb_store_thresholds_read(struct dlb_store *st,
                                     struct dlb_threshold_rule **out, size_t *n,
                                     struct dlb_error *err)
{
    *out = NULL;
    *n = 0;
    struct dlb_db_rows r;
    dlb_status s = dlb_db_exec(st->db, "SELECT id, suite, config, machine, slowdown"
                               " FROM thresholds ORDER BY id", NULL, 0, &r, err);
    if (s != DLB_OK)
        return s;
    struct dlb_threshold_rule *v = calloc(r.n_rows + 1, sizeof *v);
    int bad = !v;
    for (size_t i = 0; v && i < r.n_rows; i++) {
        v[i].id = dlb_db_int_at(&r, i, 0, -1);
        v[i].suite = dup(&r, i, 1);
        v[i].config = dup(&r, i, 2);
        v[i].machine = dup(&r, i, 3);
        v[i].slowdown = dlb_db_real_at(&r, i, 4);
        bad |= !v[i].suite || !v[i].config || !v[i].machine;
    }
    size_t rows = r.n_rows;
    dlb_db_rows_free(&r);
    if (bad) {
        dlb_threshold_rules_free(v, rows);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    *out = v;
    *n = rows;
    return DLB_OK;
}

dlb_status dlb_store_threshold_set(struct dlb_store *st, const char *suite,
                                   const char *config, const char *machine,
                                   double slowdown, struct dlb_error *err)
{
    struct dlb_db_value key[] = {dlb_db_text(suite), dlb_db_text(config),
                                 dlb_db_text(machine)};
    struct dlb_db_value all[] = {dlb_db_text(suite), dlb_db_text(config),
                                 dlb_db_text(machine), dlb_db_real(slowdown)};
    dlb_status s = dlb_db_begin_write(st->db, err);
    if (s == DLB_OK)
        s = dlb_db_exec(st->db, "DELETE FROM thresholds WHERE suite = ? AND config = ?"
                        " AND machine = ?", key, 3, NULL, err);
    if (s == DLB_OK)
        s = dlb_db_exec(st->db, "INSERT INTO thresholds (suite, config, machine,"
                        " slowdown) VALUES (?, ?, ?, ?)", all, 4, NULL, err);
    if (s == DLB_OK)
        return dlb_db_commit(st->db, err);
    dlb_db_rollback(st->db);
    return s;
}

dlb_status dlb_store_threshold_unset(struct dlb_store *st, const char *suite,
                                     const char *config, const char *machine,
                                     int *removed, struct dlb_error *err)
{
    struct dlb_db_value key[] = {dlb_db_text(suite), dlb_db_text(config),
                                 dlb_db_text(machine)};
    struct dlb_db_rows r;
    *removed = 0;
    dlb_status s = dlb_db_begin_write(st->db, err);
    if (s == DLB_OK && (s = dlb_db_exec(st->db, "SELECT id FROM thresholds WHERE"
                                        " suite = ? AND config = ? AND machine = ?",
                                        key, 3, &r, err)) == DLB_OK) {
        *removed = r.n_rows > 0;
        dlb_db_rows_free(&r);
    }
    if (s == DLB_OK)
        s = dlb_db_exec(st->db, "DELETE FROM thresholds WHERE suite = ? AND config = ?"
                        " AND machine = ?", key, 3, NULL, err);
    if (s == DLB_OK)
        return dlb_db_commit(st->db, err);
    dlb_db_rollback(st->db);
    return s;
}
