/* Pass 3 of the suite loader: every key resolved, typed and validated;
 * fixed values, sweep axes, filters and [quick] overrides collected. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/param.h"
#include "suite/suite_load.h"

dlb_status dlb_suite_alloc_claims(struct dlb_suite_loader *L)
{
    unsigned total = 0;
    L->ns_base = malloc(L->s->n_ns * sizeof *L->ns_base);
    if (!L->ns_base)
        return dlb_suite_fail_at(L, 0, DLB_ERR_NOMEM, "out of memory");
    for (unsigned k = 0; k < L->s->n_ns; k++) {
        L->ns_base[k] = total;
        total += L->s->ns[k].n;
    }
    L->claimed = calloc(total, sizeof *L->claimed);
    L->claimed_quick = calloc(total, sizeof *L->claimed_quick);
    if (!L->claimed || !L->claimed_quick)
        return dlb_suite_fail_at(L, 0, DLB_ERR_NOMEM, "out of memory");
    return DLB_OK;
}

/* A key may be set once: as a fixed value or as a sweep axis. */
static dlb_status claim(struct dlb_suite_loader *L, int *table,
                        struct dlb_keyref ref, const char *key, int line)
{
    int *slot = &table[L->ns_base[ref.ns] + ref.param];
    if (*slot)
        return dlb_suite_fail_at(L, line, DLB_ERR_INPUT,
                                 "duplicate key '%s': already set at line %d",
                                 key, *slot);
    *slot = line;
    return DLB_OK;
}

static dlb_status add_setting(struct dlb_suite_loader *L,
                              struct dlb_setting **v, size_t *n,
                              struct dlb_keyref ref, char *text, int line)
{
    struct dlb_setting *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv) {
        free(text);
        return dlb_suite_fail_at(L, line, DLB_ERR_NOMEM, "out of memory");
    }
    *v = nv;
    nv[(*n)++] = (struct dlb_setting){ref, text, line};
    return DLB_OK;
}

static dlb_status add_axis(struct dlb_suite_loader *L, struct dlb_axis **v,
                           size_t *n, struct dlb_keyref ref, char **items,
                           size_t n_items, int line)
{
    struct dlb_axis *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv) {
        dlb_strv_free(items, n_items);
        return dlb_suite_fail_at(L, line, DLB_ERR_NOMEM, "out of memory");
    }
    *v = nv;
    nv[(*n)++] = (struct dlb_axis){ref, items, n_items, line};
    return DLB_OK;
}

/* A fixed `key = value`: [suite], a plugin's section, or [quick]. */
static dlb_status fixed_value(struct dlb_suite_loader *L,
                              const struct dlb_suite_entry *e,
                              struct dlb_keyref ref, const char *key, int quick)
{
    struct dlb_value v;
    char why[512];
    const struct dlb_param_def *d = &L->s->ns[ref.ns].defs[ref.param];
    if (dlb_param_parse(d, e->value, &v, why, sizeof why) != DLB_OK)
        return dlb_suite_fail_at(L, e->line, DLB_ERR_INPUT, "%s: %s", key, why);
    if (claim(L, quick ? L->claimed_quick : L->claimed, ref, key, e->line)) {
        dlb_value_clear(&v);
        return L->st;
    }
    if (quick)
        return add_setting(L, &L->s->quick, &L->s->n_quick, ref, (char *)v.s,
                           e->line);
    return add_setting(L, &L->s->fixed, &L->s->n_fixed, ref, (char *)v.s,
                       e->line);
}

/* A list in [sweep] or [quick]; a single value in [quick] is a fixed one. */
static dlb_status list_value(struct dlb_suite_loader *L,
                             const struct dlb_suite_entry *e,
                             struct dlb_keyref ref, const char *key, int quick)
{
    const struct dlb_param_def *d = &L->s->ns[ref.ns].defs[ref.param];
    if (d->flags & DLB_PARAM_NO_SWEEP) {
        if (quick)
            return fixed_value(L, e, ref, key, 1);
        return dlb_suite_fail_at(L, e->line, DLB_ERR_INPUT,
                                 "%s cannot be a sweep axis; set it in [%s]",
                                 key, L->s->ns[ref.ns].name);
    }
    char **items;
    size_t n;
    char why[512];
    if (dlb_axis_expand(d, e->value, &items, &n, why, sizeof why) != DLB_OK)
        return dlb_suite_fail_at(L, e->line, DLB_ERR_INPUT, "%s: %s", key, why);
    if (quick && n == 1) {
        dlb_strv_free(items, n);
        return fixed_value(L, e, ref, key, 1);
    }
    if (claim(L, quick ? L->claimed_quick : L->claimed, ref, key, e->line)) {
        dlb_strv_free(items, n);
        return L->st;
    }
    if (quick)
        return add_axis(L, &L->s->quick_axes, &L->s->n_quick_axes, ref, items,
                        n, e->line);
    return add_axis(L, &L->s->axes, &L->s->n_axes, ref, items, n, e->line);
}

