/* The run's report: DIR/report.md and a self-contained DIR/report.html
 * (plots inlined as SVG): environment summary, the winner and why, every
 * configuration, constraint violations, plots. */
#ifndef DLB_CORE_REPORT_H
#define DLB_CORE_REPORT_H

#include <stdio.h>
#include <jansson.h>
#include "util/error.h"
#include "plot/plot.h"
#include "results/selection.h"

dlb_status dlb_report_write(const char *dir, json_t *context, json_t *records,
                            const struct dlb_selection *selection,
                            const struct dlb_plot_list *plots,
                            struct dlb_error *err);

/* The few lines printed after the console table: the verdicts, the
 * winner and why, with the figures the suite asks for (speedup, accuracy
 * drop). */
void dlb_report_summary(FILE *f, const struct dlb_selection *selection);

#endif
