/* The results store on SQLite (core/store/): opening and making one,
 * migrating an older schema, refusing a newer one and files that are not
 * stores, adding runs once whatever the number of adds, series in the
 * order the runs started, alert and threshold rows, and which threshold
 * rule a series takes. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "history/changes.h"
#include "store/store_alerts.h"

static char tmp[256];

static const char *path(const char *name)
{
    static char p[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", tmp, name);
    return p[k];
}

/* DIR/results.json: suite `suite`, started `utc`, one ok record per id
 * with median step time `median` (and a failed one, "broken"). */
static void write_run(const char *dir, const char *suite, const char *utc,
                      const char *commit, double median)
{
    mkdir(path(dir), 0755);
    json_t *recs = json_array();
    const char *ids[2] = {"batch=64", "batch=256"};
    for (int i = 0; i < 2; i++)
        json_array_append_new(recs, json_pack("{s:i, s:s, s:{}, s:s, s:{s:i, s:f, s:f, s:f},"
                                              " s:{s:f}}", "index", i, "id", ids[i], "config",
                                              "status", "ok", "stats", "n", 20, "median",
                                              median * (i + 1), "ci_lo", median * (i + 1) * 0.99,
                                              "ci_hi", median * (i + 1) * 1.01, "throughput",
                                              "median", 64 / median));
    json_array_append_new(recs, json_pack("{s:i, s:s, s:{}, s:s, s:s}", "index", 2, "id",
                                          "broken", "config", "status", "failed", "reason",
                                          "exit 3"));
    json_t *doc = json_pack("{s:s, s:i, s:{s:s, s:s, s:s, s:{s:s}, s:s}, s:o}",
                            "schema", "dlbench-results", "schema_version", 1, "context",
                            "start_utc", utc, "host", "box", "run_dir", dir, "suite",
                            "name", suite, "dlbench.git_commit", commit, "records", recs);
    char f[600];
    snprintf(f, sizeof f, "%s/results.json", path(dir));
    CHECK(json_dump_file(doc, f, JSON_INDENT(1)) == 0);
    json_decref(doc);
}

static void opening(void)
{
    struct dlb_store *st = NULL;
    struct dlb_error err = {""};
    CHECK(dlb_store_open(path("none.db"), DLB_DB_EXISTING, &st, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "store add") != NULL);
    CHECK(access(path("none.db"), F_OK) != 0); /* nothing made */
    CHECK(dlb_store_open(path("a.db"), DLB_DB_CREATE, &st, &err) == DLB_OK);
    CHECK(st && st->version == DLB_STORE_SCHEMA_VERSION);
    CHECK(dlb_db_has_table(st->db, "alerts", &err) == 1);
    dlb_store_close(st);
    /* A text file is no store, and stays as it was. */
    FILE *f = fopen(path("text.db"), "w");
    fputs("this is not a database at all, just some text ...........\n", f);
    fclose(f);
    CHECK(dlb_store_open(path("text.db"), DLB_DB_CREATE, &st, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "not a dlbench store") != NULL);
    /* Someone else's SQLite database with a table named runs. */
    struct dlb_db *db = NULL;
    CHECK(dlb_db_open(path("other.db"), DLB_DB_CREATE, &db, &err) == DLB_OK);
    CHECK(dlb_db_exec(db, "CREATE TABLE runs (x TEXT)", NULL, 0, NULL, &err) == DLB_OK);
    dlb_db_close(db);
    CHECK(dlb_store_open(path("other.db"), DLB_DB_CREATE, &st, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "no dlbench schema") != NULL);
}

