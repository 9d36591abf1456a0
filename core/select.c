/* Auto-selection: the winner among the configurations that meet every
 * constraint, the ones tied with the fastest, and the sentence saying why. */
#define _POSIX_C_SOURCE 200809L
#include "select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select_impl.h"

struct sel {
    const struct dlb_plan *plan;
    struct dlb_select_settings set;
    struct dlb_sel_item *items;
    size_t n;
    struct dlb_sel_item *base;   /* NULL when the baseline has no record */
};

static int candidate(const struct sel *s, const struct dlb_sel_item *it)
{
    /* halving's screening records do not compete: their budget was cut */
    return it->ok && it->cfg && !it->n_viol && it->full;
}

static int better(const struct dlb_sel_item *a, const struct dlb_sel_item *b)
{
    return a->score > b->score || (a->score == b->score && a->pos < b->pos);
}

static const char *id_of(const struct dlb_sel_item *it)
{
    return json_string_value(json_object_get(it->rec, "id"));
}

static json_t *violations_json(const struct sel *s)
{
    json_t *out = json_array();
    for (size_t k = 0; k < s->n; k++)
        for (int v = 0; v < s->items[k].n_viol; v++)
            json_array_append_new(out, json_pack(
                "{s:s,s:s,s:f,s:f}", "id", id_of(&s->items[k]), "constraint",
                s->items[k].viol[v].constraint, "value",
                s->items[k].viol[v].value, "limit", s->items[k].viol[v].limit));
    return out;
}

static json_t *per_config(const struct sel *s)
{
    json_t *out = json_object();
    for (size_t k = 0; k < s->n; k++) {
        struct dlb_sel_item *it = &s->items[k];
        json_t *o = json_object();
        double lo, hi, sp = dlb_sel_speedup(&s->set, it, s->base, &lo, &hi);
        if (sp > 0) {
            json_object_set_new(o, "speedup", json_real(sp));
            json_object_set_new(o, "speedup_ci", json_pack("[f,f]", lo, hi));
        }
        if (s->base && !isnan(s->base->accuracy) && !isnan(it->accuracy))
            json_object_set_new(o, "accuracy_drop",
                                json_real(s->base->accuracy - it->accuracy));
        if (!isnan(it->memory))
            json_object_set_new(o, "peak_memory", json_real(it->memory));
        if (it->ok)
            json_object_set_new(o, "objective", json_pack(
                "{s:f,s:f,s:f}", "median", it->obj, "ci_lo", it->obj_lo,
                "ci_hi", it->obj_hi));
        if (it->cfg && s->base && s->base->cfg)
            json_object_set_new(o, "changes", json_integer(dlb_sel_changes(
                s->plan, it->cfg, s->base->cfg)));
        if (it->round >= 0 && !it->full)
            json_object_set_new(o, "eliminated_in_round", json_integer(it->round));
        json_object_set_new(out, id_of(it), o);
    }
    return out;
}

static int changes(const struct sel *s, const struct dlb_sel_item *it)
{
    const struct dlb_config *b = &s->plan->configs[s->set.baseline];
    return dlb_sel_changes(s->plan, it->cfg, b);
}

/* The tie group of `best`; returns the chosen one: the fewest changes
 * from the baseline, and among as many, the better figure. (Not plan
 * order: on an axis such as a work size the first listed is as likely
 * the slower, and a near-tie there leans the right way more often.) */
static struct dlb_sel_item *pick(struct sel *s, struct dlb_sel_item *best,
                                 json_t *ties, double *p_best)
{
    struct dlb_sel_item *win = best;
    *p_best = NAN;
    for (size_t k = 0; k < s->n; k++) {
        struct dlb_sel_item *it = &s->items[k];
        double p;
        if (it == best || !candidate(s, it) || dlb_sel_differ(&s->set, it, best, &p))
            continue;
        json_array_append_new(ties, json_string(id_of(it)));
        int cw = changes(s, win), ci = changes(s, it);
        if (ci < cw || (ci == cw && better(it, win))) {
            win = it;
            *p_best = p;
        }
    }
    return win;
}

