/* Plots: every kind is written from crafted records, the images are real
 * PNG and SVG, hostile suite strings execute nothing in gnuplot, and
 * without gnuplot the data and scripts are still there. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "plot/plot.h"
#include "plot/plot_impl.h"
#include "util/words.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];
static char hostile[2048];

static int exists(const char *dir, const char *name)
{
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && st.st_size > 0;
}

static int starts_with_file(const char *path, const char *magic, size_t n)
{
    char buf[512] = "";
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    if (n)
        return got >= n && !memcmp(buf, magic, n);
    return strstr(buf, magic) != NULL; /* SVG: the root element near the top */
}

static int is_png(const char *dir, const char *name)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return starts_with_file(p, "\x89PNG\r\n\x1a\n", 8);
}

static int is_svg(const char *dir, const char *name)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return starts_with_file(p, "<svg", 0) && starts_with_file(p, "<?xml", 5);
}

/* A record: batch x precision, step times around `ms`, an accuracy. */
static json_t *record(int index, const char *id, int batch, const char *prec,
                      double ms, double acc)
{
    json_t *samples = json_array();
    for (int i = 0; i < 30; i++)
        json_array_append_new(samples, json_real(ms * 1e-3 * (1 + 0.01 * (i % 7))));
    double tp = batch / (ms * 1e-3);
    return json_pack("{s:i, s:s, s:{s:i, s:s}, s:s, s:{s:f, s:f, s:f}, s:o, "
                     "s:{s:f, s:f}, s:{s:{s:f, s:s}}}",
                     "index", index, "id", id, "config", "batch", batch,
                     "amp.precision", prec, "status", "ok", "throughput",
                     "median", tp, "ci_lo", tp * 0.98, "ci_hi", tp * 1.02,
                     "samples", samples, "stats", "median", ms * 1e-3, "ci_lo",
                     ms * 1e-3, "metrics", "accuracy", "value", acc, "unit", "%");
}

static json_t *records(void)
{
    json_t *r = json_array();
    json_array_append_new(r, record(0, "batch=64 amp.precision=fp32", 64, "fp32", 2.0, 88.0));
    json_array_append_new(r, record(1, "batch=256 amp.precision=fp32", 256, "fp32", 6.0, 87.5));
    json_array_append_new(r, record(2, "batch=64 amp.precision=bf16", 64, "bf16", 1.2, 87.0));
    json_array_append_new(r, record(3, "batch=256 amp.precision=bf16", 256, "bf16", 3.5, 86.0));
    /* The hostile one: its id and precision value carry gnuplot's command
     * syntax; the suite name in the context carries it too. */
    json_array_append_new(r, record(4, hostile, 128, hostile, 3.0, 85.0));
    json_array_append_new(r, json_pack("{s:i, s:s, s:s, s:s}", "index", 5, "id",
                          "batch=1024 amp.precision=fp16", "status", "skipped",
                          "reason", "no fp16"));
    return r;
}

/* The plots of a run whose selection, as results.json holds it, is
 * `sel` (read as dlb_selection_read reads a results file). */
static dlb_status plots_write(const char *dir, json_t *ctx, json_t *recs,
                              json_t *sel, struct dlb_plot_list *plots,
                              int *drawn, struct dlb_error *err)
{
    struct dlb_selection typed;
    *plots = (struct dlb_plot_list){NULL, 0};
    dlb_status st = dlb_selection_read(sel, &typed, err);
    if (st != DLB_OK)
        return st;
    st = dlb_plots_write(dir, ctx, recs, &typed, plots, drawn, err);
    dlb_selection_free(&typed);
    return st;
}

static json_t *selection(void)
{
    return json_pack("{s:s, s:s, s:[s], s:[s, s], s:{s:{s:f, s:[f, f]}}}",
                     "baseline", "batch=64 amp.precision=fp32",
                     "winner", "batch=256 amp.precision=bf16",
                     "ties", "batch=64 amp.precision=bf16",
                     "pareto", "batch=256 amp.precision=bf16", "batch=64 amp.precision=fp32",
                     "per_config", "batch=256 amp.precision=bf16", "speedup", 2.3,
                     "speedup_ci", 2.2, 2.4);
}

