/* `dlbench history DIR...`: many runs of a suite as a trend table, a CSV
 * of every point and the trend plot, in --out DIR (default ./history). */
#include "cli/cmd_compare.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "plot/plot.h"
#include "results/results.h"
#include "util/figure.h"

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add the results.json files ARG names: the file, DIR/results.json, or
 * DIR/RUN/results.json for each run directory in DIR (results/SUITE/). */
static dlb_status collect(const char *arg, json_t *files, struct dlb_error *err)
{
    char path[4096];
    if (is_file(arg))
        return json_array_append_new(files, json_string(arg)) ? DLB_ERR_NOMEM : DLB_OK;
    snprintf(path, sizeof path, "%s/results.json", arg);
    if (is_file(path))
        return json_array_append_new(files, json_string(path)) ? DLB_ERR_NOMEM : DLB_OK;
    DIR *d = opendir(arg);
    if (!d)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s (give run directories, "
                          "results.json files or a folder of runs)", arg, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        snprintf(path, sizeof path, "%s/%s/results.json", arg, e->d_name);
        char **v = e->d_name[0] != '.' && is_file(path)
                   ? realloc(names, (n + 1) * sizeof *v) : NULL;
        if (v) {
            names = v;
            names[n++] = strdup(path);
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        if (names[i])
            json_array_append_new(files, json_string(names[i]));
        free(names[i]);
    }
    free(names);
    if (!n)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s holds no results.json, nor run "
                          "directories with one", arg);
    return DLB_OK;
}

/* The runs, typed, in the order they started, each with its file. */
struct runs {
    struct dlb_results *v;
    const char **file;
    size_t n;
};

static const char *ctx_str(const struct dlb_results *run, const char *key)
{
    return json_string_value(dlb_context_get(run->context, key));
}

static const char *start_of(const struct dlb_results *run)
{
    const char *s = ctx_str(run, "start_utc");
    return s ? s : "";
}

struct loaded {
    struct dlb_results res;
    const char *file;
};

static int by_start(const void *a, const void *b)
{
    return strcmp(start_of(&((const struct loaded *)a)->res),
                  start_of(&((const struct loaded *)b)->res));
}

static void runs_free(struct runs *r)
{
    for (size_t i = 0; r->v && i < r->n; i++)
        dlb_results_free(&r->v[i]);
    free(r->v);
    free(r->file);
}

/* Load every file, in the order the runs started. */
static dlb_status load_runs(json_t *files, struct runs *runs, struct dlb_error *err)
{
    size_t n = json_array_size(files), i, got = 0;
    struct loaded *v = calloc(n + 1, sizeof *v);
    memset(runs, 0, sizeof *runs);
    if (!v)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    dlb_status s = DLB_OK;
    for (i = 0; i < n && s == DLB_OK; i++) {
        json_t *doc = NULL;
        v[i].file = json_string_value(json_array_get(files, i));
        s = dlb_results_read(v[i].file, &doc, err);
        if (s == DLB_OK)
            s = dlb_results_parse(doc, v[i].file, &v[i].res, err);
        if (s == DLB_OK)
            got++;
        json_decref(doc);
    }
    runs->v = calloc(n + 1, sizeof *runs->v);
    runs->file = calloc(n + 1, sizeof *runs->file);
    if (s == DLB_OK && (!runs->v || !runs->file))
        s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (s == DLB_OK) {
        qsort(v, n, sizeof *v, by_start);
        for (i = 0; i < n; i++) {
            runs->v[i] = v[i].res;
            runs->file[i] = v[i].file;
        }
        runs->n = n;
    } else {
        for (i = 0; i < got; i++)
            dlb_results_free(&v[i].res);
    }
    free(v);
    return s == DLB_ERR_IO ? DLB_ERR_INPUT : s;
}

static void put_figure(FILE *f, double v, int last)
{
    if (!isnan(v))
        fprintf(f, "%.17g", v);
    fputc(last ? '\n' : ',', f);
}

