/* The engine-neutral half of db.h: choosing the engine, transactions,
 * rows. */
#include "store/db.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dlb_db_value dlb_db_real_or_null(double v)
{
    return isfinite(v) ? dlb_db_real(v) : (struct dlb_db_value){DLB_DB_NULL, 0, 0, NULL};
}

static const struct dlb_db_value *cell(const struct dlb_db_rows *r, size_t row,
                                       size_t col)
{
    if (!r || row >= r->n_rows || col >= r->n_cols)
        return NULL;
    return &r->cells[row * r->n_cols + col];
}

double dlb_db_real_at(const struct dlb_db_rows *r, size_t row, size_t col)
{
    const struct dlb_db_value *v = cell(r, row, col);
    if (!v)
        return NAN;
    switch (v->type) {
    case DLB_DB_INT: return (double)v->i;
    case DLB_DB_REAL: return v->d;
    case DLB_DB_TEXT: {
        char *end;
        errno = 0;
        double d = strtod(v->s, &end);
        return errno || end == v->s || *end ? NAN : d;
    }
    default: return NAN;
    }
}

long long dlb_db_int_at(const struct dlb_db_rows *r, size_t row, size_t col,
                        long long fallback)
{
    const struct dlb_db_value *v = cell(r, row, col);
    if (!v)
        return fallback;
    switch (v->type) {
    case DLB_DB_INT: return v->i;
    case DLB_DB_REAL: return (long long)v->d;
    case DLB_DB_TEXT: {
        char *end;
        errno = 0;
        long long i = strtoll(v->s, &end, 10);
        return errno || end == v->s || *end ? fallback : i;
    }
    default: return fallback;
    }
}

const char *dlb_db_text_at(const struct dlb_db_rows *r, size_t row, size_t col)
{
    const struct dlb_db_value *v = cell(r, row, col);
    return v && v->type == DLB_DB_TEXT ? v->s : NULL;
}

void dlb_db_rows_free(struct dlb_db_rows *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->cells && i < r->n_rows * r->n_cols; i++)
        if (r->cells[i].type == DLB_DB_TEXT)
            free((char *)r->cells[i].s);
    free(r->cells);
    memset(r, 0, sizeof *r);
}

int dlb_db_rows_push(struct dlb_db_rows *r, const struct dlb_db_value *cells)
{
    struct dlb_db_value *v = realloc(r->cells, (r->n_rows + 1) * (r->n_cols ? r->n_cols : 1) *
                                     sizeof *v);
    if (!v)
        return -1;
    r->cells = v;
    struct dlb_db_value *row = &v[r->n_rows * r->n_cols];
    for (size_t c = 0; c < r->n_cols; c++) {
        row[c] = cells[c];
        if (cells[c].type == DLB_DB_TEXT && !(row[c].s = strdup(cells[c].s))) {
            while (c-- > 0)
                if (row[c].type == DLB_DB_TEXT)
                    free((char *)row[c].s);
            return -1;
        }
    }
    r->n_rows++;
    return 0;
}

static int is_url(const char *where)
{
    return !strncmp(where, "postgresql://", 13) || !strncmp(where, "postgres://", 11);
}

/* The URL without its password (user:secret@host -> user@host), for
 * messages and logs. */
static char *shown_where(const char *where)
{
    char *s = strdup(where);
    if (!s || !is_url(where))
        return s;
    char *auth = strstr(s, "://") + 3, *at = strchr(auth, '@');
    char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (colon)
        memmove(colon, at, strlen(at) + 1);
    return s;
}

dlb_status dlb_db_open(const char *where, enum dlb_db_open mode,
                       struct dlb_db **out, struct dlb_error *err)
{
    *out = NULL;
    if (!where || !*where)
        return dlb_errorf(err, DLB_ERR_INPUT, "which store? give a SQLite file "
                          "(results.db) or a postgresql:// URL");
    struct dlb_db *db = calloc(1, sizeof *db);
    if (!db || !(db->where = shown_where(where))) {
        free(db);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    dlb_status s = is_url(where)
                   ? dlb_db_pg_open(where, db->where, &db->ops, &db->h, err)
                   : dlb_db_sqlite_open(where, mode, &db->ops, &db->h, err);
    if (s != DLB_OK) {
        free(db->where);
        free(db);
        return s;
    }
    *out = db;
    return DLB_OK;
}

void dlb_db_close(struct dlb_db *db)
{
    if (!db)
        return;
    if (db->in_txn)
        dlb_db_rollback(db);
    db->ops->close(db->h);
    free(db->where);
    free(db);
}

const char *dlb_db_engine(const struct dlb_db *db)
{
    return db->ops->engine;
}

const char *dlb_db_where(const struct dlb_db *db)
{
    return db->where;
}

/* {ID} in DDL becomes the engine's identity column type. */
static char *expand_ddl(const char *sql, const char *id_type)
{
    const char *mark = strstr(sql, "{ID}");
    if (!mark)
        return strdup(sql);
    size_t n = strlen(sql) + strlen(id_type) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s%s%s", (int)(mark - sql), sql, id_type, mark + 4);
    return out;
}

dlb_status dlb_db_exec(struct dlb_db *db, const char *sql,
                       const struct dlb_db_value *params, size_t n_params,
                       struct dlb_db_rows *rows, struct dlb_error *err)
{
    if (rows)
        memset(rows, 0, sizeof *rows);
    char *text = expand_ddl(sql, db->ops->id_type);
    if (!text)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    dlb_status s = db->ops->exec(db->h, db->where, text, params, n_params, rows, err);
    free(text);
    if (s != DLB_OK && rows)
        dlb_db_rows_free(rows);
    return s;
}

int dlb_db_has_table(struct dlb_db *db, const char *table, struct dlb_error *err)
{
    struct dlb_db_rows rows;
    struct dlb_db_value p = dlb_db_text(table);
    if (dlb_db_exec(db, db->ops->has_table_sql, &p, 1, &rows, err) != DLB_OK)
        return -1;
    int found = rows.n_rows > 0 && dlb_db_text_at(&rows, 0, 0) != NULL;
    dlb_db_rows_free(&rows);
    return found;
}

dlb_status dlb_db_begin_write(struct dlb_db *db, struct dlb_error *err)
{
    for (const char *const *q = db->ops->begin_write; *q; q++) {
        dlb_status s = dlb_db_exec(db, *q, NULL, 0, NULL, err);
        if (s != DLB_OK) {
            if (q != db->ops->begin_write)
                dlb_db_rollback(db);
            return s;
        }
        db->in_txn = 1;
    }
    return DLB_OK;
}

dlb_status dlb_db_begin_read(struct dlb_db *db, struct dlb_error *err)
{
    dlb_status s = dlb_db_exec(db, db->ops->begin_read, NULL, 0, NULL, err);
    db->in_txn = s == DLB_OK;
    return s;
}

dlb_status dlb_db_commit(struct dlb_db *db, struct dlb_error *err)
{
    dlb_status s = dlb_db_exec(db, "COMMIT", NULL, 0, NULL, err);
    if (s != DLB_OK)
        dlb_db_rollback(db);
    db->in_txn = 0;
    return s;
}

void dlb_db_rollback(struct dlb_db *db)
{
    struct dlb_error ignored;
    if (db->in_txn)
        dlb_db_exec(db, "ROLLBACK", NULL, 0, NULL, &ignored);
    db->in_txn = 0;
}
