/* A scenario's result as its record's "scenario" member, and the few
 * figures of that member the table and the report show
 * (doc/results-schema.md). */
#ifndef DLB_CORE_SCENARIO_JSON_H
#define DLB_CORE_SCENARIO_JSON_H

#include <stddef.h>
#include <jansson.h>
#include "scenario/scenario.h"

/* The member; `clock` names the clock it ran on ("monotonic",
 * "workload"). NULL when out of memory. */
json_t *dlb_scen_result_json(const struct dlb_scen_result *r,
                             const struct dlb_scen_rules *rules,
                             uint32_t batch, const char *clock);

/* What a record's member says, borrowed from it. */
struct dlb_scen_summary {
    const char *name;        /* "singlestream", "offline", "server" */
    const char *figure_name; /* "p90_latency", "samples_per_s", "server_qps" */
    const char *unit, *why;
    double figure;           /* NAN when there is none (nothing valid) */
    int valid;
    double p50_s, p90_s, p99_s, qps, bound_s, duration_s;
    long long queries, batch;
    size_t n_probes;         /* server */
    int searched, converged;
    double qps_lo, qps_hi;
    const json_t *probes;    /* the array, or NULL */
};

/* Read the "scenario" member of record `rec`; 0 when there is one of the
 * expected shape, -1 when absent or malformed. */
int dlb_scen_summary_read(const json_t *rec, struct dlb_scen_summary *out);

/* x to about four significant digits, never with an exponent (12403,
 * 812.5, 0.02868), as the console's columns print figures. */
void dlb_scen_num(char *buf, size_t len, double x);

/* "server 812.5 queries/s VALID", "singlestream p90 0.412 ms" ...: the
 * figure in a short cell. */
void dlb_scen_summary_cell(const struct dlb_scen_summary *s, char *buf,
                           size_t len);

#endif
