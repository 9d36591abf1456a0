/* Plots with gnuplot: for each plot a data file, a script and the PNG and
 * SVG it draws, in DIR/plots/. Strings from suites are escaped before they
 * reach a script. Without gnuplot the data and scripts are still written
 * and the caller is told how to install it. */
#ifndef DLB_CORE_PLOT_H
#define DLB_CORE_PLOT_H

#include <stddef.h>
#include <jansson.h>
#include "util/error.h"
#include "results/selection.h"

/* One plot's files, paths relative to the run directory. */
struct dlb_plot_file {
    char *name, *title, *png, *svg, *data, *script;
};

/* The plots of a run, in the order a report shows them. */
struct dlb_plot_list {
    struct dlb_plot_file *v;
    size_t n;
};

void dlb_plot_list_free(struct dlb_plot_list *l);

/* Write every plot that the records support and list them in *plots
 * (free with dlb_plot_list_free, on failure too). *drawn is 0 when
 * gnuplot was missing or failed (the files other than PNG/SVG still
 * exist); the status is then still DLB_OK and err->msg says why and, when
 * gnuplot is missing, how to install it: the caller prints it as a
 * warning. */
dlb_status dlb_plots_write(const char *dir, json_t *context, json_t *records,
                           const struct dlb_selection *selection,
                           struct dlb_plot_list *plots, int *drawn,
                           struct dlb_error *err);

struct dlb_results;
/* `dlbench history`'s trend plot of `n_runs` results documents in time
 * order, in DIR (created when missing), for suite `suite` (NULL: none
 * named). *drawn and `why` as for dlb_plots_write. */
dlb_status dlb_plots_trend(const char *dir, const char *suite,
                           const struct dlb_results *runs, size_t n_runs,
                           int *drawn, char *why, size_t why_len,
                           struct dlb_error *err);

/* The limit on one gnuplot process: $DLBENCH_GNUPLOT_TIMEOUT seconds
 * (fractions allowed), or 60 when unset. An unusable value is
 * DLB_ERR_INPUT naming the variable: a run checks it before it measures. */
dlb_status dlb_gnuplot_timeout(double *seconds, struct dlb_error *err);

#endif