static dlb_status write_csv(const char *dir, const struct runs *runs,
                            struct dlb_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/history.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    fputs("start_utc,host,file,id,status,throughput.median,throughput.ci_lo,"
          "throughput.ci_hi,stats.median\n", f);
    for (size_t r = 0; r < runs->n; r++)
        for (size_t i = 0; i < runs->v[r].n; i++) {
            const struct dlb_record *rec = &runs->v[r].records[i];
            const char *cells[5] = {
                start_of(&runs->v[r]), ctx_str(&runs->v[r], "host"),
                runs->file[r], rec->id, dlb_rec_status_name(rec->status),
            };
            for (int c = 0; c < 5; c++) {
                /* RFC 4180 quoting: every text cell, '"' doubled. */
                fputc('"', f);
                for (const char *s = cells[c] ? cells[c] : ""; *s; s++)
                    fputs(*s == '"' ? "\"\"" : (char[2]){*s, 0}, f);
                fputs("\",", f);
            }
            put_figure(f, rec->throughput.median, 0);
            put_figure(f, rec->throughput.ci_lo, 0);
            put_figure(f, rec->throughput.ci_hi, 0);
            put_figure(f, rec->stats.median, 1);
        }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return dlb_errorf(err, DLB_ERR_IO, "cannot write %s", path);
    return DLB_OK;
}

/* Per configuration: the runs it ran in, first and last throughput, the
 * change between them, the lowest and highest. */
struct trend_row {
    const char *id, *last_utc;
    long long runs;
    double first, last, min, max, change;
};

struct summary {
    struct trend_row *rows;
    size_t n;
};

static int summarize(const struct runs *runs, struct summary *sum)
{
    size_t most = 0;
    for (size_t r = 0; r < runs->n; r++)
        most += runs->v[r].n;
    sum->n = 0;
    sum->rows = calloc(most + 1, sizeof *sum->rows);
    if (!sum->rows)
        return -1;
    for (size_t r = 0; r < runs->n; r++)
        for (size_t i = 0; i < runs->v[r].n; i++) {
            const struct dlb_record *rec = &runs->v[r].records[i];
            double tp = rec->throughput.median;
            if (rec->status != DLB_REC_OK || isnan(tp))
                continue;
            struct trend_row *found = NULL;
            for (size_t j = 0; j < sum->n; j++)
                if (!strcmp(sum->rows[j].id, rec->id))
                    found = &sum->rows[j];
            if (!found) {
                found = &sum->rows[sum->n++];
                *found = (struct trend_row){rec->id, NULL, 0, tp, tp, tp, tp, 0};
            }
            found->runs++;
            found->last = tp;
            found->last_utc = start_of(&runs->v[r]);
            if (tp < found->min)
                found->min = tp;
            if (tp > found->max)
                found->max = tp;
        }
    for (size_t j = 0; j < sum->n; j++)
        sum->rows[j].change = sum->rows[j].last / sum->rows[j].first - 1;
    return 0;
}

/* The summary as `--format json` prints it. */
static json_t *summary_json(const struct runs *runs, const struct summary *sum,
                            const char *out)
{
    json_t *doc = json_pack("{s:[], s:[]}", "runs", "configs");
    if (!doc)
        return NULL;
    json_t *jr = json_array(), *jc = json_array();
    for (size_t r = 0; r < runs->n; r++)
        json_array_append_new(jr, json_pack("{s:s, s:s?, s:s?}",
            "start_utc", start_of(&runs->v[r]), "host", ctx_str(&runs->v[r], "host"),
            "file", runs->file[r]));
    for (size_t j = 0; j < sum->n; j++) {
        const struct trend_row *t = &sum->rows[j];
        json_array_append_new(jc, json_pack("{s:s, s:I, s:f, s:f, s:f, s:f, s:s, s:f}",
            "id", t->id, "runs", (json_int_t)t->runs, "first", t->first,
            "min", t->min, "max", t->max, "last", t->last,
            "last_utc", t->last_utc, "change", t->change));
    }
    json_object_set_new(doc, "runs", jr);
    json_object_set_new(doc, "configs", jc);
    json_object_set_new(doc, "out", json_string(out));
    return doc;
}

