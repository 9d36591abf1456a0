/* The report's inference scenarios: per configuration that ran one, its
 * figure, whether the run was valid and why, and a server search's
 * probes; then, per scenario and workload, the best configuration. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_impl.h"
#include "scenario/scenario_json.h"

#define LINE 1400

static struct dlb_rep_line *add(struct dlb_rep *r, int level)
{
    struct dlb_rep_line *l = &r->scenarios[r->n_scenarios++];
    l->level = level;
    return l;
}

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "5 probes of 256 to 3853 queries, converged: 18912 valid, 20631 not
 * (within 10%)" */
static void search_words(char *b, size_t len, const struct dlb_scen_summary *s,
                         const json_t *rec)
{
    const json_t *search = json_object_get(json_object_get(rec, "scenario"),
                                           "search");
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < s->n_probes; i++) {
        double q = num(json_array_get(s->probes, i), "queries");
        lo = q < lo ? q : lo;
        hi = q > hi ? q : hi;
    }
    if (!s->searched) {
        snprintf(b, len, "a fixed rate: one run");
        return;
    }
    char vlo[64], vhi[64];
    dlb_scen_num(vlo, sizeof vlo, s->qps_lo);
    dlb_scen_num(vhi, sizeof vhi, s->qps_hi);
    int n = lo == hi ? snprintf(b, len, "searched: %zu probe%s of %.0f "
                                "queries; ", s->n_probes,
                                s->n_probes == 1 ? "" : "s", lo)
                     : snprintf(b, len, "searched: %zu probes of %.0f to %.0f "
                                "queries; ", s->n_probes, lo, hi);
    if (n < 0 || (size_t)n >= len)
        return;
    if (!s->converged && isnan(s->qps_lo) &&
        (double)s->n_probes < num(search, "max_probes"))
        /* the engine stopped: the serve alone is over the bound */
        snprintf(b + n, len - (size_t)n, "stopped there, as no rate can "
                 "meet the bound (lowest invalid: %s queries/s)", vhi);
    else if (s->converged)
        snprintf(b + n, len - (size_t)n, "%s queries/s valid, %s not "
                 "(the bracket within %.3g%%)", vlo, vhi,
                 100 * num(search, "resolution"));
    else
        snprintf(b + n, len - (size_t)n, "not converged in %.0f probes "
                 "(highest valid rate: %s, lowest invalid: %s queries/s)",
                 num(search, "max_probes"), vlo, vhi);
}

static void record_lines(struct dlb_rep *r, const struct dlb_record *rec,
                         const struct dlb_scen_summary *s)
{
    char fig[120], more[700] = "", pc[3][64];
    int server = !strcmp(s->name, "server");
    dlb_scen_summary_cell(s, fig, sizeof fig);
    if (server) {
        size_t n = (size_t)snprintf(more, sizeof more, "; the run reported: "
                                    "%lld queries in %.3g s; ", s->queries,
                                    s->duration_s);
        search_words(more + n, sizeof more - n, s, rec->json);
    }
    dlb_scen_num(pc[0], sizeof pc[0], s->p50_s * 1e3);
    dlb_scen_num(pc[1], sizeof pc[1], s->p90_s * 1e3);
    dlb_scen_num(pc[2], sizeof pc[2], s->p99_s * 1e3);
    snprintf(add(r, 0)->text, LINE, "%s: %s (%s); latency p50 %s, p90 %s, "
             "p99 %s ms%s", rec->id, fig,
             s->why ? s->why : (s->valid ? "valid" : "invalid"), pc[0], pc[1],
             pc[2], more);
    for (size_t i = 0; i < s->n_probes; i++) {
        const json_t *p = json_array_get(s->probes, i);
        const json_t *lat = json_object_get(p, "latency_s");
        const char *why = json_string_value(json_object_get(p, "why"));
        char q[64], p99[64];
        dlb_scen_num(q, sizeof q, num(p, "target_qps"));
        dlb_scen_num(p99, sizeof p99, num(lat, "p99") * 1e3);
        snprintf(add(r, 1)->text, LINE, "probe %zu: %s queries/s, %.0f of "
                 "%.0f queries, p99 %s ms: %s (%s)", i + 1, q,
                 num(p, "queries"), num(p, "planned"), p99,
                 json_is_true(json_object_get(p, "valid")) ? "valid" : "invalid",
                 why ? why : "");
    }
}

/* The configuration id without its batch=N word: the records that differ
 * in batch alone share it. */
static void without_batch(char *out, size_t len, const char *id)
{
    size_t o = 0;
    for (const char *p = id; *p && o + 1 < len;) {
        const char *e = strchr(p, ' ');
        size_t w = e ? (size_t)(e - p) : strlen(p);
        if (strncmp(p, "batch=", 6) != 0) {
            if (o && o + 1 < len)
                out[o++] = ' ';
            for (size_t k = 0; k < w && o + 1 < len; k++)
                out[o++] = p[k];
        }
        p += w + (e != NULL);
    }
    out[o] = 0;
}

/* Offline's answer is the throughput at the best batch: per workload
 * (the id without its batch), the valid offline run with the most
 * samples/s. */
static void best_offline(struct dlb_rep *r, const struct dlb_record *recs,
                         size_t n)
{
    char key[600], other[600];
    for (size_t i = 0; i < n; i++) {
        struct dlb_scen_summary s, t;
        if (dlb_scen_summary_read(recs[i].json, &s) ||
            strcmp(s.name, "offline") || !s.valid)
            continue;
        without_batch(key, sizeof key, recs[i].id);
        size_t best = i, count = 0, first = 1;
        double top = s.figure;
        for (size_t j = 0; j < n; j++) {
            if (dlb_scen_summary_read(recs[j].json, &t) ||
                strcmp(t.name, "offline") || !t.valid)
                continue;
            without_batch(other, sizeof other, recs[j].id);
            if (strcmp(key, other))
                continue;
            first &= j >= i; /* this workload's first record says it */
            count++;
            if (t.figure > top) {
                top = t.figure;
                best = j;
            }
        }
        if (!first)
            continue;
        struct dlb_scen_summary b;
        dlb_scen_summary_read(recs[best].json, &b);
        char v[64];
        dlb_scen_num(v, sizeof v, b.figure);
        snprintf(add(r, 0)->text, LINE, "offline, %s: the best batch is %lld, "
                 "%s samples/s (of %zu valid batch size%s)", key[0] ? key : "all",
                 b.batch, v, count, count == 1 ? "" : "s");
    }
}

int dlb_rep_scenarios(struct dlb_rep *r, const struct dlb_record *recs, size_t n)
{
    size_t lines = 0;
    struct dlb_scen_summary s;
    for (size_t i = 0; i < n; i++)
        if (dlb_scen_summary_read(recs[i].json, &s) == 0)
            lines += 2 + s.n_probes;
    if (!lines)
        return 0;
    r->scenarios = calloc(lines, sizeof *r->scenarios);
    if (!r->scenarios)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (dlb_scen_summary_read(recs[i].json, &s) == 0)
            record_lines(r, &recs[i], &s);
    best_offline(r, recs, n);
    return 0;
}
