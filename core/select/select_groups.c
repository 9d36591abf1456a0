/* The plan's configurations grouped by workload, each group with its own
 * baseline: the selection answers one question per workload (does bf16
 * pay off on vgg-small at batch 256?) and never compares across them (a
 * LeNet row against a vgg-small one, or two batch sizes trained for as
 * many steps). */
#define _POSIX_C_SOURCE 200809L
#include "select/select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/param.h"
#include "results/selection.h"

int dlb_sel_is_workload(const struct dlb_select_settings *set, unsigned ns,
                        unsigned k)
{
    for (size_t i = 0; i < set->n_workload; i++)
        if (set->workload[i].ns == ns && set->workload[i].param == k)
            return 1;
    return 0;
}

/* A budget in images (train_samples) sets train_steps per batch size:
 * train_steps then follows the batch and says nothing of its own. */
static int derived(const struct dlb_config *c, unsigned ns, unsigned k)
{
    return ns == 0 && k == DLB_KEY_train_steps && c->core.train_samples > 0;
}

/* Whether a and b hold the same values on the workload keys (`workload`
 * 1) or on every other key (0). */
static int same_on(const struct dlb_plan *p,
                   const struct dlb_select_settings *set,
                   const struct dlb_config *a, const struct dlb_config *b,
                   int workload)
{
    const struct dlb_suite *s = p->suite;
    for (unsigned ns = 0; ns < s->n_ns; ns++)
        for (unsigned k = 0; k < s->ns[ns].n; k++) {
            if (dlb_sel_is_workload(set, ns, k) != workload ||
                (workload && (derived(a, ns, k) || derived(b, ns, k))))
                continue;
            if (strcmp(a->values[ns][k].s, b->values[ns][k].s) != 0)
                return 0;
        }
    return 1;
}

int dlb_sel_same_settings(const struct dlb_plan *p,
                          const struct dlb_select_settings *set,
                          const struct dlb_config *a, const struct dlb_config *b)
{
    return same_on(p, set, a, b, 0);
}

/* The workload keys whose values vary across the plan, named as in a
 * configuration id, into names[] (set->n_workload of them at most);
 * 0 when out of memory. */
static int varying_keys(const struct dlb_plan *p,
                        const struct dlb_select_settings *set,
                        struct dlb_keyref *refs, char **names, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < set->n_workload; i++) {
        struct dlb_keyref r = set->workload[i];
        int varies = 0;
        for (size_t c = 1; c < p->n && !varies; c++)
            varies = !derived(&p->configs[c], r.ns, r.param) &&
                     strcmp(p->configs[c].values[r.ns][r.param].s,
                            p->configs[0].values[r.ns][r.param].s) != 0;
        if (!varies)
            continue;
        char name[256];
        dlb_suite_key_name(p->suite, r, name, sizeof name);
        if (!(names[*n] = strdup(name)))
            return 0;
        refs[(*n)++] = r;
    }
    return 1;
}

static char *label_of(const struct dlb_plan *p, const struct dlb_config *c,
                      const struct dlb_keyref *refs, size_t n)
{
    size_t len = 1;
    char name[256];
    for (size_t i = 0; i < n; i++) {
        dlb_suite_key_name(p->suite, refs[i], name, sizeof name);
        len += strlen(name) + strlen(c->values[refs[i].ns][refs[i].param].s) + 2;
    }
    char *out = malloc(len), *at = out;
    if (!out)
        return NULL;
    *out = '\0';
    for (size_t i = 0; i < n; i++) {
        dlb_suite_key_name(p->suite, refs[i], name, sizeof name);
        at += sprintf(at, "%s%s=%s", i ? " " : "", name,
                      c->values[refs[i].ns][refs[i].param].s);
    }
    return out;
}

dlb_status dlb_sel_groups_build(const struct dlb_plan *p,
                                const struct dlb_select_settings *set,
                                struct dlb_sel_groups *g,
                                struct dlb_error *err)
{
    memset(g, 0, sizeof *g);
    size_t n = p->n ? p->n : 1, n_refs = 0;
    struct dlb_keyref refs[DLB_SEL_MAX_WORKLOAD];
    size_t *first = malloc(n * sizeof *first); /* a group's first config */
    g->of = malloc(n * sizeof *g->of);
    g->base = malloc(n * sizeof *g->base);
    g->label = calloc(n, sizeof *g->label);
    g->keys = calloc(set->n_workload + 1, sizeof *g->keys);
    int bad = !first || !g->of || !g->base || !g->label || !g->keys ||
              !varying_keys(p, set, refs, g->keys, &n_refs);
    g->n_keys = n_refs;
    const struct dlb_config *suite_base = p->n ? &p->configs[set->baseline] : NULL;
    for (size_t c = 0; c < p->n && !bad; c++) {
        size_t k = 0;
        while (k < g->n && !same_on(p, set, &p->configs[first[k]],
                                    &p->configs[c], 1))
            k++;
        if (k == g->n) {
            first[g->n] = c;
            g->base[g->n] = DLB_SEL_NO_BASE;
            g->label[g->n] = label_of(p, &p->configs[c], refs, n_refs);
            bad = !g->label[g->n++];
        }
        g->of[c] = k;
        if (g->base[k] == DLB_SEL_NO_BASE &&
            same_on(p, set, &p->configs[c], suite_base, 0))
            g->base[k] = c;
    }
    free(first);
    if (bad) {
        dlb_sel_groups_free(g);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    return DLB_OK;
}

void dlb_sel_groups_free(struct dlb_sel_groups *g)
{
    for (size_t k = 0; g->label && k < g->n; k++)
        free(g->label[k]);
    free(g->label);
    free(g->of);
    free(g->base);
    for (size_t k = 0; g->keys && k < g->n_keys; k++)
        free(g->keys[k]);
    free(g->keys);
    memset(g, 0, sizeof *g);
}

int dlb_select_complete(const struct dlb_selection *sel)
{
    int done = sel->n_groups ? 1 : sel->winner != NULL;
    for (size_t i = 0; i < sel->n_groups; i++)
        done &= sel->groups[i].winner != NULL;
    return done;
}
