/* The plan: defaults, then fixed settings, then [quick] (under --quick),
 * then --set; then the cartesian product of the axes, first axis slowest,
 * minus what `skip`/`only` exclude. */
#define _POSIX_C_SOURCE 200809L
#include "plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/param.h"
#include "plan/plan_budget.h"
#include "plan/plan_search.h"
#include "plan/plan_transform.h"

/* More configurations than this is a sweep nobody can run: a typo. */
#define DLB_PLAN_MAX_CONFIGS 100000

struct work_axis {
    struct dlb_keyref ref;
    char *const *items;
    size_t n;
    struct dlb_value *vals; /* items parsed */
};

struct builder {
    const struct dlb_suite *s;
    unsigned *base; /* index of (ns, 0) in the flat arrays */
    unsigned n_flat;
    const char **text;      /* per key: the text in force, NULL = default */
    struct dlb_value *vals; /* per key: the value in force */
    struct work_axis *axes;
    size_t n_axes;
    char **owned; /* canonical texts of --set values */
    size_t n_owned;
    struct dlb_error *err;
};

static unsigned flat(const struct builder *b, struct dlb_keyref r)
{
    return b->base[r.ns] + r.param;
}

static struct work_axis *find_axis(struct builder *b, struct dlb_keyref r)
{
    for (size_t k = 0; k < b->n_axes; k++)
        if (b->axes[k].ref.ns == r.ns && b->axes[k].ref.param == r.param)
            return &b->axes[k];
    return NULL;
}

/* A single value: collapses an axis of that key, else replaces the fixed
 * value. `slot` must outlive the builder. */
static void set_single(struct builder *b, struct dlb_keyref r,
                       char *const *slot)
{
    struct work_axis *a = find_axis(b, r);
    if (a) {
        a->items = slot;
        a->n = 1;
    } else {
        b->text[flat(b, r)] = *slot;
    }
}

/* The training budget is given once, in steps or in images
 * (plan_budget.h): a later level (--quick, then --set) that gives one
 * replaces the other, as it replaces any other key. */
static void one_budget(struct builder *b, struct dlb_keyref r)
{
    static char *const zero[] = {"0"};
    const struct dlb_ns *core = &b->s->ns[0];
    if (r.ns != 0)
        return;
    const char *name = core->defs[r.param].name, *other = NULL;
    if (!strcmp(name, "train_steps"))
        other = "train_samples";
    else if (!strcmp(name, "train_samples"))
        other = "train_steps";
    int k = other ? dlb_param_find(core->defs, core->n, other) : -1;
    if (k >= 0)
        set_single(b, (struct dlb_keyref){0, (unsigned)k}, zero);
}

static dlb_status set_axis(struct builder *b, const struct dlb_axis *src)
{
    struct work_axis *a = find_axis(b, src->ref);
    if (!a) {
        a = &b->axes[b->n_axes++]; /* room reserved for every quick axis */
        a->ref = src->ref;
        a->vals = NULL;
    }
    a->items = src->items;
    a->n = src->n;
    return DLB_OK;
}

static dlb_status apply_set(struct builder *b, const char *set)
{
    const char *eq = strchr(set, '=');
    if (!eq || eq == set)
        return dlb_errorf(b->err, DLB_ERR_INPUT,
                          "--set %s: expected KEY=VALUE, as in --set batch=128",
                          set);
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - set), set);
    struct dlb_keyref r;
    struct dlb_error inner = {""};
    if (dlb_suite_resolve_key(b->s, key, &r, &inner) != DLB_OK)
        return dlb_errorf(b->err, DLB_ERR_INPUT, "--set %s: %s", set,
                          inner.msg);
    struct dlb_value v;
    char why[512];
    const struct dlb_param_def *d = &b->s->ns[r.ns].defs[r.param];
    if (dlb_param_parse(d, eq + 1, &v, why, sizeof why) != DLB_OK)
        return dlb_errorf(b->err, DLB_ERR_INPUT, "--set %s: %s", set, why);
    b->owned[b->n_owned] = (char *)v.s;
    set_single(b, r, &b->owned[b->n_owned++]);
    one_budget(b, r);
    return DLB_OK;
}