static dlb_status resolve_at(struct dlb_suite_loader *L,
                             const struct dlb_suite_entry *e,
                             struct dlb_keyref *ref)
{
    struct dlb_error inner = {""};
    dlb_status st = dlb_suite_resolve_key(L->s, e->key, ref, &inner);
    if (st != DLB_OK)
        return dlb_suite_fail_at(L, e->line, st, "[%s] %s", e->section,
                                 inner.msg);
    return DLB_OK;
}

/* A key of [suite] or of a plugin's own section: names without a prefix. */
static dlb_status section_key(struct dlb_suite_loader *L,
                              const struct dlb_suite_entry *e, unsigned ns)
{
    const struct dlb_ns *n = &L->s->ns[ns];
    int k = dlb_param_find(n->defs, n->n, e->key);
    if (k < 0) {
        const char **names = malloc(n->n * sizeof *names);
        if (!names)
            return dlb_suite_fail_at(L, e->line, DLB_ERR_NOMEM,
                                     "out of memory");
        for (unsigned j = 0; j < n->n; j++)
            names[j] = n->defs[j].name;
        const char *best = dlb_suggest(e->key, names, n->n);
        if (best)
            dlb_suite_fail_at(L, e->line, DLB_ERR_INPUT,
                              "[%s] unknown key '%s' (did you mean '%s'?)",
                              e->section, e->key, best);
        else if (strchr(e->key, '.'))
            dlb_suite_fail_at(L, e->line, DLB_ERR_INPUT,
                              "[%s] unknown key '%s'; PLUGIN.key names belong "
                              "in [sweep] or [quick]",
                              e->section, e->key);
        else
            dlb_suite_fail_at(L, e->line, DLB_ERR_INPUT,
                              "[%s] unknown key '%s'", e->section, e->key);
        free(names);
        return L->st;
    }
    char key[256];
    dlb_suite_key_name(L->s, (struct dlb_keyref){ns, (unsigned)k}, key,
                       sizeof key);
    return fixed_value(L, e, (struct dlb_keyref){ns, (unsigned)k}, key, 0);
}

dlb_status dlb_suite_check_entry(struct dlb_suite_loader *L,
                                 const struct dlb_suite_entry *e)
{
    struct dlb_keyref ref;
    char key[256];
    int sweep = !strcmp(e->section, "sweep");
    int quick = !strcmp(e->section, "quick");
    /* The launcher is a program dlbench runs: it belongs to the machine
     * and its user, never to a suite file someone may hand over (issue
     * #9: a suite names plugins, not programs or paths). */
    if ((sweep || quick || !strcmp(e->section, "suite")) &&
        !strcmp(e->key, "launcher"))
        return dlb_suite_fail_at(L, e->line, DLB_ERR_INPUT,
                                 "[%s] launcher: a suite cannot name a program "
                                 "to run; give it on the command line "
                                 "(--launcher \"srun -n {ranks}\") or in "
                                 "DLBENCH_LAUNCHER", e->section);
    if (!strcmp(e->section, "suite"))
        return section_key(L, e, 0);
    if (sweep && (!strcmp(e->key, "skip") || !strcmp(e->key, "only")))
        return L->st = dlb_suite_add_filter(L->s, !strcmp(e->key, "only"),
                                            e->value, e->line, L->err);
    if (quick && (!strcmp(e->key, "skip") || !strcmp(e->key, "only")))
        return dlb_suite_fail_at(L, e->line, DLB_ERR_INPUT,
                                 "[quick] %s: filters belong in [sweep]",
                                 e->key);
    if (sweep || quick) {
        if (resolve_at(L, e, &ref) != DLB_OK)
            return L->st;
        dlb_suite_key_name(L->s, ref, key, sizeof key);
        return list_value(L, e, ref, key, quick);
    }
    for (unsigned k = 1; k < L->s->n_ns; k++)
        if (!strcmp(L->s->ns[k].name, e->section))
            return section_key(L, e, k);
    return dlb_suite_fail_at(L, e->line, DLB_ERR_INTERNAL,
                             "section [%s] was not activated", e->section);
}
