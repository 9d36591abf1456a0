/* Run directories, the journal, results files, the context and the table:
 * the facts a user relies on when a run is interrupted or compared. */
#define _POSIX_C_SOURCE 200809L

#ifdef HAVE_CONFIG_H
#include "config.h" /* DLB_ONEDNN_BUILD */
#endif
#include "check.h"
#include "results/results.h"
#include "util/figure.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[512];

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    if (buf)
        buf[fread(buf, 1, (1 << 20) - 1, f)] = '\0';
    fclose(f);
    return buf;
}

/* Delete the test tree (two levels suffice for what the tests create). */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static json_t *ok_record(int index, const char *id, double median)
{
    return json_pack(
        "{s:i, s:s, s:{s:i, s:s}, s:s, s:{s:i, s:f, s:f, s:f, s:f, s:f},"
        " s:{s:f}, s:[f, f, f], s:{s:{s:f, s:s}}, s:f}",
        "index", index, "id", id, "config", "batch", 64, "amp.precision",
        "bf16", "status", "ok", "stats", "n", 3, "median", median, "p95",
        median * 1.1, "cv", 0.015, "ci_rel_halfwidth", 0.004, "mean", median,
        "throughput", "median", 64 / median, "samples", median, median,
        median, "metrics", "accuracy", "value", 91.25, "unit", "%", "wall_s",
        1.5);
}

static json_t *skipped_record(int index, const char *id, const char *why)
{
    return json_pack("{s:i, s:s, s:s, s:s}", "index", index, "id", id,
                     "status", "skipped", "reason", why);
}

static void test_rundir(void)
{
    struct dlb_error err = {""};
    char dir[600], file[700];
    path_in(dir, sizeof dir, "runs/a/b");
    CHECK(dlb_rundir_create(dir, &err) == DLB_OK); /* creates parents */
    CHECK(dlb_rundir_create(dir, &err) == DLB_OK); /* empty: fine */
    snprintf(file, sizeof file, "%s/journal.jsonl", dir);
    write_file(file, "");
    CHECK(dlb_rundir_create(dir, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "already exists and is not empty") != NULL);
    CHECK(strstr(err.msg, "--resume") != NULL);

    /* results/<suite>/<UTC yyyymmddThhmmssZ>-<host>, one component each */
    char *def = dlb_rundir_default("results", "my suite/x");
    CHECK(def && strncmp(def, "results/my_suite_x/", 19) == 0);
    CHECK(def && strlen(def) > 19 + 16 && def[19 + 8] == 'T' &&
          def[19 + 15] == 'Z' && def[19 + 16] == '-');
    CHECK(def && strchr(def + 19, '/') == NULL);
    free(def);
}