/* Parse the text in force for every key, and every axis item. */
static dlb_status resolve_values(struct builder *b)
{
    char why[512];
    for (unsigned ns = 0; ns < b->s->n_ns; ns++) {
        for (unsigned k = 0; k < b->s->ns[ns].n; k++) {
            const struct dlb_param_def *d = &b->s->ns[ns].defs[k];
            unsigned i = b->base[ns] + k;
            const char *t = b->text[i] ? b->text[i] : d->def ? d->def : "";
            if (dlb_param_parse(d, t, &b->vals[i], why, sizeof why) != DLB_OK)
                return dlb_errorf(b->err, DLB_ERR_INTERNAL,
                                  "%s: value of %s does not parse: %s",
                                  b->s->path, d->name, why);
        }
    }
    for (size_t a = 0; a < b->n_axes; a++) {
        struct work_axis *ax = &b->axes[a];
        const struct dlb_param_def *d =
            &b->s->ns[ax->ref.ns].defs[ax->ref.param];
        ax->vals = calloc(ax->n, sizeof *ax->vals);
        if (!ax->vals)
            return dlb_errorf(b->err, DLB_ERR_NOMEM, "out of memory");
        for (size_t k = 0; k < ax->n; k++)
            if (dlb_param_parse(d, ax->items[k], &ax->vals[k], why,
                                sizeof why) != DLB_OK)
                return dlb_errorf(b->err, DLB_ERR_INTERNAL, "%s: axis %s: %s",
                                  b->s->path, d->name, why);
    }
    return DLB_OK;
}

/* The canonical text of key r in the configuration with axis picks `pick`. */
static const char *text_of(const struct builder *b, const size_t *pick,
                           struct dlb_keyref r)
{
    for (size_t a = 0; a < b->n_axes; a++)
        if (b->axes[a].ref.ns == r.ns && b->axes[a].ref.param == r.param)
            return b->axes[a].vals[pick[a]].s;
    return b->vals[flat(b, r)].s;
}

static int filter_matches(const struct builder *b, const size_t *pick,
                          const struct dlb_filter *f)
{
    for (size_t t = 0; t < f->n; t++) {
        const struct dlb_filter_term *term = &f->terms[t];
        const char *v = text_of(b, pick, term->ref);
        int in = 0;
        for (size_t k = 0; k < term->n && !in; k++)
            in = strcmp(v, term->items[k]) == 0;
        if (in == term->negate)
            return 0;
    }
    return 1;
}

/* Runs when it matches any `only` line (if there is one) and no `skip`. */
static int keep(const struct builder *b, const size_t *pick)
{
    int has_only = 0, in_only = 0;
    for (size_t k = 0; k < b->s->n_filters; k++) {
        const struct dlb_filter *f = &b->s->filters[k];
        int m = filter_matches(b, pick, f);
        if (f->only) {
            has_only = 1;
            in_only |= m;
        } else if (m) {
            return 0;
        }
    }
    return !has_only || in_only;
}

static char *make_id(const struct builder *b, const size_t *pick)
{
    if (b->n_axes == 0)
        return strdup("default");
    size_t len = 1;
    char key[256];
    for (size_t a = 0; a < b->n_axes; a++) {
        dlb_suite_key_name(b->s, b->axes[a].ref, key, sizeof key);
        len += strlen(key) + strlen(b->axes[a].vals[pick[a]].s) + 2;
    }
    char *id = malloc(len), *p = id;
    if (!id)
        return NULL;
    for (size_t a = 0; a < b->n_axes; a++) {
        dlb_suite_key_name(b->s, b->axes[a].ref, key, sizeof key);
        p += sprintf(p, "%s%s=%s", a ? " " : "", key,
                     b->axes[a].vals[pick[a]].s);
    }
    return id;
}

static void free_config(const struct dlb_suite *s, struct dlb_config *c)
{
    for (unsigned ns = 0; c->values && ns < s->n_ns; ns++) {
        for (unsigned k = 0; c->values[ns] && k < s->ns[ns].n; k++)
            dlb_value_clear(&c->values[ns][k]);
        free(c->values[ns]);
    }
    free(c->values);
    free(c->id);
}