static void test_quote(void)
{
    char buf[64];
    dlb_gp_quote("a'b`c`\n!x", buf, sizeof buf);
    CHECK(!strcmp(buf, "'a''b`c` !x'"));
    dlb_gp_quote("''''''''''''''''''''''''''''''''''''''''''''", buf, 16);
    CHECK(strlen(buf) < 16 && buf[0] == '\'' && buf[strlen(buf) - 1] == '\'');
    /* An even number of quotes inside: the literal is never left open. */
    size_t q = 0;
    for (char *c = buf; *c; c++)
        q += *c == '\'';
    CHECK(q % 2 == 0);
}

static int no_marker(const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return access(p, F_OK) != 0;
}

static void test_plots(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/run", tmpdir);
    CHECK(mkdir(dir, 0755) == 0);
    json_t *recs = records(), *sel = selection();
    struct dlb_plot_list plots;
    json_t *ctx = json_pack("{s:s}", "suite.name", hostile);
    struct dlb_error err = {""};
    int drawn = -1;
    CHECK(plots_write(dir, ctx, recs, sel, &plots, &drawn, &err) == DLB_OK);
    CHECK(drawn == 1);
    if (!drawn)
        fprintf(stderr, "not drawn: %s\n", err.msg);
    char pdir[600];
    snprintf(pdir, sizeof pdir, "%s/plots", dir);
    static const char *const kinds[] = {"throughput", "speedup", "pareto",
                                        "scaling-batch", "steps"};
    CHECK(plots.n == 5);
    for (size_t k = 0; k < 5 && k < plots.n; k++) {
        char n[128];
        const struct dlb_plot_file *pl = &plots.v[k];
        CHECK(!strcmp(pl->name, kinds[k]));
        snprintf(n, sizeof n, "plots/%s.png", kinds[k]);
        CHECK(!strcmp(pl->png, n));
        snprintf(n, sizeof n, "plots/%s.dat", kinds[k]);
        CHECK(!strcmp(pl->data, n));
        snprintf(n, sizeof n, "%s.png", kinds[k]);
        CHECK(is_png(pdir, n));
        snprintf(n, sizeof n, "%s.svg", kinds[k]);
        CHECK(is_svg(pdir, n));
        snprintf(n, sizeof n, "%s.dat", kinds[k]);
        CHECK(exists(pdir, n));
        snprintf(n, sizeof n, "%s.gp", kinds[k]);
        CHECK(exists(pdir, n));
    }
    /* Nothing in the hostile strings ran. */
    CHECK(no_marker("sys"));
    CHECK(no_marker("bq"));
    CHECK(no_marker("bang"));
    CHECK(no_marker("nl"));
    CHECK(no_marker("q"));
    dlb_plot_list_free(&plots);

    /* Without gnuplot: the data and scripts, no images, and how to get it. */
    snprintf(dir, sizeof dir, "%s/nognuplot", tmpdir);
    CHECK(mkdir(dir, 0755) == 0);
    setenv("DLBENCH_GNUPLOT", "/nonexistent/gnuplot", 1);
    err.msg[0] = '\0';
    CHECK(plots_write(dir, ctx, recs, sel, &plots, &drawn, &err) == DLB_OK);
    unsetenv("DLBENCH_GNUPLOT");
    CHECK(drawn == 0);
    CHECK(strstr(err.msg, "apt-get install gnuplot-nox") != NULL);
    snprintf(pdir, sizeof pdir, "%s/plots", dir);
    CHECK(exists(pdir, "throughput.dat") && exists(pdir, "throughput.gp"));
    CHECK(!exists(pdir, "throughput.png"));
    CHECK(plots.n == 5);
    dlb_plot_list_free(&plots);
    json_decref(recs);
    json_decref(sel);
    json_decref(ctx);
}

/* Many configurations: the row plots draw DLB_PLOT_MAX_ROWS of them, the
 * fastest with the winner and the baseline (here the two slowest), in the
 * run's order, and say so in the title and the data file. */
