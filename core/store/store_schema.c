/* The store's schema, version by version, and opening a store: each
 * version is a list of statements, and a store is brought from its
 * version to DLB_STORE_SCHEMA_VERSION in one write transaction, so a
 * migration killed half-way leaves the store as it was. */
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Version 1: the runs and one row per configuration and run. The types
 * are both engines' (DOUBLE PRECISION is 8 bytes on PostgreSQL, where
 * REAL is 4; BIGINT is SQLite's INTEGER). */
static const char *const v1[] = {
    "CREATE TABLE dlb_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE runs ("
    " id {ID},"
    " run_key TEXT NOT NULL UNIQUE,"     /* suite|host|start_utc|dir name */
    " suite TEXT NOT NULL, machine TEXT NOT NULL, host TEXT,"
    " commit_sha TEXT NOT NULL, start_utc TEXT NOT NULL, end_utc TEXT,"
    " run_dir TEXT, dlbench_version TEXT, cpu_model TEXT, quick BIGINT,"
    " added_utc TEXT NOT NULL)",
    "CREATE INDEX runs_by_series ON runs (suite, machine, start_utc)",
    "CREATE TABLE results ("
    " run_id BIGINT NOT NULL REFERENCES runs (id),"
    " config TEXT NOT NULL, status TEXT NOT NULL, reason TEXT,"
    " median_s DOUBLE PRECISION, ci_lo_s DOUBLE PRECISION,"
    " ci_hi_s DOUBLE PRECISION, samples BIGINT, cv DOUBLE PRECISION,"
    " throughput DOUBLE PRECISION, processes BIGINT, process_medians TEXT,"
    " doubtful TEXT,"
    " PRIMARY KEY (run_id, config))",
    NULL
};

/* Version 2: alerts with their lifecycle (each change of state kept as
 * an event) and thresholds per suite, configuration and machine. */
static const char *const v2[] = {
    "CREATE TABLE alerts ("
    " id {ID},"
    " state TEXT NOT NULL,"
    " good_commit TEXT NOT NULL, bad_commit TEXT NOT NULL,"
    " good_utc TEXT NOT NULL, bad_utc TEXT NOT NULL,"
    " direction TEXT NOT NULL, worst_ratio DOUBLE PRECISION,"
    " beyond BIGINT NOT NULL, members TEXT NOT NULL,"
    " runs_after BIGINT NOT NULL, seen BIGINT NOT NULL, note TEXT,"
    " created_utc TEXT NOT NULL, updated_utc TEXT NOT NULL,"
    " confirmed_utc TEXT)",
    "CREATE TABLE alert_events ("
    " id {ID},"
    " alert_id BIGINT NOT NULL REFERENCES alerts (id),"
    " state TEXT NOT NULL, note TEXT, at_utc TEXT NOT NULL)",
    "CREATE TABLE thresholds ("
    " id {ID},"
    " suite TEXT NOT NULL, config TEXT NOT NULL, machine TEXT NOT NULL,"
    " slowdown DOUBLE PRECISION NOT NULL,"
    " UNIQUE (suite, config, machine))",
    NULL
};

static const char *const *const versions[DLB_STORE_SCHEMA_VERSION] = {v1, v2};

/* The tables a store of the current version has: a database that holds
 * any of them without dlb_meta is someone else's. */
static const char *const ours[] = {"runs", "results", "alerts", "alert_events",
                                   "thresholds", NULL};

void dlb_store_now_utc(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The version written in dlb_meta: 0 for an empty database. */
static dlb_status read_version(struct dlb_db *db, int *version, struct dlb_error *err)
{
    int has = dlb_db_has_table(db, "dlb_meta", err);
    if (has < 0)
        return DLB_ERR_IO;
    if (!has) {
        for (const char *const *t = ours; *t; t++) {
            int other = dlb_db_has_table(db, *t, err);
            if (other < 0)
                return DLB_ERR_IO;
            if (other)
                return dlb_errorf(err, DLB_ERR_INPUT, "%s: holds a table named %s but "
                                  "no dlbench schema (dlb_meta): not a dlbench store; "
                                  "give another file or database", dlb_db_where(db), *t);
        }
        *version = 0;
        return DLB_OK;
    }
    struct dlb_db_rows rows;
    dlb_status s = dlb_db_exec(db, "SELECT value FROM dlb_meta WHERE key = 'schema_version'",
                               NULL, 0, &rows, err);
    if (s != DLB_OK)
        return s;
    long long v = dlb_db_int_at(&rows, 0, 0, -1);
    dlb_db_rows_free(&rows);
    if (v < 1)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: dlb_meta has no valid "
                          "schema_version: a damaged store; restore it from a copy",
                          dlb_db_where(db));
    *version = (int)v;
    return DLB_OK;
}

