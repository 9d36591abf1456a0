/* The trend of each configuration's throughput over a history of runs:
 * one line per configuration id, the x axis the run's start time. */
#include "plot/plot_impl.h"

#include <math.h>
#include <stdio.h>
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
                        const char *id)
{
    dlb_plot_label(f, id);
    fputs(" \"throughput\" \"ci_lo\" \"ci_hi\"\n", f);
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
        fprintf(f, "%s %.9g %.9g %.9g\n", t, y, isnan(lo) ? y : lo,
                isnan(hi) ? y : hi);
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
    FILE *f = dlb_plot_data_open(p, "trend", "one block per configuration "
        "(header line: its id); run start (UTC), throughput median, ci_lo, "
        "ci_hi (samples/s)", err);
    if (!f) {
        json_decref(ids);
        return DLB_ERR_IO;
    }
    json_array_foreach(ids, i, id)
        write_block(f, runs, n_runs, json_string_value(id));
    json_decref(ids);
    dlb_status st = dlb_plot_data_close(f, "trend", err);
    if (st != DLB_OK)
        return st;
    char body[1024];
    snprintf(body, sizeof body,
             "set grid lc rgb 'gray80'\n"
             "set xdata time\n"
             "set timefmt '%%Y-%%m-%%dT%%H:%%M:%%SZ'\n"
             "set format x \"%%Y-%%m-%%d %%H:%%M\"\n"
             "set xtics rotate by 30 right\n"
             "set yrange [0:*]\n"
             "set offsets graph 0.03, graph 0.03, 0, 0\n"
             "set key outside bottom center horizontal\n"
             "set xlabel 'run start (UTC)'\n"
             "set ylabel 'throughput (samples/s, median)'\n"
             "plot for [i=0:%zu] 'trend.dat' index i using 1:2:3:4 with yerrorlines "
             "lw 2 pt 7 ps 1.0 title columnheader(1)\n", n - 1);
    return dlb_plot_emit(p, "trend", "Throughput trend per configuration",
                         body, 0, err);
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
