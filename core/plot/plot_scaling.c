/* Throughput against a numeric axis (batch size, replicas), one line per
 * value of the other axes that vary (amp.precision=bf16 ...), on a
 * logarithmic throughput axis where the lines are over 10x apart. */
#include "plot/plot_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether config[key] takes more than one value over the ok records. */
static int varies(struct dlb_plot_recs recs, const char *key)
{
    char first[256] = "", buf[256];
    int seen = 0;
    for (size_t i = 0; i < recs.n; i++) {
        const struct dlb_record *rec = recs.v[i];
        if (rec->status != DLB_REC_OK)
            continue;
        if (!dlb_rec_config_text(rec, key, buf, sizeof buf))
            strcpy(buf, "\x01"); /* absent differs from every value */
        if (!seen++)
            strcpy(first, buf);
        else if (strcmp(first, buf))
            return 1;
    }
    return 0;
}

/* The series a record belongs to: "k=v ..." over the other varying keys. */
static void series_of(const struct dlb_record *rec, json_t *keys, char *buf, size_t n)
{
    size_t i, len = 0;
    json_t *k;
    buf[0] = '\0';
    json_array_foreach(keys, i, k) {
        char val[256];
        if (!dlb_rec_config_text(rec, json_string_value(k), val, sizeof val))
            strcpy(val, "-");
        int w = snprintf(buf + len, n - len, "%s%s=%s", len ? " " : "",
                         json_string_value(k), val);
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
    if (!buf[0])
        snprintf(buf, n, "throughput");
}

struct sp { double x, y, lo, hi; };

static int by_x(const void *a, const void *b)
{
    const struct sp *p = a, *q = b;
    return (p->x > q->x) - (p->x < q->x);
}

/* The other keys that vary, in the order the first record lists them. */
static json_t *other_keys(struct dlb_plot_recs recs, const char *axis)
{
    json_t *keys = json_array();
    for (size_t i = 0; i < recs.n; i++) {
        const char *k;
        json_t *v;
        json_object_foreach(recs.v[i]->config, k, v) {
            int dup = 0;
            size_t j;
            json_t *have;
            json_array_foreach(keys, j, have)
                dup |= !strcmp(json_string_value(have), k);
            if (!dup && strcmp(k, axis) && varies(recs, k))
                json_array_append_new(keys, json_string(k));
        }
    }
    return keys;
}

/* The smallest and largest throughput plotted, over every series
 * (*lo = INFINITY, *hi = 0 before the first). */
static void write_series(FILE *f, struct dlb_plot_recs recs, const char *axis,
                         json_t *keys, const char *name, struct sp *pts,
                         double *lo_all, double *hi_all)
{
    size_t n = 0, i;
    for (i = 0; i < recs.n; i++) {
        const struct dlb_record *rec = recs.v[i];
        char s[1024], xs[64];
        series_of(rec, keys, s, sizeof s);
        double y = rec->throughput.median;
        double lo = rec->throughput.ci_lo, hi = rec->throughput.ci_hi;
        if (rec->status != DLB_REC_OK || strcmp(s, name) || isnan(y) ||
            !dlb_rec_config_text(rec, axis, xs, sizeof xs))
            continue;
        pts[n++] = (struct sp){strtod(xs, NULL), y, isnan(lo) ? y : lo,
                               isnan(hi) ? y : hi};
        *lo_all = fmin(*lo_all, y);
        *hi_all = fmax(*hi_all, y);
    }
    qsort(pts, n, sizeof *pts, by_x);
    /* The block's first line is its header: columnheader(1) titles the line. */
    dlb_plot_label(f, name);
    fputs(" \"throughput\" \"ci_lo\" \"ci_hi\"\n", f);
    for (i = 0; i < n; i++)
        fprintf(f, "%.9g %.9g %.9g %.9g\n", pts[i].x, pts[i].y, pts[i].lo, pts[i].hi);
    fputs("\n\n", f);
}

dlb_status dlb_plot_scaling(struct dlb_plotter *p, struct dlb_plot_recs recs,
                            const char *axis, struct dlb_error *err)
{
    if (!varies(recs, axis))
        return DLB_OK;
    json_t *keys = other_keys(recs, axis);
    json_t *series = json_array();
    struct sp *pts = calloc(recs.n + 1, sizeof *pts);
    if (!keys || !series || !pts) {
        json_decref(keys);
        json_decref(series);
        free(pts);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    size_t i, j;
    json_t *have;
    for (i = 0; i < recs.n; i++) {
        char s[1024];
        if (recs.v[i]->status != DLB_REC_OK)
            continue;
        series_of(recs.v[i], keys, s, sizeof s);
        int dup = 0;
        json_array_foreach(series, j, have)
            dup |= !strcmp(json_string_value(have), s);
        if (!dup)
            json_array_append_new(series, json_string(s));
    }
    char name[128], cols[256];
    snprintf(name, sizeof name, "scaling-%s", axis);
    for (char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '-'))
            *c = '_';
    snprintf(cols, sizeof cols, "one block per series (header line: its name); "
             "%s, throughput median, ci_lo, ci_hi (samples/s)", axis);
    FILE *f = dlb_plot_data_open(p, name, cols, err);
    dlb_status st = DLB_ERR_IO;
    double lo = INFINITY, hi = 0;
    if (f) {
        json_array_foreach(series, j, have)
            write_series(f, recs, axis, keys, json_string_value(have), pts,
                         &lo, &hi);
        st = dlb_plot_data_close(f, name, err);
    }
    size_t n_series = json_array_size(series);
    json_decref(keys);
    json_decref(series);
    free(pts);
    if (st != DLB_OK)
        return st;
    char body[2048], title[256];
    int is_batch = !strcmp(axis, "batch");
    /* Series more than 10x apart (LeNet's 40,000 samples/s beside
     * vgg-small's 2,000) would leave the slower ones flat on a linear
     * axis: each line's own shape shows on a logarithmic one. */
    int log_y = lo > 0 && hi > 10 * lo;
    snprintf(body, sizeof body,
             "set grid lc rgb 'gray80'\n"
             "set logscale x 2\n"
             "%s"
             "set offsets graph 0.05, graph 0.05, 0, 0\n"
             "set key outside bottom center horizontal\n"
             "set xlabel '%s'\n"
             "set ylabel 'throughput (samples/s, median%s)'\n"
             "plot for [i=0:%zu] '%s.dat' index i using 1:2:3:4 with yerrorlines "
             "lw 2 pt 7 ps 1.2 title columnheader(1)\n",
             log_y ? "set logscale y 10\n" : "set yrange [0:*]\n",
             is_batch ? "batch size (samples per step)" : "axis value (see the title)",
             log_y ? "; log scale: the lines are over 10x apart" : "",
             n_series - 1, name);
    /* The axis name is a parameter key: escaped with the title all the same. */
    snprintf(title, sizeof title, is_batch ? "Throughput against batch size"
             : "Throughput against %s", axis);
    return dlb_plot_emit(p, name, title, body, 0, err);
}