static dlb_status make_config(const struct builder *b, const size_t *pick,
                              size_t index, struct dlb_config *c)
{
    const struct dlb_suite *s = b->s;
    c->index = index;
    c->id = make_id(b, pick);
    c->values = calloc(s->n_ns, sizeof *c->values);
    int bad = !c->id || !c->values;
    for (unsigned ns = 0; !bad && ns < s->n_ns; ns++) {
        c->values[ns] = calloc(s->ns[ns].n, sizeof *c->values[ns]);
        bad = !c->values[ns];
        for (unsigned k = 0; !bad && k < s->ns[ns].n; k++) {
            struct dlb_keyref r = {ns, k};
            const struct dlb_value *src = &b->vals[flat(b, r)];
            for (size_t a = 0; a < b->n_axes; a++)
                if (b->axes[a].ref.ns == ns && b->axes[a].ref.param == k)
                    src = &b->axes[a].vals[pick[a]];
            bad = dlb_value_copy(&c->values[ns][k], src) != DLB_OK;
        }
    }
    if (bad) {
        free_config(s, c);
        return dlb_errorf(b->err, DLB_ERR_NOMEM, "out of memory");
    }
    dlb_core_settings_fill(&c->core, c->values[0]);
    return DLB_OK;
}

/* Pairs of core keys whose order a sweep or --set could break. */
static dlb_status check_config(const struct dlb_plan *p,
                               const struct dlb_config *c,
                               struct dlb_error *err)
{
    static const enum dlb_core_key pairs[][2] = {
        {DLB_KEY_min_samples, DLB_KEY_max_samples},
        {DLB_KEY_warmup_s, DLB_KEY_warmup_max_s}};
    const struct dlb_param_def *defs = p->suite->ns[0].defs;
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        /* .f holds integers too: the texts name the values as written */
        const struct dlb_value *lo = &c->values[0][pairs[k][0]];
        const struct dlb_value *hi = &c->values[0][pairs[k][1]];
        if (lo->f > hi->f)
            return dlb_errorf(err, DLB_ERR_INPUT,
                              "suite '%s', configuration '%s': %s (%s) is "
                              "greater than %s (%s)",
                              p->suite->name, c->id, defs[pairs[k][0]].name,
                              lo->s, defs[pairs[k][1]].name, hi->s);
    }
    return DLB_OK;
}

static dlb_status build_configs(struct builder *b, struct dlb_plan *out)
{
    size_t total = 1;
    for (size_t a = 0; a < b->n_axes; a++) {
        if (total > DLB_PLAN_MAX_CONFIGS / b->axes[a].n)
            return dlb_errorf(
                b->err, DLB_ERR_INPUT,
                "suite '%s': the sweep has more than %d configurations; narrow "
                "it or add skip/only filters",
                b->s->name, DLB_PLAN_MAX_CONFIGS);
        total *= b->axes[a].n;
    }
    size_t *pick = calloc(b->n_axes + 1, sizeof *pick);
    out->configs = calloc(total, sizeof *out->configs);
    if (!pick || !out->configs) {
        free(pick);
        return dlb_errorf(b->err, DLB_ERR_NOMEM, "out of memory");
    }
    dlb_status st = DLB_OK;
    for (size_t idx = 0; idx < total && st == DLB_OK; idx++) {
        size_t rest = idx; /* last axis varies fastest */
        for (size_t a = b->n_axes; a-- > 0;) {
            pick[a] = rest % b->axes[a].n;
            rest /= b->axes[a].n;
        }
        if (!keep(b, pick)) {
            out->n_filtered++;
            continue;
        }
        st = make_config(b, pick, idx, &out->configs[out->n]);
        if (st == DLB_OK) {
            out->n++;
            st = check_config(out, &out->configs[out->n - 1], b->err);
        }
    }
    free(pick);
    if (st == DLB_OK && out->n == 0)
        st = dlb_errorf(b->err, DLB_ERR_INPUT,
                        "suite '%s': skip/only filters exclude all %zu "
                        "configurations; nothing to run",
                        b->s->name, total);
    return st;
}

