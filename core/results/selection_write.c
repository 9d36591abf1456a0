/* The one writer of the selection's JSON (results.json's "selection"):
 * members in the order doc/results-schema.md lists them, which is the
 * order results files have always had; an absent figure (NAN) or string
 * (NULL) is left out, but for the members that say "none" with null. */
#define _POSIX_C_SOURCE 200809L
#include "results/selection.h"

#include <math.h>

/* Setting a NULL value (a figure jansson refuses: NAN, inf) leaves the
 * member out, as it always did. */
static void put(json_t *o, const char *key, json_t *v)
{
    if (v)
        json_object_set_new(o, key, v);
}

static void put_str(json_t *o, const char *key, const char *s)
{
    if (s)
        put(o, key, json_string(s));
}

static void put_num(json_t *o, const char *key, double v)
{
    if (!isnan(v))
        put(o, key, json_real(v));
}

static void put_count(json_t *o, const char *key, long long v)
{
    if (v >= 0)
        put(o, key, json_integer((json_int_t)v));
}

/* [lo, hi], only with both figures. */
static void put_pair(json_t *o, const char *key, double lo, double hi)
{
    if (!isnan(lo) || !isnan(hi))
        put(o, key, json_pack("[f,f]", lo, hi));
}

/* `key`: true and `key`_why, when there is a reason to doubt. */
static void put_doubt(json_t *o, const char *key, const char *why)
{
    char name[64];
    if (!why)
        return;
    put(o, key, json_true());
    snprintf(name, sizeof name, "%s_why", key);
    put_str(o, name, why);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *ids(const struct dlb_sel_ids *v)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < v->n; i++)
        json_array_append_new(a, json_string(v->id[i]));
    return a;
}

static json_t *group(const struct dlb_sel_group *g)
{
    json_t *o = json_object();
    put(o, "workload", json_string(g->workload ? g->workload : ""));
    put(o, "configs", ids(&g->configs));
    put(o, "baseline", str_or_null(g->baseline));
    put(o, "winner", str_or_null(g->winner));
    put(o, "winner_index", g->winner_index >= 0
                               ? json_integer((json_int_t)g->winner_index)
                               : json_null());
    put(o, "fastest", str_or_null(g->fastest));
    put(o, "ties", ids(&g->ties));
    put_str(o, "why", g->why);
    put_doubt(o, "winner_doubtful", g->winner_doubtful_why);
    put(o, "pareto", ids(&g->pareto));
    return o;
}

static json_t *config(const struct dlb_sel_config *c)
{
    json_t *o = json_object();
    put_count(o, "group", c->group);
    put_str(o, "baseline", c->baseline);
    put_num(o, "speedup", c->speedup);
    put_pair(o, "speedup_ci", c->speedup_ci_lo, c->speedup_ci_hi);
    put_num(o, "accuracy_drop", c->accuracy_drop);
    put_num(o, "accuracy_drop_ci", c->accuracy_drop_ci);
    if (!isnan(c->accuracy_seeds))
        put(o, "accuracy_seeds", json_integer((json_int_t)c->accuracy_seeds));
    put_str(o, "accuracy_effect", c->accuracy_effect);
    put_str(o, "accuracy_within", c->accuracy_within);
    put_str(o, "accuracy_note", c->accuracy_note);
    put_doubt(o, "doubtful", c->doubtful_why);
    put_num(o, "trained_images", c->trained_images);
    put_num(o, "peak_memory", c->peak_memory);
    if (!isnan(c->objective))
        put(o, "objective", json_pack("{s:f,s:f,s:f}", "median", c->objective,
                                      "ci_lo", c->objective_ci_lo, "ci_hi",
                                      c->objective_ci_hi));
    put_count(o, "changes", c->changes);
    put_count(o, "eliminated_in_round", c->eliminated_in_round);
    return o;
}

