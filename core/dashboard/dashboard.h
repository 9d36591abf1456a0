/* `dlbench dashboard DB --out DIR`: the store as a static site that needs
 * no server and no network when it is viewed: index.html (the alerts, the
 * suites, the machines) and one page per suite with a chart per
 * configuration, every machine's nightly median step time with its 95%
 * interval, and the change points marked with their commit ranges and
 * sizes. SVG, CSS and a little JavaScript (the machine filter) are
 * written inline by this module; nothing is fetched. */
#ifndef DLB_CORE_DASHBOARD_H
#define DLB_CORE_DASHBOARD_H

#include "history/changes.h"

struct dlb_dashboard_opts {
    const char *out;            /* the site's folder (created) */
    const char *title;          /* NULL: "dlbench performance" */
    struct dlb_series_filter filter;
};

struct dlb_dashboard_counts {
    size_t pages, charts, change_points, alerts;
};

dlb_status dlb_dashboard_write(struct dlb_store *st, const struct dlb_dashboard_opts *o,
                               struct dlb_dashboard_counts *counts,
                               struct dlb_error *err);

#endif
