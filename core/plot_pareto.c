/* Accuracy against throughput, the Pareto front drawn through the
 * configurations no other beats on both. The front is computed in the two
 * plotted dimensions: the selection's front also weighs peak memory, and
 * drawn here it zigzagged through points that others plainly dominate
 * (that one stays in the table and the report). Points are labelled with
 * their row number in the table: configuration ids overlapped into an
 * unreadable block. */
#include "plot_impl.h"

#include <stdlib.h>
#include <string.h>

struct pt {
    double tp, acc;
    long long row;   /* the record's index: the table's first column */
    int front;
};

static const char body[] =
    "set grid lc rgb 'gray80'\n"
    "set key outside bottom center horizontal\n"
    "set offsets graph 0.05, graph 0.05, graph 0.08, graph 0.05\n"
    "set xlabel 'throughput (samples/s, median)'\n"
    "set ylabel 'accuracy (% top-1, test set)'\n"
    "plot 'pareto.dat' index 1 using 1:2 with linespoints pt 7 ps 1.6 lw 2 lc rgb '#e6550d' title 'Pareto front', \\\n"
    "     '' index 0 using 1:2 with points pt 7 ps 1.1 lc rgb '#3182bd' title 'configuration', \\\n"
    "     '' index 0 using 1:2:3 with labels offset 0,1.1 font ',10' notitle\n";

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

dlb_status dlb_plot_pareto(struct dlb_plotter *p, json_t *records,
                           json_t *selection, struct dlb_error *err)
{
    size_t n = 0, i;
    json_t *rec;
    struct pt *v = calloc(json_array_size(records) + 1, sizeof *v);
    if (!v)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    json_array_foreach(records, i, rec) {
        int h1, h2;
        double tp = dlb_rec_num(rec, "throughput", "median", &h1);
        double acc = dlb_rec_metric(rec, "accuracy", &h2);
        if (dlb_rec_ok(rec) && h1 && h2)
            v[n++] = (struct pt){tp, acc,
                                 (long long)json_integer_value(json_object_get(rec, "index")),
                                 0};
    }
    if (!n) {
        free(v);
        return DLB_OK;
    }
    (void)selection;
    front_2d(v, n);
    qsort(v, n, sizeof *v, by_tp);
    FILE *f = dlb_plot_data_open(p, "pareto", "index 0: throughput (samples/s), "
        "accuracy (%), row number in the table; index 1: the front of the two, by "
        "throughput", err);
    if (!f) {
        free(v);
        return DLB_ERR_IO;
    }
    for (i = 0; i < n; i++) {
        fprintf(f, "%.9g %.9g \"%lld\"\n", v[i].tp, v[i].acc, v[i].row);
    }
    fputs("\n\n", f);
    for (i = 0; i < n; i++)
        if (v[i].front)
            fprintf(f, "%.9g %.9g\n", v[i].tp, v[i].acc);
    free(v);
    dlb_status st = dlb_plot_data_close(f, "pareto", err);
    if (st != DLB_OK)
        return st;
    return dlb_plot_emit(p, "pareto", "Accuracy against throughput (labels: row "
                         "numbers of the table)", body, 0, err);
}