static void test_many_rows(void)
{
    size_t n = DLB_PLOT_MAX_ROWS + 40;
    json_t *recs = json_array();
    char id[64], note[160];
    for (size_t i = 0; i < n; i++) {
        snprintf(id, sizeof id, "batch=%zu", i);
        /* step time grows with i: the fastest are the first ones */
        json_array_append_new(recs, record((int)i, id, 64, "fp32",
                                           1.0 + 0.01 * (double)i, 80.0));
    }
    snprintf(id, sizeof id, "batch=%zu", n - 1);
    json_t *sel = json_pack("{s:s, s:s, s:[]}", "baseline", "batch=98",
                            "winner", id, "ties");
    struct dlb_record *typed = NULL;
    size_t n_typed = 0;
    struct dlb_error rerr = {""};
    CHECK(dlb_records_read(recs, "many", &typed, &n_typed, &rerr) == DLB_OK);
    struct dlb_plot_recs all = dlb_plot_recs_all(typed, n_typed);
    struct dlb_selection tsel;
    CHECK(dlb_selection_read(sel, &tsel, &rerr) == DLB_OK);
    struct dlb_plot_recs rows = dlb_plot_rows(all, &tsel, DLB_PLOT_MAX_ROWS, note,
                                              sizeof note);
    CHECK(rows.n == DLB_PLOT_MAX_ROWS);
    CHECK(strstr(note, "60 fastest of 100") != NULL);
    size_t last = rows.n - 1;
    CHECK(!strcmp(rows.v[0]->id, "batch=0"));
    CHECK(!strcmp(rows.v[last - 1]->id, "batch=98"));
    CHECK(!strcmp(rows.v[last]->id, id));
    CHECK(!strcmp(rows.v[last - 2]->id, "batch=57"));
    free(rows.v);
    /* Up to the limit: all, no note. */
    struct dlb_plot_recs few = {all.v, 5};
    rows = dlb_plot_rows(few, &tsel, DLB_PLOT_MAX_ROWS, note, sizeof note);
    CHECK(rows.v == few.v && rows.n == 5 && note[0] == '\0');
    dlb_selection_free(&tsel);
    free(all.v);
    dlb_records_free(typed, n_typed);

    char dir[512], pdir[600], path[700], line[512];
    snprintf(dir, sizeof dir, "%s/many", tmpdir);
    CHECK(mkdir(dir, 0755) == 0);
    json_t *ctx = json_pack("{s:s}", "suite.name", "many");
    struct dlb_plot_list plots;
    struct dlb_error err = {""};
    int drawn = -1;
    CHECK(plots_write(dir, ctx, recs, sel, &plots, &drawn, &err) == DLB_OK);
    CHECK(drawn == 1);
    snprintf(pdir, sizeof pdir, "%s/plots", dir);
    static const char *const rowplots[] = {"throughput", "speedup", "steps"};
    for (size_t k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s.dat", pdir, rowplots[k]);
        FILE *f = fopen(path, "r");
        int said = 0;
        size_t data = 0;
        while (f && fgets(line, sizeof line, f)) {
            said |= strstr(line, "# rows: the 60 fastest of 100") == line;
            /* index 0 (steps) or the only block: one line per row */
            if (line[0] == '\n')
                break;
            data += line[0] != '#';
        }
        if (f)
            fclose(f);
        CHECK(said);
        CHECK(data == DLB_PLOT_MAX_ROWS);
        char png[64];
        snprintf(png, sizeof png, "%s.png", rowplots[k]);
        CHECK(is_png(pdir, png));
    }
    /* The Pareto front keeps every configuration. */
    snprintf(path, sizeof path, "%s/pareto.dat", pdir);
    FILE *f = fopen(path, "r");
    size_t pareto_rows = 0;
    while (f && fgets(line, sizeof line, f))
        pareto_rows += line[0] != '#' && line[0] != '\n';
    if (f)
        fclose(f);
    CHECK(pareto_rows >= n);
    dlb_plot_list_free(&plots);
    json_decref(ctx);
    json_decref(sel);
    json_decref(recs);
}

static int file_has(const char *dir, const char *name, const char *text);

