/* Search strategies (see search.h). Halving's rounds are recomputed from
 * the journal's records each time, never stored: a resumed run takes the
 * same decisions as the interrupted one. */
#define _POSIX_C_SOURCE 200809L
#include "search/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"
#include "results/accuracy_pair.h"
#include "results/record.h"
#include "results/repeat.h"
#include "select/select_impl.h"

struct dlb_search dlb_search_of(const struct dlb_plan *plan)
{
    struct dlb_search s = {DLB_SEARCH_GRID, 0, 0, 0};
    char why[256];
    dlb_search_parse(plan->configs[0].core.search, &s, why, sizeof why);
    if (s.kind == DLB_SEARCH_HALVING && plan->n < DLB_HALVING_MIN_CONFIGS) {
        s.kind = DLB_SEARCH_GRID;
        s.halving_small = 1;
    }
    /* Halving keeps the better half of all configurations; over several
     * workloads that would drop a whole workload for being slower (vgg-small
     * against LeNet), so it runs only within one. */
    struct dlb_select_settings set;
    struct dlb_sel_groups g;
    struct dlb_error err = {""};
    if (s.kind == DLB_SEARCH_HALVING &&
        dlb_select_settings(plan, &set, &err) == DLB_OK &&
        dlb_sel_groups_build(plan, &set, &g, &err) == DLB_OK) {
        if (g.n > 1) {
            s.kind = DLB_SEARCH_GRID;
            s.halving_groups = g.n;
        }
        dlb_sel_groups_free(&g);
    }
    return s;
}

json_t *dlb_search_find(json_t *records, size_t index, int round)
{
    size_t i;
    json_t *v;
    json_array_foreach(records, i, v)
        if (dlb_rec_index_of(v) == (long long)index &&
            (round < 0 || dlb_round_of(v) == round))
            return v;
    return NULL;
}

json_t *dlb_search_final_records(const struct dlb_plan *plan, json_t *records)
{
    json_t *out = json_array();
    for (size_t k = 0; k < plan->n; k++) {
        json_t *best = NULL, *v;
        size_t i;
        json_array_foreach(records, i, v)
            if (dlb_rec_index_of(v) == (long long)plan->configs[k].index &&
                (!best || dlb_round_of(v) > dlb_round_of(best)))
                best = v;
        if (best)
            json_array_append(out, best);
    }
    return out;
}

/* Rounds halving needs for n configurations: ceil(log2 n), at least 1. */
static int halving_rounds(size_t n)
{
    int r = 0;
    while (((size_t)1 << r) < n)
        r++;
    return r ? r : 1;
}

