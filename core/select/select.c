/* Auto-selection: the winner among the configurations that meet every
 * constraint, the ones tied with the fastest, and the sentence saying why,
 * per workload group, built as struct dlb_selection. */
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
    const char **ids;            /* per item: its id, kept in out->strings */
    struct dlb_selection *out;
};

static int candidate(const struct dlb_sel_item *it)
{
    /* halving's screening records do not compete: their budget was cut */
    return it->ok && it->cfg && !it->n_viol && it->full;
}

static int better(const struct dlb_sel_item *a, const struct dlb_sel_item *b)
{
    return a->score > b->score || (a->score == b->score && a->pos < b->pos);
}

static const char *id_of(const struct sel *s, const struct dlb_sel_item *it)
{
    return it ? s->ids[it - s->items] : NULL;
}

static const char *keep(struct sel *s, const char *text)
{
    return dlb_strpool_add(&s->out->strings, text);
}

static struct dlb_sel_item *base_of(const struct sel *s, size_t k)
{
    return s->group[k] < s->groups.n ? s->base[s->group[k]] : NULL;
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

/* The tie group of `best` in group g, into o->ties; returns the chosen
 * one: the fewest changes from the baseline, and among as many, the
 * better figure. (Not plan order: on an axis such as a work size the
 * first listed is as likely the slower, and a near-tie there leans the
 * right way more often.) */
static struct dlb_sel_item *pick(struct sel *s, size_t g,
                                 struct dlb_sel_item *best,
                                 struct dlb_sel_group *o, double *p_best)
{
    struct dlb_sel_item *win = best;
    *p_best = NAN;
    for (size_t k = 0; k < s->n; k++) {
        struct dlb_sel_item *it = &s->items[k];
        double p;
        if (it == best || !in_group(s, k, g) || !candidate(it) ||
            dlb_sel_differ(&s->set, it, best, &p))
            continue;
        if (id_of(s, it))
            o->ties.id[o->ties.n++] = id_of(s, it);
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
    /* "it": the text follows the winner's line, which names it. best is
     * set where a winner is explained; "(none)" keeps a NULL out of the
     * format either way */
    const char *b = id_of(s, best) ? id_of(s, best) : "(none)";
    int used = snprintf(buf, len, "it has the best %s of the configurations "
                        "meeting every constraint", obj);
    if (win != best)
        used = snprintf(buf, len, "it is tied with the best %s, %s (U test "
                        "p = %.2g or overlapping median intervals), and "
                        "changes %d setting%s of the baseline instead of %d",
                        obj, b, p, changes(s, g, win),
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

/* The front among group g's configurations only, into o->pareto. */
static int group_front(struct sel *s, size_t g, struct dlb_sel_group *o)
{
    struct dlb_sel_item **mine = calloc(s->n + 1, sizeof *mine);
    int *on = calloc(s->n + 1, sizeof *on);
    size_t m = 0;
    if (!mine || !on) {
        free(mine);
        free(on);
        return -1;
    }
    for (size_t k = 0; k < s->n; k++)
        if (in_group(s, k, g))
            mine[m++] = &s->items[k];
    dlb_sel_pareto(mine, m, on);
    for (size_t k = 0; k < m; k++)
        if (on[k] && id_of(s, mine[k]))
            o->pareto.id[o->pareto.n++] = id_of(s, mine[k]);
    free(mine);
    free(on);
    return 0;
}

/* One workload's answer: its winner, ties, why and Pareto front. */
static int group(struct sel *s, size_t g, struct dlb_sel_group *o)
{
    size_t n_viol = 0, size = 0;
    struct dlb_sel_item *best = NULL, *win = NULL;
    for (size_t k = 0; k < s->n; k++) {
        if (!in_group(s, k, g))
            continue;
        size++;
        n_viol += s->items[k].n_viol > 0;
        if (candidate(&s->items[k]) && (!best || better(&s->items[k], best)))
            best = &s->items[k];
    }
    o->configs.id = calloc(size + 1, sizeof *o->configs.id);
    o->ties.id = calloc(size + 1, sizeof *o->ties.id);
    o->pareto.id = calloc(size + 1, sizeof *o->pareto.id);
    if (!o->configs.id || !o->ties.id || !o->pareto.id)
        return -1;
    char text[1024];
    double p = NAN;
    if (best) {
        win = pick(s, g, best, o, &p);
        why(s, g, best, win, p, n_viol, text, sizeof text);
    } else {
        no_winner_why(s, g, n_viol, text, sizeof text);
    }
    o->workload = keep(s, s->groups.label[g]);
    for (size_t k = 0; k < s->n; k++)
        if (in_group(s, k, g) && id_of(s, &s->items[k]))
            o->configs.id[o->configs.n++] = id_of(s, &s->items[k]);
    o->baseline = id_of(s, s->base[g]);
    o->winner = id_of(s, win);
    o->winner_index = win ? (long long)win->cfg->index : -1;
    o->fastest = id_of(s, best);
    o->why = keep(s, text);
    if (win)
        o->winner_doubtful_why = dlb_sel_doubtful_why(&s->out->strings, win,
                                                      s->base[g]);
    return group_front(s, g, o);
}

static int append_ids(struct dlb_sel_ids *to, const struct dlb_sel_ids *from)
{
    const char **v = realloc(to->id, (to->n + from->n + 1) * sizeof *v);
    if (!v)
        return -1;
    to->id = v;
    for (size_t i = 0; i < from->n; i++)
        to->id[to->n++] = from->id[i];
    return 0;
}

/* The top level: each group's figures, and for a single workload its
 * winner where readers of earlier results look for it. */
static int top_level(struct sel *s)
{
    struct dlb_selection *o = s->out;
    const struct dlb_sel_group *one = o->n_groups == 1 ? &o->groups[0] : NULL;
    int bad = !(o->winners.id = calloc(o->n_groups + 1, sizeof *o->winners.id)) ||
              !(o->ties.id = calloc(1, sizeof *o->ties.id)) ||
              !(o->pareto.id = calloc(1, sizeof *o->pareto.id));
    for (size_t g = 0; !bad && g < o->n_groups; g++) {
        if (o->groups[g].winner)
            o->winners.id[o->winners.n++] = o->groups[g].winner;
        bad = append_ids(&o->ties, &o->groups[g].ties) ||
              append_ids(&o->pareto, &o->groups[g].pareto);
    }
    o->baseline = keep(s, s->plan->configs[s->set.baseline].id);
    o->winner = one ? one->winner : NULL;
    o->winner_index = one ? one->winner_index : -1;
    o->fastest = one ? one->fastest : NULL;
    if (one) {
        o->why = one->why;
        return bad ? -1 : 0;
    }
    char text[600], keys[400] = "";
    size_t used = 0, nk = s->groups.n_keys;
    for (size_t k = 0; k < nk && used < sizeof keys; k++)
        used += (size_t)snprintf(keys + used, sizeof keys - used, "%s%s",
                                 k ? ", " : "", s->groups.keys[k]);
    snprintf(text, sizeof text, "%zu workloads (%s %s), one winner each "
             "against its own baseline: see groups", o->n_groups, keys,
             nk == 1 ? "differs" : "differ");
    o->why = keep(s, text);
    return bad ? -1 : 0;
}

static int violations(struct sel *s)
{
    size_t n = 0;
    for (size_t k = 0; k < s->n; k++)
        n += (size_t)s->items[k].n_viol;
    struct dlb_selection *o = s->out;
    if (!(o->violations = calloc(n + 1, sizeof *o->violations)))
        return -1;
    for (size_t k = 0; k < s->n; k++)
        for (int v = 0; v < s->items[k].n_viol; v++)
            o->violations[o->n_violations++] = (struct dlb_sel_violation){
                id_of(s, &s->items[k]), s->items[k].viol[v].constraint,
                s->items[k].viol[v].value, s->items[k].viol[v].limit};
    return 0;
}

/* One configuration's figures against its workload's baseline. */
static void config(struct sel *s, size_t k, struct dlb_sel_config *o)
{
    struct dlb_sel_item *it = &s->items[k], *base = base_of(s, k);
    double lo, hi, sp = dlb_sel_speedup(&s->set, it, base, &lo, &hi);
    *o = dlb_sel_config_none;
    o->id = id_of(s, it);
    if (s->group[k] < s->groups.n)
        o->group = (long long)s->group[k];
    o->baseline = id_of(s, base);
    if (sp > 0) {
        o->speedup = dlb_sel_fig(sp);
        /* an interval is written whole or not at all */
        if (!isnan(dlb_sel_fig(lo)) && !isnan(dlb_sel_fig(hi)))
            o->speedup_ci_lo = lo, o->speedup_ci_hi = hi;
    }
    dlb_sel_accuracy_fill(o, &s->out->strings, &s->set, it, base);
    o->doubtful_why = dlb_sel_doubtful_why(&s->out->strings, it, base);
    if (it->cfg && it->trained > 0)
        o->trained_images = dlb_sel_fig(it->trained);
    o->peak_memory = dlb_sel_fig(it->memory);
    if (it->ok && !isnan(dlb_sel_fig(it->obj)) &&
        !isnan(dlb_sel_fig(it->obj_lo)) && !isnan(dlb_sel_fig(it->obj_hi))) {
        o->objective = it->obj;
        o->objective_ci_lo = it->obj_lo;
        o->objective_ci_hi = it->obj_hi;
    }
    if (it->cfg && base && base->cfg)
        o->changes = dlb_sel_changes(s->plan, it->cfg, base->cfg);
    if (it->round >= 0 && !it->full)
        o->eliminated_in_round = it->round;
}

/* Attribution: per workload, against its baseline and winner (the last
 * configuration of the group with the winner's id). */
static int attribution(struct sel *s)
{
    struct dlb_selection *o = s->out;
    size_t per = s->plan->suite->n_ns;
    if (!(o->attribution = calloc(s->groups.n * per + 1, sizeof *o->attribution)))
        return -1;
    for (size_t g = 0; g < s->groups.n; g++) {
        const char *w = o->groups[g].winner;
        struct dlb_sel_item *win = NULL;
        for (size_t k = 0; w && k < s->n; k++)
            if (in_group(s, k, g) && id_of(s, &s->items[k]) &&
                !strcmp(id_of(s, &s->items[k]), w))
                win = &s->items[k];
        if (s->groups.base[g] == DLB_SEL_NO_BASE)
            continue;
        struct dlb_select_settings gs = s->set;
        gs.baseline = s->groups.base[g];
        struct dlb_sel_attribution *part = &o->attribution[o->n_attribution];
        size_t m = dlb_sel_attribution(part, &o->strings, s->plan, &gs, s->items,
                                       s->n, s->base[g], win);
        for (size_t i = 0; i < m; i++)
            part[i].workload = o->groups[g].workload;
        o->n_attribution += m;
    }
    return 0;
}

static dlb_status build(struct sel *s)
{
    struct dlb_selection *o = s->out;
    for (size_t k = 0; k < s->n; k++)
        dlb_sel_item_check(&s->set, &s->items[k], base_of(s, k));
    o->present = 1;
    o->objective = dlb_objective_name(s->set.objective);
    o->workload_axes.id = calloc(s->groups.n_keys + 1, sizeof *o->workload_axes.id);
    o->groups = calloc(s->groups.n + 1, sizeof *o->groups);
    o->configs = calloc(s->n + 1, sizeof *o->configs);
    int bad = !o->workload_axes.id || !o->groups || !o->configs;
    for (size_t k = 0; !bad && k < s->groups.n_keys; k++)
        o->workload_axes.id[o->workload_axes.n++] = keep(s, s->groups.keys[k]);
    for (size_t g = 0; !bad && g < s->groups.n; g++) {
        o->groups[g].winner_index = -1;
        bad = group(s, g, &o->groups[o->n_groups++]);
    }
    bad = bad || top_level(s) || violations(s);
    o->constraints = (struct dlb_sel_constraints){
        s->set.max_accuracy_drop, s->set.memory_budget, s->set.target_accuracy,
        s->set.significance};
    for (size_t k = 0; !bad && k < s->n; k++)
        config(s, k, &o->configs[o->n_configs++]);
    bad = bad || dlb_sel_verdicts(o, s->plan, &s->set, &s->groups, s->items,
                                  s->n, s->base, s->ids) != DLB_OK;
    bad = bad || attribution(s) || dlb_selection_index(o) != DLB_OK;
    return bad || o->strings.nomem ? DLB_ERR_NOMEM : DLB_OK;
}

dlb_status dlb_select(const struct dlb_plan *plan, json_t *records,
                      struct dlb_selection *out, struct dlb_error *err)
{
    struct sel s = {0};
    s.plan = plan;
    s.out = out;
    dlb_selection_init(out);
    dlb_status st = dlb_select_settings(plan, &s.set, err);
    if (st == DLB_OK)
        st = dlb_sel_groups_build(plan, &s.set, &s.groups, err);
    if (st != DLB_OK)
        return st;
    s.n = json_array_size(records);
    s.items = calloc(s.n + 1, sizeof *s.items);
    s.group = calloc(s.n + 1, sizeof *s.group);
    s.ids = calloc(s.n + 1, sizeof *s.ids);
    s.base = calloc(s.groups.n + 1, sizeof *s.base);
    st = s.items && s.group && s.ids && s.base ? DLB_OK : DLB_ERR_NOMEM;
    for (size_t k = 0; st == DLB_OK && k < s.n; k++) {
        struct dlb_sel_item *it = &s.items[k];
        dlb_sel_item_init(plan, &s.set, json_array_get(records, k), it);
        s.ids[k] = dlb_strpool_add(&out->strings, it->r.id);
        s.group[k] = it->cfg ? s.groups.of[it->pos] : s.groups.n;
        if (it->cfg && s.groups.base[s.group[k]] == it->pos)
            s.base[s.group[k]] = it;
    }
    if (st == DLB_OK)
        st = build(&s);
    for (size_t k = 0; s.items && k < s.n; k++)
        dlb_sel_item_free(&s.items[k]);
    free(s.items);
    free(s.group);
    free(s.ids);
    free(s.base);
    dlb_sel_groups_free(&s.groups);
    if (st == DLB_ERR_NOMEM)
        return dlb_errorf(err, st, "out of memory selecting the winner");
    return st;
}