static void why(const struct sel *s, const struct dlb_sel_item *best,
                const struct dlb_sel_item *win, double p, size_t n_viol,
                char *buf, size_t len)
{
    const char *obj = dlb_objective_name(s->set.objective);
    int used = snprintf(buf, len, "%s has the best %s of the configurations "
                        "meeting every constraint", id_of(win), obj);
    if (win != best)
        used = snprintf(buf, len, "%s is tied with the best %s, %s (U test "
                        "p = %.2g or overlapping median intervals), and "
                        "changes %d setting%s of the baseline instead of %d",
                        id_of(win), obj, id_of(best), p, changes(s, win),
                        changes(s, win) == 1 ? "" : "s", changes(s, best));
    if (used > 0 && (size_t)used < len && n_viol)
        snprintf(buf + used, len - (size_t)used, "; %zu configuration%s "
                 "broke a constraint and %s not considered", n_viol,
                 n_viol == 1 ? "" : "s", n_viol == 1 ? "was" : "were");
}

static void no_winner_why(const struct sel *s, size_t n_viol, char *buf,
                          size_t len)
{
    size_t ok = 0;
    for (size_t k = 0; k < s->n; k++)
        ok += s->items[k].ok && s->items[k].full;
    if (!ok)
        snprintf(buf, len, "no configuration ran to completion: nothing to "
                 "choose from");
    else
        snprintf(buf, len, "no configuration meets every constraint: %zu of "
                 "%zu measured break one (see violations); loosen "
                 "accuracy_tolerance or memory_budget, or change the sweep",
                 n_viol, ok);
}

static dlb_status build(struct sel *s, json_t **out)
{
    size_t n_viol = 0;
    struct dlb_sel_item *best = NULL;
    for (size_t k = 0; k < s->n; k++) {
        dlb_sel_item_check(&s->set, &s->items[k], s->base);
        n_viol += s->items[k].n_viol > 0;
        if (candidate(s, &s->items[k]) && (!best || better(&s->items[k], best)))
            best = &s->items[k];
    }
    json_t *sel = json_object(), *ties = json_array();
    struct dlb_sel_item *win = NULL;
    char text[1024];
    double p = NAN;
    if (best) {
        win = pick(s, best, ties, &p);
        why(s, best, win, p, n_viol, text, sizeof text);
    } else {
        no_winner_why(s, n_viol, text, sizeof text);
    }
    json_object_set_new(sel, "objective",
                        json_string(dlb_objective_name(s->set.objective)));
    json_object_set_new(sel, "baseline",
                        json_string(s->plan->configs[s->set.baseline].id));
    json_object_set_new(sel, "winner", win ? json_string(id_of(win)) : json_null());
    json_object_set_new(sel, "winner_index", win ? json_integer(
        (json_int_t)win->cfg->index) : json_null());
    json_object_set_new(sel, "fastest", best ? json_string(id_of(best)) : json_null());
    json_object_set_new(sel, "ties", ties);
    json_object_set_new(sel, "why", json_string(text));
    json_object_set_new(sel, "constraints", json_pack(
        "{s:f,s:f,s:f,s:f}", "max_accuracy_drop", s->set.max_accuracy_drop,
        "memory_budget", s->set.memory_budget, "target_accuracy",
        s->set.target_accuracy, "significance", s->set.significance));
    json_object_set_new(sel, "violations", violations_json(s));
    json_object_set_new(sel, "per_config", per_config(s));
    dlb_sel_add_pareto(sel, s->items, s->n);
    dlb_sel_add_attribution(sel, s->plan, &s->set, s->items, s->n, s->base, win);
    *out = sel;
    return DLB_OK;
}

dlb_status dlb_select(const struct dlb_plan *plan, json_t *records,
                      json_t **selection, struct dlb_error *err)
{
    struct sel s = {plan, {0}, NULL, 0, NULL};
    dlb_status st = dlb_select_settings(plan, &s.set, err);
    if (st != DLB_OK)
        return st;
    s.n = json_array_size(records);
    s.items = calloc(s.n + 1, sizeof *s.items);
    if (!s.items)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < s.n; k++)
        dlb_sel_item_init(plan, &s.set, json_array_get(records, k), &s.items[k]);
    for (size_t k = 0; k < s.n; k++)
        if (s.items[k].cfg && s.items[k].pos == s.set.baseline)
            s.base = &s.items[k];
    st = build(&s, selection);
    for (size_t k = 0; k < s.n; k++)
        dlb_sel_item_free(&s.items[k]);
    free(s.items);
    return st;
}
