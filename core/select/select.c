/* Auto-selection: the winner among the configurations that meet every
 * constraint, the ones tied with the fastest, and the sentence saying why. */
#define _POSIX_C_SOURCE 200809L
#include "select/select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select/select_impl.h"

struct sel {
    const struct dlb_plan *plan;
    struct dlb_select_settings set;
    struct dlb_sel_item *items;
    size_t n;
    struct dlb_sel_groups groups;
    struct dlb_sel_item **base;  /* per group: its baseline's item or NULL */
    size_t *group;               /* per item: its group (items off the plan
                                  * get none: groups.n) */
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
    return it->r.id;
}

static struct dlb_sel_item *base_of(const struct sel *s, size_t k)
{
    return s->group[k] < s->groups.n ? s->base[s->group[k]] : NULL;
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

/* The accuracy drop against the baseline with what backs it:
 * "accuracy_drop" (points, mean over paired seeds), "accuracy_drop_ci"
 * (95% half-width), "accuracy_seeds", "accuracy_effect" and
 * "accuracy_within" ("yes", "no", "cannot tell", or "unchecked" when one
 * seed left the training noise unmeasured). */
void dlb_sel_accuracy_json(json_t *o, const struct dlb_select_settings *set,
                           const struct dlb_sel_item *it,
                           const struct dlb_sel_item *base)
{
    if (!base || isnan(base->accuracy) || isnan(it->accuracy))
        return;
    if (it == base) {
        json_object_set_new(o, "accuracy_drop", json_real(0));
        return;
    }
    if (dlb_sel_same_training(it, base)) {
        struct dlb_sel_acc a;
        dlb_sel_accuracy_change(set, it, base, &a);
        json_object_set_new(o, "accuracy_drop", json_real(-a.change));
        if (!isnan(a.half))
            json_object_set_new(o, "accuracy_drop_ci", json_real(a.half));
        json_object_set_new(o, "accuracy_seeds", json_integer((json_int_t)a.seeds));
        json_object_set_new(o, "accuracy_effect",
                            json_string(dlb_sel_accuracy_effect(&a)));
        json_object_set_new(o, "accuracy_within", json_string(
            !a.noise ? "unchecked" : a.within > 0 ? "yes" : a.within < 0 ? "no"
                                                           : "cannot tell"));
        return;
    }
    char note[200];
    snprintf(note, sizeof note, "not compared: trained on %.0f images, its "
             "baseline on %.0f (set train_samples to give every batch size "
             "the same budget)", it->trained, base->trained);
    json_object_set_new(o, "accuracy_note", json_string(note));
}

static json_t *per_config(const struct sel *s)
{
    json_t *out = json_object();
    for (size_t k = 0; k < s->n; k++) {
        struct dlb_sel_item *it = &s->items[k], *base = base_of(s, k);
        json_t *o = json_object();
        double lo, hi, sp = dlb_sel_speedup(&s->set, it, base, &lo, &hi);
        if (s->group[k] < s->groups.n)
            json_object_set_new(o, "group", json_integer((json_int_t)s->group[k]));
        if (base)
            json_object_set_new(o, "baseline", json_string(id_of(base)));
        if (sp > 0) {
            json_object_set_new(o, "speedup", json_real(sp));
            json_object_set_new(o, "speedup_ci", json_pack("[f,f]", lo, hi));
        }
        dlb_sel_accuracy_json(o, &s->set, it, base);
        dlb_sel_doubtful_json(o, "doubtful", it, base);
        if (it->cfg && it->trained > 0)
            json_object_set_new(o, "trained_images", json_real(it->trained));
        if (!isnan(it->memory))
            json_object_set_new(o, "peak_memory", json_real(it->memory));
        if (it->ok)
            json_object_set_new(o, "objective", json_pack(
                "{s:f,s:f,s:f}", "median", it->obj, "ci_lo", it->obj_lo,
                "ci_hi", it->obj_hi));
        if (it->cfg && base && base->cfg)
            json_object_set_new(o, "changes", json_integer(dlb_sel_changes(
                s->plan, it->cfg, base->cfg)));
        if (it->round >= 0 && !it->full)
            json_object_set_new(o, "eliminated_in_round", json_integer(it->round));
        json_object_set_new(out, id_of(it), o);
    }
    return out;
}

static int changes(const struct sel *s, size_t g, const struct dlb_sel_item *it)
{
    const struct dlb_config *b = s->base[g] && s->base[g]->cfg
                                     ? s->base[g]->cfg
                                     : &s->plan->configs[s->set.baseline];
    return dlb_sel_changes(s->plan, it->cfg, b);
}

static int in_group(const struct sel *s, size_t k, size_t g)
{
    return s->group[k] == g;
}

/* The tie group of `best` in group g; returns the chosen one: the fewest
 * changes from the baseline, and among as many, the better figure. (Not
 * plan order: on an axis such as a work size the first listed is as
 * likely the slower, and a near-tie there leans the right way more
 * often.) */
static struct dlb_sel_item *pick(struct sel *s, size_t g,
                                 struct dlb_sel_item *best, json_t *ties,
                                 double *p_best)
{
    struct dlb_sel_item *win = best;
    *p_best = NAN;
    for (size_t k = 0; k < s->n; k++) {
        struct dlb_sel_item *it = &s->items[k];
        double p;
        if (it == best || !in_group(s, k, g) || !candidate(s, it) ||
            dlb_sel_differ(&s->set, it, best, &p))
            continue;
        json_array_append_new(ties, json_string(id_of(it)));
        int cw = changes(s, g, win), ci = changes(s, g, it);
        if (ci < cw || (ci == cw && better(it, win))) {
            win = it;
            *p_best = p;
        }
    }
    return win;
}

static void why(const struct sel *s, size_t g, const struct dlb_sel_item *best,
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
                        id_of(win), obj, id_of(best), p, changes(s, g, win),
                        changes(s, g, win) == 1 ? "" : "s", changes(s, g, best));
    if (used > 0 && (size_t)used < len && n_viol)
        snprintf(buf + used, len - (size_t)used, "; %zu configuration%s "
                 "broke a constraint and %s not considered", n_viol,
                 n_viol == 1 ? "" : "s", n_viol == 1 ? "was" : "were");
}

