/* The Pareto front over throughput, accuracy and peak memory, and the
 * attribution of a combined suite's speedup to each plugin. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>

#include "suite/param.h"
#include "select/select_impl.h"

/* A missing figure is the worst value, so it never makes a point win. */
static double acc(const struct dlb_sel_item *it)
{
    return isnan(it->accuracy) ? -INFINITY : it->accuracy;
}

static double mem(const struct dlb_sel_item *it)
{
    return isnan(it->memory) ? INFINITY : it->memory;
}

static int dominates(const struct dlb_sel_item *a, const struct dlb_sel_item *b)
{
    int ge = a->throughput >= b->throughput && acc(a) >= acc(b) &&
             mem(a) <= mem(b);
    int gt = a->throughput > b->throughput || acc(a) > acc(b) ||
             mem(a) < mem(b);
    return ge && gt;
}

void dlb_sel_add_pareto(json_t *sel, struct dlb_sel_item *items, size_t n)
{
    int final = -1;
    for (size_t k = 0; k < n; k++)
        if (items[k].round > final)
            final = items[k].round;
    json_t *front = json_array();
    for (size_t k = 0; k < n; k++) {
        if (!items[k].ok || items[k].round != final)
            continue;
        int dominated = 0;
        for (size_t j = 0; j < n && !dominated; j++)
            dominated = j != k && items[j].ok && items[j].round == final &&
                        dominates(&items[j], &items[k]);
        if (!dominated)
            json_array_append_new(front, json_string(items[k].r.id));
    }
    json_object_set_new(sel, "pareto", front);
}

/* Plugin `ns` alone: the best measured configuration with the plugin
 * enabled and every other plugin's and the core's axes at the baseline's
 * values (the plugin's own settings may vary). NULL when none ran. */
static const struct dlb_sel_item *alone(const struct dlb_plan *plan,
                                        size_t base, unsigned ns, int enable_k,
                                        const struct dlb_sel_item *items,
                                        size_t n)
{
    const struct dlb_config *b = &plan->configs[base];
    const struct dlb_suite *s = plan->suite;
    const struct dlb_sel_item *best = NULL;
    for (size_t j = 0; j < n; j++) {
        const struct dlb_config *x = items[j].cfg;
        if (!x || !items[j].ok || x->values[ns][enable_k].i != 1)
            continue;
        int same = 1;
        for (size_t a = 0; a < s->n_axes && same; a++) {
            struct dlb_keyref r = s->axes[a].ref;
            same = r.ns == ns ||
                   !strcmp(x->values[r.ns][r.param].s, b->values[r.ns][r.param].s);
        }
        if (same && (!best || items[j].score > best->score))
            best = &items[j];
    }
    return best;
}

static int axis_swept(const struct dlb_suite *s, unsigned ns, int k)
{
    for (size_t a = 0; a < s->n_axes; a++)
        if (s->axes[a].ref.ns == ns && (int)s->axes[a].ref.param == k &&
            s->axes[a].n > 1)
            return 1;
    return 0;
}

void dlb_sel_add_attribution(json_t *sel, const struct dlb_plan *plan,
                             const struct dlb_select_settings *set,
                             struct dlb_sel_item *items, size_t n,
                             const struct dlb_sel_item *base,
                             const struct dlb_sel_item *winner)
{
    json_t *out = json_array();
    const struct dlb_suite *s = plan->suite;
    double wlo, whi, wsp = winner ? dlb_sel_speedup(set, winner, base, &wlo, &whi) : 0;
    for (unsigned ns = 1; ns < s->n_ns; ns++) {
        int k = dlb_param_find(s->ns[ns].defs, s->ns[ns].n, "enable");
        if (k < 0 || !axis_swept(s, ns, k))
            continue;
        const struct dlb_sel_item *it = alone(plan, set->baseline, ns, k,
                                              items, n);
        json_t *o = json_pack("{s:s}", "plugin", s->ns[ns].name);
        double lo, hi, sp = it ? dlb_sel_speedup(set, it, base, &lo, &hi) : 0;
        if (it)
            json_object_set_new(o, "alone", json_string(it->cfg->id));
        if (sp > 0) {
            json_object_set_new(o, "speedup_alone", json_real(sp));
            json_object_set_new(o, "speedup_alone_ci", json_pack("[f,f]", lo, hi));
        }
        if (winner && winner->cfg)
            json_object_set_new(o, "in_winner",
                                json_boolean(winner->cfg->values[ns][k].i != 0));
        if (wsp > 0) {
            json_object_set_new(o, "speedup_winner", json_real(wsp));
            json_object_set_new(o, "speedup_winner_ci", json_pack("[f,f]", wlo, whi));
        }
        json_array_append_new(out, o);
    }
    json_object_set_new(sel, "attribution", out);
}