static void test_journal_roundtrip(void)
{
    struct dlb_error err = {""};
    char dir[600], path[700];
    path_in(dir, sizeof dir, "j1");
    CHECK(dlb_rundir_create(dir, &err) == DLB_OK);
    struct dlb_journal *j = NULL;
    CHECK(dlb_journal_open(dir, &j, &err) == DLB_OK);
    json_t *a = ok_record(0, "batch=64", 0.0125);
    json_t *b = skipped_record(1, "batch=64 amp=fp16", "no fp16 on this CPU");
    json_t *bad = json_pack("{s:i, s:s, s:s}", "index", 2, "id", "x",
                            "status", "exploded");
    CHECK(dlb_journal_append(j, a, &err) == DLB_OK);
    CHECK(dlb_journal_append(j, b, &err) == DLB_OK);
    CHECK(dlb_journal_append(j, bad, &err) != DLB_OK); /* never written */
    dlb_journal_close(j);

    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    json_t *recs = NULL;
    int torn = -1;
    CHECK(dlb_journal_read(path, &recs, &torn, &err) == DLB_OK);
    CHECK(torn == 0);
    CHECK(json_array_size(recs) == 2);
    CHECK(json_equal(json_array_get(recs, 0), a));
    CHECK(json_equal(json_array_get(recs, 1), b));
    json_decref(recs);

    /* A torn last line (the process died mid-write) is dropped. */
    FILE *f = fopen(path, "a");
    CHECK(f != NULL);
    if (f) {
        fputs("{\"index\": 2, \"id\": \"batch=1", f);
        fclose(f);
    }
    recs = NULL;
    CHECK(dlb_journal_read(path, &recs, &torn, &err) == DLB_OK);
    CHECK(torn == 1);
    CHECK(json_array_size(recs) == 2);
    CHECK(json_equal(json_array_get(recs, 1), b));
    json_decref(recs);

    /* Reopening for --resume cuts the torn tail, so the next record is
     * readable rather than glued onto it. */
    CHECK(dlb_journal_open(dir, &j, &err) == DLB_OK);
    CHECK(dlb_journal_append(j, a, &err) == DLB_OK);
    dlb_journal_close(j);
    recs = NULL;
    CHECK(dlb_journal_read(path, &recs, &torn, &err) == DLB_OK);
    CHECK(torn == 0 && json_array_size(recs) == 3);
    json_decref(recs);

    /* A write that fails half way (here: a file size limit standing in
     * for a full disk) is reported with the file name, and the partial
     * line is cut back so the journal stays readable. */
    struct rlimit old, small;
    struct stat st;
    if (getrlimit(RLIMIT_FSIZE, &old) == 0 && stat(path, &st) == 0) {
        signal(SIGXFSZ, SIG_IGN);
        small = old;
        small.rlim_cur = (rlim_t)st.st_size + 10;
        CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
        CHECK(dlb_journal_open(dir, &j, &err) == DLB_OK);
        CHECK(dlb_journal_append(j, a, &err) == DLB_ERR_IO);
        CHECK(strstr(err.msg, "journal.jsonl") != NULL);
        setrlimit(RLIMIT_FSIZE, &old);
        CHECK(dlb_journal_append(j, b, &err) == DLB_OK);
        dlb_journal_close(j);
        recs = NULL;
        CHECK(dlb_journal_read(path, &recs, &torn, &err) == DLB_OK);
        CHECK(torn == 0 && json_array_size(recs) == 4);
        json_decref(recs);
        signal(SIGXFSZ, SIG_DFL);
    }

    json_decref(a);
    json_decref(b);
    json_decref(bad);
}