static int by_score(const void *a, const void *b)
{
    const struct dlb_sel_item *x = *(struct dlb_sel_item *const *)a;
    const struct dlb_sel_item *y = *(struct dlb_sel_item *const *)b;
    /* Feasible before infeasible, then the better objective, then plan
     * order, so equal scores never depend on qsort. */
    int fx = x->ok && !x->n_viol, fy = y->ok && !y->n_viol;
    if (fx != fy)
        return fy - fx;
    if (fx && x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The baseline's latest record up to `round`, or NULL. */
static json_t *baseline_record(const struct dlb_plan *plan,
                               const struct dlb_select_settings *set,
                               json_t *records, int round)
{
    json_t *brec = NULL;
    for (int r = round; r >= 0 && !brec; r--)
        brec = dlb_search_find(records, plan->configs[set->baseline].index, r);
    return brec;
}

/* A record's figure `name`, or NAN. */
static double rec_metric(json_t *rec, const char *name)
{
    struct dlb_record r;
    struct dlb_error err = {""};
    double v = NAN;
    if (dlb_record_read(rec, NULL, &r, &err) != DLB_OK)
        return NAN;
    dlb_record_metric_value(&r, name, &v);
    dlb_record_free(&r);
    return v;
}

/* An inference screening scores accuracy on a subset of the test set
 * (test_images), so its accuracy drop carries sampling error: a shortfall
 * within SCREEN_Z standard errors of it is no verdict, and the final
 * round, on every test image, judges it. Where both records say which
 * images they got right (test_correct) the standard error is the paired
 * one (results/accuracy_pair.h): the two are scored on the same images
 * and differ in sampling only on the images where they disagree, so a
 * drop of 30 of 2,000 images, all lost, is 0.27 points of error, not the
 * 0.98 of two independent proportions. Without the marks it is the
 * latter, which keeps more than it must, never fewer. */
#define SCREEN_Z 3.0
static double screen_error(const struct dlb_sel_item *it,
                           const struct dlb_sel_item *base)
{
    struct dlb_paired_diff d;
    if (dlb_accuracy_pair(it->rec, base->rec, &d, NULL) && d.images_paired)
        return d.binom_half / 1.96;
    double ni = rec_metric(it->rec, "test_images");
    double nb = rec_metric(base->rec, "test_images");
    double pi = it->accuracy / 100, pb = base->accuracy / 100;
    if (!(ni > 0 && nb > 0) || isnan(pi) || isnan(pb))
        return NAN;
    return 100 * sqrt(pi * (1 - pi) / ni + pb * (1 - pb) / nb);
}

static void allow_sampling_error(struct dlb_sel_item *it,
                                 const struct dlb_sel_item *base)
{
    if (!it->n_viol || !base || it->full)
        return;
    double se = screen_error(it, base);
    if (isnan(se))
        return;
    int kept = 0;
    for (int k = 0; k < it->n_viol; k++)
        if (strcmp(it->viol[k].constraint, "accuracy_drop") ||
            it->viol[k].value > it->viol[k].limit + SCREEN_Z * se)
            it->viol[kept++] = it->viol[k];
    it->n_viol = kept;
}

static int placed(struct dlb_sel_item *const *out, size_t n,
                  const struct dlb_sel_item *it)
{
    for (size_t k = 0; k < n; k++)
        if (out[k] == it)
            return 1;
    return 0;
}

struct simple_key {
    struct dlb_sel_item *it;
    int changes;
};

/* Fewer changes from the baseline first, then the better score. Not plan
 * order, as the final selection breaks ties between as simple ones: a
 * screening round's ties are mostly what a run of a few samples cannot
 * test, and by plan order its simplest would include rows many times
 * slower (the amp suite's vgg-small rows beside LeNet's), which then
 * cost every later round; the fastest of each degree of simplicity are
 * the ones the final round can still tie. */
static int by_simplicity(const void *a, const void *b)
{
    const struct simple_key *x = a, *y = b;
    if (x->changes != y->changes)
        return x->changes < y->changes ? -1 : 1;
    return by_score(&x->it, &y->it);
}

/* `order` (n, by score): the best and the configurations tied with it,
 * rearranged in place as the selection would weigh them: taken in turn
 * the one with the fewest changes from the baseline (then the better
 * score) and the one with the best score, each once. The first is then
 * the selection's own choice among them, and a round that cannot tell
 * many from its best keeps both what the selection picks when the final
 * round cannot tell them apart either and what it picks when that round
 * can. */
static void interleave_ties(const struct dlb_plan *plan,
                            const struct dlb_select_settings *set,
                            struct dlb_sel_item **order, size_t n)
{
    struct dlb_sel_item **fast = malloc((n ? n : 1) * sizeof *fast);
    struct simple_key *simple = malloc((n ? n : 1) * sizeof *simple);
    if (!fast || !simple) {
        free(fast);
        free(simple);
        return; /* score order: still a valid ranking */
    }
    const struct dlb_config *base = &plan->configs[set->baseline];
    for (size_t k = 0; k < n; k++)
        simple[k] = (struct simple_key){order[k],
                                        dlb_sel_changes(plan, order[k]->cfg, base)};
    qsort(simple, n, sizeof *simple, by_simplicity);
    memcpy(fast, order, n * sizeof *fast); /* score order, as given */
    size_t from_simple = 0, from_fast = 0;
    for (size_t k = 0; k < n; k++) {
        if (k % 2 == 0) {
            while (placed(order, k, simple[from_simple].it))
                from_simple++;
            order[k] = simple[from_simple].it;
        } else {
            while (placed(order, k, fast[from_fast]))
                from_fast++;
            order[k] = fast[from_fast];
        }
    }
    free(fast);
    free(simple);
}

/* Order `alive` (n plan positions) best first, as judged by the records of
 * `round`: the best by score and the configurations the selection's own
 * test cannot tell from it (see interleave_ties), then the rest by score.
 * *feasible (may be NULL) gets how many meet every constraint (they come
 * first). */
static dlb_status rank(const struct dlb_plan *plan,
                       const struct dlb_select_settings *set, json_t *records,
                       int round, size_t *alive, size_t n, size_t *feasible,
                       struct dlb_error *err)
{
    struct dlb_sel_item *items = calloc(n ? n : 1, sizeof *items), base;
    struct dlb_sel_item **order = calloc(n ? n : 1, sizeof *order);
    if (!items || !order) {
        free(items);
        free(order);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    json_t *brec = baseline_record(plan, set, records, round);
    dlb_sel_item_init(plan, set, brec, &base);
    for (size_t k = 0; k < n; k++) {
        json_t *rec = dlb_search_find(records, plan->configs[alive[k]].index,
                                      round);
        dlb_sel_item_init(plan, set, rec, &items[k]);
        items[k].pos = alive[k];
        dlb_sel_item_check(set, &items[k], brec ? &base : NULL);
        allow_sampling_error(&items[k], brec ? &base : NULL);
        order[k] = &items[k];
    }
    qsort(order, n, sizeof *order, by_score);
    size_t n_feasible = 0;
    while (n_feasible < n && order[n_feasible]->ok && !order[n_feasible]->n_viol)
        n_feasible++;
    if (n_feasible > 1) {
        /* the tied ones next to the best, the rest after them in score
         * order */
        size_t tied = 1;
        for (size_t k = 1; k < n_feasible; k++) {
            double p;
            if (!dlb_sel_differ(set, order[0], order[k], &p)) {
                struct dlb_sel_item *t = order[k];
                memmove(&order[tied + 1], &order[tied], (k - tied) * sizeof *order);
                order[tied++] = t;
            }
        }
        interleave_ties(plan, set, order, tied);
    }
    for (size_t k = 0; k < n; k++)
        alive[k] = order[k]->pos;
    if (feasible)
        *feasible = n_feasible;
    for (size_t k = 0; k < n; k++)
        dlb_sel_item_free(&items[k]);
    dlb_sel_item_free(&base);
    free(items);
    free(order);
    return DLB_OK;
}

static void sort_positions(size_t *pos, size_t n)
{
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && pos[b - 1] > pos[b]; b--) {
            size_t t = pos[b];
            pos[b] = pos[b - 1];
            pos[b - 1] = t;
        }
}

/* Keep the better half of `alive` (plan positions) as judged by the
 * records of `round`, in plan order. A short screening run on a noisy
 * machine cannot tell near-equals apart, and the selection picks among
 * those it cannot tell from the best the one with the fewest changes
 * from the baseline: the ranking (see rank) puts first its best and the
 * configurations the round cannot tell from it, alternately the simplest
 * and the fastest, so that whichever way the final round decides, its
 * choice is still there, and a round that keeps one keeps the
 * selection's own choice; the baseline, which the final round runs
 * anyway, takes no place among them (the amp suite's LeNet rows sit
 * within a few percent of each other; the quant suite's int8 vgg-small
 * rows differ only in how the scales were found). For a speed objective
 * the half is of those that meet the constraints: what breaks one in a
 * screening round (a failed run, the memory budget, and in an inference
 * screening the accuracy) breaks it on any budget, so it is out for good
 * (the quant suite's 36 LeNet rows are the fastest and all 7 points below
 * vgg-small); only when none meets them is it half of all. Time to
 * accuracy is judged on a cut training budget, which a configuration may
 * miss and the full one reach: the half is of all. */
static dlb_status keep_better_half(const struct dlb_plan *plan,
                                   const struct dlb_select_settings *set,
                                   json_t *records, int round, size_t *alive,
                                   size_t *n, struct dlb_error *err)
{
    size_t feasible = 0;
    dlb_status st = rank(plan, set, records, round, alive, *n, &feasible, err);
    if (st != DLB_OK)
        return st;
    size_t m = feasible && set->objective != DLB_OBJ_TIME_TO_ACCURACY ? feasible : *n;
    /* The baseline runs in the final round whatever this one keeps
     * (add_baseline), so it takes no place in the half: being the
     * simplest of all, it would take one whenever it ties with the best. */
    for (size_t k = 0; k < *n; k++)
        if (alive[k] == set->baseline) {
            memmove(&alive[k], &alive[k + 1], (*n - k - 1) * sizeof *alive);
            --*n;
            m -= k < m;
            break;
        }
    if (!m)
        m = *n;
    *n = (m + 1) / 2;
    /* plan order again, so rounds list configurations as the grid does */
    sort_positions(alive, *n);
    return DLB_OK;
}

static dlb_status all_positions(const struct dlb_plan *plan, size_t **pos,
                                size_t *n, struct dlb_error *err)
{
    *pos = malloc(plan->n * sizeof **pos);
    if (!*pos)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < plan->n; k++)
        (*pos)[k] = k;
    *n = plan->n;
    return DLB_OK;
}

/* A seeded choice of n positions, the baseline always first among them
 * (speedups need it), then in plan order. */
static void pick_random(const struct dlb_plan *plan, size_t baseline,
                        size_t *pos, size_t *n, size_t want)
{
    struct dlb_rng rng;
    dlb_rng_seed(&rng, (uint64_t)plan->configs[0].core.seed);
    /* Fisher-Yates over every position but the baseline's. */
    size_t m = 0;
    for (size_t k = 0; k < plan->n; k++)
        if (k != baseline)
            pos[m++] = k;
    for (size_t k = m; k > 1; k--) {
        size_t j = (size_t)dlb_rng_below(&rng, k);
        size_t t = pos[k - 1];
        pos[k - 1] = pos[j];
        pos[j] = t;
    }
    size_t take = want - 1 < m ? want - 1 : m;
    pos[take] = baseline;
    *n = take + 1;
    sort_positions(pos, *n);
}

static void add_baseline(size_t *pos, size_t *n, size_t baseline)
{
    for (size_t k = 0; k < *n; k++)
        if (pos[k] == baseline)
            return;
    size_t k = *n;
    while (k > 0 && pos[k - 1] > baseline) {
        pos[k] = pos[k - 1];
        k--;
    }
    pos[k] = baseline;
    (*n)++;
}

/* Whether configuration `pos` has a record at the full budget, from a
 * round in [first, last). */
static int has_full_record(const struct dlb_plan *plan, json_t *records,
                           size_t pos, int first, int last)
{
    for (int r = first; r < last; r++)
        if (dlb_search_find(records, plan->configs[pos].index, r))
            return 1;
    return 0;
}

/* Whether a full-budget record of rounds [first, last) other than the
 * baseline's meets every constraint against the baseline's latest record.
 * The baseline runs at the full budget in the final round for reference;
 * it counts as the winner only once nothing ranked above it is feasible,
 * which the fallback rounds establish. */
static int have_feasible(const struct dlb_plan *plan,
                         const struct dlb_select_settings *set,
                         json_t *records, int first, int last)
{
    json_t *brec = baseline_record(plan, set, records, last - 1);
    struct dlb_sel_item base, it;
    int found = 0;
    dlb_sel_item_init(plan, set, brec, &base);
    for (int r = first; r < last && !found; r++)
        for (size_t k = 0; k < plan->n && !found; k++) {
            json_t *rec = dlb_search_find(records, plan->configs[k].index, r);
            if (!rec || k == set->baseline)
                continue;
            dlb_sel_item_init(plan, set, rec, &it);
            dlb_sel_item_check(set, &it, brec ? &base : NULL);
            found = it.ok && !it.n_viol;
            dlb_sel_item_free(&it);
        }
    dlb_sel_item_free(&base);
    return found;
}

/* Whether every configuration runs inference: no training, so the
 * accuracy is the same on any budget. */
static int infers(const struct dlb_plan *plan)
{
    for (size_t k = 0; k < plan->n; k++)
        if (plan->configs[k].core.mode != DLB_MODE_INFER)
            return 0;
    return plan->n > 0;
}

/* The share of the budget a screening round gets: 2^(round-R), doubling
 * as the configurations halve; half that where `halve`. */
static double halving_scale(int round, int rounds, int halve)
{
    return ldexp(1.0, round - rounds - (halve ? 1 : 0));
}

/* Halving's round `round` of R = halving_rounds(n): screening rounds
 * from 0 at 2^(round-R) of the budget (half that for a speed screening
 * with repetitions), then the final round at the full budget (round R-1,
 * or the one after the screening round that leaves at most
 * DLB_HALVING_FINALISTS), then fallback rounds while no full-budget
 * record is feasible. */
static dlb_status halving_round(const struct dlb_plan *plan,
                                const struct dlb_select_settings *set,
                                json_t *records, int round,
                                struct dlb_search_round *out, int *done,
                                struct dlb_error *err)
{
    int rounds = halving_rounds(plan->n), final = rounds - 1;
    int speed = set->objective != DLB_OBJ_TIME_TO_ACCURACY;
    int trains = plan->configs[set->baseline].core.train_steps > 0;
    dlb_status st = DLB_OK;
    size_t finalists = plan->n;
    /* Each screening round before this one halves; the final round is
     * the one after R - 1 of them, or sooner once few enough remain. */
    if (finalists - 1 <= DLB_HALVING_FINALISTS)
        final = 0;
    for (int r = 0; r < round && r < final && st == DLB_OK; r++) {
        st = keep_better_half(plan, set, records, r, out->pos, &finalists, err);
        if (finalists <= DLB_HALVING_FINALISTS)
            final = r + 1;
    }
    if (st != DLB_OK)
        return st;
    out->round = round;
    if (round < final) {
        out->n = finalists;
        out->measure_only = speed;
        out->accuracy = speed && round == 0 && infers(plan);
        /* An inference screening's first round runs every configuration
         * on the smallest budget to drop what breaks the accuracy
         * constraint, which does not vary between processes; it is nearly
         * all start-up (quant's vgg-small rows took 1.0 s a process to
         * measure for 0.03 s), and repetitions would triple its cost. A
         * speed-only first round is a ranking by speed alone, which is
         * what one process per configuration gets wrong on a shared
         * machine (amp's grid choice, measured at 14k samples/s in one
         * process and 30k in another, went out in it): it gets the
         * repetitions. */
        out->once = out->accuracy;
        /* A speed screening measured in several processes starts at half
         * the budget: its intervals cover the spread between processes,
         * and that spread, not a process's own sampling error, limits its
         * ranking. The dataloader suite's screening processes, on half
         * of 2^(r-R), measured their medians to +-1-4%, while the
         * processes of one configuration spread by a standard deviation
         * of 18-31% in ln(median) (mempool's: 14-17%; mp's, steadier,
         * 8-10% against +-3-8%). One process per configuration
         * (repetitions = 1, or the accuracy screen above) has only its
         * own samples, 7-12 for prune's fastest rows on the full
         * screening budget: it keeps that budget. Time to accuracy judges
         * the accuracy that a cut training reaches, which a shorter
         * budget changes. */
        int reps = (int)plan->configs[set->baseline].core.repetitions;
        out->scale = halving_scale(round, rounds,
                                   speed && !out->once && reps > 1);
        /* Time to accuracy is judged on each round's own training, so the
         * baseline trains again on the same cut budget. */
        if (!speed && round > 0 && trains)
            add_baseline(out->pos, &out->n, set->baseline);
        return DLB_OK;
    }
    out->scale = 1;
    if (round == final) {
        out->n = finalists;
        if (rounds > 1)
            add_baseline(out->pos, &out->n, set->baseline);
        return DLB_OK;
    }
    /* A fallback round: the next configurations of the first screening's
     * ranking that have no full-budget record yet, as many as there were
     * finalists; the baseline's full-budget record of the final round
     * stands (running it again cost the dp suite 37 s a round). */
    if (have_feasible(plan, set, records, final, round)) {
        *done = 1;
        return DLB_OK;
    }
    size_t n = plan->n, take = 0, want = finalists;
    for (size_t k = 0; k < n; k++)
        out->pos[k] = k;
    st = rank(plan, set, records, 0, out->pos, n, NULL, err);
    for (size_t k = 0; st == DLB_OK && k < n && take < want; k++)
        if (!has_full_record(plan, records, out->pos[k], final, round))
            out->pos[take++] = out->pos[k];
    out->n = take;
    sort_positions(out->pos, out->n);
    if (st == DLB_OK && !take)
        *done = 1;
    return st;
}

dlb_status dlb_search_round(const struct dlb_plan *plan,
                            const struct dlb_search *s,
                            const struct dlb_select_settings *set,
                            json_t *records, int round,
                            struct dlb_search_round *out, int *done,
                            struct dlb_error *err)
{
    memset(out, 0, sizeof *out);
    *done = 0;
    if (s->kind != DLB_SEARCH_HALVING && round > 0) {
        *done = 1;
        return DLB_OK;
    }
    dlb_status st = all_positions(plan, &out->pos, &out->n, err);
    if (st != DLB_OK)
        return st;
    out->round = -1;
    out->last = s->kind != DLB_SEARCH_HALVING;
    out->scale = 1;
    if (s->kind == DLB_SEARCH_RANDOM && s->n < plan->n)
        pick_random(plan, set->baseline, out->pos, &out->n, s->n);
    if (s->kind == DLB_SEARCH_HALVING)
        st = halving_round(plan, set, records, round, out, done, err);
    if (st != DLB_OK || *done) {
        free(out->pos);
        out->pos = NULL;
        out->n = 0;
    }
    return st;
}
