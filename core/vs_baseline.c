/* Speedup and accuracy drop against the baseline configuration. */
#include "vs_baseline.h"

#include <stdlib.h>
#include <string.h>

#include "plan_budget.h"
#include "select.h"

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

/* Accuracies compare only after as much training (plan_budget.h). */
static int same_training(const struct dlb_plan *p, const struct dlb_config *a,
                         const struct dlb_config *b)
{
    return dlb_plan_same_training(
        dlb_plan_trained_images(p, a), (double)dlb_config_core(p, a, "batch")->i,
        dlb_plan_trained_images(p, b), (double)dlb_config_core(p, b, "batch")->i);
}

static void annotate_one(json_t *rec, json_t *base, int same_training)
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
    if (h1 && h2 && same_training)
        json_object_set_new(o, "accuracy_drop", json_real(ab - a));
    json_object_set_new(rec, "vs_baseline", o);
}

size_t dlb_vs_baseline_annotate(const struct dlb_plan *p, json_t *records)
{
    size_t i, k, n = 0;
    json_t *rec, *cand;
    struct dlb_select_settings set;
    struct dlb_sel_groups g;
    struct dlb_error err = {""};
    if (p->n == 0 || dlb_select_settings(p, &set, &err) != DLB_OK ||
        dlb_sel_groups_build(p, &set, &g, &err) != DLB_OK)
        return 0;
    /* The baseline: the configuration of the same workload that holds the
     * suite baseline's settings (select.h: dlb_sel_groups). */
    json_array_foreach(records, i, rec) {
        const struct dlb_config *c = config_of(p, rec);
        json_object_del(rec, "vs_baseline");
        if (!c || !ok_record(rec))
            continue;
        size_t base = g.base[g.of[c - p->configs]];
        if (base == DLB_SEL_NO_BASE || &p->configs[base] == c)
            continue;
        json_array_foreach(records, k, cand) {
            if (k == i || config_of(p, cand) != &p->configs[base] ||
                !ok_record(cand))
                continue;
            annotate_one(rec, cand, same_training(p, c, &p->configs[base]));
            n++;
            break;
        }
    }
    dlb_sel_groups_free(&g);
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
    fprintf(f, "\nvs baseline (the same workload with the suite baseline's "
               "settings)\n");
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
