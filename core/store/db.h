/* One SQL interface over the results store's two engines: SQLite, the
 * embedded default (a file path), and PostgreSQL through libpq (a
 * postgresql:// or postgres:// URL), for a team's shared store. The store
 * (store.h) writes its SQL once, with `?` for parameters and {ID} for an
 * identity column's type, and this layer runs it on either engine.
 *
 * Writes go through dlb_db_begin_write ... dlb_db_commit: SQLite's BEGIN
 * IMMEDIATE, PostgreSQL's BEGIN with a transaction-scoped advisory lock,
 * so two writers (two CI jobs at once) take turns, each seeing what the
 * other committed, and a writer killed inside its transaction leaves
 * nothing of it behind. */
#ifndef DLB_CORE_DB_H
#define DLB_CORE_DB_H

#include <stddef.h>
#include "util/error.h"

enum dlb_db_type { DLB_DB_NULL, DLB_DB_INT, DLB_DB_REAL, DLB_DB_TEXT };

/* A parameter or a cell. Text a row holds is owned by the rows. */
struct dlb_db_value {
    enum dlb_db_type type;
    long long i;
    double d;
    const char *s;
};

static inline struct dlb_db_value dlb_db_int(long long v)
{
    return (struct dlb_db_value){DLB_DB_INT, v, 0, NULL};
}
static inline struct dlb_db_value dlb_db_real(double v)
{
    return (struct dlb_db_value){DLB_DB_REAL, 0, v, NULL};
}
/* NULL text is SQL NULL. */
static inline struct dlb_db_value dlb_db_text(const char *v)
{
    return (struct dlb_db_value){v ? DLB_DB_TEXT : DLB_DB_NULL, 0, 0, v};
}
/* A real that is not finite is stored as NULL (SQL has no NaN). */
struct dlb_db_value dlb_db_real_or_null(double v);

struct dlb_db_rows {
    size_t n_rows, n_cols;
    struct dlb_db_value *cells;  /* n_rows x n_cols, row-major */
};

/* A cell as a number (text is parsed: PostgreSQL returns text), NAN or
 * `fallback` when NULL or not a number; as text (NULL when NULL). */
double dlb_db_real_at(const struct dlb_db_rows *r, size_t row, size_t col);
long long dlb_db_int_at(const struct dlb_db_rows *r, size_t row, size_t col,
                        long long fallback);
const char *dlb_db_text_at(const struct dlb_db_rows *r, size_t row, size_t col);
void dlb_db_rows_free(struct dlb_db_rows *r);

struct dlb_db;

enum dlb_db_open { DLB_DB_EXISTING, DLB_DB_CREATE };

/* Open `where`: a postgresql:// or postgres:// URL, else a SQLite file
 * (created with DLB_DB_CREATE; refused when missing otherwise, with what
 * to do). Errors name `where` (a URL's password left out). */
dlb_status dlb_db_open(const char *where, enum dlb_db_open mode,
                       struct dlb_db **out, struct dlb_error *err);
void dlb_db_close(struct dlb_db *db);

/* "sqlite" or "postgresql"; `where` as messages show it. */
const char *dlb_db_engine(const struct dlb_db *db);
const char *dlb_db_where(const struct dlb_db *db);

/* Run one statement with its parameters; with `rows` non-NULL its result
 * rows are returned there (free with dlb_db_rows_free). */
dlb_status dlb_db_exec(struct dlb_db *db, const char *sql,
                       const struct dlb_db_value *params, size_t n_params,
                       struct dlb_db_rows *rows, struct dlb_error *err);

/* 1 when the table exists, 0 when not, -1 on an error (err set). */
int dlb_db_has_table(struct dlb_db *db, const char *table, struct dlb_error *err);

dlb_status dlb_db_begin_write(struct dlb_db *db, struct dlb_error *err);
dlb_status dlb_db_begin_read(struct dlb_db *db, struct dlb_error *err);
dlb_status dlb_db_commit(struct dlb_db *db, struct dlb_error *err);
void dlb_db_rollback(struct dlb_db *db);

/* The engines, behind dlb_db_open. */
struct dlb_db_ops {
    const char *engine;
    const char *id_type;     /* what {ID} becomes in DDL */
    dlb_status (*exec)(void *h, const char *where, const char *sql,
                       const struct dlb_db_value *params, size_t n_params,
                       struct dlb_db_rows *rows, struct dlb_error *err);
    const char *has_table_sql;   /* one parameter, the name; a row if it exists */
    const char *const *begin_write; /* statements, ended by NULL */
    const char *begin_read;      /* a transaction that reads one snapshot */
    void (*close)(void *h);
};

struct dlb_db {
    const struct dlb_db_ops *ops;
    void *h;
    char *where;
    int in_txn;
};

/* Engine entry points: fill *h or return an error naming `where`. The
 * PostgreSQL one, without libpq in the build, says so (DLB_ERR_INPUT). */
dlb_status dlb_db_sqlite_open(const char *path, enum dlb_db_open mode,
                              const struct dlb_db_ops **ops, void **h,
                              struct dlb_error *err);
dlb_status dlb_db_pg_open(const char *url, const char *shown,
                          const struct dlb_db_ops **ops, void **h,
                          struct dlb_error *err);

/* Rows being filled by an engine: append a row of n_cols cells (text
 * copied); 0, or -1 when memory ran out. */
int dlb_db_rows_push(struct dlb_db_rows *r, const struct dlb_db_value *cells);

#endif
