/* A selection's life and lookups (results/selection.h): made empty,
 * indexed by configuration id, freed. */
#define _POSIX_C_SOURCE 200809L
#include "results/selection.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void dlb_selection_init(struct dlb_selection *s)
{
    memset(s, 0, sizeof *s);
    s->winner_index = -1;
    s->constraints = (struct dlb_sel_constraints){NAN, NAN, NAN, NAN};
}

const struct dlb_sel_config dlb_sel_config_none = {
    .group = -1, .changes = -1, .eliminated_in_round = -1,
    .speedup = NAN, .speedup_ci_lo = NAN, .speedup_ci_hi = NAN,
    .accuracy_drop = NAN, .accuracy_drop_ci = NAN, .accuracy_seeds = NAN,
    .trained_images = NAN, .peak_memory = NAN, .objective = NAN,
    .objective_ci_lo = NAN, .objective_ci_hi = NAN};

static int by_id(const void *a, const void *b)
{
    const struct dlb_sel_config *x = *(const struct dlb_sel_config *const *)a;
    const struct dlb_sel_config *y = *(const struct dlb_sel_config *const *)b;
    int c = strcmp(x->id, y->id);
    /* equal ids in their order, so that a lookup finds the last */
    return c ? c : (x > y) - (x < y);
}

dlb_status dlb_selection_index(struct dlb_selection *s)
{
    free(s->by_id);
    s->by_id = calloc(s->n_configs + 1, sizeof *s->by_id);
    if (!s->by_id)
        return DLB_ERR_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < s->n_configs; i++)
        if (s->configs[i].id)
            s->by_id[n++] = &s->configs[i];
    qsort(s->by_id, n, sizeof *s->by_id, by_id);
    s->n_by_id = n;
    return DLB_OK;
}

const struct dlb_sel_config *dlb_selection_config(const struct dlb_selection *s,
                                                  const char *id)
{
    size_t lo = 0, hi = s->n_by_id;
    /* the first entry past every one <= id: the last of that id */
    while (id && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->by_id[mid]->id, id) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (id && lo > 0 && !strcmp(s->by_id[lo - 1]->id, id))
        return s->by_id[lo - 1];
    return &dlb_sel_config_none;
}

void dlb_selection_free(struct dlb_selection *s)
{
    for (size_t i = 0; s->groups && i < s->n_groups; i++) {
        free(s->groups[i].configs.id);
        free(s->groups[i].ties.id);
        free(s->groups[i].pareto.id);
    }
    for (size_t i = 0; s->verdicts && i < s->n_verdicts; i++)
        free(s->verdicts[i].rows);
    free(s->groups);
    free(s->verdicts);
    free(s->violations);
    free(s->configs);
    free(s->attribution);
    free(s->workload_axes.id);
    free(s->winners.id);
    free(s->ties.id);
    free(s->pareto.id);
    free(s->by_id);
    dlb_strpool_free(&s->strings);
    json_decref(s->json);
    dlb_selection_init(s);
}

int dlb_sel_ids_has(const struct dlb_sel_ids *ids, const char *id)
{
    for (size_t i = 0; id && i < ids->n; i++)
        if (!strcmp(ids->id[i], id))
            return 1;
    return 0;
}

struct dlb_sel_group dlb_selection_top(const struct dlb_selection *s)
{
    struct dlb_sel_group g;
    memset(&g, 0, sizeof g);
    g.baseline = s->baseline;
    g.winner = s->winner;
    g.fastest = s->fastest;
    g.why = s->why;
    g.winner_index = s->winner_index;
    g.ties = s->ties;
    g.pareto = s->pareto;
    return g;
}