static dlb_status prepare(struct builder *b, const struct dlb_overrides *ov)
{
    const struct dlb_suite *s = b->s;
    b->base = malloc(s->n_ns * sizeof *b->base);
    if (!b->base)
        return dlb_errorf(b->err, DLB_ERR_NOMEM, "out of memory");
    for (unsigned ns = 0; ns < s->n_ns; ns++) {
        b->base[ns] = b->n_flat;
        b->n_flat += s->ns[ns].n;
    }
    size_t n_sets = ov ? ov->n_sets : 0;
    b->text = calloc(b->n_flat, sizeof *b->text);
    b->vals = calloc(b->n_flat, sizeof *b->vals);
    b->axes = calloc(s->n_axes + s->n_quick_axes + 1, sizeof *b->axes);
    b->owned = calloc(n_sets + 1, sizeof *b->owned);
    if (!b->text || !b->vals || !b->axes || !b->owned)
        return dlb_errorf(b->err, DLB_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < s->n_fixed; k++)
        b->text[flat(b, s->fixed[k].ref)] = s->fixed[k].text;
    for (size_t k = 0; k < s->n_axes; k++)
        set_axis(b, &s->axes[k]);
    if (ov && ov->quick) {
        for (size_t k = 0; k < s->n_quick; k++) {
            set_single(b, s->quick[k].ref, &s->quick[k].text);
            one_budget(b, s->quick[k].ref);
        }
        for (size_t k = 0; k < s->n_quick_axes; k++)
            set_axis(b, &s->quick_axes[k]);
    }
    for (size_t k = 0; k < n_sets; k++) {
        dlb_status st = apply_set(b, ov->sets[k]);
        if (st != DLB_OK)
            return st;
    }
    return resolve_values(b);
}

dlb_status dlb_plan_build(const struct dlb_suite *s,
                          const struct dlb_overrides *ov, struct dlb_plan *out,
                          struct dlb_error *err)
{
    memset(out, 0, sizeof *out);
    out->suite = s;
    struct builder b = {0};
    b.s = s;
    b.err = err;
    dlb_status st = prepare(&b, ov);
    if (st == DLB_OK)
        st = build_configs(&b, out);
    if (st == DLB_OK)
        st = dlb_plan_apply_train_samples(out, err);
    /* The selection's own keys (baseline, workload_axes) name
     * configurations of this plan: the parent checks them before it runs
     * anything (run_check.h), as the plan knows nothing of the selection. */
    if (st == DLB_OK)
        st = dlb_plan_check_search(out, err);
    if (st == DLB_OK)
        st = dlb_plan_check_transforms(out, err);
    for (unsigned k = 0; b.vals && k < b.n_flat; k++)
        dlb_value_clear(&b.vals[k]);
    for (size_t a = 0; a < b.n_axes; a++) {
        for (size_t k = 0; b.axes[a].vals && k < b.axes[a].n; k++)
            dlb_value_clear(&b.axes[a].vals[k]);
        free(b.axes[a].vals);
    }
    dlb_strv_free(b.owned, b.n_owned);
    free(b.axes);
    free(b.vals);
    free(b.text);
    free(b.base);
    if (st != DLB_OK)
        dlb_plan_free(out);
    return st;
}

void dlb_plan_free(struct dlb_plan *p)
{
    if (!p)
        return;
    for (size_t k = 0; k < p->n; k++)
        free_config(p->suite, &p->configs[k]);
    free(p->configs);
    memset(p, 0, sizeof *p);
}

int dlb_config_plugin_enabled(const struct dlb_plan *p,
                              const struct dlb_config *c, unsigned ns)
{
    if (ns == 0)
        return 1;
    if (ns >= p->suite->n_ns)
        return 0;
    const struct dlb_ns *n = &p->suite->ns[ns];
    int k = dlb_param_find(n->defs, n->n, "enable");
    return k >= 0 && c->values[ns][k].i != 0;
}
