/* The post-run sequence: select -> results.json with "selection" (one
 * write: the file is megabytes for a large sweep) -> plots -> report ->
 * best.ini -> summary. Results come first, so nothing after them can lose
 * a measurement; should the selection itself fail, they are written
 * without it. */
#include "run/postrun.h"

#include "plot/plot.h"
#include "report/report.h"
#include "results/results.h"
#include "select/select.h"

static dlb_status note(dlb_status st, dlb_status *first,
                       const struct dlb_error *err)
{
    if (st != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err->msg);
        if (*first == DLB_OK)
            *first = st;
    }
    return st;
}

dlb_status dlb_postrun_results(const char *dir, const struct dlb_plan *plan,
                               json_t *context, json_t *records,
                               struct dlb_selection *selection,
                               struct dlb_error *err)
{
    struct dlb_error serr = {""};
    json_t *extra = NULL;
    if (dlb_select(plan, records, selection, &serr) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", serr.msg);
        dlb_selection_free(selection);
    } else {
        /* out of memory here: the results go out without it */
        json_t *sel = dlb_selection_write(selection);
        extra = sel ? json_pack("{s:o}", "selection", sel) : NULL;
    }
    dlb_status st = dlb_results_write_extra(dir, context, records, extra, err);
    json_decref(extra);
    return st;
}

dlb_status dlb_postrun(const struct dlb_postrun *pr, int *winner)
{
    struct dlb_error err = {""};
    dlb_status first = DLB_OK;
    const struct dlb_selection *sel = pr->selection;
    struct dlb_plot_list plots = {NULL, 0};
    *winner = 0;
    if (!sel)
        return DLB_ERR_INTERNAL; /* reported by dlb_postrun_results */
    *winner = dlb_select_complete(sel);

    int drawn = 0;
    struct dlb_error perr = {""};
    if (note(dlb_plots_write(pr->dir, pr->context, pr->records, sel, &plots,
                             &drawn, &perr), &first, &perr) == DLB_OK &&
        !drawn && perr.msg[0])
        fprintf(stderr, "dlbench: note: %s\n", perr.msg);
    note(dlb_report_write(pr->dir, pr->context, pr->records, sel, &plots, &err),
         &first, &err);
    note(dlb_select_write_best(pr->dir, pr->plan, sel, pr->origin, &err),
         &first, &err);
    if (pr->summary)
        dlb_report_summary(pr->summary, sel);
    if (pr->summary_copy)
        dlb_report_summary(pr->summary_copy, sel);
    dlb_plot_list_free(&plots);
    return first;
}
