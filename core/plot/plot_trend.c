/* The trend of each configuration's throughput over a history of runs:
 * one line per configuration id, the x axis the run's start time, the y
 * axis the throughput against the configuration's first run in the
 * history, so that a 3% drop shows alike on a LeNet at 40,000 samples/s
 * and a vgg-small at 2,000 (the data keeps the samples/s). */
#include "plot/plot_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compare/compare.h" /* dlb_context_get */

static const struct dlb_record *find_ok(const struct dlb_results *run,
                                        const char *id)
{
    for (size_t i = 0; i < run->n; i++)
        if (run->records[i].status == DLB_REC_OK && !strcmp(run->records[i].id, id))
            return &run->records[i];
    return NULL;
}

/* Configuration ids in order of first appearance over the runs. */
static json_t *all_ids(const struct dlb_results *runs, size_t n_runs)
{
    json_t *ids = json_array();
    size_t j;
    json_t *have;
    for (size_t r = 0; r < n_runs; r++)
        for (size_t i = 0; i < runs[r].n; i++) {
            const struct dlb_record *rec = &runs[r].records[i];
            int dup = 0;
            json_array_foreach(ids, j, have)
                dup |= !strcmp(json_string_value(have), rec->id);
            if (!dup && rec->status == DLB_REC_OK)
                json_array_append_new(ids, json_string(rec->id));
        }
    return ids;
}

static void write_block(FILE *f, const struct dlb_results *runs, size_t n_runs,
                        const char *id, const char *shared)
{
    char label[1024];
    double first = NAN;
    dlb_plot_row_label(id, shared, "", label, sizeof label);
    dlb_plot_label(f, label);
    fputs(" \"throughput\" \"ci_lo\" \"ci_hi\" \"relative\" \"rel_lo\" \"rel_hi\"\n", f);
    for (size_t r = 0; r < n_runs; r++) {
        const struct dlb_record *rec = find_ok(&runs[r], id);
        const char *t = json_string_value(dlb_context_get(runs[r].context,
                                                          "start_utc"));
        if (!rec)
            continue;
        double y = rec->throughput.median;
        double lo = rec->throughput.ci_lo, hi = rec->throughput.ci_hi;
        /* Only a well-formed ISO time may reach the time column. */
        if (isnan(y) || !t || strlen(t) != 20 || t[10] != 'T' || t[19] != 'Z' ||
            strspn(t, "0123456789-:TZ") != 20)
            continue;
        lo = isnan(lo) ? y : lo;
        hi = isnan(hi) ? y : hi;
        if (isnan(first))
            first = y;
        fprintf(f, "%s %.9g %.9g %.9g %.9g %.9g %.9g\n", t, y, lo, hi, y / first,
                lo / first, hi / first);
    }
    fputs("\n\n", f);
}

dlb_status dlb_plot_trend(struct dlb_plotter *p, const struct dlb_results *runs,
                          size_t n_runs, struct dlb_error *err)
{
    json_t *ids = all_ids(runs, n_runs);
    if (!ids)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    size_t n = json_array_size(ids), i;
    json_t *id;
    if (!n) {
        json_decref(ids);
        return DLB_OK;
    }
    /* The legend leaves out the settings every configuration shares */
    char shared[512] = "";
    const char **names = malloc(n * sizeof *names);
    if (names) {
        json_array_foreach(ids, i, id)
            names[i] = json_string_value(id);
        dlb_plot_shared_words_of(names, n, shared, sizeof shared);
        free(names);
    }
    FILE *f = dlb_plot_data_open(p, "trend", "one block per configuration "
        "(header line: its id, less the settings in the title); run start "
        "(UTC), throughput median, ci_lo, ci_hi (samples/s), the same over "
        "the configuration's first run here", err);
    if (!f) {
        json_decref(ids);
        return DLB_ERR_IO;
    }
    json_array_foreach(ids, i, id)
        write_block(f, runs, n_runs, json_string_value(id), shared);
    json_decref(ids);
    dlb_status st = dlb_plot_data_close(f, "trend", err);
    if (st != DLB_OK)
        return st;
    char body[1536];
    /* Past 8 lines the colours repeat: the dash pattern tells them apart
     * (its expression unbracketed: "dt (" opens a custom dash pattern) */
    snprintf(body, sizeof body,
             "set grid lc rgb 'gray80'\n"
             "set xdata time\n"
             "set timefmt '%%Y-%%m-%%dT%%H:%%M:%%SZ'\n"
             "set format x \"%%Y-%%m-%%d\\n%%H:%%M\"\n"
             "set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n"
             "set key outside bottom center horizontal maxcols 2\n"
             "set xlabel 'run start (UTC)'\n"
             "set ylabel 'throughput against the first run (median; 1 = as fast)'\n"
             "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb 'gray40'\n"
             "plot for [i=0:%zu] 'trend.dat' index i using 1:5:6:7 with yerrorlines "
             "lw 2 pt 7 ps 1.0 lt i%%8+1 dt i/8%%4+1 title columnheader(1)\n",
             n - 1);
    p->shared = shared;
    dlb_status es = dlb_plot_emit(p, "trend", "Throughput trend per configuration",
                                  body, 600 + 11 * (int)n, err);
    p->shared = NULL;
    return es;
}

dlb_status dlb_plots_trend(const char *dir, const char *suite,
                           const struct dlb_results *runs, size_t n_runs,
                           int *drawn, char *why, size_t why_len,
                           struct dlb_error *err)
{
    struct dlb_plotter p;
    dlb_status s = dlb_plotter_init(&p, dir, "", err);
    if (s != DLB_OK)
        return s;
    p.suite = suite;
    s = dlb_plot_trend(&p, runs, n_runs, err);
    *drawn = p.drawn;
    snprintf(why, why_len, "%s", p.why);
    dlb_plotter_free(&p);
    return s;
}
