/* One record seen through the suite's objective and constraints: the
 * objective's samples and interval, accuracy, peak memory, violations. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_budget.h"
#include "select/select_impl.h"
#include "stats/stats.h"

const char *dlb_objective_name(enum dlb_objective o)
{
    static const char *const names[] = {"throughput", "latency",
                                        "time_to_accuracy"};
    return names[o];
}

static double metric(const struct dlb_record *r, const char *name)
{
    const struct dlb_rec_metric *m = dlb_record_metric(r, name);
    return m ? m->value : NAN;
}

/* Peak memory: the process's peak RSS, or a pool's reserved peak or the
 * device memory a GPU backend held when larger (device memory is not in
 * the RSS). */
static double peak_memory(const struct dlb_record *r)
{
    double m = metric(r, "peak_rss");
    double dev = metric(r, "device_mem_held_peak");
    if (!isnan(dev) && (isnan(m) || dev > m))
        m = dev;
    for (size_t i = 0; i < r->n_metrics; i++) {
        const char *name = r->metrics[i].name;
        size_t n = strlen(name);
        double x = r->metrics[i].value;
        if (n > 14 && !strcmp(name + n - 14, ".reserved_peak") &&
            (isnan(m) || x > m))
            m = x;
    }
    return m;
}

static const struct dlb_config *config_of(const struct dlb_plan *p,
                                          size_t index, size_t *pos)
{
    for (size_t k = 0; k < p->n; k++)
        if (p->configs[k].index == index) {
            *pos = k;
            return &p->configs[k];
        }
    return NULL;
}

/* The objective per sample, in its unit; *lo and *hi its median's CI. */
static int objective_samples(const struct dlb_plan *plan,
                             const struct dlb_select_settings *set,
                             struct dlb_sel_item *it)
{
    const struct dlb_record *r = &it->r;
    double sps = r->measure.samples_per_step;
    double med = r->stats.median, lo = r->stats.ci_lo, hi = r->stats.ci_hi;
    size_t n = r->n_samples;
    if (!n || !(med > 0) || !(lo > 0) || !(hi > 0))
        return 0;
    if (!(sps > 0))
        sps = 1;
    double steps = it->cfg ? (double)dlb_config_core(plan, it->cfg,
                                                     "train_steps")->i : 0;
    it->samples = malloc(n * sizeof *it->samples);
    if (!it->samples)
        return 0;
    for (size_t k = 0; k < n; k++) {
        double t = r->samples[k];
        if (!(t > 0)) {
            free(it->samples);
            it->samples = NULL;
            return 0;
        }
        it->samples[k] = set->objective == DLB_OBJ_THROUGHPUT ? sps / t
                         : set->objective == DLB_OBJ_LATENCY  ? t
                                                              : t * steps;
    }
    it->n = n;
    it->throughput = sps / med;
    switch (set->objective) {
    case DLB_OBJ_THROUGHPUT:
        it->obj = sps / med, it->obj_lo = sps / hi, it->obj_hi = sps / lo;
        it->score = it->obj;
        break;
    case DLB_OBJ_LATENCY:
        it->obj = med, it->obj_lo = lo, it->obj_hi = hi;
        it->score = -med;
        break;
    case DLB_OBJ_TIME_TO_ACCURACY:
        it->obj = med * steps, it->obj_lo = lo * steps, it->obj_hi = hi * steps;
        it->score = -it->obj;
        break;
    }
    return 1;
}