static void test_journal_corrupt_middle(void)
{
    struct dlb_error err = {""};
    char path[700];
    path_in(path, sizeof path, "corrupt.jsonl");
    write_file(path, "{\"index\":0,\"id\":\"a\",\"status\":\"ok\"}\n"
                     "{\"index\":1,\"id\":\"b\",\"sta\n"
                     "{\"index\":2,\"id\":\"c\",\"status\":\"ok\"}\n");
    json_t *recs = NULL;
    int torn = 0;
    CHECK(dlb_journal_read(path, &recs, &torn, &err) == DLB_ERR_INPUT);
    CHECK(recs == NULL);
    CHECK(strstr(err.msg, "corrupt.jsonl:2: not a JSON record") != NULL);

    /* Valid JSON but not a record: named by line too. */
    write_file(path, "{\"index\":0,\"id\":\"a\",\"status\":\"ok\"}\n"
                     "{\"index\":1,\"id\":\"b\",\"status\":\"done\"}\n");
    CHECK(dlb_journal_read(path, &recs, &torn, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "corrupt.jsonl:2:") != NULL);
    CHECK(strstr(err.msg, "done") != NULL);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

static void test_results_write(void)
{
    struct dlb_error err = {""};
    char dir[600], path[700];
    path_in(dir, sizeof dir, "res");
    CHECK(dlb_rundir_create(dir, &err) == DLB_OK);
    json_t *ctx = dlb_context_collect();
    json_t *recs = json_array();
    json_array_append_new(recs, ok_record(0, "batch=64", 0.0125));
    json_array_append_new(recs, skipped_record(1, "amp=fp16, \"x\"", "no fp16"));
    json_array_append_new(recs, ok_record(2, "batch=128", 0.0231));
    CHECK(dlb_results_write(dir, ctx, recs, &err) == DLB_OK);

    /* Written under a temporary name and renamed: nothing is left over. */
    DIR *d = opendir(dir);
    size_t entries = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        CHECK(strstr(e->d_name, ".tmp") == NULL);
        entries += e->d_name[0] != '.';
    }
    if (d)
        closedir(d);
    CHECK(entries == 2);

    snprintf(path, sizeof path, "%s/results.json", dir);
    json_t *root = NULL;
    CHECK(dlb_results_read(path, &root, &err) == DLB_OK);
    CHECK(json_equal(json_object_get(root, "records"), recs));
    CHECK(json_integer_value(json_object_get(root, "schema_version")) ==
          DLB_RESULTS_SCHEMA_VERSION);
    json_decref(root);

    snprintf(path, sizeof path, "%s/results.csv", dir);
    char *csv = read_file(path);
    CHECK(csv != NULL);
    CHECK(count_lines(csv) == 1 + 3);
    CHECK(csv && strncmp(csv, "index,id,status,reason,", 23) == 0);
    CHECK(csv && strstr(csv, "config.amp.precision") != NULL);
    CHECK(csv && strstr(csv, "metrics.accuracy") != NULL);
    CHECK(csv && strstr(csv, "\"amp=fp16, \"\"x\"\"\"") != NULL);
    CHECK(csv && strstr(csv, ",0.0125,") != NULL); /* exact, not 0.01249999 */
    free(csv);

    /* A newer schema is refused with both versions named. */
    snprintf(path, sizeof path, "%s/newer.json", dir);
    write_file(path, "{\"schema\": \"dlbench-results\", \"schema_version\": 7,"
                     " \"context\": {}, \"records\": []}\n");
    root = NULL;
    CHECK(dlb_results_read(path, &root, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "schema_version 7 is newer than this dlbench "
                          "understands (1)") != NULL);
    CHECK(root == NULL);
    write_file(path, "{\"schema\": \"dlbench-results\", \"schema_version\": 1,"
                     " \"context\": {}, \"records\": [{\"index\": 0}]}\n");
    CHECK(dlb_results_read(path, &root, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "records[0]") != NULL);
    write_file(path, "{\"schema\": \n");
    CHECK(dlb_results_read(path, &root, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "newer.json:") != NULL);

    json_decref(ctx);
    json_decref(recs);
}

static void test_context(void)
{
    json_t *ctx = dlb_context_collect();
    CHECK(json_is_object(ctx));
    CHECK(json_is_string(json_object_get(ctx, "host")));
    CHECK(json_is_string(json_object_get(ctx, "start_utc")));
    json_t *cpu = json_object_get(ctx, "cpu");
    CHECK(json_is_string(json_object_get(cpu, "model")));
    CHECK(json_is_array(json_object_get(cpu, "flags")));
    CHECK(json_integer_value(json_object_get(cpu, "logical_cpus_online")) >= 1);
    CHECK(json_integer_value(json_object_get(cpu, "logical_cpus_allowed")) >= 1);
    CHECK(json_integer_value(json_object_get(ctx, "memory_total_bytes")) > 0);
    CHECK(json_is_string(json_object_get(json_object_get(ctx, "os"),
                                         "release")));
    json_t *cc = json_object_get(ctx, "compiler");
    CHECK(json_is_string(json_object_get(cc, "version")));
    CHECK(json_is_string(json_object_get(cc, "flags")));
    json_t *dl = json_object_get(ctx, "dlbench");
    CHECK(json_is_string(json_object_get(dl, "version")));
    CHECK(json_is_string(json_object_get(dl, "git_commit")));
    json_t *libs = json_object_get(ctx, "libraries");
    CHECK(json_is_string(json_object_get(libs, "jansson")));
    CHECK(json_is_string(json_object_get(libs, "zlib")));
    CHECK(json_is_string(json_object_get(libs, "inih")));
#ifdef DLB_ONEDNN_BUILD
    /* the oneDNN the cpu backend was built with: "2.6.3 (system)" */
    CHECK(json_is_string(json_object_get(libs, "onednn_build")));
    CHECK(strcmp(json_string_value(json_object_get(libs, "onednn_build")),
                 DLB_ONEDNN_BUILD) == 0);
#else
    CHECK(json_is_null(json_object_get(libs, "onednn_build")));
#endif
    CHECK(json_array_size(json_object_get(ctx, "loadavg")) == 3);
    json_decref(ctx);
}