static void no_winner_why(const struct sel *s, size_t g, size_t n_viol,
                          char *buf, size_t len)
{
    size_t ok = 0;
    for (size_t k = 0; k < s->n; k++)
        ok += in_group(s, k, g) && s->items[k].ok && s->items[k].full;
    if (!ok)
        snprintf(buf, len, "no configuration ran to completion: nothing to "
                 "choose from");
    else
        snprintf(buf, len, "no configuration meets every constraint: %zu of "
                 "%zu measured break one (see violations); loosen "
                 "accuracy_tolerance or memory_budget, or change the sweep",
                 n_viol, ok);
}

static json_t *ids_in_group(const struct sel *s, size_t g)
{
    json_t *out = json_array();
    for (size_t k = 0; k < s->n; k++)
        if (in_group(s, k, g))
            json_array_append_new(out, json_string(id_of(&s->items[k])));
    return out;
}

/* One workload's answer: its winner, ties, why and Pareto front. */
static json_t *group_json(struct sel *s, size_t g)
{
    size_t n_viol = 0;
    struct dlb_sel_item *best = NULL, *win = NULL;
    for (size_t k = 0; k < s->n; k++) {
        if (!in_group(s, k, g))
            continue;
        n_viol += s->items[k].n_viol > 0;
        if (candidate(s, &s->items[k]) && (!best || better(&s->items[k], best)))
            best = &s->items[k];
    }
    json_t *o = json_object(), *ties = json_array();
    char text[1024];
    double p = NAN;
    if (best) {
        win = pick(s, g, best, ties, &p);
        why(s, g, best, win, p, n_viol, text, sizeof text);
    } else {
        no_winner_why(s, g, n_viol, text, sizeof text);
    }
    json_object_set_new(o, "workload", json_string(s->groups.label[g]));
    json_object_set_new(o, "configs", ids_in_group(s, g));
    json_object_set_new(o, "baseline", s->base[g] ? json_string(id_of(s->base[g]))
                                                  : json_null());
    json_object_set_new(o, "winner", win ? json_string(id_of(win)) : json_null());
    json_object_set_new(o, "winner_index", win ? json_integer(
        (json_int_t)win->cfg->index) : json_null());
    json_object_set_new(o, "fastest", best ? json_string(id_of(best)) : json_null());
    json_object_set_new(o, "ties", ties);
    json_object_set_new(o, "why", json_string(text));
    if (win)
        dlb_sel_doubtful_json(o, "winner_doubtful", win, s->base[g]);
    /* the front among this workload's configurations only */
    struct dlb_sel_item *mine = calloc(s->n + 1, sizeof *mine);
    size_t m = 0;
    for (size_t k = 0; mine && k < s->n; k++)
        if (in_group(s, k, g))
            mine[m++] = s->items[k];
    if (mine)
        dlb_sel_add_pareto(o, mine, m);
    free(mine);
    return o;
}

/* The top level: each group's figures, and for a single workload its
 * winner where readers of earlier results look for it. */
