/* Step-time distribution per configuration: a box (quartiles, Tukey
 * whiskers at 1.5 IQR, the median as a bar) over the raw samples drawn as
 * jittered dots, so both the shape and any drift or bimodality show. */
#include "plot/plot_impl.h"

#include <math.h>
#include <stdlib.h>
#include "stats/stats.h"

/* Dots drawn per configuration at most: more only darken the column.
 * Fewer per row when there are many rows, where a row is a few pixels
 * high: about DOTS_TOTAL in all (each dot is an element of the SVG that
 * report.html inlines), never under MIN_DOTS a row. */
#define MAX_DOTS 400
#define MIN_DOTS 50
#define DOTS_TOTAL 6000

static size_t dots_per_row(int rows)
{
    size_t d = rows > 0 ? DOTS_TOTAL / (size_t)rows : MAX_DOTS;
    return d > MAX_DOTS ? MAX_DOTS : d < MIN_DOTS ? MIN_DOTS : d;
}

static const char body_fmt[] =
    "set grid xtics lc rgb 'gray80'\n"
    "set xrange [%.6g:%.6g]\n"
    "set yrange [%d.5:-0.5]\n"
    "set ytics nomirror\n"
    "set key above horizontal maxrows 1\n"
    "set arrow 1 from first 0, graph 0 to first 0, graph 1 nohead dt 2 lc rgb 'gray40'\n"
    "set xlabel \"step time against the configuration's median (%%)\"\n"
    "plot 'steps.dat' index 1 using ($3 == 0 ? $2 : 1/0):1 with points pt 7 ps 0.35 lc rgb '#9ecae1' title 'samples', \\\n"
    "     '' index 1 using ($3 != 0 ? $2 : 1/0):1 with points pt 9 ps 0.8 lc rgb '#756bb1' title 'clamped to the axis', \\\n"
    "     '' index 0 using 4:1:($3-$4):(0) with vectors nohead lw 1.5 lc rgb '#08519c' title 'whiskers 1.5 IQR', \\\n"
    "     '' index 0 using 6:1:($5-$6):(0) with vectors nohead lw 1.5 lc rgb '#08519c' notitle, \\\n"
    "     '' index 0 using (($3+$6)/2):1:3:6:($1-0.25):($1+0.25):ytic(2) with boxxyerror fs empty lw 1.5 lc rgb '#08519c' title 'quartiles', \\\n"
    "     '' index 0 using 7:($1-0.3):(0):(0.6) with vectors nohead lw 3 lc rgb '#e6550d' title 'median'\n";

struct box { double q1, med, q3, wlo, whi; };

static struct box box_of(double *s, size_t n)
{
    struct box b;
    dlb_sort_doubles(s, n);
    b.q1 = dlb_quantile_sorted(s, n, 0.25);
    b.med = dlb_quantile_sorted(s, n, 0.5);
    b.q3 = dlb_quantile_sorted(s, n, 0.75);
    double lo = b.q1 - 1.5 * (b.q3 - b.q1), hi = b.q3 + 1.5 * (b.q3 - b.q1);
    b.wlo = b.q1;
    b.whi = b.q3;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= lo && s[i] < b.wlo)
            b.wlo = s[i];
        if (s[i] <= hi && s[i] > b.whi)
            b.whi = s[i];
    }
    return b;
}

/* The samples of `rec` in ms, malloc'ed; NULL when it has none. */
static double *samples_ms(const struct dlb_record *rec, size_t *n);

/* Percent above (or below) `median`: configurations a factor apart in step
 * time then share one readable axis. */
static void to_relative(double *s, size_t n, double median)
{
    for (size_t i = 0; i < n; i++)
        s[i] = (s[i] / median - 1) * 100;
}

static double *samples_ms(const struct dlb_record *rec, size_t *n)
{
    *n = rec->n_samples;
    if (rec->status != DLB_REC_OK || !*n)
        return NULL;
    double *s = malloc(*n * sizeof *s);
    if (!s)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < rec->n_samples; i++)
        if (!isnan(rec->samples[i]))
            s[k++] = rec->samples[i] * 1e3;
    *n = k;
    if (!k) {
        free(s);
        return NULL;
    }
    return s;
}

static void write_dots(FILE *f, int x, const double *s, size_t n,
                       size_t most, double lo, double hi)
{
    size_t step = n > most ? (n + most - 1) / most : 1;
    for (size_t i = 0; i < n; i += step) {
        /* Golden-ratio jitter: spread evenly and the same every time. */
        double j = (double)i * 0.6180339887;
        j = (j - (double)(long)j - 0.5) * 0.36;
        double v = s[i] < lo ? lo : s[i] > hi ? hi : s[i];
        fprintf(f, "%.4f %.9g %d\n", x + j, v, v != s[i]);
    }
}

dlb_status dlb_plot_steps(struct dlb_plotter *p, struct dlb_plot_recs recs,
                          struct dlb_error *err)
{
    FILE *f = NULL;
    size_t i, n;
    int x = 0;
    /* The axis spans every whisker, so a lone outlier cannot squash the
     * boxes; samples beyond it are drawn at its ends. */
    double lo = -1, hi = 1;
    /* Two passes: the boxes (index 0), then the dots (index 1). */
    for (i = 0; i < recs.n; i++) {
        double *s = samples_ms(recs.v[i], &n);
        if (!s)
            continue;
        if (!f && !(f = dlb_plot_data_open(p, "steps", "index 0: y, configuration "
                    "(with its median), q1, whisker_lo, whisker_hi, q3, median "
                    "(%% from the median); index 1: y with jitter, step time "
                    "(%% from the median), 1 when clamped to the axis", err))) {
            free(s);
            return DLB_ERR_IO;
        }
        struct box b = box_of(s, n);
        char label[1024], tail[64];
        snprintf(tail, sizeof tail, " (median %.4g ms)", b.med);
        dlb_plot_row_label(recs.v[i]->id, p->shared, tail, label, sizeof label);
        to_relative(s, n, b.med);
        b = box_of(s, n);
        lo = b.wlo < lo ? b.wlo : lo;
        hi = b.whi > hi ? b.whi : hi;
        fprintf(f, "%d ", x++);
        dlb_plot_label(f, label);
        fprintf(f, " %.9g %.9g %.9g %.9g %.9g\n", b.q1, b.wlo, b.whi, b.q3, b.med);
        free(s);
    }
    if (!f)
        return DLB_OK;
    /* Clamped samples sit inside the axis, half the margin from its ends. */
    double pad = (hi - lo) * 0.15;
    lo -= pad / 2;
    hi += pad / 2;
    fputs("\n\n", f);
    size_t most = dots_per_row(x);
    x = 0;
    for (i = 0; i < recs.n; i++) {
        double *s = samples_ms(recs.v[i], &n);
        if (!s)
            continue;
        struct dlb_stats st;
        if (dlb_stats_compute(s, n, &st) == DLB_OK && st.median > 0) {
            to_relative(s, n, st.median);
            write_dots(f, x, s, n, most, lo, hi);
        }
        x++;
        free(s);
    }
    dlb_status st = dlb_plot_data_close(f, "steps", err);
    if (st != DLB_OK)
        return st;
    char body[3072];
    snprintf(body, sizeof body, body_fmt, lo - pad / 2, hi + pad / 2, x - 1);
    return dlb_plot_emit(p, "steps", "Step-time distribution per configuration",
                         body, dlb_plot_rows_height(x), err);
}
