/* Speedup and accuracy drop against the baseline configuration. */
#include "select/vs_baseline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_budget.h"
#include "select/select.h"
#include "util/figure.h"

static const struct dlb_config *config_of(const struct dlb_plan *p,
                                          const struct dlb_record *rec)
{
    for (size_t i = 0; rec->index >= 0 && i < p->n; i++)
        if (p->configs[i].index == (size_t)rec->index)
            return &p->configs[i];
    return NULL;
}

/* How many workers share a step: a plugin figure in unit "workers" (the
 * dp plugin's replicas x ranks); 0 when none says. */
static double workers_of(const struct dlb_record *rec)
{
    for (size_t i = 0; i < rec->n_metrics; i++) {
        const struct dlb_rec_metric *m = &rec->metrics[i];
        if (m->unit && !strcmp(m->unit, "workers"))
            return isnan(m->value) ? 0 : m->value;
    }
    return 0;
}

/* Accuracies compare only after as much training (plan_budget.h). */
static int same_training(const struct dlb_config *a, const struct dlb_config *b)
{
    return dlb_plan_same_training(dlb_plan_trained_images(a), (double)a->core.batch,
                                  dlb_plan_trained_images(b), (double)b->core.batch);
}

static void annotate_one(struct dlb_record *rec, const struct dlb_record *base,
                         int same_training)
{
    const struct dlb_rec_throughput *t = &rec->throughput, *b = &base->throughput;
    struct dlb_rec_vs_baseline *o = &rec->vs_baseline;
    o->baseline_id = base->id;
    if (!isnan(t->median) && !isnan(b->median) && b->median > 0) {
        o->speedup = t->median / b->median;
        /* The ratio's interval from the two throughput intervals: a
         * conservative bound, not an exact interval of the ratio. */
        if (!isnan(t->ci_lo) && !isnan(b->ci_hi) && !isnan(t->ci_hi) &&
            !isnan(b->ci_lo) && b->ci_hi > 0 && b->ci_lo > 0) {
            o->speedup_ci_lo = t->ci_lo / b->ci_hi;
            o->speedup_ci_hi = t->ci_hi / b->ci_lo;
        }
    }
    /* Scaling efficiency: throughput(N) / (N x throughput(1)), N workers
     * against the baseline's, measured in the same run. */
    double wr = workers_of(rec), wb = workers_of(base);
    if (!isnan(o->speedup) && wr > 0 && wb > 0 && wr != wb) {
        o->workers = wr;
        o->scaling_efficiency = t->median / b->median * wb / wr;
    }
    double a, ab;
    if (dlb_record_metric_value(rec, "accuracy", &a) &&
        dlb_record_metric_value(base, "accuracy", &ab) && same_training)
        o->accuracy_drop = ab - a;
}

static void clear_vs_baseline(struct dlb_record *r)
{
    struct dlb_rec_vs_baseline *o = &r->vs_baseline;
    o->baseline_id = NULL;
    o->speedup = o->speedup_ci_lo = o->speedup_ci_hi = NAN;
    o->accuracy_drop = o->workers = o->scaling_efficiency = NAN;
}

