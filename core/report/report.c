/* The run's report files and the summary printed after the table. */
#define _POSIX_C_SOURCE 200809L
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report_impl.h"

/* Write DIR/NAME through a temporary name, so a reader never sees half. */
static dlb_status write_one(const char *dir, const char *name,
                            const struct dlb_rep *r,
                            const struct dlb_plot_list *plots,
                            struct dlb_error *err)
{
    char path[4096], tmp[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", tmp,
                          strerror(errno));
    dlb_status st = strstr(name, ".html") ? dlb_report_html(f, r, plots, dir)
                                          : dlb_report_md(f, r, plots);
    if (fclose(f) != 0)
        st = DLB_ERR_IO;
    if (st == DLB_OK && rename(tmp, path) != 0)
        st = DLB_ERR_IO;
    if (st != DLB_OK) {
        unlink(tmp);
        return dlb_errorf(err, st, "cannot write %s: %s", path, strerror(errno));
    }
    return DLB_OK;
}

dlb_status dlb_report_write(const char *dir, json_t *context, json_t *records,
                            const struct dlb_selection *selection,
                            const struct dlb_plot_list *plots,
                            struct dlb_error *err)
{
    struct dlb_rep r;
    struct dlb_record *recs;
    size_t n;
    dlb_status st = dlb_records_read(records, "report", &recs, &n, err);
    if (st != DLB_OK)
        return st;
    int bad = dlb_rep_build(&r, context, recs, n, selection);
    dlb_records_free(recs, n);
    if (bad) {
        dlb_rep_free(&r);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory writing the report");
    }
    st = write_one(dir, "report.md", &r, plots, err);
    if (st == DLB_OK)
        st = write_one(dir, "report.html", &r, plots, err);
    dlb_rep_free(&r);
    return st;
}

/* Several workloads: one winner each, against its own baseline. */
static void group_winners(FILE *f, const struct dlb_selection *sel)
{
    char line[1600];
    fprintf(f, "\nwinners (one per workload, each against its own baseline; "
               "report.md says why)\n");
    for (size_t i = 0; i < sel->n_groups; i++) {
        dlb_rep_group_winner(line, sizeof line, sel, &sel->groups[i]);
        fprintf(f, "  %s\n", line);
    }
}

void dlb_report_summary(FILE *f, const struct dlb_selection *sel)
{
    dlb_report_verdicts(f, sel);
    if (sel->n_groups > 1) {
        group_winners(f, sel);
        return;
    }
    if (!sel->winner) {
        fprintf(f, "no winner: %s\n", sel->why ? sel->why : "no selection");
        return;
    }
    char line[1600];
    struct dlb_sel_group top = dlb_selection_top(sel);
    dlb_rep_group_winner(line, sizeof line, sel, sel->n_groups ? &sel->groups[0] : &top);
    fprintf(f, "winner: %s", line);
    fprintf(f, "\n  why: %s\n", sel->why ? sel->why : "");
    if (sel->ties.n)
        fprintf(f, "  %zu tied with the best (see report.md)\n", sel->ties.n);
    if (sel->n_violations)
        fprintf(f, "  %zu constraint violation%s (see report.md)\n", sel->n_violations,
                sel->n_violations == 1 ? "" : "s");
}
