#include "scenario/scenario_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Absent figures are null, as everywhere in a record. */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *run_json(const struct dlb_scen_run *r)
{
    json_t *o = json_pack("{s:o, s:o, s:I, s:I, s:o, s:o, s:{s:o, s:o, s:o, s:o}, "
                          "s:I, s:o, s:b, s:b, s:s}",
                          "target_qps", num(r->target_qps),
                          "scheduled_qps", num(r->scheduled_qps),
                          "queries", (json_int_t)r->queries,
                          "planned", (json_int_t)r->planned,
                          "duration_s", num(r->duration_s), "qps", num(r->qps),
                          "latency_s", "p50", num(r->p50_s), "p90", num(r->p90_s),
                          "p99", num(r->p99_s), "max", num(r->max_s),
                          "max_batch", (json_int_t)r->max_batch,
                          "capacity_qps", num(r->capacity_qps),
                          "valid", r->valid, "stopped_early", r->stopped_early,
                          "why", r->why);
    return o;
}

static const char *figure_name(enum dlb_scen_kind k, const char **unit)
{
    switch (k) {
    case DLB_SCEN_SINGLESTREAM: *unit = "s"; return "p90_latency";
    case DLB_SCEN_OFFLINE: *unit = "samples/s"; return "samples_per_s";
    default: *unit = "queries/s"; return "server_qps";
    }
}

static json_t *search_json(const struct dlb_scen_result *r,
                           const struct dlb_scen_rules *rules)
{
    json_t *probes = json_array();
    for (size_t i = 0; probes && i < r->n_probes; i++)
        if (json_array_append_new(probes, run_json(&r->probes[i]))) {
            json_decref(probes);
            return NULL;
        }
    if (!probes)
        return NULL;
    return json_pack("{s:b, s:o, s:I, s:b, s:o, s:o, s:o}",
                     "searched", r->searched,
                     "resolution", r->searched ? num(rules->resolution)
                                               : json_null(),
                     "max_probes", (json_int_t)(r->searched ? rules->max_probes : 1),
                     "converged", r->converged, "qps_lo", num(r->qps_lo),
                     "qps_hi", num(r->qps_hi), "probes", probes);
}

json_t *dlb_scen_result_json(const struct dlb_scen_result *r,
                             const struct dlb_scen_rules *rules,
                             uint32_t batch, const char *clock)
{
    const char *unit;
    const char *fname = figure_name(r->kind, &unit);
    int server = r->kind == DLB_SCEN_SERVER;
    json_t *o = run_json(&r->run);
    json_t *rl = json_pack("{s:I, s:o, s:o, s:o, s:I, s:I}",
                           "min_queries", (json_int_t)rules->min_queries,
                           "min_duration_s", num(rules->min_duration_s),
                           "latency_bound_s", server ? num(rules->latency_bound_s)
                                                     : json_null(),
                           "target_qps", server && rules->target_qps > 0
                                             ? num(rules->target_qps) : json_null(),
                           "seed", (json_int_t)rules->seed,
                           "batch", (json_int_t)batch);
    json_t *fig = json_pack("{s:s, s:o, s:s}", "name", fname,
                            "value", num(r->figure), "unit", unit);
    if (!o || !rl || !fig ||
        json_object_set_new(o, "name", json_string(dlb_scen_kind_names[r->kind])) ||
        json_object_set_new(o, "figure", fig) ||
        json_object_set_new(o, "clock", json_string(clock)) ||
        json_object_set_new(o, "rules", rl)) {
        json_decref(o);
        return NULL;
    }
    /* server: its probes, a fixed rate's one included */
    if (server) {
        json_t *s = search_json(r, rules);
        if (!s || json_object_set_new(o, "search", s)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static double get_num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

int dlb_scen_summary_read(const json_t *rec, struct dlb_scen_summary *out)
{
    const json_t *s = json_object_get(rec, "scenario");
    const json_t *fig = json_object_get(s, "figure");
    const json_t *lat = json_object_get(s, "latency_s");
    const json_t *rules = json_object_get(s, "rules");
    const json_t *search = json_object_get(s, "search");
    memset(out, 0, sizeof *out);
    if (!json_is_object(s) || !json_is_object(fig) ||
        !json_is_string(json_object_get(s, "name")) ||
        !json_is_boolean(json_object_get(s, "valid")))
        return -1;
    out->name = json_string_value(json_object_get(s, "name"));
    out->figure_name = json_string_value(json_object_get(fig, "name"));
    out->unit = json_string_value(json_object_get(fig, "unit"));
    out->why = json_string_value(json_object_get(s, "why"));
    out->figure = get_num(fig, "value");
    out->valid = json_is_true(json_object_get(s, "valid"));
    out->p50_s = get_num(lat, "p50");
    out->p90_s = get_num(lat, "p90");
    out->p99_s = get_num(lat, "p99");
    out->qps = get_num(s, "qps");
    out->duration_s = get_num(s, "duration_s");
    out->bound_s = get_num(rules, "latency_bound_s");
    const json_t *q = json_object_get(s, "queries"), *b = json_object_get(rules, "batch");
    out->queries = json_is_integer(q) ? (long long)json_integer_value(q) : -1;
    out->batch = json_is_integer(b) ? (long long)json_integer_value(b) : -1;
    out->probes = json_object_get(search, "probes");
    if (!json_is_array(out->probes))
        out->probes = NULL;
    out->n_probes = out->probes ? json_array_size(out->probes) : 0;
    out->searched = json_is_true(json_object_get(search, "searched"));
    out->converged = json_is_true(json_object_get(search, "converged"));
    out->qps_lo = get_num(search, "qps_lo");
    out->qps_hi = get_num(search, "qps_hi");
    if (!out->figure_name || !out->unit)
        return -1;
    return 0;
}

void dlb_scen_num(char *buf, size_t len, double x)
{
    char r[32];
    int prec = 0;
    if (!isfinite(x)) {
        snprintf(buf, len, "none");
        return;
    }
    /* rounded to four significant digits first: 0.99999 is 1.000 */
    snprintf(r, sizeof r, "%.3e", fabs(x));
    double a = strtod(r, NULL);
    /* digits after the point for four significant ones, none past 1000 */
    for (double p = 1000; a < p && prec < 12 && a > 0; p /= 10)
        prec++;
    snprintf(buf, len, "%.*f", prec, x);
}

void dlb_scen_summary_cell(const struct dlb_scen_summary *s, char *buf,
                           size_t len)
{
    const char *tag = s->valid ? "" : " INVALID";
    char v[64];
    int lat = !strcmp(s->figure_name, "p90_latency");
    dlb_scen_num(v, sizeof v, lat ? s->figure * 1e3 : s->figure);
    if (lat)
        snprintf(buf, len, "%s p90 %s ms%s", s->name, v, tag);
    else if (isnan(s->figure))
        snprintf(buf, len, "%s none valid", s->name);
    else
        snprintf(buf, len, "%s %s %s%s", s->name, v, s->unit, tag);
}