static void top_level(struct sel *s, json_t *sel, json_t *groups)
{
    json_t *winners = json_array(), *ties = json_array(), *front = json_array();
    json_t *g, *v;
    size_t i, j;
    json_array_foreach(groups, i, g) {
        if (json_is_string(json_object_get(g, "winner")))
            json_array_append(winners, json_object_get(g, "winner"));
        json_array_extend(ties, json_object_get(g, "ties"));
        json_array_foreach(json_object_get(g, "pareto"), j, v)
            json_array_append(front, v);
    }
    json_t *one = json_array_size(groups) == 1 ? json_array_get(groups, 0) : NULL;
    json_object_set_new(sel, "baseline",
                        json_string(s->plan->configs[s->set.baseline].id));
    json_object_set(sel, "winner", one ? json_object_get(one, "winner") : json_null());
    json_object_set(sel, "winner_index",
                    one ? json_object_get(one, "winner_index") : json_null());
    json_object_set(sel, "fastest", one ? json_object_get(one, "fastest") : json_null());
    if (one) {
        json_object_set(sel, "why", json_object_get(one, "why"));
    } else {
        char text[600], keys[400] = "";
        size_t used = 0, nk = json_array_size(s->groups.keys);
        for (size_t k = 0; k < nk && used < sizeof keys; k++)
            used += (size_t)snprintf(keys + used, sizeof keys - used, "%s%s",
                                     k ? ", " : "", json_string_value(
                                         json_array_get(s->groups.keys, k)));
        snprintf(text, sizeof text, "%zu workloads (%s %s), one winner each "
                 "against its own baseline: see groups", json_array_size(groups),
                 keys, nk == 1 ? "differs" : "differ");
        json_object_set_new(sel, "why", json_string(text));
    }
    json_object_set_new(sel, "winners", winners);
    json_object_set_new(sel, "ties", ties);
    json_object_set_new(sel, "pareto", front);
}

static dlb_status build(struct sel *s, json_t **out)
{
    for (size_t k = 0; k < s->n; k++)
        dlb_sel_item_check(&s->set, &s->items[k], base_of(s, k));
    json_t *sel = json_object(), *groups = json_array();
    json_object_set_new(sel, "objective",
                        json_string(dlb_objective_name(s->set.objective)));
    json_object_set(sel, "workload_axes", s->groups.keys);
    for (size_t g = 0; g < s->groups.n; g++)
        json_array_append_new(groups, group_json(s, g));
    top_level(s, sel, groups);
    json_object_set_new(sel, "groups", groups);
    json_object_set_new(sel, "constraints", json_pack(
        "{s:f,s:f,s:f,s:f}", "max_accuracy_drop", s->set.max_accuracy_drop,
        "memory_budget", s->set.memory_budget, "target_accuracy",
        s->set.target_accuracy, "significance", s->set.significance));
    json_object_set_new(sel, "violations", violations_json(s));
    json_object_set_new(sel, "per_config", per_config(s));
    dlb_sel_add_verdicts(sel, s->plan, &s->set, &s->groups, s->items, s->n,
                         s->base);
    /* attribution: per workload, against its baseline and winner */
    json_t *attr = json_array();
    for (size_t g = 0; g < s->groups.n; g++) {
        json_t *gj = json_array_get(groups, g), *part = json_object(), *a;
        const char *w = json_string_value(json_object_get(gj, "winner"));
        struct dlb_sel_item *win = NULL;
        size_t i;
        for (size_t k = 0; w && k < s->n; k++)
            if (in_group(s, k, g) && !strcmp(id_of(&s->items[k]), w))
                win = &s->items[k];
        struct dlb_select_settings gs = s->set;
        if (s->groups.base[g] == DLB_SEL_NO_BASE) {
            json_decref(part);
            continue;
        }
        gs.baseline = s->groups.base[g];
        dlb_sel_add_attribution(part, s->plan, &gs, s->items, s->n,
                                s->base[g], win);
        json_array_foreach(json_object_get(part, "attribution"), i, a) {
            json_object_set_new(a, "workload", json_string(s->groups.label[g]));
            json_array_append(attr, a);
        }
        json_decref(part);
    }
    json_object_set_new(sel, "attribution", attr);
    *out = sel;
    return DLB_OK;
}

dlb_status dlb_select(const struct dlb_plan *plan, json_t *records,
                      json_t **selection, struct dlb_error *err)
{
    struct sel s = {0};
    s.plan = plan;
    dlb_status st = dlb_select_settings(plan, &s.set, err);
    if (st == DLB_OK)
        st = dlb_sel_groups_build(plan, &s.set, &s.groups, err);
    if (st != DLB_OK)
        return st;
    s.n = json_array_size(records);
    s.items = calloc(s.n + 1, sizeof *s.items);
    s.group = calloc(s.n + 1, sizeof *s.group);
    s.base = calloc(s.groups.n + 1, sizeof *s.base);
    if (!s.items || !s.group || !s.base) {
        free(s.items);
        free(s.group);
        free(s.base);
        dlb_sel_groups_free(&s.groups);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < s.n; k++) {
        struct dlb_sel_item *it = &s.items[k];
        dlb_sel_item_init(plan, &s.set, json_array_get(records, k), it);
        s.group[k] = it->cfg ? s.groups.of[it->pos] : s.groups.n;
        if (it->cfg && s.groups.base[s.group[k]] == it->pos)
            s.base[s.group[k]] = it;
    }
    st = build(&s, selection);
    for (size_t k = 0; k < s.n; k++)
        dlb_sel_item_free(&s.items[k]);
    free(s.items);
    free(s.group);
    free(s.base);
    dlb_sel_groups_free(&s.groups);
    return st;
}
