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
                            const struct dlb_rep *r, json_t *plots,
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
                            json_t *selection, json_t *plots,
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
static void group_winners(FILE *f, json_t *selection, json_t *groups)
{
    json_t *g;
    size_t i;
    char line[1600];
    fprintf(f, "\nwinners (one per workload, each against its own baseline; "
               "report.md says why)\n");
    json_array_foreach(groups, i, g) {
        dlb_rep_group_winner(line, sizeof line, selection, g);
        fprintf(f, "  %s\n", line);
    }
}

void dlb_report_summary(FILE *f, json_t *records, json_t *selection)
{
    (void)records;
    dlb_report_verdicts(f, selection);
    json_t *groups = json_object_get(selection, "groups");
    if (json_array_size(groups) > 1) {
        group_winners(f, selection, groups);
        return;
    }
    const char *w = json_string_value(json_object_get(selection, "winner"));
    const char *why = json_string_value(json_object_get(selection, "why"));
    if (!w) {
        fprintf(f, "no winner: %s\n", why ? why : "no selection");
        return;
    }
    char line[1600];
    dlb_rep_group_winner(line, sizeof line, selection, json_array_size(groups)
                         ? json_array_get(groups, 0) : selection);
    fprintf(f, "winner: %s", line);    fprintf(f, "\n  why: %s\n", why ? why : "");
    size_t nt = json_array_size(json_object_get(selection, "ties"));
    size_t nv = json_array_size(json_object_get(selection, "violations"));
    if (nt)
        fprintf(f, "  %zu tied with the best (see report.md)\n", nt);
    if (nv)
        fprintf(f, "  %zu constraint violation%s (see report.md)\n", nv,
                nv == 1 ? "" : "s");
}