static void migrating(void)
{
    struct dlb_db *db = NULL;
    struct dlb_error err = {""};
    int v = -1;
    /* A version-1 store, as the first dlbench with a store made it. */
    CHECK(dlb_db_open(path("old.db"), DLB_DB_CREATE, &db, &err) == DLB_OK);
    CHECK(dlb_store_migrate(db, 1, &v, &err) == DLB_OK && v == 1);
    CHECK(dlb_db_has_table(db, "alerts", &err) == 0);
    CHECK(dlb_db_exec(db, "INSERT INTO runs (run_key, suite, machine, commit_sha, start_utc,"
                      " added_utc) VALUES ('k', 's', 'm', 'c', 't', 'a')", NULL, 0, NULL,
                      &err) == DLB_OK);
    dlb_db_close(db);
    struct dlb_store *st = NULL;
    CHECK(dlb_store_open(path("old.db"), DLB_DB_EXISTING, &st, &err) == DLB_OK);
    CHECK(st && st->version == DLB_STORE_SCHEMA_VERSION);
    struct dlb_db_rows r;
    CHECK(dlb_db_exec(st->db, "SELECT run_key FROM runs", NULL, 0, &r, &err) == DLB_OK);
    CHECK(r.n_rows == 1 && !strcmp(dlb_db_text_at(&r, 0, 0), "k"));
    dlb_db_rows_free(&r);
    CHECK(dlb_db_has_table(st->db, "thresholds", &err) == 1);
    /* A store a newer dlbench wrote is refused, untouched. */
    CHECK(dlb_db_exec(st->db, "UPDATE dlb_meta SET value = '99' WHERE key = "
                      "'schema_version'", NULL, 0, NULL, &err) == DLB_OK);
    dlb_store_close(st);
    CHECK(dlb_store_open(path("old.db"), DLB_DB_EXISTING, &st, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "newer") != NULL);
}

static void adding(void)
{
    struct dlb_error err = {""};
    struct dlb_store *st = NULL;
    struct dlb_store_run runs[3];
    struct dlb_store_added a;
    /* Added out of order: the series follow the start times. */
    write_run("r2", "amp", "2026-06-02T02:00:00Z", "bbbb", 0.0012);
    write_run("r1", "amp", "2026-06-01T02:00:00Z", "aaaa", 0.0010);
    write_run("r3", "amp", "2026-06-03T02:00:00Z", "cccc", 0.0011);
    struct dlb_store_labels ci = {"ci-1", NULL};
    CHECK(dlb_store_run_load(path("r2"), &ci, &runs[0], &err) == DLB_OK);
    CHECK(dlb_store_run_load(path("r1"), &ci, &runs[1], &err) == DLB_OK);
    CHECK(dlb_store_open(path("runs.db"), DLB_DB_CREATE, &st, &err) == DLB_OK);
    CHECK(dlb_store_add(st, runs, 2, &a, &err) == DLB_OK);
    CHECK(a.runs_added == 2 && a.rows_added == 6 && a.runs_known == 0);
    CHECK(dlb_store_add(st, runs, 2, &a, &err) == DLB_OK);
    CHECK(a.runs_added == 0 && a.rows_added == 0 && a.runs_known == 2 && a.rows_known == 6);
    CHECK(dlb_store_run_load(path("r3"), &ci, &runs[2], &err) == DLB_OK);
    CHECK(dlb_store_add(st, runs, 3, &a, &err) == DLB_OK);
    CHECK(a.runs_added == 1 && a.runs_known == 2);
    struct dlb_series_set set;
    CHECK(dlb_store_series(st, NULL, &set, &err) == DLB_OK);
    CHECK(set.n == 2); /* "broken" failed: no series */
    CHECK(set.n == 2 && !strcmp(set.v[0].config, "batch=256") &&
          !strcmp(set.v[0].machine, "ci-1"));
    CHECK(set.n == 2 && set.v[1].n == 3 && !strcmp(set.v[1].pts[0].commit, "aaaa") &&
          !strcmp(set.v[1].pts[2].commit, "cccc"));
    CHECK_NEAR(set.v[1].pts[1].median_s, 0.0012, 1e-12);
    dlb_series_set_free(&set);
    struct dlb_series_filter f = {"amp", "batch=6*", NULL};
    CHECK(dlb_store_series(st, &f, &set, &err) == DLB_OK && set.n == 1);
    dlb_series_set_free(&set);
    /* A bad run is refused before anything is written. */
    struct dlb_store_run bad;
    CHECK(dlb_store_run_load(path("nowhere"), NULL, &bad, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "nowhere: No such file") != NULL);
    for (int i = 0; i < 3; i++)
        dlb_store_run_free(&runs[i]);
    struct dlb_store_info in;
    CHECK(dlb_store_info(st, &in, &err) == DLB_OK);
    CHECK(in.runs == 3 && in.rows == 9 && in.series == 3 && in.commits == 3);
    dlb_store_info_free(&in);
    dlb_store_close(st);
}