static void test_trend(void)
{
    json_t *runs = json_array();
    const char *t[3] = {"2026-11-01T02:00:00Z", "2026-11-02T02:00:00Z", "2026-11-03T02:00:00Z"};
    for (int i = 0; i < 3; i++) {
        json_t *recs = json_array();
        json_array_append_new(recs, record(0, "batch=64", 64, "fp32", 2.0 + 0.1 * i, 88));
        json_array_append_new(recs, record(1, hostile, 256, "fp32", 6.0 - 0.2 * i, 88));
        json_array_append_new(runs, json_pack("{s:{s:s}, s:o}", "context",
                              "start_utc", t[i], "records", recs));
    }
    char dir[512];
    snprintf(dir, sizeof dir, "%s/history", tmpdir);
    struct dlb_plotter p;
    struct dlb_error err = {""};
    CHECK(dlb_plotter_init(&p, dir, "", &err) == DLB_OK);
    p.suite = hostile;
    struct dlb_results typed[3];
    for (size_t i = 0; i < 3; i++)
        CHECK(dlb_results_parse(json_array_get(runs, i), "trend", &typed[i], &err)
              == DLB_OK);
    CHECK(dlb_plot_trend(&p, typed, 3, &err) == DLB_OK);
    CHECK(p.drawn == 1);
    /* against each configuration's first run: batch=64 at 2.0, 2.1 and
     * 2.2 ms a step reads 1, 2.0/2.1 and 2.0/2.2 */
    CHECK(file_has(dir, "trend.gp", "using 1:5:6:7"));
    CHECK(file_has(dir, "trend.dat", "2026-11-01T02:00:00Z 32000 31360 32640 1 0.98 1.02\n"));
    CHECK(file_has(dir, "trend.dat", " 0.952380952 "));
    CHECK(file_has(dir, "trend.dat", " 0.909090909 "));
    CHECK(is_png(dir, "trend.png") && is_svg(dir, "trend.svg"));
    CHECK(no_marker("sys") && no_marker("bq") && no_marker("bang"));
    dlb_plotter_free(&p);
    for (size_t i = 0; i < 3; i++)
        dlb_results_free(&typed[i]);
    json_decref(runs);
}

/* Write the plots' data (no gnuplot: the data is what is checked) of
 * `recs` and `sel` into tmpdir/NAME, and open plots/FILE of it. */
static FILE *plot_data(const char *name, json_t *recs, json_t *sel, const char *file)
{
    char dir[512], path[700];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
    CHECK(mkdir(dir, 0755) == 0);
    json_t *ctx = json_pack("{s:{s:s}}", "suite", "name", "amp");
    struct dlb_plot_list plots;
    int drawn = 0;
    struct dlb_error err = {""};
    setenv("DLBENCH_GNUPLOT", "/nonexistent/gnuplot", 1);
    CHECK(plots_write(dir, ctx, recs, sel, &plots, &drawn, &err) == DLB_OK);
    unsetenv("DLBENCH_GNUPLOT");
    dlb_plot_list_free(&plots);
    json_decref(ctx);
    snprintf(path, sizeof path, "%s/plots/%s", dir, file);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    return f;
}

/* The Pareto plot's front is computed in its two dimensions, whatever the
 * selection's three-objective front says, and points carry row numbers. */
static void test_pareto_front(void)
{
    char line[512];
    json_t *recs = json_array();
    /* 1 dominates 0 in throughput and accuracy; 2 is faster, less accurate */
    json_array_append_new(recs, record(0, "batch=64 amp.precision=fp32", 64, "fp32", 2.0, 60.0));
    json_array_append_new(recs, record(1, "batch=256 amp.precision=fp32", 256, "fp32", 6.0, 70.0));
    json_array_append_new(recs, record(2, "batch=64 amp.precision=bf16", 64, "bf16", 1.2, 65.0));
    json_t *sel = json_pack("{s:s, s:[s, s, s]}", "baseline", "batch=64 amp.precision=fp32",
                            "pareto", "batch=64 amp.precision=fp32",
                            "batch=256 amp.precision=fp32", "batch=64 amp.precision=bf16");
    FILE *f = plot_data("pareto2d", recs, sel, "pareto.dat");
    int block = 0, blank = 0;
    size_t pts = 0, front = 0;
    char labels[64] = "";
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        if (line[0] == '\n') {
            block += ++blank == 2;
            continue;
        }
        blank = 0;
        double tp, acc;
        char lab[32];
        if (block == 0 && sscanf(line, "%lf %lf %31s", &tp, &acc, lab) == 3) {
            pts++;
            strncat(labels, lab, sizeof labels - strlen(labels) - 1);
        } else if (block == 1 && sscanf(line, "%lf %lf", &tp, &acc) == 2) {
            front++;
            CHECK(acc > 60.0); /* the dominated point is not drawn on it */
        }
    }
    if (f)
        fclose(f);
    CHECK(pts == 3);
    CHECK(front == 2);
    CHECK(!strcmp(labels, "\"0\"\"1\"\"2\"")); /* row numbers, by throughput */
    json_decref(sel);
    json_decref(recs);
}