void dlb_sel_item_init(const struct dlb_plan *plan,
                       const struct dlb_select_settings *set, json_t *rec,
                       struct dlb_sel_item *it)
{
    memset(it, 0, sizeof *it);
    it->rec = rec;
    it->round = -1;
    it->accuracy = it->memory = NAN;
    dlb_record_init(&it->r);
    /* records reach the selection checked (results.h), so a failure here
     * leaves an item that did not run */
    if (!rec || dlb_record_read(rec, NULL, &it->r, NULL) != DLB_OK)
        return;
    const struct dlb_record *r = &it->r;
    if (r->round >= 0)
        it->round = (int)r->round;
    it->full = isnan(r->budget) || r->budget >= 1.0;
    it->cfg = config_of(plan, (size_t)r->index, &it->pos);
    if (it->cfg) {
        it->trained = dlb_plan_trained_images(plan, it->cfg);
        it->batch = (double)dlb_config_core(plan, it->cfg, "batch")->i;
    }
    it->accuracy = metric(r, "accuracy");
    it->memory = peak_memory(r);
    it->ok = r->status == DLB_REC_OK && objective_samples(plan, set, it);
}

static void violate(struct dlb_sel_item *it, const char *what, double value,
                    double limit)
{
    if (it->n_viol < DLB_SEL_MAX_VIOLATIONS)
        it->viol[it->n_viol++] = (struct dlb_sel_violation){what, value, limit};
}

void dlb_sel_item_check(const struct dlb_select_settings *set,
                        struct dlb_sel_item *it, const struct dlb_sel_item *base)
{
    it->n_viol = 0;
    if (!it->ok)
        return;
    /* Broken when the drop is shown beyond the tolerance (over the seeds),
     * or, with one seed and no stated noise, when its figure is. */
    struct dlb_sel_acc acc;
    dlb_sel_accuracy_change(set, it, base, &acc);
    if (acc.known && acc.within < 0)
        violate(it, "accuracy_drop", -acc.change, set->max_accuracy_drop);
    if (set->memory_budget > 0 && !isnan(it->memory) &&
        it->memory > set->memory_budget)
        violate(it, "memory_budget", it->memory, set->memory_budget);
    /* Without the accuracy the target cannot be shown to be reached. */
    if (set->objective == DLB_OBJ_TIME_TO_ACCURACY &&
        !(it->accuracy >= set->target_accuracy))
        violate(it, "target_accuracy", isnan(it->accuracy) ? 0 : it->accuracy,
                set->target_accuracy);
}

void dlb_sel_item_free(struct dlb_sel_item *it)
{
    free(it->samples);
    it->samples = NULL;
    dlb_record_free(&it->r);
}

int dlb_sel_same_training(const struct dlb_sel_item *a,
                          const struct dlb_sel_item *b)
{
    return dlb_plan_same_training(a->trained, a->batch, b->trained, b->batch);
}

int dlb_sel_differ(const struct dlb_select_settings *set,
                   const struct dlb_sel_item *a, const struct dlb_sel_item *b,
                   double *p)
{
    *p = dlb_mann_whitney_p(a->samples, a->n, b->samples, b->n, NULL);
    int overlap = a->obj_lo <= b->obj_hi && b->obj_lo <= a->obj_hi;
    return *p < set->significance && !overlap;
}

double dlb_sel_speedup(const struct dlb_select_settings *set,
                       const struct dlb_sel_item *it,
                       const struct dlb_sel_item *base, double *lo, double *hi)
{
    *lo = *hi = 0;
    if (!it->ok || !base || !base->ok)
        return 0;
    if (set->objective == DLB_OBJ_THROUGHPUT) {
        *lo = it->obj_lo / base->obj_hi;
        *hi = it->obj_hi / base->obj_lo;
        return it->obj / base->obj;
    }
    /* lower is better: the baseline's figure over this one's */
    *lo = base->obj_lo / it->obj_hi;
    *hi = base->obj_hi / it->obj_lo;
    return base->obj / it->obj;
}

int dlb_sel_changes(const struct dlb_plan *plan, const struct dlb_config *c,
                    const struct dlb_config *base)
{
    /* Keys that are not axes hold the same value in every configuration,
     * so comparing every key counts the axis values that differ. */
    int n = 0;
    const struct dlb_suite *s = plan->suite;
    for (unsigned ns = 0; ns < s->n_ns; ns++)
        for (unsigned k = 0; k < s->ns[ns].n; k++)
            n += strcmp(c->values[ns][k].s, base->values[ns][k].s) != 0;
    return n;
}
