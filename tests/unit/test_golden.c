/* What the parent writes after a run, byte for byte against files kept in
 * tests/unit/golden/: for fixed suites and records, results.json (with
 * its "selection"), results.csv, report.md, report.html, the summary
 * after the table, best.ini and the plots' data files and scripts; and
 * `dlbench compare`'s table, markdown and JSON for two fixed runs. The
 * golden files were written by the code as it stood before the selection
 * and the comparison were built as structs, so a writer that drifts from
 * it (a member renamed, reordered, an integer written as a real) fails
 * here with the first line that differs.
 *
 * DLB_GOLDEN_OUT=DIR also writes what this build produced to DIR/NAME.txt,
 * to look at, or to replace a golden file when a change is meant. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "compare/compare.h"
#include "run/postrun.h"
#include "select/vs_baseline.h"
#include "select_fixture.h"

/* ---- collecting output ------------------------------------------------- */

struct text {
    char *buf;
    size_t len;
    FILE *f;
};

static void text_open(struct text *t)
{
    t->buf = NULL;
    t->len = 0;
    t->f = open_memstream(&t->buf, &t->len);
}

static void text_close(struct text *t)
{
    if (t->f)
        fclose(t->f);
    t->f = NULL;
}

/* Append DIR/NAME under a header; "(absent)" when there is no such file. */
static void add_file(struct text *t, const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fprintf(t->f, "==> %s <==\n", name);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(t->f, "(absent)\n");
        return;
    }
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, t->f);
    fclose(f);
}

static int data_or_script(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return (n > 4 && !strcmp(e->d_name + n - 4, ".dat")) ||
           (n > 3 && !strcmp(e->d_name + n - 3, ".gp"));
}

/* Every plot's data file and script, in name order. */
static void add_plots(struct text *t, const char *dir)
{
    char pdir[4200], name[600];
    snprintf(pdir, sizeof pdir, "%s/plots", dir);
    struct dirent **list;
    int n = scandir(pdir, &list, data_or_script, alphasort);
    for (int k = 0; k < n; k++) {
        snprintf(name, sizeof name, "plots/%s", list[k]->d_name);
        add_file(t, dir, name);
        free(list[k]);
    }
    if (n >= 0)
        free(list);
}

/* Every occurrence of `from` in s replaced by `to`: the run directory and
 * the suite's temporary path differ from run to run. */
static char *replace_all(const char *s, const char *from, const char *to)
{
    size_t lf = strlen(from), lt = strlen(to), n = 0;
    for (const char *p = strstr(s, from); lf && p; p = strstr(p + lf, from))
        n++;
    char *out = malloc(strlen(s) + n * lt + 1), *o = out;
    if (!out)
        return NULL;
    while (lf && *s) {
        const char *p = strstr(s, from);
        if (!p)
            break;
        memcpy(o, s, (size_t)(p - s));
        o += p - s;
        memcpy(o, to, lt);
        o += lt;
        s = p + lf;
    }
    strcpy(o, s);
    return out;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    char chunk[4096];
    size_t n;
    while (m && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, m);
    fclose(f);
    if (m)
        fclose(m);
    return buf;
}

/* Compare `got` with tests/unit/golden/NAME.txt, naming the first line
 * that differs. */
static void check_golden(const char *name, const char *got)
{
    char path[4200];
    const char *out = getenv("DLB_GOLDEN_OUT");
    if (out && *out) {
        snprintf(path, sizeof path, "%s/%s.txt", out, name);
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(got, f);
            fclose(f);
        }
    }
    const char *srcdir = getenv("srcdir");
    snprintf(path, sizeof path, "%s/tests/unit/golden/%s.txt",
             srcdir && *srcdir ? srcdir : ".", name);
    char *want = slurp(path);
    CHECK(want != NULL);
    if (!want) {
        fprintf(stderr, "  %s: cannot read the golden file\n", path);
        return;
    }
    const char *a = want, *b = got;
    int line = 1;
    while (*a && *a == *b) {
        line += *a == '\n';
        a++, b++;
    }
    CHECK(*a == *b);
    if (*a != *b) {
        const char *la = a, *lb = b;
        while (la > want && la[-1] != '\n')
            la--, lb--;
        fprintf(stderr, "  %s: line %d differs\n    want: %.*s\n    got:  %.*s\n",
                name, line, (int)strcspn(la, "\n"), la, (int)strcspn(lb, "\n"), lb);
    }
    free(want);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* ---- the run's files ---------------------------------------------------- */

static json_t *context(void)
{
    return json_pack("{s:s,s:{s:s,s:i},s:{s:s,s:s},s:b}", "host", "golden-host",
                     "cpu", "model", "Golden CPU @ 2.0GHz", "cores", 2, "suite",
                     "name", "golden", "crc32", "0badcafe", "quick", 0);
}