static void alert_and_threshold_rows(void)
{
    struct dlb_error err = {""};
    struct dlb_store *st = NULL;
    CHECK(dlb_store_open(path("alerts.db"), DLB_DB_CREATE, &st, &err) == DLB_OK);
    struct dlb_alert_row a;
    memset(&a, 0, sizeof a);
    a.state = DLB_ALERT_CANDIDATE;
    a.good_commit = "g";
    a.bad_commit = "b";
    a.good_utc = "t0";
    a.bad_utc = "t1";
    a.direction = "slower";
    a.members = "[]";
    a.created_utc = a.updated_utc = "now";
    a.worst_ratio = 1.1;
    CHECK(dlb_store_alert_insert(st, &a, &err) == DLB_OK && a.id == 1);
    CHECK(dlb_store_alert_insert(st, &a, &err) == DLB_OK && a.id == 2);
    a.state = DLB_ALERT_DISMISSED;
    a.note = "expected";
    CHECK(dlb_store_alert_update(st, &a, &err) == DLB_OK);
    struct dlb_alert_row *rows = NULL;
    size_t n = 0;
    CHECK(dlb_store_alerts_read(st, &rows, &n, &err) == DLB_OK && n == 2);
    CHECK(n == 2 && rows[0].state == DLB_ALERT_CANDIDATE && rows[1].state == DLB_ALERT_DISMISSED);
    CHECK(n == 2 && rows[1].note && !strcmp(rows[1].note, "expected"));
    CHECK_NEAR(rows[0].worst_ratio, 1.1, 1e-12);
    dlb_alert_rows_free(rows, n);
    enum dlb_alert_state s;
    CHECK(dlb_alert_state_parse("acknowledged", &s) == 0 && s == DLB_ALERT_ACKNOWLEDGED);
    CHECK(dlb_alert_state_parse("open", &s) == -1);
    CHECK(dlb_store_threshold_set(st, "*", "*", "*", 0.05, &err) == DLB_OK);
    CHECK(dlb_store_threshold_set(st, "amp", "model=vgg-small *", "*", 0.03, &err) == DLB_OK);
    CHECK(dlb_store_threshold_set(st, "amp", "model=vgg-small *", "*", 0.02, &err) == DLB_OK);
    CHECK(dlb_store_threshold_set(st, "amp", "*", "*", 0.08, &err) == DLB_OK);
    int removed = 0;
    CHECK(dlb_store_threshold_unset(st, "quant", "*", "*", &removed, &err) == DLB_OK && !removed);
    struct dlb_threshold_rule *r = NULL;
    CHECK(dlb_store_thresholds_read(st, &r, &n, &err) == DLB_OK && n == 3);
    /* The most specific matching rule wins; none: the default. */
    long which = -2;
    CHECK_NEAR(dlb_threshold_for(r, n, "amp", "model=vgg-small batch=64", "ci", &which),
               0.02, 1e-12);
    CHECK_NEAR(dlb_threshold_for(r, n, "amp", "model=lenet batch=64", "ci", NULL), 0.08, 1e-12);
    CHECK_NEAR(dlb_threshold_for(r, n, "infer", "model=lenet", "ci", NULL), 0.05, 1e-12);
    CHECK_NEAR(dlb_threshold_for(NULL, 0, "infer", "x", "ci", &which), DLB_CHANGES_THRESHOLD,
               1e-12);
    CHECK(which == -1);
    dlb_threshold_rules_free(r, n);
    dlb_store_close(st);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "%s/dlb-store-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp))
        return 99;
    opening();
    migrating();
    adding();
    alert_and_threshold_rows();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    return check_exit();
}
