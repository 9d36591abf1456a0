/* The results store: runs of many nights, commits, machines and suites in
 * one database (SQLite by default, PostgreSQL for a team; db.h), one row
 * per configuration and run with the run's commit, machine and suite and
 * the configuration's statistics. A run is known by its suite, host,
 * start time and directory name, and a row by its run and configuration,
 * so adding a run again adds nothing. The schema is versioned (dlb_meta.schema_version)
 * and a store of an older version is migrated when it is opened.
 * doc/history.md describes the tables. */
#ifndef DLB_CORE_STORE_H
#define DLB_CORE_STORE_H

#include <stddef.h>
#include "store/db.h"
#include "results/record.h"

/* 1: runs and results; 2: alerts, their events and thresholds. */
#define DLB_STORE_SCHEMA_VERSION 2

struct dlb_store {
    struct dlb_db *db;
    int version;
};

/* Open `where` (db.h) and bring its schema to DLB_STORE_SCHEMA_VERSION.
 * A store of a newer version, or a database holding dlbench's table names
 * without its schema, is refused (DLB_ERR_INPUT, saying what to do). */
dlb_status dlb_store_open(const char *where, enum dlb_db_open mode,
                          struct dlb_store **out, struct dlb_error *err);
void dlb_store_close(struct dlb_store *st);

/* Bring the schema from what it is to `target` (<= the current version),
 * in one write transaction; the tests make older stores with it. */
dlb_status dlb_store_migrate(struct dlb_db *db, int target, int *version,
                             struct dlb_error *err);

/* ---- runs in --------------------------------------------------------- */

/* How a run is labelled in the store; NULL: from its context (the host,
 * the commit dlbench was built from). CI runners have random host names
 * and build a commit other than dlbench's own in a bisection, so both
 * can be given. */
struct dlb_store_labels {
    const char *machine, *commit;
};

/* One run read and checked, ready to add. */
struct dlb_store_run {
    char *file;                 /* the results.json read */
    char *key;                  /* suite|host|start_utc|run directory's name */
    const char *suite, *machine, *host, *commit, *start_utc, *end_utc;
    const char *dlbench_version, *cpu_model, *run_dir;
    int quick;
    struct dlb_results res;     /* the strings above point into it */
    char *machine_own, *commit_own;
};

/* Read PATH (a run directory or its results.json) into `run`. A missing,
 * truncated or corrupt file, or one without the context a store needs
 * (suite.name, start_utc), is DLB_ERR_INPUT naming the file. */
dlb_status dlb_store_run_load(const char *path, const struct dlb_store_labels *labels,
                              struct dlb_store_run *run, struct dlb_error *err);
void dlb_store_run_free(struct dlb_store_run *run);

struct dlb_store_added {
    long long runs_added, runs_known, rows_added, rows_known;
};

/* Add the runs in one transaction: all of them or, on an error, none. A
 * run or row already there is counted as known and left as it was. */
dlb_status dlb_store_add(struct dlb_store *st, const struct dlb_store_run *runs,
                         size_t n, struct dlb_store_added *added,
                         struct dlb_error *err);

/* ---- series out -------------------------------------------------------- */

/* One night of one configuration on one machine. */
struct dlb_point {
    long long run_id;
    char *commit, *start_utc;
    double median_s, ci_lo_s, ci_hi_s, throughput;
    long long samples;
};

/* A series: one suite's configuration on one machine, its ok runs in the
 * order they started. */
struct dlb_series {
    char *suite, *config, *machine;
    struct dlb_point *pts;
    size_t n;
};

struct dlb_series_set {
    struct dlb_series *v;
    size_t n;
};

/* Shell patterns (fnmatch) on each part; NULL matches everything. */
struct dlb_series_filter {
    const char *suite, *config, *machine;
};

dlb_status dlb_store_series(struct dlb_store *st, const struct dlb_series_filter *f,
                            struct dlb_series_set *out, struct dlb_error *err);
void dlb_series_set_free(struct dlb_series_set *s);

/* Counts for `dlbench store info`. */
struct dlb_store_info {
    long long runs, rows, series, suites, machines, commits, alerts_open;
    char *first_utc, *last_utc;
};
dlb_status dlb_store_info(struct dlb_store *st, struct dlb_store_info *out,
                          struct dlb_error *err);
void dlb_store_info_free(struct dlb_store_info *i);

/* The current time as ISO 8601 UTC (2026-06-01T02:17:00Z) into buf. */
void dlb_store_now_utc(char *buf, size_t n);

#endif