/* The parent's sequence after a run, as cmd_run.c calls it. */
static int post_run(const struct fixture *f, json_t *ctx, json_t *recs,
                    const char *dir, FILE *summary)
{
    struct dlb_error err = {""};
    struct dlb_selection sel;
    dlb_vs_baseline_annotate(&f->p, recs);
    if (dlb_postrun_results(dir, &f->p, ctx, recs, &sel, &err) != DLB_OK) {
        fprintf(stderr, "  %s\n", err.msg);
        dlb_selection_free(&sel);
        return 0;
    }
    struct dlb_postrun pr = {dir, NULL, &f->p, ctx, recs, summary, NULL,
                             sel.present ? &sel : NULL};
    int winner = 0;
    dlb_postrun(&pr, &winner);
    fprintf(summary, "(winner: %d)\n", winner);
    dlb_selection_free(&sel);
    return 1;
}

/* Run the parent's sequence on `recs` and compare everything it wrote. */
static void golden_run(const char *name, struct fixture *f, json_t *recs)
{
    char dir[512];
    check_temp_template(dir, sizeof dir, "dlb-golden-XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    json_t *ctx = context();
    struct text sum, all;
    text_open(&sum);
    int ran = post_run(f, ctx, recs, dir, sum.f);
    CHECK(ran);
    text_close(&sum);
    text_open(&all);
    fprintf(all.f, "==> summary <==\n%s", sum.buf ? sum.buf : "");
    static const char *const files[] = {
        "results.json", "results.csv", "report.md", "report.html", "best.ini",
        "best-1.ini", "best-2.ini"};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++)
        add_file(&all, dir, files[k]);
    add_plots(&all, dir);
    text_close(&all);
    char *a = replace_all(all.buf ? all.buf : "", dir, "RUNDIR");
    char *b = a ? replace_all(a, f->path, "SUITE") : NULL;
    CHECK(b != NULL);
    if (b)
        check_golden(name, b);
    free(a);
    free(b);
    free(all.buf);
    free(sum.buf);
    json_decref(ctx);
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- records ------------------------------------------------------------ */

static void set_seeds(json_t *rec, double a42, double a43)
{
    json_object_set_new(rec, "seeds", json_pack("[{s:i,s:f},{s:i,s:f}]", "seed",
                                                 42, "accuracy", a42, "seed", 43,
                                                 "accuracy", a43));
    json_object_set_new(json_object_get(rec, "metrics"), "test_images",
                        json_pack("{s:f,s:s}", "value", 10000.0, "unit", "images"));
}

static void set_failed(json_t *rec, const char *status, const char *reason)
{
    json_object_set_new(rec, "status", json_string(status));
    json_object_set_new(rec, "reason", json_string(reason));
}

/* Two workloads (batch) of two plugins on and off: a setting that pays
 * off on one and costs on the other, one that is not measured on one, a
 * combination that breaks the accuracy constraint, a doubtful record
 * that breaks the memory budget, a failed one, seeds. */
static void golden_workloads(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\nname = golden\nmodel = golden-net\n"
                          "workload_axes = batch\naccuracy_tolerance = 0.5\n"
                          "memory_budget = 100M\n"
                          "[sweep]\nbatch = 16, 32\namp.enable = off, on\n"
                          "mempool.enable = off, on\n")) {
        CHECK(!"fixture");
        return;
    }
    json_t *recs = json_array(), *r;
    json_array_append_new(recs, r = crafted(&f, 0, 100, 0.01, 80.0, 50e6));
    set_seeds(r, 80.2, 79.8);
    json_array_append_new(recs, r = crafted(&f, 1, 150, 0.01, 80.5, 60e6));
    set_seeds(r, 80.9, 80.1);
    json_array_append_new(recs, r = crafted(&f, 2, 99, 0.02, 79.9, 50e6));
    set_seeds(r, 80.0, 79.8);
    /* the winner at batch 16 gains accuracy: its line says a gain */
    json_array_append_new(recs, r = crafted(&f, 3, 200, 0.01, 80.3, 50e6));
    set_seeds(r, 80.4, 80.2);
    json_array_append_new(recs, crafted(&f, 4, 300, 0.01, 80.0, 80e6));
    json_array_append_new(recs, r = crafted(&f, 5, 400, 0.01, 80.1, 200e6));
    json_object_set_new(r, "system", json_pack("{s:s}", "doubtful",
                                               "preempted 250 times a second"));
    json_array_append_new(recs, r = crafted(&f, 6, 1, 0.01, -1, -1));
    set_failed(r, "failed", "exit status 3: no kernel for bf16 here");
    json_array_append_new(recs, crafted(&f, 7, 600, 0.01, 78.0, 70e6));
    golden_run("workloads", &f, recs);
    json_decref(recs);
    fixture_close(&f);
}

/* One workload: batch is a setting (throughput), trained for as many
 * steps, so accuracies of two batch sizes do not compare; ties; a record
 * of a screening round; a skipped one; a doubtful baseline;
 * attribution. */
