/* Throughput per configuration: bars at the median with the 95% CI of the
 * median as error bars; the winner and those tied with it stand out. */
#include "plot/plot_impl.h"

#include <math.h>
#include <string.h>



/* Horizontal bars: configuration ids are long, and read best as rows. */
static void write_body(char *b, size_t n, int rows, const int *have)
{
    static const char *const clause[3] = {
        "'' using ($6 == 0 ? $3 : 1/0):1:(0):3:($1-0.35):($1+0.35) with boxxyerror lc rgb '#8da0cb' title 'configuration'",
        "'' using ($6 == 1 ? $3 : 1/0):1:(0):3:($1-0.35):($1+0.35) with boxxyerror lc rgb '#e6550d' title 'winner'",
        "'' using ($6 == 2 ? $3 : 1/0):1:(0):3:($1-0.35):($1+0.35) with boxxyerror lc rgb '#fdae6b' title 'tied with the winner'",
    };
    int w = snprintf(b, n,
        "set style fill solid 0.85 border rgb 'gray30'\n"
        "set xrange [0:*]\n"
        "set offsets 0, graph 0.12, 0, 0\n"
        "set yrange [%d.5:-0.5]\n"
        "set ytics nomirror\n"
        "set grid xtics lc rgb 'gray80'\n"
        "set key above horizontal maxrows 1\n"
        "set format x '%%.0s %%c'\n"
        "set xlabel 'throughput (samples/s, median; bars: 95%% CI of the median)'\n"
        "plot 'throughput.dat' using 3:1:4:5:ytic(2) with xerrorbars lc rgb 'black' pt -1 lw 1.5 notitle",
        rows - 1);
    for (int k = 0; k < 3; k++)
        if (have[k] && w > 0 && (size_t)w < n)
            w += snprintf(b + w, n - (size_t)w, ", \\\n     %s", clause[k]);
    if (w > 0 && (size_t)w < n)
        snprintf(b + w, n - (size_t)w, ", \\\n     '' using 3:1:4:5 with xerrorbars "
                 "lc rgb 'black' pt -1 lw 1.5 title '95%% CI', \\\n     '' using "
                 "5:1:(gprintf(' %%.1s %%c', $3)) with labels left font ',9' notitle\n");
}

dlb_status dlb_plot_throughput(struct dlb_plotter *p, struct dlb_plot_recs recs,
                               const struct dlb_selection *selection, struct dlb_error *err)
{
    /* each workload's winner (select.h); a selection of an earlier
     * version has only "winner" */
    const struct dlb_sel_ids *winners = &selection->winners, *ties = &selection->ties;
    const char *winner = selection->winner;
    FILE *f = NULL;
    int x = 0, have[3] = {0, 0, 0};
    for (size_t i = 0; i < recs.n; i++) {
        const struct dlb_record *rec = recs.v[i];
        double med = rec->throughput.median;
        double lo = rec->throughput.ci_lo, hi = rec->throughput.ci_hi;
        if (rec->status != DLB_REC_OK || isnan(med))
            continue;
        if (isnan(lo) || isnan(hi))
            lo = hi = med;
        if (!f && !(f = dlb_plot_data_open(p, "throughput",
                "x, configuration, median, ci_lo, ci_hi (samples/s), "
                "mark (1 winner, 2 tied, 0 other)", err)))
            return DLB_ERR_IO;
        const char *id = rec->id;
        int win = (winner && !strcmp(winner, id)) || dlb_sel_ids_has(winners, id);
        int mark = win ? 1 : dlb_sel_ids_has(ties, id) ? 2 : 0;
        char label[1024];
        dlb_plot_row_label(id, p->shared, "", label, sizeof label);
        fprintf(f, "%d ", x++);
        dlb_plot_label(f, label);
        fprintf(f, " %.9g %.9g %.9g %d\n", med, lo, hi, mark);
        have[mark] = 1;
    }
    if (!f)
        return DLB_OK;
    dlb_status st = dlb_plot_data_close(f, "throughput", err);
    if (st != DLB_OK)
        return st;
    char body[2048];
    write_body(body, sizeof body, x, have);
    return dlb_plot_emit(p, "throughput", "Throughput per configuration",
                         body, dlb_plot_rows_height(x), err);
}