static void print_summary(FILE *f, const struct summary *sum, size_t n_runs,
                          int markdown)
{
    size_t i, w = 6;
    for (i = 0; i < sum->n; i++) {
        size_t n = strlen(sum->rows[i].id);
        w = n > w ? n : w;
    }
    const char *fmt = markdown ? "| %s | %s | %s | %s | %s | %s | %s |\n"
                               : "%-*s  %4s  %10s  %10s  %7s  %10s  %10s\n";
    if (markdown)
        fprintf(f, "### dlbench history: %zu runs\n\n" "| configuration | runs | first "
                "(samples/s) | last (samples/s) | change | lowest | highest |\n"
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n", n_runs);
    else
        fprintf(f, "%zu runs\n%-*s  %4s  %10s  %10s  %7s  %10s  %10s\n%-*s  %4s  %10s  "
                "%10s  %7s  %10s  %10s\n", n_runs,
                (int)w, "config", "runs", "first", "last", "change", "lowest", "highest",
                (int)w, "", "", "samples/s", "samples/s", "%", "samples/s", "samples/s");
    for (i = 0; i < sum->n; i++) {
        const struct trend_row *t = &sum->rows[i];
        char c[6][32];
        const double v[5] = {t->first, t->last, t->change, t->min, t->max};
        snprintf(c[0], sizeof c[0], "%lld", t->runs);
        for (int k = 0; k < 5; k++) {
            if (k == 2)
                snprintf(c[k + 1], sizeof c[k + 1], "%+.1f%%", v[k] * 100);
            else
                dlb_figure_text(c[k + 1], sizeof c[k + 1], v[k]);
        }
        if (markdown)
            fprintf(f, fmt, t->id, c[0], c[1], c[2], c[3], c[4], c[5]);
        else
            fprintf(f, fmt, (int)w, t->id, c[0], c[1], c[2], c[3], c[4], c[5]);
    }
}

static dlb_status make_dir(const char *dir, struct dlb_error *err)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", dir, strerror(errno));
    return DLB_OK;
}

static dlb_status history(struct dlb_options *o, const struct runs *runs,
                          struct dlb_error *err)
{
    const char *out = o->out_dir ? o->out_dir : "history";
    int drawn = 1;
    char why[512] = "";
    dlb_status s = make_dir(out, err);
    if (s == DLB_OK)
        s = dlb_plots_trend(out, runs->n ? ctx_str(&runs->v[0], "suite.name") : NULL,
                            runs->v, runs->n, &drawn, why, sizeof why, err);
    if (s == DLB_OK)
        s = write_csv(out, runs, err);
    if (s == DLB_OK && !drawn)
        fprintf(stderr, "dlbench: warning: %s\n", why);
    if (s != DLB_OK)
        return s;
    struct summary sum;
    if (summarize(runs, &sum))
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (o->format == DLB_FORMAT_JSON && !o->markdown) {
        json_t *doc = summary_json(runs, &sum, out);
        if (!doc) {
            free(sum.rows);
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        }
        json_dumpf(doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        print_summary(stdout, &sum, runs->n, o->markdown);
        fprintf(o->markdown ? stderr : stdout, "trend plot and data in %s/ "
                "(trend.png, trend.svg, trend.dat, history.csv)\n", out);
    }
    free(sum.rows);
    return DLB_OK;
}

int dlb_cmd_history(struct dlb_options *o)
{
    struct dlb_error err = {""};
    if (!o->n_args) {
        fprintf(stderr, "dlbench: history: which runs? e.g. dlbench history "
                "results/baseline\n");
        return 2;
    }
    json_t *files = json_array();
    struct runs runs = {NULL, NULL, 0};
    dlb_status s = files ? DLB_OK : DLB_ERR_NOMEM;
    for (size_t i = 0; i < o->n_args && s == DLB_OK; i++)
        s = collect(o->args[i], files, &err);
    if (s == DLB_OK)
        s = load_runs(files, &runs, &err);
    if (s == DLB_OK)
        s = history(o, &runs, &err);
    runs_free(&runs);
    json_decref(files);
    if (s != DLB_OK) {
        fprintf(stderr, "dlbench: history: %s\n", err.msg[0] ? err.msg : "out of memory");
        return 2;
    }
    return 0;
}
