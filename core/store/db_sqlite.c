/* db.h's SQLite engine: a file, in write-ahead-log mode with full syncs,
 * so that readers never block the writer, a writer killed at any moment
 * leaves the last committed state, and a committed transaction survives a
 * power cut. Writers wait for each other up to DLB_SQLITE_BUSY_MS. */
#include "store/db.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Two nightly jobs adding their runs at once wait for each other this
 * long: an add takes milliseconds, so only a writer stopped inside its
 * transaction (and then killed, which releases the lock) makes another
 * wait at all. */
#define DLB_SQLITE_BUSY_MS 60000

/* An error from SQLite, as the user should read it: what is wrong with
 * the file, or what failed, and what to do. */
static dlb_status sqlite_error(sqlite3 *db, int rc, const char *where,
                               struct dlb_error *err)
{
    const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: not a dlbench store, or a damaged "
                          "one (SQLite: %s); give the store dlbench store add made, "
                          "or a new file name", where, msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return dlb_errorf(err, DLB_ERR_IO, "%s: another process held the store "
                          "for %d s (SQLite: %s); try again when it has finished",
                          where, DLB_SQLITE_BUSY_MS / 1000, msg);
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: cannot open the store for "
                          "writing (SQLite: %s); check the file's and its "
                          "folder's permissions", where, msg);
    case SQLITE_FULL:
        return dlb_errorf(err, DLB_ERR_IO, "%s: the disk is full (SQLite: %s); "
                          "nothing of this change was kept", where, msg);
    default:
        return dlb_errorf(err, DLB_ERR_IO, "%s: %s", where, msg);
    }
}

static int bind_all(sqlite3_stmt *st, const struct dlb_db_value *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int c = (int)i + 1, rc;
        switch (p[i].type) {
        case DLB_DB_INT: rc = sqlite3_bind_int64(st, c, p[i].i); break;
        case DLB_DB_REAL: rc = sqlite3_bind_double(st, c, p[i].d); break;
        case DLB_DB_TEXT: rc = sqlite3_bind_text(st, c, p[i].s, -1, SQLITE_TRANSIENT); break;
        default: rc = sqlite3_bind_null(st, c); break;
        }
        if (rc != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}

static int push_row(sqlite3_stmt *st, struct dlb_db_rows *rows)
{
    size_t n = (size_t)sqlite3_column_count(st);
    struct dlb_db_value cells[64];
    if (n > 64)
        return -1;
    rows->n_cols = n;
    for (size_t c = 0; c < n; c++) {
        int col = (int)c;
        switch (sqlite3_column_type(st, col)) {
        case SQLITE_INTEGER: cells[c] = dlb_db_int(sqlite3_column_int64(st, col)); break;
        case SQLITE_FLOAT: cells[c] = dlb_db_real(sqlite3_column_double(st, col)); break;
        case SQLITE_TEXT:
            cells[c] = dlb_db_text((const char *)sqlite3_column_text(st, col));
            break;
        default: cells[c] = dlb_db_text(NULL); break;
        }
    }
    return dlb_db_rows_push(rows, cells);
}

static dlb_status sqlite_exec(void *h, const char *where, const char *sql,
                              const struct dlb_db_value *params, size_t n_params,
                              struct dlb_db_rows *rows, struct dlb_error *err)
{
    sqlite3 *db = h;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = bind_all(st, params, n_params);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW && rows && push_row(st, rows) != 0) {
            sqlite3_finalize(st);
            return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory reading the store",
                              where);
        }
    }
    dlb_status s = rc == SQLITE_DONE ? DLB_OK : sqlite_error(db, rc, where, err);
    sqlite3_finalize(st);
    return s;
}

/* The connection's set-up statements, retried while SQLite says busy.
 * SQLite answers SQLITE_BUSY at once, without calling the busy handler,
 * where waiting could deadlock: two processes that both read a new, empty
 * file and both want to switch it to WAL. One must let go and try again,
 * until the same deadline the busy handler keeps. */
static dlb_status sqlite_setup(sqlite3 *db, const char *where, const char *sql,
                               struct dlb_error *err)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            return DLB_OK;
        clock_gettime(CLOCK_MONOTONIC, &t);
        double ms = (double)(t.tv_sec - t0.tv_sec) * 1e3 +
                    (double)(t.tv_nsec - t0.tv_nsec) / 1e6;
        if ((rc & 0xff) != SQLITE_BUSY || ms >= DLB_SQLITE_BUSY_MS)
            return sqlite_error(db, rc, where, err);
        sqlite3_sleep(5);
    }
}

static void sqlite_close(void *h)
{
    sqlite3_close(h);
}

static const char *const sqlite_begin_write[] = {"BEGIN IMMEDIATE", NULL};

static const struct dlb_db_ops sqlite_ops = {
    .engine = "sqlite",
    .id_type = "INTEGER PRIMARY KEY",
    .exec = sqlite_exec,
    .has_table_sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
    .begin_write = sqlite_begin_write,
    .begin_read = "BEGIN",
    .close = sqlite_close,
};

dlb_status dlb_db_sqlite_open(const char *path, enum dlb_db_open mode,
                              const struct dlb_db_ops **ops, void **h,
                              struct dlb_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT || mode != DLB_DB_CREATE)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s%s", path, strerror(errno),
                              errno == ENOENT ? " (no store there yet: dlbench store "
                              "add DB RUNDIR... makes one)" : "");
    } else if (!S_ISREG(sb.st_mode)) {
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: not a file (a store is one SQLite "
                          "file, or a postgresql:// URL)", path);
    }
    sqlite3 *db = NULL;
    int flags = SQLITE_OPEN_READWRITE | (mode == DLB_DB_CREATE ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path, &db, flags, NULL);
    if (rc != SQLITE_OK) {
        dlb_status s = sqlite_error(db, rc, path, err);
        sqlite3_close(db);
        return s;
    }
    sqlite3_busy_timeout(db, DLB_SQLITE_BUSY_MS);
    /* The first statement reads the file: a file that is not SQLite's
     * fails here, before anything is written. */
    static const char *const setup[] = {
        "PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL",
        "PRAGMA foreign_keys = ON",
    };
    for (size_t i = 0; i < sizeof setup / sizeof *setup; i++) {
        dlb_status s = sqlite_setup(db, path, setup[i], err);
        if (s != DLB_OK) {
            sqlite3_close(db);
            return s;
        }
    }
    *ops = &sqlite_ops;
    *h = db;
    return DLB_OK;
}
