/* `dlbench dashboard DB --out DIR`: the store as a static site. */
#include "cli/hist_args.h"

#include "dashboard/dashboard.h"

int dlb_cmd_dashboard(struct dlb_hist_args *a)
{
    if (a->n_pos != 1 || !a->out) {
        fprintf(stderr, "dlbench: dashboard: expected DB --out DIR, e.g. dlbench "
                "dashboard results.db --out site\n");
        return 2;
    }
    struct dlb_error err = {""};
    struct dlb_store *st = NULL;
    struct dlb_dashboard_opts o = {a->out, a->title, {a->suite, a->config, a->machine}};
    struct dlb_dashboard_counts c = {0, 0, 0, 0};
    dlb_status s = dlb_store_open(a->pos[0], DLB_DB_EXISTING, &st, &err);
    if (s == DLB_OK)
        s = dlb_dashboard_write(st, &o, &c, &err);
    dlb_store_close(st);
    if (s != DLB_OK) {
        fprintf(stderr, "dlbench: dashboard: %s\n", err.msg);
        return 2;
    }
    printf("%s/index.html: %zu pages, %zu charts, %zu change points, %zu alerts\n",
           a->out, c.pages, c.charts, c.change_points, c.alerts);
    return 0;
}
