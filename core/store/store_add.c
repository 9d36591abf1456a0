/* Runs into the store: a run directory's results.json read and checked,
 * then its configurations added, every run of one `store add` in one
 * transaction. */
#include "store/store.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "results/results.h"

static const char *ctx_str(json_t *ctx, const char *name)
{
    const char *s = json_string_value(dlb_context_get(ctx, name));
    return s && *s ? s : NULL;
}

static char *results_file(const char *path)
{
    struct stat sb;
    size_t n = strlen(path) + sizeof "/results.json";
    char *f = malloc(n);
    if (f)
        snprintf(f, n, stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) ? "%s/results.json"
                 : "%s", path);
    return f;
}

dlb_status dlb_store_run_load(const char *path, const struct dlb_store_labels *labels,
                              struct dlb_store_run *run, struct dlb_error *err)
{
    memset(run, 0, sizeof *run);
    if (!(run->file = results_file(path)))
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    json_t *doc = NULL;
    struct stat sb;
    if (stat(run->file, &sb) != 0) {
        char journal[4096];
        snprintf(journal, sizeof journal, "%s/journal.jsonl", path);
        int interrupted = errno == ENOENT && access(journal, F_OK) == 0;
        dlb_status s = dlb_errorf(err, DLB_ERR_INPUT, "%s: %s%s", run->file,
                                  strerror(errno), interrupted ? " (an interrupted "
                                  "run: dlbench --resume DIR finishes it)" :
                                  " (give run directories or results.json files)");
        dlb_store_run_free(run);
        return s;
    }
    dlb_status s = dlb_results_read(run->file, &doc, err);
    if (s == DLB_OK)
        s = dlb_results_parse(doc, run->file, &run->res, err);
    json_decref(doc);
    if (s != DLB_OK) {
        dlb_store_run_free(run);
        return s == DLB_ERR_IO ? DLB_ERR_INPUT : s;
    }
    json_t *ctx = run->res.context;
    run->suite = ctx_str(ctx, "suite.name");
    run->host = ctx_str(ctx, "host");
    run->start_utc = ctx_str(ctx, "start_utc");
    run->end_utc = ctx_str(ctx, "end_utc");
    run->dlbench_version = ctx_str(ctx, "dlbench.version");
    run->cpu_model = ctx_str(ctx, "cpu.model");
    run->run_dir = ctx_str(ctx, "run_dir");
    run->quick = json_is_true(dlb_context_get(ctx, "quick"));
    const char *missing = !run->suite ? "suite.name" : !run->start_utc ? "start_utc"
                          : !run->host ? "host" : NULL;
    if (missing) {
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: the context has no %s, which the "
                       "store keys a run by (a results.json dlbench run wrote has it)",
                       run->file, missing);
        dlb_store_run_free(run);
        return s;
    }
    run->machine = labels && labels->machine ? labels->machine : run->host;
    run->commit = labels && labels->commit ? labels->commit
                  : ctx_str(ctx, "dlbench.git_commit");
    if (!run->commit)
        run->commit = "unknown";
    /* The labels may be the caller's strings: the run keeps its own. */
    run->machine_own = strdup(run->machine);
    run->commit_own = strdup(run->commit);
    /* The run directory's name too: two runs of one suite on one host can
     * start within the same second (start_utc has seconds). */
    const char *base = run->run_dir ? strrchr(run->run_dir, '/') : NULL;
    base = base ? base + 1 : run->run_dir ? run->run_dir : "";
    size_t n = strlen(run->suite) + strlen(run->host) + strlen(run->start_utc) +
               strlen(base) + 4;
    run->key = malloc(n);
    if (!run->machine_own || !run->commit_own || !run->key) {
        dlb_store_run_free(run);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    run->machine = run->machine_own;
    run->commit = run->commit_own;
    snprintf(run->key, n, "%s|%s|%s|%s", run->suite, run->host, run->start_utc, base);
    return DLB_OK;
}

void dlb_store_run_free(struct dlb_store_run *run)
{
    if (run->res.root)
        dlb_results_free(&run->res);
    free(run->file);
    free(run->key);
    free(run->machine_own);
    free(run->commit_own);
    memset(run, 0, sizeof *run);
}

/* A hook for the test of a writer killed inside its transaction
 * (tests/integration/store-crash.sh): with DLBENCH_TEST_STORE_STALL=FILE
 * the first run's rows are written, FILE is created, and the writer waits
 * there, lock held, until it is killed (two minutes at most). */
static void stall_for_test(void)
{
    const char *f = getenv("DLBENCH_TEST_STORE_STALL");
    if (!f || !*f)
        return;
    FILE *mark = fopen(f, "w");
    if (mark)
        fclose(mark);
    for (int i = 0; i < 1200; i++)
        usleep(100000);
}

/* The process medians as a JSON array, or NULL without repetitions. */
static char *process_medians(const struct dlb_record *rec)
{
    if (rec->n_reps < 2)
        return NULL;
    json_t *a = json_array();
    for (size_t i = 0; a && i < rec->n_reps; i++)
        json_array_append_new(a, isfinite(rec->rep_medians[i])
                              ? json_real(rec->rep_medians[i]) : json_null());
    char *s = a ? json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(a);
    return s;
}