static void golden_single(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\nname = golden\nmodel = golden-net\n"
                          "train_steps = 10\n"
                          "baseline = batch=16 amp.enable=off\n"
                          "accuracy_noise = 0.3\n[sweep]\namp.enable = off, on\n"
                          "batch = 16, 32, 64\n")) {
        CHECK(!"fixture");
        return;
    }
    /* plan order: (off,16) (off,32) (off,64) (on,16) (on,32) (on,64) */
    json_t *recs = json_array(), *r;
    json_array_append_new(recs, r = crafted(&f, 0, 100, 0.01, 80, 30e6));
    json_object_set_new(r, "system", json_pack("{s:s}", "doubtful",
                                               "5% of the CPU stolen"));
    json_array_append_new(recs, crafted(&f, 1, 150, 0.02, 79, 40e6));
    json_array_append_new(recs, r = crafted(&f, 2, 90, 0.02, 78, 50e6));
    json_object_set_new(r, "round", json_integer(0));
    json_object_set_new(r, "budget", json_real(0.5));
    json_array_append_new(recs, crafted(&f, 3, 120, 0.01, 80.2, 28e6));
    json_array_append_new(recs, crafted(&f, 4, 150.6, 0.02, 79.5, 41e6));
    json_array_append_new(recs, r = crafted(&f, 5, 1, 0.01, -1, -1));
    set_failed(r, "skipped", "amp: precision bf16 on backend ref: no kernel");
    golden_run("single", &f, recs);
    json_decref(recs);
    fixture_close(&f);
}

/* Time to accuracy, lower is better: no configuration reaches the target,
 * so there is no winner, and every one breaks target_accuracy. */
static void golden_no_winner(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\nname = golden\nmodel = golden-net\n"
                          "objective = "
                          "time_to_accuracy\ntarget_accuracy = 85\n"
                          "train_steps = 100\nworkload_axes = none\n[sweep]\n"
                          "batch = 16, 32\n")) {
        CHECK(!"fixture");
        return;
    }
    json_t *recs = json_array();
    json_array_append_new(recs, crafted(&f, 0, 100, 0.01, 80, -1));
    json_array_append_new(recs, crafted(&f, 1, 180, 0.01, 84, -1));
    golden_run("no-winner", &f, recs);
    json_decref(recs);
    fixture_close(&f);
}

/* ---- dlbench compare ---------------------------------------------------- */

static void print_compare(FILE *out, json_t *base, json_t *nw, int normalize)
{
    struct dlb_compare_opts o = {DLB_COMPARE_THRESHOLD, DLB_COMPARE_ALPHA,
                                 normalize, DLB_COMPARE_ACCURACY_THRESHOLD};
    struct dlb_error err = {""};
    struct dlb_comparison cmp;
    if (dlb_compare(base, "base/results.json", nw, "new/results.json", &o, &cmp,
                    &err) != DLB_OK) {
        fprintf(out, "error: %s\n", err.msg);
        return;
    }
    static const char *const names[] = {"table", "markdown", "json"};
    static const enum dlb_compare_format fmts[] = {
        DLB_COMPARE_TABLE, DLB_COMPARE_MARKDOWN, DLB_COMPARE_JSON};
    for (int k = 0; k < 3; k++) {
        fprintf(out, "==> %s%s <==\n", names[k], normalize ? ", normalized" : "");
        dlb_compare_print(out, fmts[k], &cmp);
    }
    dlb_comparison_free(&cmp);
}

/* Two runs of the workloads suite: faster, slower, the same, one missing
 * from the new run, one new in it, a doubtful record, one that failed in
 * the new run, and another machine (a warning). */
static void golden_compare(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\n[sweep]\nbatch = 16, 32\namp.enable = off, on\n"
                          "mempool.enable = off, on\n")) {
        CHECK(!"fixture");
        return;
    }
    json_t *b = json_array(), *n = json_array(), *r;
    static const double tb[] = {100, 150, 99, 200, 300, 400, 500};
    static const double tn[] = {100, 120, 99.5, 260, 300, 410, 0, 640};
    for (size_t k = 0; k < 7; k++)
        json_array_append_new(b, crafted(&f, k, tb[k], 0.01, -1, -1));
    for (size_t k = 0; k < 8; k++) {
        if (k == 6)
            continue; /* missing from the new run */
        json_array_append_new(n, r = crafted(&f, k, tn[k], 0.01, -1, -1));
        if (k == 5)
            json_object_set_new(r, "system", json_pack("{s:s}", "doubtful",
                                                       "4% of the CPU stolen"));
        if (k == 4)
            set_failed(r, "timeout", "still running after 300 s");
    }
    json_t *bc = context(), *nc = context();
    json_object_set_new(nc, "host", json_string("other-host"));
    json_t *bd = dlb_results_document(bc, b), *nd = dlb_results_document(nc, n);
    struct text t;
    text_open(&t);
    print_compare(t.f, bd, nd, 0);
    print_compare(t.f, bd, nd, 1);
    text_close(&t);
    check_golden("compare", t.buf ? t.buf : "");
    free(t.buf);
    json_decref(bd);
    json_decref(nd);
    json_decref(bc);
    json_decref(nc);
    json_decref(b);
    json_decref(n);
    fixture_close(&f);
}

int main(void)
{
    /* No drawing: the data files and scripts are what is compared, and
     * gnuplot's own output differs between its versions. */
    setenv("DLBENCH_GNUPLOT", "/nonexistent/gnuplot", 1);
    golden_workloads();
    golden_single();
    golden_no_winner();
    golden_compare();
    return check_exit();
}