/* Speedup bars against each row's own baseline (vs_baseline), not one
 * baseline for every workload. */
static void test_speedup_own_baseline(void)
{
    char line[512];
    json_t *recs = json_array();
    json_array_append_new(recs, record(0, "model=lenet amp.precision=fp32", 64, "fp32", 2.0, 80.0));
    json_array_append_new(recs, record(1, "model=lenet amp.precision=bf16", 64, "bf16", 4.0, 80.0));
    json_array_append_new(recs, record(2, "model=vgg amp.precision=fp32", 64, "fp32", 40.0, 90.0));
    json_array_append_new(recs, record(3, "model=vgg amp.precision=bf16", 64, "bf16", 22.0, 90.0));
    json_object_set_new(json_array_get(recs, 1), "vs_baseline", json_pack(
        "{s:s,s:f,s:f,s:f}", "baseline_id", "model=lenet amp.precision=fp32",
        "speedup", 0.5, "speedup_ci_lo", 0.45, "speedup_ci_hi", 0.55));
    json_object_set_new(json_array_get(recs, 3), "vs_baseline", json_pack(
        "{s:s,s:f,s:f,s:f}", "baseline_id", "model=vgg amp.precision=fp32",
        "speedup", 1.8, "speedup_ci_lo", 1.5, "speedup_ci_hi", 2.1));
    /* the suite's baseline is LeNet fp32: vgg against it would be 0.05x */
    json_t *sel = json_pack("{s:s}", "baseline", "model=lenet amp.precision=fp32");
    FILE *f = plot_data("speedup-own", recs, sel, "speedup.dat");
    double got[4] = {0, 0, 0, 0};
    long colour[4] = {0, 0, 0, 0};
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        /* x "label" speedup lo hi colour */
        char *q = strrchr(line, '"');
        double sp, lo, hi;
        long c;
        if (q && n < 4 && sscanf(q + 1, "%lf %lf %lf %ld", &sp, &lo, &hi, &c) == 4) {
            got[n] = sp;
            colour[n++] = c;
        }
    }
    if (f)
        fclose(f);
    CHECK(n == 4);
    CHECK_NEAR(got[0], 1.0, 1e-9);
    CHECK_NEAR(got[1], 0.5, 1e-9);
    CHECK_NEAR(got[2], 1.0, 1e-9); /* vgg's fp32 is its own baseline */
    CHECK_NEAR(got[3], 1.8, 1e-9);
    CHECK(colour[0] == 0x636363 && colour[2] == 0x636363);
    CHECK(colour[1] == 0xde2d26 && colour[3] == 0x31a354);
    json_decref(sel);
    json_decref(recs);
}

/* A bar is coloured by its verdict, not by which side of 1 it lies:
 * 1.02x with an interval of 1.00-1.03 is "no measurable effect" (grey,
 * it was green), and the selection's "costs" (a broken constraint) wins
 * over a fast interval. The verdict is a column of its own. */