static json_t *verdict_row(const struct dlb_sel_verdict_row *r)
{
    json_t *o = json_object();
    put_str(o, "workload", r->workload);
    put_str(o, "id", r->id);
    put_str(o, "baseline", r->baseline);
    put_num(o, "speedup", r->speedup);
    put_pair(o, "speedup_ci", r->speedup_ci_lo, r->speedup_ci_hi);
    put_doubt(o, "doubtful", r->doubtful_why);
    put_num(o, "accuracy_change", r->accuracy_change);
    put_num(o, "accuracy_ci", r->accuracy_ci);
    if (!isnan(r->accuracy_seeds))
        put(o, "accuracy_seeds", json_integer((json_int_t)r->accuracy_seeds));
    put_str(o, "accuracy_effect", r->accuracy_effect);
    put_str(o, "accuracy_note", r->accuracy_note);
    put_num(o, "memory_change", r->memory_change);
    put_str(o, "verdict", r->verdict);
    put_str(o, "why", r->why);
    return o;
}

static json_t *verdict(const struct dlb_sel_verdict *v)
{
    json_t *o = json_object(), *rows = json_array();
    put_str(o, "setting", v->setting);
    for (size_t i = 0; rows && i < v->n_rows; i++)
        json_array_append_new(rows, verdict_row(&v->rows[i]));
    put(o, "workloads", rows);
    put_doubt(o, "doubtful", v->doubtful_why);
    put_str(o, "verdict", v->verdict);
    put_str(o, "summary", v->summary);
    return o;
}

static json_t *attribution(const struct dlb_sel_attribution *a)
{
    json_t *o = json_object();
    put_str(o, "plugin", a->plugin);
    put_str(o, "alone", a->alone);
    put_num(o, "speedup_alone", a->speedup_alone);
    put_pair(o, "speedup_alone_ci", a->speedup_alone_ci_lo, a->speedup_alone_ci_hi);
    if (a->in_winner >= 0)
        put(o, "in_winner", json_boolean(a->in_winner));
    put_num(o, "speedup_winner", a->speedup_winner);
    put_pair(o, "speedup_winner_ci", a->speedup_winner_ci_lo,
             a->speedup_winner_ci_hi);
    put_str(o, "workload", a->workload);
    return o;
}

json_t *dlb_selection_write(const struct dlb_selection *s)
{
    json_t *o = json_object(), *a;
    if (!o)
        return NULL;
    put_str(o, "objective", s->objective);
    put(o, "workload_axes", ids(&s->workload_axes));
    put(o, "baseline", str_or_null(s->baseline));
    put(o, "winner", str_or_null(s->winner));
    put(o, "winner_index", s->winner_index >= 0
                               ? json_integer((json_int_t)s->winner_index)
                               : json_null());
    put(o, "fastest", str_or_null(s->fastest));
    put_str(o, "why", s->why);
    put(o, "winners", ids(&s->winners));
    put(o, "ties", ids(&s->ties));
    put(o, "pareto", ids(&s->pareto));
    put(o, "groups", a = json_array());
    for (size_t i = 0; a && i < s->n_groups; i++)
        json_array_append_new(a, group(&s->groups[i]));
    const struct dlb_sel_constraints *c = &s->constraints;
    put(o, "constraints", json_pack("{s:f,s:f,s:f,s:f}", "max_accuracy_drop",
                                    c->max_accuracy_drop, "memory_budget",
                                    c->memory_budget, "target_accuracy",
                                    c->target_accuracy, "significance",
                                    c->significance));
    put(o, "violations", a = json_array());
    for (size_t i = 0; a && i < s->n_violations; i++) {
        const struct dlb_sel_violation *v = &s->violations[i];
        json_array_append_new(a, json_pack("{s:s,s:s,s:f,s:f}", "id", v->id,
                                           "constraint", v->constraint, "value",
                                           v->value, "limit", v->limit));
    }
    put(o, "per_config", a = json_object());
    for (size_t i = 0; a && i < s->n_configs; i++)
        if (s->configs[i].id)
            json_object_set_new(a, s->configs[i].id, config(&s->configs[i]));
    put(o, "verdicts", a = json_array());
    for (size_t i = 0; a && i < s->n_verdicts; i++)
        json_array_append_new(a, verdict(&s->verdicts[i]));
    put(o, "attribution", a = json_array());
    for (size_t i = 0; a && i < s->n_attribution; i++)
        json_array_append_new(a, attribution(&s->attribution[i]));
    return o;
}
