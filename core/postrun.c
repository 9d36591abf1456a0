/* The post-run sequence: select -> results.json with "selection" -> plots
 * -> report -> best.ini -> summary. Results come first and are already
 * written, so nothing here can lose a measurement. */
#include "postrun.h"

#include "plot.h"
#include "report.h"
#include "results.h"
#include "select.h"

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

dlb_status dlb_postrun(const struct dlb_postrun *pr, int *winner)
{
    struct dlb_error err = {""};
    dlb_status first = DLB_OK;
    json_t *sel = NULL, *plots = NULL;
    *winner = 0;
    if (note(dlb_select(pr->plan, pr->records, &sel, &err), &first, &err) != DLB_OK)
        return first;
    *winner = json_is_string(json_object_get(sel, "winner"));
    json_t *extra = json_pack("{s:O}", "selection", sel);
    note(dlb_results_write_extra(pr->dir, pr->context, pr->records, extra, &err),
         &first, &err);
    json_decref(extra);

    int drawn = 0;
    struct dlb_error perr = {""};
    if (note(dlb_plots_write(pr->dir, pr->context, pr->records, sel, &plots,
                             &drawn, &perr), &first, &perr) == DLB_OK &&
        !drawn && perr.msg[0])
        fprintf(stderr, "dlbench: note: %s\n", perr.msg);
    if (!plots)
        plots = json_array();
    note(dlb_report_write(pr->dir, pr->context, pr->records, sel, plots, &err),
         &first, &err);
    note(dlb_select_write_best(pr->dir, pr->plan, sel, pr->origin, &err),
         &first, &err);
    if (pr->summary)
        dlb_report_summary(pr->summary, pr->records, sel);
    if (pr->summary_copy)
        dlb_report_summary(pr->summary_copy, pr->records, sel);
    json_decref(plots);
    json_decref(sel);
    return first;
}