static void test_speedup_verdict_colour(void)
{
    char line[512];
    json_t *recs = json_array();
    json_array_append_new(recs, record(0, "model=lenet amp.precision=fp32", 64, "fp32", 2.0, 80.0));
    json_array_append_new(recs, record(1, "model=lenet amp.precision=bf16", 64, "bf16", 2.04, 80.0));
    json_array_append_new(recs, record(2, "model=vgg amp.precision=fp32", 64, "fp32", 40.0, 90.0));
    json_array_append_new(recs, record(3, "model=vgg amp.precision=bf16", 64, "bf16", 22.0, 90.0));
    json_object_set_new(json_array_get(recs, 1), "vs_baseline", json_pack(
        "{s:s,s:f,s:f,s:f}", "baseline_id", "model=lenet amp.precision=fp32",
        "speedup", 1.02, "speedup_ci_lo", 1.0, "speedup_ci_hi", 1.03));
    json_object_set_new(json_array_get(recs, 3), "vs_baseline", json_pack(
        "{s:s,s:f,s:f,s:f}", "baseline_id", "model=vgg amp.precision=fp32",
        "speedup", 1.8, "speedup_ci_lo", 1.5, "speedup_ci_hi", 2.1));
    json_t *sel = json_pack(
        "{s:s,s:[{s:s},{s:s}],s:{s:{s:i},s:{s:i},s:{s:i},s:{s:i}},"
        "s:[{s:s,s:s,s:[{s:s,s:s},{s:s,s:s}]}]}",
        "baseline", "model=lenet amp.precision=fp32", "groups",
        "workload", "model=lenet", "workload", "model=vgg", "per_config",
        "model=lenet amp.precision=fp32", "group", 0,
        "model=lenet amp.precision=bf16", "group", 0,
        "model=vgg amp.precision=fp32", "group", 1,
        "model=vgg amp.precision=bf16", "group", 1, "verdicts",
        "setting", "amp.precision=bf16", "verdict", "mixed", "workloads",
        "workload", "model=lenet", "verdict", "no measurable effect",
        "workload", "model=vgg", "verdict", "costs");
    FILE *f = plot_data("verdict", recs, sel, "speedup.dat");
    long colour[4] = {0, 0, 0, 0};
    int verdict[4] = {-1, -1, -1, -1}, n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *q = strrchr(line, '"');
        double sp, lo, hi;
        long c;
        int head, v;
        if (line[0] != '#' && q && n < 4 &&
            sscanf(q + 1, "%lf %lf %lf %ld %d %d", &sp, &lo, &hi, &c, &head, &v) == 6 &&
            !head) {
            colour[n] = c;
            verdict[n++] = v;
        }
    }
    if (f)
        fclose(f);
    CHECK(n == 4);
    CHECK(verdict[0] == 0 && colour[0] == 0x636363);   /* baseline */
    CHECK(verdict[1] == 2 && colour[1] == 0xbdbdbd);   /* no measurable effect */
    CHECK(colour[1] != 0x31a354);
    CHECK(verdict[3] == 3 && colour[3] == 0xde2d26);   /* the selection's costs */
    json_decref(sel);
    json_decref(recs);
}

/* Several workloads: the speedup bars come in a block per workload under
 * a heading row, each labelled with its row number and what it changes
 * from its baseline, and each workload gets its own Pareto plot. */
static void test_workload_blocks(void)
{
    char line[512], path[700];
    json_t *recs = json_array();
    json_array_append_new(recs, record(0, "model=lenet amp.precision=fp32", 64, "fp32", 2.0, 80.0));
    json_array_append_new(recs, record(1, "model=lenet amp.precision=bf16", 64, "bf16", 4.0, 80.0));
    json_array_append_new(recs, record(2, "model=vgg amp.precision=fp32", 64, "fp32", 40.0, 90.0));
    json_array_append_new(recs, record(3, "model=vgg amp.precision=bf16", 64, "bf16", 22.0, 90.0));
    json_object_set_new(json_array_get(recs, 1), "vs_baseline", json_pack(
        "{s:s,s:f,s:f,s:f}", "baseline_id", "model=lenet amp.precision=fp32",
        "speedup", 0.5, "speedup_ci_lo", 0.45, "speedup_ci_hi", 0.55));
    json_object_set_new(json_array_get(recs, 3), "vs_baseline", json_pack(
        "{s:s,s:f,s:f,s:f}", "baseline_id", "model=vgg amp.precision=fp32",
        "speedup", 1.8, "speedup_ci_lo", 1.5, "speedup_ci_hi", 2.1));
    /* records appear in the other order of their groups: blocks follow
     * the groups, not the records */
    json_t *sel = json_pack(
        "{s:s,s:[{s:s},{s:s}],s:{s:{s:i},s:{s:i},s:{s:i},s:{s:i}}}",
        "baseline", "model=lenet amp.precision=fp32", "groups",
        "workload", "model=vgg", "workload", "model=lenet", "per_config",
        "model=lenet amp.precision=fp32", "group", 1,
        "model=lenet amp.precision=bf16", "group", 1,
        "model=vgg amp.precision=fp32", "group", 0,
        "model=vgg amp.precision=bf16", "group", 0);
    FILE *f = plot_data("blocks", recs, sel, "speedup.dat");
    char labels[6][128];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *a = strchr(line, '"'), *b = a ? strchr(a + 1, '"') : NULL;
        if (line[0] == '#' || !a || !b || n == 6)
            continue;
        snprintf(labels[n++], sizeof labels[0], "%.*s", (int)(b - a - 1), a + 1);
    }
    if (f)
        fclose(f);
    CHECK(n == 6);
    if (n == 6) {
        CHECK(!strcmp(labels[0], "[model=vgg]"));
        CHECK(!strcmp(labels[1], "2: baseline"));
        CHECK(!strcmp(labels[2], "3: amp.precision=bf16"));
        CHECK(!strcmp(labels[3], "[model=lenet]"));
        CHECK(!strcmp(labels[5], "1: amp.precision=bf16"));
    }
    for (int g = 1; g <= 2; g++) {
        snprintf(path, sizeof path, "%s/blocks/plots/pareto-%d.dat", tmpdir, g);
        CHECK(access(path, F_OK) == 0);
    }
    snprintf(path, sizeof path, "%s/blocks/plots/pareto.dat", tmpdir);
    CHECK(access(path, F_OK) != 0);
    json_decref(sel);
    json_decref(recs);
}

