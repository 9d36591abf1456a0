/* `dlbench history DIR...`: many runs of a suite as a trend table, a CSV
 * of every point and the trend plot, in --out DIR (default ./history). */
#include "cmd_compare.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "plot_impl.h"
#include "results.h"

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

static const char *start_of(json_t *doc)
{
    const char *s = json_string_value(json_object_get(json_object_get(doc, "context"), "start_utc"));
    return s ? s : "";
}

static int by_start(const void *a, const void *b)
{
    return strcmp(start_of(*(json_t *const *)a), start_of(*(json_t *const *)b));
}

/* Load every file, in the order the runs started. */
static dlb_status load_runs(json_t *files, json_t **runs, struct dlb_error *err)
{
    size_t n = json_array_size(files), i;
    json_t **v = calloc(n + 1, sizeof *v);
    if (!v)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    dlb_status s = DLB_OK;
    for (i = 0; i < n && s == DLB_OK; i++) {
        const char *f = json_string_value(json_array_get(files, i));
        if ((s = dlb_results_read(f, &v[i], err)) == DLB_OK)
            json_object_set_new(v[i], "file", json_string(f));
    }
    if (s == DLB_OK) {
        qsort(v, n, sizeof *v, by_start);
        *runs = json_array();
        for (i = 0; i < n; i++)
            json_array_append(*runs, v[i]);
    }
    for (i = 0; i < n; i++)
        json_decref(v[i]);
    free(v);
    return s == DLB_ERR_IO ? DLB_ERR_INPUT : s;
}

static dlb_status write_csv(const char *dir, json_t *runs, struct dlb_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/history.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    fputs("start_utc,host,file,id,status,throughput.median,throughput.ci_lo,"
          "throughput.ci_hi,stats.median\n", f);
    size_t r, i;
    json_t *doc, *rec;
    json_array_foreach(runs, r, doc)
        json_array_foreach(json_object_get(doc, "records"), i, rec) {
            int h[4];
            double v[4] = {
                dlb_rec_num(rec, "throughput", "median", &h[0]),
                dlb_rec_num(rec, "throughput", "ci_lo", &h[1]),
                dlb_rec_num(rec, "throughput", "ci_hi", &h[2]),
                dlb_rec_num(rec, "stats", "median", &h[3]),
            };
            const char *cells[5] = {
                start_of(doc),
                json_string_value(dlb_context_get(json_object_get(doc, "context"), "host")),
                json_string_value(json_object_get(doc, "file")), dlb_rec_id(rec),
                json_string_value(json_object_get(rec, "status")),
            };
            for (int c = 0; c < 5; c++) {
                /* RFC 4180 quoting: every text cell, '"' doubled. */
                fputc('"', f);
                for (const char *s = cells[c] ? cells[c] : ""; *s; s++)
                    fputs(*s == '"' ? "\"\"" : (char[2]){*s, 0}, f);
                fputs("\",", f);
            }
            for (int c = 0; c < 4; c++) {
                if (h[c])
                    fprintf(f, "%.17g", v[c]);
                fputc(c < 3 ? ',' : '\n', f);
            }
        }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return dlb_errorf(err, DLB_ERR_IO, "cannot write %s", path);
    return DLB_OK;
}

/* Per configuration: the runs it ran in, first and last throughput, the
 * change between them, the lowest and highest. */
static json_t *summarize(json_t *runs)
{
    json_t *sum = json_pack("{s:[], s:[]}", "runs", "configs");
    json_t *configs = json_object_get(sum, "configs");
    size_t r, i, j;
    json_t *doc, *rec, *row;
    json_array_foreach(runs, r, doc) {
        json_array_append_new(json_object_get(sum, "runs"), json_pack("{s:s, s:s?, s:s?}",
            "start_utc", start_of(doc), "host",
            json_string_value(dlb_context_get(json_object_get(doc, "context"), "host")),
            "file", json_string_value(json_object_get(doc, "file"))));
        json_array_foreach(json_object_get(doc, "records"), i, rec) {
            int h;
            double tp = dlb_rec_num(rec, "throughput", "median", &h);
            if (!dlb_rec_ok(rec) || !h)
                continue;
            json_t *found = NULL;
            json_array_foreach(configs, j, row)
                if (!strcmp(json_string_value(json_object_get(row, "id")), dlb_rec_id(rec)))
                    found = row;
            if (!found) {
                found = json_pack("{s:s, s:i, s:f, s:f, s:f}", "id", dlb_rec_id(rec),
                                  "runs", 0, "first", tp, "min", tp, "max", tp);
                json_array_append_new(configs, found);
            }
            json_object_set_new(found, "runs", json_integer(
                json_integer_value(json_object_get(found, "runs")) + 1));
            json_object_set_new(found, "last", json_real(tp));
            json_object_set_new(found, "last_utc", json_string(start_of(doc)));
            if (tp < json_real_value(json_object_get(found, "min")))
                json_object_set_new(found, "min", json_real(tp));
            if (tp > json_real_value(json_object_get(found, "max")))
                json_object_set_new(found, "max", json_real(tp));
        }
    }
    json_array_foreach(configs, j, row)
        json_object_set_new(row, "change", json_real(
            json_real_value(json_object_get(row, "last")) /
            json_real_value(json_object_get(row, "first")) - 1));
    return sum;
}