dlb_status dlb_store_migrate(struct dlb_db *db, int target, int *version,
                             struct dlb_error *err)
{
    /* One snapshot for the whole read: without it, another process
     * creating the store between two of read_version's queries would show
     * its tables without dlb_meta, and this one would call it foreign. */
    int v = 0;
    dlb_status s = dlb_db_begin_read(db, err);
    if (s == DLB_OK) {
        s = read_version(db, &v, err);
        dlb_db_rollback(db);
    }
    if (s == DLB_OK && v > DLB_STORE_SCHEMA_VERSION)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: store schema version %d is newer "
                          "than this dlbench understands (%d): use a newer dlbench",
                          dlb_db_where(db), v, DLB_STORE_SCHEMA_VERSION);
    if (s != DLB_OK || v >= target) {
        *version = v;
        return s;
    }
    /* Another process may be migrating too: the version is read again
     * once this one holds the write lock. */
    if ((s = dlb_db_begin_write(db, err)) != DLB_OK)
        return s;
    s = read_version(db, &v, err);
    for (int k = v; s == DLB_OK && k < target; k++)
        for (const char *const *q = versions[k]; s == DLB_OK && *q; q++)
            s = dlb_db_exec(db, *q, NULL, 0, NULL, err);
    if (s == DLB_OK && v < target) {
        char num[16], now[32];
        snprintf(num, sizeof num, "%d", target);
        dlb_store_now_utc(now, sizeof now);
        const char *up = v == 0
            ? "INSERT INTO dlb_meta (key, value) VALUES ('schema_version', ?)"
            : "UPDATE dlb_meta SET value = ? WHERE key = 'schema_version'";
        struct dlb_db_value p = dlb_db_text(num);
        s = dlb_db_exec(db, up, &p, 1, NULL, err);
        if (s == DLB_OK && v == 0) {
            p = dlb_db_text(now);
            s = dlb_db_exec(db, "INSERT INTO dlb_meta (key, value) VALUES "
                            "('created_utc', ?)", &p, 1, NULL, err);
        }
    }
    if (s == DLB_OK)
        s = dlb_db_commit(db, err);
    else
        dlb_db_rollback(db);
    if (s == DLB_OK)
        *version = v < target ? target : v;
    return s;
}

dlb_status dlb_store_open(const char *where, enum dlb_db_open mode,
                          struct dlb_store **out, struct dlb_error *err)
{
    *out = NULL;
    struct dlb_store *st = calloc(1, sizeof *st);
    if (!st)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    dlb_status s = dlb_db_open(where, mode, &st->db, err);
    /* Target 0 reads the version and changes nothing: an empty database
     * becomes a store only when asked to (store add, run --store). */
    if (s == DLB_OK)
        s = dlb_store_migrate(st->db, 0, &st->version, err);
    if (s == DLB_OK && st->version == 0 && mode != DLB_DB_CREATE)
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: an empty database, not yet a "
                       "dlbench store (dlbench store add %s RUNDIR... makes it one)",
                       dlb_db_where(st->db), dlb_db_where(st->db));
    if (s == DLB_OK)
        s = dlb_store_migrate(st->db, DLB_STORE_SCHEMA_VERSION, &st->version, err);
    if (s != DLB_OK) {
        dlb_store_close(st);
        return s;
    }
    *out = st;
    return DLB_OK;
}

void dlb_store_close(struct dlb_store *st)
{
    if (!st)
        return;
    dlb_db_close(st->db);
    free(st);
}