/* Whether the file dir/name holds `text`. */
static int file_has(const char *dir, const char *name, const char *text)
{
    char p[1024], buf[8192];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    return strstr(buf, text) != NULL;
}

/* Throughput against batch size: lines 30x apart (a LeNet beside a
 * vgg-small) on a logarithmic axis that says so; the first test's lines,
 * within 10x of each other, on a linear one from zero. */
static void test_scaling_log(void)
{
    char dir[512], pdir[600];
    snprintf(dir, sizeof dir, "%s/log", tmpdir);
    CHECK(mkdir(dir, 0755) == 0);
    json_t *recs = json_array();
    json_array_append_new(recs, record(0, "batch=64 amp.precision=fp32", 64, "fp32", 2.0, 88.0));
    json_array_append_new(recs, record(1, "batch=256 amp.precision=fp32", 256, "fp32", 6.0, 87.5));
    json_array_append_new(recs, record(2, "batch=64 amp.precision=bf16", 64, "bf16", 60.0, 87.0));
    json_array_append_new(recs, record(3, "batch=256 amp.precision=bf16", 256, "bf16", 200.0, 86.0));
    json_t *sel = json_pack("{s:s}", "baseline", "batch=64 amp.precision=fp32");
    json_t *ctx = json_pack("{s:s}", "suite.name", "log");
    struct dlb_plot_list plots;
    struct dlb_error err = {""};
    int drawn = -1;
    CHECK(plots_write(dir, ctx, recs, sel, &plots, &drawn, &err) == DLB_OK);
    snprintf(pdir, sizeof pdir, "%s/plots", dir);
    CHECK(file_has(pdir, "scaling-batch.gp", "set logscale y 10"));
    CHECK(file_has(pdir, "scaling-batch.gp", "log scale: the lines are over 10x apart"));
    CHECK(!file_has(pdir, "scaling-batch.gp", "set yrange [0:*]"));
    /* the title's notes on a line of their own */
    CHECK(file_has(pdir, "scaling-batch.gp",
                   "set title 'Throughput against batch size'.\"\\n\".'(suite log)'"));
    if (drawn)
        CHECK(is_png(pdir, "scaling-batch.png"));
    dlb_plot_list_free(&plots);
    json_decref(recs);
    json_decref(sel);
    json_decref(ctx);
    snprintf(pdir, sizeof pdir, "%s/run/plots", tmpdir);
    CHECK(file_has(pdir, "scaling-batch.gp", "set yrange [0:*]"));
    CHECK(!file_has(pdir, "scaling-batch.gp", "logscale y"));
}

/* A typed record with this id and status, for the label helpers. */
static struct dlb_record typed(const char *id, int ok)
{
    struct dlb_record r;
    memset(&r, 0, sizeof r);
    r.id = (char *)id;
    r.status = ok ? DLB_REC_OK : DLB_REC_SKIPPED;
    return r;
}