static void print_summary(FILE *f, json_t *sum, int markdown)
{
    size_t i, w = 6;
    json_t *row;
    json_array_foreach(json_object_get(sum, "configs"), i, row) {
        size_t n = strlen(json_string_value(json_object_get(row, "id")));
        w = n > w ? n : w;
    }
    const char *fmt = markdown ? "| %s | %s | %s | %s | %s | %s | %s |\n"
                               : "%-*s  %4s  %10s  %10s  %7s  %10s  %10s\n";
    if (markdown)
        fprintf(f, "### dlbench history: %zu runs\n\n" "| configuration | runs | first "
                "(samples/s) | last (samples/s) | change | lowest | highest |\n"
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
                json_array_size(json_object_get(sum, "runs")));
    else
        fprintf(f, "%zu runs\n%-*s  %4s  %10s  %10s  %7s  %10s  %10s\n%-*s  %4s  %10s  "
                "%10s  %7s  %10s  %10s\n", json_array_size(json_object_get(sum, "runs")),
                (int)w, "config", "runs", "first", "last", "change", "lowest", "highest",
                (int)w, "", "", "samples/s", "samples/s", "%", "samples/s", "samples/s");
    json_array_foreach(json_object_get(sum, "configs"), i, row) {
        char c[6][32];
        const char *keys[5] = {"first", "last", "change", "min", "max"};
        snprintf(c[0], sizeof c[0], "%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(row, "runs")));
        for (int k = 0; k < 5; k++) {
            double v = json_real_value(json_object_get(row, keys[k]));
            snprintf(c[k + 1], sizeof c[k + 1], k == 2 ? "%+.1f%%" : "%.4g",
                     k == 2 ? v * 100 : v);
        }
        const char *id = json_string_value(json_object_get(row, "id"));
        if (markdown)
            fprintf(f, fmt, id, c[0], c[1], c[2], c[3], c[4], c[5]);
        else
            fprintf(f, fmt, (int)w, id, c[0], c[1], c[2], c[3], c[4], c[5]);
    }
}

static dlb_status make_dir(const char *dir, struct dlb_error *err)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", dir, strerror(errno));
    return DLB_OK;
}

static dlb_status history(struct dlb_options *o, json_t *runs, struct dlb_error *err)
{
    const char *out = o->out_dir ? o->out_dir : "history";
    struct dlb_plotter p;
    dlb_status s = make_dir(out, err);
    if (s == DLB_OK)
        s = dlb_plotter_init(&p, out, "", err);
    if (s != DLB_OK)
        return s;
    p.suite = json_string_value(dlb_context_get(json_object_get(
        json_array_get(runs, 0), "context"), "suite.name"));
    s = dlb_plot_trend(&p, runs, err);
    if (s == DLB_OK)
        s = write_csv(out, runs, err);
    if (s == DLB_OK && !p.drawn)
        fprintf(stderr, "dlbench: warning: %s\n", p.why);
    dlb_plotter_free(&p);
    if (s != DLB_OK)
        return s;
    json_t *sum = summarize(runs);
    if (!sum)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    json_object_set_new(sum, "out", json_string(out));
    if (o->format == DLB_FORMAT_JSON && !o->markdown) {
        json_dumpf(sum, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else {
        print_summary(stdout, sum, o->markdown);
        fprintf(o->markdown ? stderr : stdout, "trend plot and data in %s/ "
                "(trend.png, trend.svg, trend.dat, history.csv)\n", out);
    }
    json_decref(sum);
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
    json_t *files = json_array(), *runs = NULL;
    dlb_status s = files ? DLB_OK : DLB_ERR_NOMEM;
    for (size_t i = 0; i < o->n_args && s == DLB_OK; i++)
        s = collect(o->args[i], files, &err);
    if (s == DLB_OK)
        s = load_runs(files, &runs, &err);
    if (s == DLB_OK)
        s = history(o, runs, &err);
    json_decref(files);
    json_decref(runs);
    if (s != DLB_OK) {
        fprintf(stderr, "dlbench: history: %s\n", err.msg[0] ? err.msg : "out of memory");
        return 2;
    }
    return 0;
}
