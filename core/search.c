/* Search strategies (see search.h). Halving's rounds are recomputed from
 * the journal's records each time, never stored: a resumed run takes the
 * same decisions as the interrupted one. */
#define _POSIX_C_SOURCE 200809L
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "select_impl.h"

dlb_status dlb_search_parse(const char *text, struct dlb_search *out,
                            char *why, size_t why_len)
{
    out->n = 0;
    if (!strcmp(text, "grid")) {
        out->kind = DLB_SEARCH_GRID;
        return DLB_OK;
    }
    if (!strcmp(text, "halving")) {
        out->kind = DLB_SEARCH_HALVING;
        return DLB_OK;
    }
    char *end;
    if (!strncmp(text, "random:", 7) && text[7] >= '1' && text[7] <= '9') {
        unsigned long long n = strtoull(text + 7, &end, 10);
        if (!*end && n <= 100000) {
            out->kind = DLB_SEARCH_RANDOM;
            out->n = (size_t)n;
            return DLB_OK;
        }
    }
    snprintf(why, why_len, "expected grid, random:N (N >= 1) or halving, got "
             "\"%s\"", text);
    return DLB_ERR_INPUT;
}

struct dlb_search dlb_search_of(const struct dlb_plan *plan)
{
    struct dlb_search s = {DLB_SEARCH_GRID, 0};
    char why[256];
    dlb_search_parse(dlb_config_core(plan, &plan->configs[0], "search")->s, &s,
                     why, sizeof why);
    return s;
}

static int rec_round(json_t *rec)
{
    json_t *r = json_object_get(rec, "round");
    return json_is_integer(r) ? (int)json_integer_value(r) : -1;
}

json_t *dlb_search_find(json_t *records, size_t index, int round)
{
    size_t i;
    json_t *v;
    json_array_foreach(records, i, v)
        if ((size_t)json_integer_value(json_object_get(v, "index")) == index &&
            (round < 0 || rec_round(v) == round))
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
            if ((size_t)json_integer_value(json_object_get(v, "index")) ==
                    plan->configs[k].index &&
                (!best || rec_round(v) > rec_round(best)))
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

/* Keep the better ceil(n/2) of `alive` (plan positions) as judged by the
 * records of `round`. */
static dlb_status keep_better_half(const struct dlb_plan *plan,
                                   const struct dlb_select_settings *set,
                                   json_t *records, int round, size_t *alive,
                                   size_t *n, struct dlb_error *err)
{
    struct dlb_sel_item *items = calloc(*n, sizeof *items), base;
    struct dlb_sel_item **order = calloc(*n, sizeof *order);
    if (!items || !order) {
        free(items);
        free(order);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    /* The baseline's latest record up to this round: it runs again only
     * where its figures depend on the budget (see dlb_search_round). */
    json_t *brec = NULL;
    for (int r = round; r >= 0 && !brec; r--)
        brec = dlb_search_find(records, plan->configs[set->baseline].index, r);
    dlb_sel_item_init(plan, set, brec, &base);
    for (size_t k = 0; k < *n; k++) {
        json_t *rec = dlb_search_find(records, plan->configs[alive[k]].index,
                                      round);
        dlb_sel_item_init(plan, set, rec, &items[k]);
        items[k].pos = alive[k];
        dlb_sel_item_check(set, &items[k], brec ? &base : NULL);
        order[k] = &items[k];
    }
    qsort(order, *n, sizeof *order, by_score);
    size_t keep = (*n + 1) / 2;
    for (size_t k = 0; k < keep; k++)
        alive[k] = order[k]->pos;
    /* plan order again, so rounds list configurations as the grid does */
    for (size_t a = 1; a < keep; a++)
        for (size_t b = a; b > 0 && alive[b - 1] > alive[b]; b--) {
            size_t t = alive[b];
            alive[b] = alive[b - 1];
            alive[b - 1] = t;
        }
    for (size_t k = 0; k < *n; k++)
        dlb_sel_item_free(&items[k]);
    *n = keep;
    dlb_sel_item_free(&base);
    free(items);
    free(order);
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
    dlb_rng_seed(&rng, (uint64_t)dlb_config_core(plan, &plan->configs[0],
                                                 "seed")->i);
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
    for (size_t a = 1; a < *n; a++)
        for (size_t b = a; b > 0 && pos[b - 1] > pos[b]; b--) {
            size_t t = pos[b];
            pos[b] = pos[b - 1];
            pos[b - 1] = t;
        }
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

dlb_status dlb_search_round(const struct dlb_plan *plan,
                            const struct dlb_search *s,
                            const struct dlb_select_settings *set,
                            json_t *records, int round,
                            struct dlb_search_round *out, int *done,
                            struct dlb_error *err)
{
    memset(out, 0, sizeof *out);
    *done = 0;
    int rounds = s->kind == DLB_SEARCH_HALVING ? halving_rounds(plan->n) : 1;
    if (round >= rounds) {
        *done = 1;
        return DLB_OK;
    }
    dlb_status st = all_positions(plan, &out->pos, &out->n, err);
    if (st != DLB_OK)
        return st;
    out->round = s->kind == DLB_SEARCH_HALVING ? round : -1;
    out->last = round == rounds - 1;
    out->scale = 1;
    if (s->kind == DLB_SEARCH_RANDOM && s->n < plan->n)
        pick_random(plan, set->baseline, out->pos, &out->n, s->n);
    if (s->kind != DLB_SEARCH_HALVING)
        return DLB_OK;
    /* Round r gets 2^(r - rounds) of the budget: the last round half of
     * it, each round about the cost of one configuration at full budget. */
    out->scale = ldexp(1.0, round - rounds);
    for (int r = 0; r < round && st == DLB_OK; r++)
        st = keep_better_half(plan, set, records, r, out->pos, &out->n, err);
    /* Accuracy after train_steps depends on the budget, so the baseline
     * trains again in each round to judge accuracy drops fairly; step
     * times do not, and its first record serves for speedups. */
    if (st == DLB_OK && round > 0 &&
        dlb_config_core(plan, &plan->configs[set->baseline], "train_steps")->i > 0)
        add_baseline(out->pos, &out->n, set->baseline);
    if (st != DLB_OK) {
        free(out->pos);
        out->pos = NULL;
    }
    return st;
}
