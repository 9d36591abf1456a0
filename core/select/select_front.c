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

void dlb_sel_pareto(struct dlb_sel_item *const *items, size_t n, int *on_front)
{
    int final = -1;
    for (size_t k = 0; k < n; k++)
        if (items[k]->round > final)
            final = items[k]->round;
    for (size_t k = 0; k < n; k++) {
        on_front[k] = 0;
        if (!items[k]->ok || items[k]->round != final)
            continue;
        int dominated = 0;
        for (size_t j = 0; j < n && !dominated; j++)
            dominated = j != k && items[j]->ok && items[j]->round == final &&
                        dominates(items[j], items[k]);
        on_front[k] = !dominated;
    }
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

/* A speedup and its interval, each NAN unless JSON can hold it (an
 * interval whole or not at all). */
static void speedup_of(double sp, double lo, double hi, double *v, double *vlo,
                       double *vhi)
{
    *v = *vlo = *vhi = NAN;
    if (!(sp > 0))
        return;
    *v = dlb_sel_fig(sp);
    if (!isnan(dlb_sel_fig(lo)) && !isnan(dlb_sel_fig(hi)))
        *vlo = lo, *vhi = hi;
}

size_t dlb_sel_attribution(struct dlb_sel_attribution *out,
                           struct dlb_strpool *pool, const struct dlb_plan *plan,
                           const struct dlb_select_settings *set,
                           const struct dlb_sel_item *items, size_t n,
                           const struct dlb_sel_item *base,
                           const struct dlb_sel_item *winner)
{
    const struct dlb_suite *s = plan->suite;
    double wlo, whi, wsp = winner ? dlb_sel_speedup(set, winner, base, &wlo, &whi) : 0;
    size_t m = 0;
    for (unsigned ns = 1; ns < s->n_ns; ns++) {
        int k = dlb_param_find(s->ns[ns].defs, s->ns[ns].n, "enable");
        if (k < 0 || !axis_swept(s, ns, k))
            continue;
        const struct dlb_sel_item *it = alone(plan, set->baseline, ns, k,
                                              items, n);
        struct dlb_sel_attribution *o = &out[m++];
        double lo, hi, sp = it ? dlb_sel_speedup(set, it, base, &lo, &hi) : 0;
        o->workload = NULL;
        o->plugin = dlb_strpool_add(pool, s->ns[ns].name);
        o->alone = it ? dlb_strpool_add(pool, it->cfg->id) : NULL;
        speedup_of(sp, lo, hi, &o->speedup_alone, &o->speedup_alone_ci_lo,
                   &o->speedup_alone_ci_hi);
        o->in_winner = winner && winner->cfg ? winner->cfg->values[ns][k].i != 0
                                             : -1;
        speedup_of(wsp, wlo, whi, &o->speedup_winner, &o->speedup_winner_ci_lo,
                   &o->speedup_winner_ci_hi);
    }
    return m;
}