/* The settings every plotted row shares leave the row labels for the
 * title, whole words only; a label keeps its median when cut. */
static void test_row_labels(void)
{
    struct dlb_record r[4] = {
        typed("model=lenet batch=64 amp.loss_scale=none", 1),
        typed("model=vgg-small batch=64 amp.loss_scale=none", 1),
        typed("model=vgg-small batch=640 amp.loss_scale=none", 0), /* skipped */
        typed("batch=64 model=resnet20 amp.loss_scale=none", 1)};
    const struct dlb_record *v[4] = {&r[0], &r[1], &r[2], &r[3]};
    CHECK(dlb_words_has("a=1 batch=640", "batch=64", 8) == 0);
    CHECK(dlb_words_has("a=1  batch=64", "batch=64 b=2", 8) == 1); /* tok unterminated */
    CHECK(dlb_words_has(NULL, "a", 1) == 0);
    char rest[64];
    dlb_words_not_in(rest, sizeof rest, "model=lenet batch=64 amp=on", "batch=64 model=lenet");
    CHECK(!strcmp(rest, "amp=on"));
    dlb_words_not_in(rest, sizeof rest, "batch=64", "batch=64");
    CHECK(!strcmp(rest, "batch=64")); /* nothing left: the whole id */
    char shared[256], label[256];
    dlb_plot_shared_words((struct dlb_plot_recs){v, 4}, shared, sizeof shared);
    CHECK(!strcmp(shared, "batch=64 amp.loss_scale=none"));
    r[2].status = DLB_REC_OK; /* batch=640 is not batch=64 */
    dlb_plot_shared_words((struct dlb_plot_recs){v, 4}, shared, sizeof shared);
    CHECK(!strcmp(shared, "amp.loss_scale=none"));
    dlb_plot_shared_words((struct dlb_plot_recs){v, 1}, shared, sizeof shared);
    CHECK(!strcmp(shared, "")); /* one row shares nothing with another */

    dlb_plot_row_label(r[1].id, "batch=64 amp.loss_scale=none", "", label, sizeof label);
    CHECK(!strcmp(label, "model=vgg-small"));
    dlb_plot_row_label(r[2].id, "batch=64 amp.loss_scale=none", " (median 2 ms)",
                       label, sizeof label);
    CHECK(!strcmp(label, "model=vgg-small batch=640 (median 2 ms)"));
    /* nothing of its own left: the whole id */
    dlb_plot_row_label("a=1 b=2", "a=1 b=2", "", label, sizeof label);
    CHECK(!strcmp(label, "a=1 b=2"));
    /* too long: the id is cut, the tail stays whole */
    char lng[300];
    memset(lng, 'x', 200);
    lng[200] = '\0';
    dlb_plot_row_label(lng, "", " (median 9.5 ms)", label, sizeof label);
    CHECK(strlen(label) <= DLB_PLOT_LABEL_MAX);
    CHECK(strstr(label, "x... (median 9.5 ms)") != NULL);
    /* cut at a character boundary: 100 two-byte characters */
    for (int i = 0; i < 100; i++)
        memcpy(lng + 2 * i, "\xc3\xa9", 2);
    dlb_plot_row_label(lng, NULL, " (median 1 ms)", label, sizeof label);
    char *dots = strstr(label, "...");
    CHECK(dots && (dots - label) % 2 == 0);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/dlb-plot-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir))
        return 99;
    snprintf(hostile, sizeof hostile,
             "x=`touch %s/bq` y=system(\"touch %s/sys\") \n!touch %s/nl\n"
             "z='; system(\"touch %s/q\"); ' @GPVAL_TERM \"; !touch %s/bang",
             tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "gnuplot not installed: skipped\n");
        return 77;
    }
    test_quote();
    test_row_labels();
    test_plots();
    test_scaling_log();
    test_pareto_front();
    test_speedup_own_baseline();
    test_speedup_verdict_colour();
    test_workload_blocks();
    test_many_rows();
    test_trend();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    /* DLB_TEST_KEEP=1 keeps the plots, to look at them. */
    if (!check_failures && !getenv("DLB_TEST_KEEP") && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    else if (check_failures || getenv("DLB_TEST_KEEP"))
        fprintf(stderr, "files kept in %s\n", tmpdir);
    return check_exit();
}
