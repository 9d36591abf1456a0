/* Private to the selection files (select*.c, search.c): one record seen
 * through the suite's objective and constraints. */
#ifndef DLB_CORE_SELECT_IMPL_H
#define DLB_CORE_SELECT_IMPL_H

#include <stddef.h>
#include <jansson.h>
#include "plan/plan.h"
#include "results/record.h"
#include "select/select.h"

#define DLB_SEL_MAX_VIOLATIONS 3

struct dlb_sel_violation {
    const char *constraint; /* "accuracy_drop", "memory_budget", "target_accuracy" */
    double value, limit;
};

struct dlb_sel_item {
    json_t *rec;                  /* the record's JSON, as given */
    struct dlb_record r;          /* the same, typed: what the selection reads */
    const struct dlb_config *cfg; /* NULL when the index is not in the plan */
    size_t pos;                   /* in plan->configs */
    int ok;                       /* status ok, with samples and figures */
    int round;                    /* "round" of the record, -1 when none */
    int full;                     /* measured at the suite's full budget
                                   * (every record but halving's screening
                                   * rounds) */
    double obj, obj_lo, obj_hi;   /* objective median and CI, in its unit */
    double score;                 /* objective oriented: higher is better */
    double *samples;              /* objective per sample (malloc'ed) */
    size_t n;
    double throughput;            /* samples/s, 0 when unknown */
    double accuracy, memory;      /* NAN when unknown */
    double trained, batch;        /* images trained on before the accuracy
                                   * (0: none, mode = infer) and the batch */
    struct dlb_sel_violation viol[DLB_SEL_MAX_VIOLATIONS];
    int n_viol;
};

/* Fill `it` from `rec`; accuracy drop and memory are checked against
 * `base` (may be NULL: no accuracy constraint can be judged). */
void dlb_sel_item_init(const struct dlb_plan *plan,
                       const struct dlb_select_settings *set, json_t *rec,
                       struct dlb_sel_item *it);
void dlb_sel_item_check(const struct dlb_select_settings *set,
                        struct dlb_sel_item *it, const struct dlb_sel_item *base);
void dlb_sel_item_free(struct dlb_sel_item *it);

/* Whether the accuracies of `a` and `b` compare: both trained on as many
 * images, up to the rounding of train_samples to whole steps. */
int dlb_sel_same_training(const struct dlb_sel_item *a,
                          const struct dlb_sel_item *b);

/* Whether `a` and `b` differ significantly: the U test's p is below the
 * significance level and the median intervals do not overlap. */
int dlb_sel_differ(const struct dlb_select_settings *set,
                   const struct dlb_sel_item *a, const struct dlb_sel_item *b,
                   double *p);

/* Speedup of `it` over `base` with a conservative CI (ratio of bounds);
 * 0 when either lacks figures. */
double dlb_sel_speedup(const struct dlb_select_settings *set,
                       const struct dlb_sel_item *it,
                       const struct dlb_sel_item *base, double *lo, double *hi);

/* Axis values of configuration `c` that differ from `base`. */
int dlb_sel_changes(const struct dlb_plan *plan, const struct dlb_config *c,
                    const struct dlb_config *base);

/* The Pareto front and the attribution, added to `sel` (select_front.c). */
void dlb_sel_add_pareto(json_t *sel, struct dlb_sel_item *items, size_t n);
void dlb_sel_add_attribution(json_t *sel, const struct dlb_plan *plan,
                             const struct dlb_select_settings *set,
                             struct dlb_sel_item *items, size_t n,
                             const struct dlb_sel_item *base,
                             const struct dlb_sel_item *winner);

/* The verdict per setting, added to `sel` as "verdicts"
 * (select_verdict.c); `base[g]` is group g's baseline item or NULL. */
void dlb_sel_add_verdicts(json_t *sel, const struct dlb_plan *plan,
                          const struct dlb_select_settings *set,
                          const struct dlb_sel_groups *groups,
                          struct dlb_sel_item *items, size_t n,
                          struct dlb_sel_item *const *base);

/* The accuracy change of `it` against `base` (select_accuracy.c). */
struct dlb_sel_acc {
    int known;        /* both scored, on as much training */
    size_t seeds;     /* pairs of seeds the change is over */
    double change;    /* mean paired difference, points (+ is better) */
    double half;      /* its 95% half-width: over the seeds and the test
                         set; the test set's alone with one seed and no
                         stated noise; NAN when neither is known */
    int noise;        /* the training's noise is in `half` (two seeds or
                         more, or the suite's accuracy_noise) */
    int sign;         /* +1 a gain, -1 a loss the interval shows; 0 not */
    int within;       /* the drop against accuracy_tolerance: +1 shown
                         within, -1 shown beyond, 0 cannot tell; with the
                         noise unknown, the point figure's side */
};

void dlb_sel_accuracy_change(const struct dlb_select_settings *set,
                             const struct dlb_sel_item *it,
                             const struct dlb_sel_item *base,
                             struct dlb_sel_acc *out);

/* "gain", "loss", "no measurable effect", or "training noise not
 * measured"; NULL when the change is not known. */
const char *dlb_sel_accuracy_effect(const struct dlb_sel_acc *a);

/* The change's figures as a record's selection carries them, onto `o`:
 * accuracy_drop, _drop_ci, _seeds, _effect, _within; or accuracy_note
 * when the two trained on different budgets. */
void dlb_sel_accuracy_json(json_t *o, const struct dlb_select_settings *set,
                           const struct dlb_sel_item *it,
                           const struct dlb_sel_item *base);

const char *dlb_objective_name(enum dlb_objective o);

/* Whether a figure comparing `it` with `base` (either may be NULL) rests
 * on a doubtful record (record.h, system.doubtful): 1, with "ID: reason"
 * (the configuration's own first, else "its baseline ID: reason") in
 * `why`. */
int dlb_sel_doubtful(const struct dlb_sel_item *it, const struct dlb_sel_item *base,
                     char *why, size_t len);
/* When it does: `key`: true and `key`_why: the reason, on `o`. */
void dlb_sel_doubtful_json(json_t *o, const char *key, const struct dlb_sel_item *it,
                           const struct dlb_sel_item *base);

#endif
