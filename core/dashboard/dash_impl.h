/* What the dashboard's files share (dashboard.h): HTML escaping, the
 * page's head and foot, one chart. */
#ifndef DLB_CORE_DASH_IMPL_H
#define DLB_CORE_DASH_IMPL_H

#include <stdio.h>
#include "dashboard/dashboard.h"

/* s with &, <, >, " and ' escaped, for text and attribute values. */
void dlb_html_put(FILE *f, const char *s);

/* The page up to <main> (title, inline style, machine filter over
 * `machines`), and from </main> on (the filter's script). */
void dlb_dash_head(FILE *f, const char *title, const char *subtitle,
                   char *const *machines, size_t n_machines);
void dlb_dash_foot(FILE *f);

/* A machine's colour, by its index among the site's machines. */
const char *dlb_dash_colour(size_t machine);

/* One configuration's chart: its series (one per machine, `machine_of`
 * their indices among the site's machines) and their change points. */
struct dlb_dash_chart {
    const char *suite, *config;
    const struct dlb_series *const *series;
    const size_t *machine_of;
    size_t n;
    const struct dlb_change *const *cps;  /* every change of these series */
    const size_t *cp_series;              /* which of the n each is of */
    size_t n_cps;
};
void dlb_dash_chart(FILE *f, const struct dlb_dash_chart *c);

/* ISO 8601 UTC into seconds since 1970 (NAN when it is not one). */
double dlb_dash_time(const char *iso);

#endif