size_t dlb_vs_baseline_annotate(const struct dlb_plan *p, json_t *records)
{
    size_t i, k, n = 0, n_recs;
    struct dlb_select_settings set;
    struct dlb_sel_groups g;
    struct dlb_error err = {""};
    struct dlb_record *recs;
    if (p->n == 0 || dlb_select_settings(p, &set, &err) != DLB_OK ||
        dlb_records_read(records, NULL, &recs, &n_recs, &err) != DLB_OK)
        return 0;
    if (dlb_sel_groups_build(p, &set, &g, &err) != DLB_OK) {
        dlb_records_free(recs, n_recs);
        return 0;
    }
    /* The baseline: the configuration of the same workload that holds the
     * suite baseline's settings (select.h: dlb_sel_groups). */
    for (i = 0; i < n_recs; i++) {
        struct dlb_record *rec = &recs[i];
        const struct dlb_config *c = config_of(p, rec);
        clear_vs_baseline(rec);
        /* an earlier annotation goes, and the new one comes last, as it
         * always has in results.json */
        json_object_del(json_array_get(records, i), "vs_baseline");
        size_t base = c && rec->status == DLB_REC_OK ? g.base[g.of[c - p->configs]]
                                                     : DLB_SEL_NO_BASE;
        for (k = 0; base != DLB_SEL_NO_BASE && &p->configs[base] != c &&
                    k < n_recs; k++) {
            if (k == i || config_of(p, &recs[k]) != &p->configs[base] ||
                recs[k].status != DLB_REC_OK)
                continue;
            annotate_one(rec, &recs[k], same_training(c, &p->configs[base]));
            n++;
            break;
        }
        dlb_record_store(rec, json_array_get(records, i));
    }
    dlb_sel_groups_free(&g);
    dlb_records_free(recs, n_recs);
    return n;
}

/* A row resting on a doubtful record, its own or its baseline's, says so
 * at its end: the ratio measured the neighbours as well. */
static void doubtful_note(const struct dlb_record *recs, size_t n, size_t i,
                          char *out, size_t len)
{
    const struct dlb_record *at = recs[i].has_system && recs[i].system.doubtful
                                      ? &recs[i] : NULL;
    for (size_t k = 0; !at && k < n; k++)
        if (recs[k].id && !strcmp(recs[k].id, recs[i].vs_baseline.baseline_id) &&
            recs[k].has_system && recs[k].system.doubtful)
            at = &recs[k];
    out[0] = '\0';
    if (at)
        snprintf(out, len, "  (doubtful: %s%s: %s)", at == &recs[i] ? "" : "its baseline ",
                 at->id, at->system.doubtful);
}

void dlb_vs_baseline_print(FILE *f, json_t *records)
{
    size_t i, w = 6, n;
    int any = 0;
    struct dlb_record *recs;
    struct dlb_error err;
    if (dlb_records_read(records, NULL, &recs, &n, &err) != DLB_OK)
        return;
    for (i = 0; i < n; i++)
        if (recs[i].vs_baseline.baseline_id) {
            any = 1;
            w = strlen(recs[i].id) > w ? strlen(recs[i].id) : w;
        }
    if (!any) {
        dlb_records_free(recs, n);
        return;
    }
    fprintf(f, "\nvs baseline (the same workload with the suite baseline's "
               "settings)\n");
    fprintf(f, "%-*s  %8s  %15s  %13s  %s\n", (int)w, "config", "speedup",
            "speedup 95% CI", "accuracy drop", "baseline");
    fprintf(f, "%-*s  %8s  %15s  %13s\n", (int)w, "", "x", "x", "points");
    for (i = 0; i < n; i++) {
        const struct dlb_rec_vs_baseline *o = &recs[i].vs_baseline;
        if (!o->baseline_id)
            continue;
        char sp[32] = "-", ci[48] = "-", drop[32] = "-";
        if (!isnan(o->speedup))
            snprintf(sp, sizeof sp, "%.2f", o->speedup);
        if (!isnan(o->speedup_ci_lo) && !isnan(o->speedup_ci_hi))
            snprintf(ci, sizeof ci, "%.2f-%.2f", o->speedup_ci_lo, o->speedup_ci_hi);
        if (!isnan(o->accuracy_drop))
            snprintf(drop, sizeof drop, "%+.2f",
                     dlb_figure_unsigned_zero(o->accuracy_drop, 2));
        char note[512];
        doubtful_note(recs, n, i, note, sizeof note);
        fprintf(f, "%-*s  %8s  %15s  %13s  %s%s\n", (int)w, recs[i].id, sp, ci,
                drop, o->baseline_id, note);
    }
    dlb_vs_scaling_print(f, recs, n, w);
    dlb_records_free(recs, n);
}
