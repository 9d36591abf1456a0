/* Accuracy against throughput, the Pareto front drawn through the
 * configurations no other beats on both. The front is computed in the two
 * plotted dimensions: the selection's front also weighs peak memory, and
 * drawn here it zigzagged through points that others plainly dominate
 * (that one stays in the table and the report). Points are labelled with
 * their row number in the table: configuration ids overlapped into an
 * unreadable block. With several workloads (select.h) each gets a plot of
 * its own, pareto-N for the N-th: a front across workloads would set a
 * LeNet row against a vgg-small one. */
#include "plot/plot_impl.h"
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pt {
    double tp, acc;
    double acc_ci;   /* 95% half-width of the accuracy (accuracy_half),
                      * 0 when unknown */
    long long row;   /* the record's index: the table's first column */
    int front;
};

static const char body_fmt[] =
    "set grid lc rgb 'gray80'\n"
    "set key outside bottom center horizontal\n"
    "set offsets graph 0.05, graph 0.05, graph 0.08, graph 0.05\n"
    "set xlabel 'throughput (samples/s, median)'\n"
    "set ylabel 'accuracy (%% top-1, test set)'\n"
    "plot '%s.dat' index 1 using 1:2 with linespoints pt 7 ps 1.6 lw 2 lc rgb '#e6550d' title 'Pareto front', \\\n"
    "     '' index 0 using 1:2:4 with yerrorbars pt 7 ps 1.1 lc rgb '#3182bd' title 'configuration (accuracy with its 95%% CI)', \\\n"
    "     '' index 0 using 1:2:3 with labels left offset 0.8,0.6 font ',10' notitle\n";

static int by_tp(const void *a, const void *b)
{
    const struct pt *x = a, *y = b;
    return (x->tp > y->tp) - (x->tp < y->tp);
}

/* The 2-D front: no other point has at least the throughput and the
 * accuracy and more of one. */
static void front_2d(struct pt *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        v[i].front = 1;
        for (size_t j = 0; j < n && v[i].front; j++)
            if (j != i && v[j].tp >= v[i].tp && v[j].acc >= v[i].acc &&
                (v[j].tp > v[i].tp || v[j].acc > v[i].acc))
                v[i].front = 0;
    }
}

static int group_of(const struct dlb_selection *selection, const struct dlb_record *rec)
{
    struct dlb_rec_selection pc;
    dlb_record_selection(selection->json, rec->id, &pc);
    return pc.group >= 0 ? (int)pc.group : -1;
}

/* The 95% half-width of a record's accuracy: the test set's binomial, and
 * over its seeds (accuracy_seeds, results/seeds.h) the t interval of
 * their mean as well, the two combined. */
static double accuracy_half(const struct dlb_record *rec, double acc)
{
    double images = 0, sd = 0, q = acc / 100, half = 0;
    if (dlb_record_metric_value(rec, "test_images", &images) && images > 0 &&
        q >= 0 && q <= 1)
        half = 100 * 1.96 * sqrt(q * (1 - q) / images);
    size_t n = 0, i;
    json_t *v;
    json_array_foreach(json_object_get(rec->json, "seeds"), i, v)
        n += json_is_number(json_object_get(v, "accuracy"));
    if (n >= 2 && dlb_record_metric_value(rec, "accuracy_sd", &sd)) {
        double t = dlb_student_t_975((double)(n - 1)) * sd / sqrt((double)n);
        half = hypot(half, t);
    }
    return half;
}

/* The plot of group `g` (-1: every record) as NAME. */
static dlb_status one_plot(struct dlb_plotter *p, struct dlb_plot_recs recs,
                           const struct dlb_selection *selection, int g, const char *name,
                           const char *title, struct dlb_error *err)
{
    size_t n = 0, i;
    struct pt *v = calloc(recs.n + 1, sizeof *v);
    if (!v)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    for (i = 0; i < recs.n; i++) {
        const struct dlb_record *rec = recs.v[i];
        double tp = rec->throughput.median, acc = 0;
        int h2 = dlb_record_metric_value(rec, "accuracy", &acc);
        if (rec->status == DLB_REC_OK && !isnan(tp) && h2 &&
            (g < 0 || group_of(selection, rec) == g))
            v[n++] = (struct pt){tp, acc, accuracy_half(rec, acc), rec->index, 0};
    }
    if (!n) {
        free(v);
        return DLB_OK;
    }
    front_2d(v, n);
    qsort(v, n, sizeof *v, by_tp);
    FILE *f = dlb_plot_data_open(p, name, "index 0: throughput (samples/s), "
        "accuracy (%), row number in the table, accuracy 95% half-width; index 1: the front of the two, by "
        "throughput", err);
    if (!f) {
        free(v);
        return DLB_ERR_IO;
    }
    for (i = 0; i < n; i++)
        fprintf(f, "%.9g %.9g \"%lld\" %.9g\n", v[i].tp, v[i].acc, v[i].row,
                v[i].acc_ci);
    fputs("\n\n", f);
    for (i = 0; i < n; i++)
        if (v[i].front)
            fprintf(f, "%.9g %.9g\n", v[i].tp, v[i].acc);
    free(v);
    dlb_status st = dlb_plot_data_close(f, name, err);
    if (st != DLB_OK)
        return st;
    char body[2048];
    snprintf(body, sizeof body, body_fmt, name);
    return dlb_plot_emit(p, name, title, body, 0, err);
}

dlb_status dlb_plot_pareto(struct dlb_plotter *p, struct dlb_plot_recs recs,
                           const struct dlb_selection *selection, struct dlb_error *err)
{
    size_t n = selection->n_groups;
    if (n < 2)
        return one_plot(p, recs, selection, -1, "pareto", "Accuracy against "
                        "throughput (labels: row numbers of the table)", err);
    dlb_status st = DLB_OK;
    for (size_t g = 0; g < n && st == DLB_OK; g++) {
        char name[32], title[600];
        snprintf(name, sizeof name, "pareto-%zu", g + 1);
        snprintf(title, sizeof title, "Accuracy against throughput, %s (labels: "
                 "row numbers of the table)", selection->groups[g].workload);
        st = one_plot(p, recs, selection, (int)g, name, title, err);
    }
    return st;
}