static dlb_status add_rows(struct dlb_db *db, long long run_id,
                           const struct dlb_store_run *run,
                           struct dlb_store_added *added, struct dlb_error *err)
{
    static const char *sql =
        "INSERT INTO results (run_id, config, status, reason, median_s, ci_lo_s,"
        " ci_hi_s, samples, cv, throughput, processes, process_medians, doubtful)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (run_id, config) DO NOTHING";
    for (size_t i = 0; i < run->res.n; i++) {
        const struct dlb_record *r = &run->res.records[i];
        char *meds = process_medians(r);
        struct dlb_db_value p[] = {
            dlb_db_int(run_id), dlb_db_text(r->id),
            dlb_db_text(dlb_rec_status_name(r->status)), dlb_db_text(r->reason),
            dlb_db_real_or_null(r->stats.median), dlb_db_real_or_null(r->stats.ci_lo),
            dlb_db_real_or_null(r->stats.ci_hi),
            r->stats.n >= 0 ? dlb_db_int(r->stats.n) : dlb_db_text(NULL),
            dlb_db_real_or_null(r->stats.cv), dlb_db_real_or_null(r->throughput.median),
            dlb_db_int(r->n_reps > 1 ? (long long)r->n_reps : 1), dlb_db_text(meds),
            dlb_db_text(r->system.doubtful),
        };
        /* Whether the row was new: a count before and after would cost a
         * query each; the row's own existence is one. */
        struct dlb_db_value key[] = {dlb_db_int(run_id), dlb_db_text(r->id)};
        struct dlb_db_rows rows;
        dlb_status s = dlb_db_exec(db, "SELECT 1 FROM results WHERE run_id = ? AND "
                                   "config = ?", key, 2, &rows, err);
        int known = s == DLB_OK && rows.n_rows > 0;
        if (s == DLB_OK)
            dlb_db_rows_free(&rows);
        if (s == DLB_OK && !known)
            s = dlb_db_exec(db, sql, p, sizeof p / sizeof *p, NULL, err);
        free(meds);
        if (s != DLB_OK)
            return s;
        if (known)
            added->rows_known++;
        else
            added->rows_added++;
    }
    return DLB_OK;
}

static dlb_status run_id_of(struct dlb_db *db, const char *key, long long *id,
                            struct dlb_error *err)
{
    struct dlb_db_rows rows;
    struct dlb_db_value p = dlb_db_text(key);
    dlb_status s = dlb_db_exec(db, "SELECT id FROM runs WHERE run_key = ?", &p, 1,
                               &rows, err);
    if (s != DLB_OK)
        return s;
    *id = dlb_db_int_at(&rows, 0, 0, -1);
    dlb_db_rows_free(&rows);
    return DLB_OK;
}

static dlb_status add_run(struct dlb_db *db, const struct dlb_store_run *run,
                          struct dlb_store_added *added, struct dlb_error *err)
{
    long long id = -1;
    dlb_status s = run_id_of(db, run->key, &id, err);
    if (s == DLB_OK && id < 0) {
        char now[32];
        dlb_store_now_utc(now, sizeof now);
        struct dlb_db_value p[] = {
            dlb_db_text(run->key), dlb_db_text(run->suite), dlb_db_text(run->machine),
            dlb_db_text(run->host), dlb_db_text(run->commit), dlb_db_text(run->start_utc),
            dlb_db_text(run->end_utc), dlb_db_text(run->run_dir),
            dlb_db_text(run->dlbench_version), dlb_db_text(run->cpu_model),
            dlb_db_int(run->quick), dlb_db_text(now),
        };
        s = dlb_db_exec(db, "INSERT INTO runs (run_key, suite, machine, host, commit_sha,"
                        " start_utc, end_utc, run_dir, dlbench_version, cpu_model, quick,"
                        " added_utc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        p, sizeof p / sizeof *p, NULL, err);
        if (s == DLB_OK)
            s = run_id_of(db, run->key, &id, err);
        if (s == DLB_OK)
            added->runs_added++;
    } else if (s == DLB_OK) {
        added->runs_known++;
    }
    /* A run known already may have gained configurations since (a
     * --resume finished it): those are added, the others left. */
    if (s == DLB_OK)
        s = add_rows(db, id, run, added, err);
    return s;
}

dlb_status dlb_store_add(struct dlb_store *st, const struct dlb_store_run *runs,
                         size_t n, struct dlb_store_added *added,
                         struct dlb_error *err)
{
    memset(added, 0, sizeof *added);
    dlb_status s = dlb_db_begin_write(st->db, err);
    for (size_t i = 0; i < n && s == DLB_OK; i++) {
        s = add_run(st->db, &runs[i], added, err);
        if (s == DLB_OK && i == 0)
            stall_for_test();
    }
    if (s == DLB_OK)
        return dlb_db_commit(st->db, err);
    dlb_db_rollback(st->db);
    memset(added, 0, sizeof *added);
    return s;
}
