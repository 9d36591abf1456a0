/* The trend of each configuration's throughput over a history of runs:
 * one line per configuration id, the x axis the run's start time. */
#include "plot_impl.h"

#include <string.h>

static json_t *find_ok(json_t *doc, const char *id)
{
    size_t i;
    json_t *rec;
    json_array_foreach(json_object_get(doc, "records"), i, rec)
        if (dlb_rec_ok(rec) && !strcmp(dlb_rec_id(rec), id))
            return rec;
    return NULL;
}

/* Configuration ids in order of first appearance over the runs. */
static json_t *all_ids(json_t *runs)
{
    json_t *ids = json_array();
    size_t r, i, j;
    json_t *doc, *rec, *have;
    json_array_foreach(runs, r, doc)
        json_array_foreach(json_object_get(doc, "records"), i, rec) {
            int dup = 0;
            json_array_foreach(ids, j, have)
                dup |= !strcmp(json_string_value(have), dlb_rec_id(rec));
            if (!dup && dlb_rec_ok(rec))
                json_array_append_new(ids, json_string(dlb_rec_id(rec)));
        }
    return ids;
}

static void write_block(FILE *f, json_t *runs, const char *id)
{
    dlb_plot_label(f, id);
    fputs(" \"throughput\" \"ci_lo\" \"ci_hi\"\n", f);
    size_t r;
    json_t *doc;
    json_array_foreach(runs, r, doc) {
        json_t *rec = find_ok(doc, id);
        const char *t = json_string_value(json_object_get(
            json_object_get(doc, "context"), "start_utc"));
        int h1, h2, h3;
        double y = dlb_rec_num(rec, "throughput", "median", &h1);
        double lo = dlb_rec_num(rec, "throughput", "ci_lo", &h2);
        double hi = dlb_rec_num(rec, "throughput", "ci_hi", &h3);
        /* Only a well-formed ISO time may reach the time column. */
        if (!rec || !h1 || !t || strlen(t) != 20 || t[10] != 'T' || t[19] != 'Z' ||
            strspn(t, "0123456789-:TZ") != 20)
            continue;
        fprintf(f, "%s %.9g %.9g %.9g\n", t, y, h2 ? lo : y, h3 ? hi : y);
    }
    fputs("\n\n", f);
}

dlb_status dlb_plot_trend(struct dlb_plotter *p, json_t *runs,
                          struct dlb_error *err)
{
    json_t *ids = all_ids(runs);
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
        write_block(f, runs, json_string_value(id));
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
