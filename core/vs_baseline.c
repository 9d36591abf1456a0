/* Speedup and accuracy drop against the baseline configuration. */
#include "vs_baseline.h"

#include <stdlib.h>
#include <string.h>

/* Whether configurations a and b hold the same values in namespaces
 * [from, to) of the plan: canonical texts compare every type. */
static int same_values(const struct dlb_plan *p, const struct dlb_config *a,
                       const struct dlb_config *b, unsigned from, unsigned to)
{
    for (unsigned ns = from; ns < to; ns++)
        for (unsigned i = 0; i < p->suite->ns[ns].n; i++)
            if (strcmp(a->values[ns][i].s, b->values[ns][i].s) != 0)
                return 0;
    return 1;
}

static const struct dlb_config *config_of(const struct dlb_plan *p, json_t *rec)
{
    json_t *idx = json_object_get(rec, "index");
    for (size_t i = 0; json_is_integer(idx) && i < p->n; i++)
        if (p->configs[i].index == (size_t)json_integer_value(idx))
            return &p->configs[i];
    return NULL;
}

static int ok_record(json_t *r)
{
    const char *s = json_string_value(json_object_get(r, "status"));
    return s && !strcmp(s, "ok");
}

static double member(json_t *o, const char *a, const char *b, int *have)
{
    json_t *v = json_object_get(json_object_get(o, a), b);
    *have = json_is_number(v);
    return *have ? json_number_value(v) : 0.0;
}

static double accuracy(json_t *r, int *have)
{
    json_t *m = json_object_get(json_object_get(r, "metrics"), "accuracy");
    json_t *v = json_object_get(m, "value");
    *have = json_is_number(v);
    return *have ? json_number_value(v) : 0.0;
}

/* How many workers share a step: a plugin figure in unit "workers" (the
 * dp plugin's replicas x ranks); 0 when none says. */
static double workers_of(json_t *rec)
{
    const char *k;
    json_t *m;
    json_object_foreach(json_object_get(rec, "metrics"), k, m) {
        const char *unit = json_string_value(json_object_get(m, "unit"));
        if (unit && !strcmp(unit, "workers"))
            return json_number_value(json_object_get(m, "value"));
    }
    return 0;
}

static void annotate_one(json_t *rec, json_t *base)
{
    int h1, h2, h3, h4, h5, h6;
    double t = member(rec, "throughput", "median", &h1);
    double tb = member(base, "throughput", "median", &h2);
    double lo = member(rec, "throughput", "ci_lo", &h3);
    double hib = member(base, "throughput", "ci_hi", &h4);
    json_t *o = json_pack("{s:s}", "baseline_id",
                          json_string_value(json_object_get(base, "id")));
    if (h1 && h2 && tb > 0) {
        json_object_set_new(o, "speedup", json_real(t / tb));
        /* The ratio's interval from the two throughput intervals: a
         * conservative bound, not an exact interval of the ratio. */
        double hi = member(rec, "throughput", "ci_hi", &h5);
        double lob = member(base, "throughput", "ci_lo", &h6);
        if (h3 && h4 && h5 && h6 && hib > 0 && lob > 0) {
            json_object_set_new(o, "speedup_ci_lo", json_real(lo / hib));
            json_object_set_new(o, "speedup_ci_hi", json_real(hi / lob));
        }
    }
    /* Scaling efficiency: throughput(N) / (N x throughput(1)), N workers
     * against the baseline's, measured in the same run. */
    double wr = workers_of(rec), wb = workers_of(base);
    if (json_object_get(o, "speedup") && wr > 0 && wb > 0 && wr != wb) {
        json_object_set_new(o, "workers", json_real(wr));
        json_object_set_new(o, "scaling_efficiency", json_real(t / tb * wb / wr));
    }
    double a = accuracy(rec, &h1), ab = accuracy(base, &h2);
    if (h1 && h2)
        json_object_set_new(o, "accuracy_drop", json_real(ab - a));
    json_object_set_new(rec, "vs_baseline", o);
}

size_t dlb_vs_baseline_annotate(const struct dlb_plan *p, json_t *records)
{
    size_t i, k, n = 0;
    json_t *rec, *cand;
    if (p->n == 0)
        return 0;
    /* The baseline holds the same core values and the plugin values of the
     * plan's first configuration, where every axis is at its first value. */
    const struct dlb_config *first = &p->configs[0];
    unsigned n_ns = p->suite->n_ns;
    json_array_foreach(records, i, rec) {
        const struct dlb_config *c = config_of(p, rec);
        json_object_del(rec, "vs_baseline");
        if (!c || !ok_record(rec))
            continue;
        json_array_foreach(records, k, cand) {
            const struct dlb_config *b = config_of(p, cand);
            if (k == i || !b || b == c || !ok_record(cand) ||
                !same_values(p, b, c, 0, 1) || !same_values(p, b, first, 1, n_ns))
                continue;
            annotate_one(rec, cand);
            n++;
            break;
        }
    }
    return n;
}

void dlb_vs_baseline_print(FILE *f, json_t *records)
{
    size_t i, w = 6;
    json_t *rec;
    int any = 0;
    json_array_foreach(records, i, rec) {
        const char *id = json_string_value(json_object_get(rec, "id"));
        if (json_object_get(rec, "vs_baseline") && id) {
            any = 1;
            w = strlen(id) > w ? strlen(id) : w;
        }
    }
    if (!any)
        return;
    fprintf(f, "\nvs baseline (the same configuration with each plugin axis at "
               "its first value)\n");
    fprintf(f, "%-*s  %8s  %15s  %13s  %s\n", (int)w, "config", "speedup",
            "speedup 95% CI", "accuracy drop", "baseline");
    fprintf(f, "%-*s  %8s  %15s  %13s\n", (int)w, "", "x", "x", "points");
    json_array_foreach(records, i, rec) {
        json_t *o = json_object_get(rec, "vs_baseline");
        if (!o)
            continue;
        char sp[32] = "-", ci[48] = "-", drop[32] = "-";
        json_t *s = json_object_get(o, "speedup");
        json_t *lo = json_object_get(o, "speedup_ci_lo");
        json_t *hi = json_object_get(o, "speedup_ci_hi");
        json_t *d = json_object_get(o, "accuracy_drop");
        if (json_is_number(s))
            snprintf(sp, sizeof sp, "%.2f", json_number_value(s));
        if (json_is_number(lo) && json_is_number(hi))
            snprintf(ci, sizeof ci, "%.2f-%.2f", json_number_value(lo),
                     json_number_value(hi));
        if (json_is_number(d))
            snprintf(drop, sizeof drop, "%+.2f", json_number_value(d));
        fprintf(f, "%-*s  %8s  %15s  %13s  %s\n", (int)w,
                json_string_value(json_object_get(rec, "id")), sp, ci, drop,
                json_string_value(json_object_get(o, "baseline_id")));
    }
    dlb_vs_scaling_print(f, records, w);
}
