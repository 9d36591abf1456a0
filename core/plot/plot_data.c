/* Data files beside each plot, and the record accessors the plots share. */
#include "plot/plot_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

FILE *dlb_plot_data_open(struct dlb_plotter *p, const char *name,
                         const char *columns, struct dlb_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.dat", p->dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", path, strerror(errno));
        return NULL;
    }
    fprintf(f, "# dlbench plot data for %s.gp; columns: %s\n", name, columns);
    if (p->rows_note)
        fprintf(f, "# rows: %s (results.csv has every one)\n", p->rows_note);
    return f;
}

dlb_status dlb_plot_data_close(FILE *f, const char *name, struct dlb_error *err)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return dlb_errorf(err, DLB_ERR_IO, "cannot write %s.dat", name);
    return DLB_OK;
}

struct dlb_plot_recs dlb_plot_recs_all(const struct dlb_record *recs, size_t n)
{
    struct dlb_plot_recs all = {malloc((n + 1) * sizeof *all.v), n};
    for (size_t i = 0; all.v && i < n; i++)
        all.v[i] = &recs[i];
    return all;
}

int dlb_rec_config_text(const struct dlb_record *rec, const char *key,
                        char *buf, size_t n)
{
    json_t *v = dlb_record_setting(rec, key);
    if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    else
        return 0;
    return 1;
}

int dlb_plot_rows_height(int rows)
{
    /* Room for the title, the axis and its label, then ~40 px per row. */
    int h = 170 + 42 * rows;
    return h < 420 ? 420 : h > 4000 ? 4000 : h;
}
