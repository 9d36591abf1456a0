/* dlb_plots_write: every plot the records of one run support, into
 * DIR/plots/, in the order a report shows them. */
#include "plot/plot.h"
#include "plot/plot_impl.h"
#include "compare/compare.h"

#include <stdio.h>
#include <stdlib.h>

dlb_status dlb_plots_write(const char *dir, json_t *context, json_t *records,
                           const struct dlb_selection *sel,
                           struct dlb_plot_list *plots, int *drawn,
                           struct dlb_error *err)
{
    char pdir[4096];
    snprintf(pdir, sizeof pdir, "%s/plots", dir);
    struct dlb_plotter p;
    plots->v = NULL;
    plots->n = 0;
    *drawn = 0;
    dlb_status st = dlb_plotter_init(&p, pdir, "plots/", err);
    p.suite = json_string_value(dlb_context_get(context, "suite.name"));
    /* Each plot is its own gnuplot process: drawn side by side, the
     * report waits for the slowest one rather than for their sum. */
    p.parallel = 1;
    /* A row per configuration: at most DLB_PLOT_MAX_ROWS of them. */
    char note[160] = "";
    struct dlb_record *recs = NULL;
    size_t n_recs = 0;
    struct dlb_plot_recs all = {NULL, 0}, rows = {NULL, 0};
    if (st == DLB_OK)
        st = dlb_records_read(records, "plots", &recs, &n_recs, err);
    if (st == DLB_OK) {
        all = dlb_plot_recs_all(recs, n_recs);
        if (all.v)
            rows = dlb_plot_rows(all, sel, DLB_PLOT_MAX_ROWS, note,
                                 sizeof note);
        if (!rows.v)
            st = dlb_errorf(err, DLB_ERR_NOMEM, "plots: out of memory");
    }
    const char *rows_note = *note ? note : NULL;
    /* The plots labelled by whole ids leave out what every row shares */
    char shared[512] = "";
    if (st == DLB_OK)
        dlb_plot_shared_words(rows, shared, sizeof shared);
    p.rows_note = rows_note;
    p.shared = shared;
    if (st == DLB_OK)
        st = dlb_plot_throughput(&p, rows, sel, err);
    p.shared = NULL;
    if (st == DLB_OK)
        st = dlb_plot_speedup(&p, rows, sel, err);
    p.rows_note = NULL;
    if (st == DLB_OK)
        st = dlb_plot_pareto(&p, all, sel, err);
    if (st == DLB_OK)
        st = dlb_plot_scaling(&p, all, "batch", err);
    if (st == DLB_OK)
        st = dlb_plot_scaling(&p, all, "dp.replicas", err);
    p.rows_note = rows_note;
    p.shared = shared;
    if (st == DLB_OK)
        st = dlb_plot_steps(&p, rows, err);
    p.rows_note = NULL;
    p.shared = NULL;
    if (rows.v != all.v)
        free(rows.v);
    free(all.v);
    dlb_records_free(recs, n_recs);
    dlb_plotter_wait(&p);
    if (st == DLB_OK) {
        /* the list goes to the caller */
        *plots = p.plots;
        p.plots = (struct dlb_plot_list){NULL, 0};
        *drawn = p.drawn;
        /* Not an error: the data and scripts are there; the caller warns. */
        if (!p.drawn)
            dlb_errorf(err, DLB_OK, "%s", p.why);
    }
    dlb_plotter_free(&p);
    return st;
}