static void test_table(void)
{
    json_t *recs = json_array();
    json_array_append_new(recs, ok_record(0, "batch=64", 0.0125));
    json_array_append_new(recs, skipped_record(1, "amp=fp16", "no fp16 here"));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    dlb_results_print(f, DLB_FORMAT_TABLE, NULL, recs);
    fclose(f);
    /* Line 2 is the units row. */
    char *l2 = buf ? strchr(buf, '\n') : NULL;
    CHECK(l2 != NULL);
    if (l2) {
        char row[256];
        size_t n = strcspn(l2 + 1, "\n");
        snprintf(row, sizeof row, "%.*s", (int)n, l2 + 1);
        CHECK(strstr(row, "ms") && strstr(row, "samples/s") &&
              strstr(row, "%"));
        CHECK(strstr(row, "batch") == NULL);
    }
    CHECK(buf && strstr(buf, "accuracy") != NULL);
    CHECK(buf && strstr(buf, "12.50") != NULL);    /* median in ms */
    CHECK(buf && strstr(buf, "91.25") != NULL);
    CHECK(buf && strstr(buf, "skipped  no fp16 here") != NULL);
    CHECK(count_lines(buf) == 4);
    free(buf);

    /* JSON is the results.json document. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    if (f) {
        dlb_results_print(f, DLB_FORMAT_JSON, NULL, recs);
        fclose(f);
        json_t *doc = json_loads(buf, 0, NULL);
        CHECK(json_equal(json_object_get(doc, "records"), recs));
        CHECK(!strcmp(json_string_value(json_object_get(doc, "schema")),
                      "dlbench-results"));
        json_decref(doc);
        free(buf);
    }
    json_decref(recs);
}

/* A record written without its fsync is in the file at once (a kill of
 * dlbench cannot lose it); dlb_journal_sync then has nothing left over. */
static void test_journal_write_then_sync(void)
{
    struct dlb_error err = {""};
    char dir[600], path[700];
    path_in(dir, sizeof dir, "j-sync");
    CHECK(dlb_rundir_create(dir, &err) == DLB_OK);
    struct dlb_journal *j = NULL;
    CHECK(dlb_journal_open(dir, &j, &err) == DLB_OK);
    json_t *a = ok_record(0, "batch=64", 0.0125);
    CHECK(dlb_journal_write(j, a, &err) == DLB_OK);
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    json_t *recs = NULL;
    CHECK(dlb_journal_read(path, &recs, NULL, &err) == DLB_OK);
    CHECK(json_array_size(recs) == 1 && json_equal(json_array_get(recs, 0), a));
    json_decref(recs);
    CHECK(dlb_journal_sync(j, &err) == DLB_OK);
    CHECK(dlb_journal_sync(j, &err) == DLB_OK); /* nothing pending: fine */
    dlb_journal_close(j);
    json_decref(a);
}

/* The run directory's first files: whole, invocation.json last, and
 * --resume's check says what to do when set-up never finished. */
static void test_rundir_setup(void)
{
    struct dlb_error err = {""};
    char dir[600], suite[700], path[700];
    path_in(dir, sizeof dir, "setup");
    path_in(suite, sizeof suite, "setup-suite.ini");
    write_file(suite, "[suite]\nname = s\n");
    CHECK(dlb_rundir_create(dir, &err) == DLB_OK);
    CHECK(dlb_rundir_check_set_up(dir, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "no invocation.json there") != NULL);
    CHECK(strstr(err.msg, "there is nothing to resume") != NULL);
    json_t *inv = json_pack("{s:s, s:[], s:b, s:[]}", "suite", suite, "sets",
                            "quick", 0, "plugin_dirs");
    CHECK(dlb_rundir_setup(dir, suite, inv, &err) == DLB_OK);
    CHECK(dlb_rundir_check_set_up(dir, &err) == DLB_OK);
    snprintf(path, sizeof path, "%s/invocation.json", dir);
    json_t *back = json_load_file(path, 0, NULL);
    CHECK(back && json_equal(back, inv));
    json_decref(back);
    json_decref(inv);
    snprintf(path, sizeof path, "%s/suite.ini", dir);
    FILE *f = fopen(path, "r");
    char text[64] = "";
    CHECK(f && fread(text, 1, sizeof text - 1, f) > 0);
    if (f)
        fclose(f);
    CHECK(!strcmp(text, "[suite]\nname = s\n"));
    /* Nothing but the two files: no temporary left behind. */
    DIR *d = opendir(dir);
    int others = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        others += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
                  strcmp(e->d_name, "suite.ini") && strcmp(e->d_name, "invocation.json");
    if (d)
        closedir(d);
    CHECK(others == 0);
    path_in(dir, sizeof dir, "no-such-run");
    CHECK(dlb_rundir_check_set_up(dir, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "no such run directory") != NULL);
}

/* The tables' figures (table, history, compare): four significant
 * digits at every size, never an exponent. */
static void test_figure_text(void)
{
    static const struct { double x; const char *want; } cases[] = {
        {31496.404, "31496"}, {123456789.0, "123456789"}, {114.72, "114.7"},
        {36.456, "36.46"}, {2.18812, "2.188"}, {1.0, "1.000"},
        {0.018772, "0.01877"}, {0.5, "0.5000"}, {0.0000123456, "0.00001235"},
        {1e-12, "0.000000000"}, {0.0, "0.000"}, {-0.25, "-0.2500"},
        {-1500.4, "-1500"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char b[64];
        dlb_figure_text(b, sizeof b, cases[i].x);
        if (strcmp(b, cases[i].want))
            fprintf(stderr, "  %g: got %s, want %s\n", cases[i].x, b, cases[i].want);
        CHECK(!strcmp(b, cases[i].want));
        CHECK(!strchr(b, 'e'));
    }
    /* a change that prints as zero has no sign: "0.00", never "-0.00" */
    char b[32];
    snprintf(b, sizeof b, "%+.2f", dlb_figure_unsigned_zero(-0.0, 2));
    CHECK(!strcmp(b, "+0.00"));
    snprintf(b, sizeof b, "%.2f", dlb_figure_unsigned_zero(-0.004999, 2));
    CHECK(!strcmp(b, "0.00"));
    CHECK(dlb_figure_unsigned_zero(-0.005001, 2) < 0);
    CHECK(dlb_figure_unsigned_zero(-0.04, 1) == 0 && dlb_figure_unsigned_zero(2.5, 0) == 2.5);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/dlb-results-XXXXXX",
             t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_rundir();
    test_journal_roundtrip();
    test_journal_write_then_sync();
    test_rundir_setup();
    test_journal_corrupt_middle();
    test_results_write();
    test_context();
    test_table();
    test_figure_text();
    remove_tree(tmpdir);
    return check_exit();
}
