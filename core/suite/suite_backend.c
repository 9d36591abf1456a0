/* The backends' own keys (cudnn.algo, cuda.tf32, cuda.graphs;
 * cpu.winograd): a suite
 * that can only run another backend and still sets one of them away from
 * its default is refused at that line, since the setting could never take
 * effect. A suite that sweeps the backend keeps them: its configurations
 * on other backends are skipped at run time with the reason
 * (workload_cnn.c), as a capability the device lacks is. A plugin's key
 * that only a backend can honour (dataloader.pinned: page-locked batches
 * for a host-to-device copy) is held to the same rule; its configurations
 * on other backends are skipped by the plugin's probe. */
#include <stdio.h>
#include <string.h>

#include "suite/param.h"
#include "suite/suite_load.h"

struct backend_key {
    const char *key, *backend;
};

static const struct backend_key backend_keys[] = {
    {"cudnn.algo", "cuda"},
    {"cuda.tf32", "cuda"},
    {"cuda.graphs", "cuda"},
    {"cpu.winograd", "cpu"},
    {"dataloader.pinned", "cuda"},
};

/* The setting of key `r` among `v`, or NULL. */
static const struct dlb_setting *setting_ref(const struct dlb_setting *v,
                                             size_t n, struct dlb_keyref r)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].ref.ns == r.ns && v[i].ref.param == r.param)
            return &v[i];
    return NULL;
}

static const struct dlb_axis *axis_ref(const struct dlb_axis *v, size_t n,
                                       struct dlb_keyref r)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].ref.ns == r.ns && v[i].ref.param == r.param)
            return &v[i];
    return NULL;
}

/* The same for core key `k`. */
static const struct dlb_setting *setting_of(const struct dlb_setting *v,
                                            size_t n, int k)
{
    return setting_ref(v, n, (struct dlb_keyref){0, (unsigned)k});
}

static const struct dlb_axis *axis_of(const struct dlb_axis *v, size_t n,
                                      int k)
{
    return axis_ref(v, n, (struct dlb_keyref){0, (unsigned)k});
}

/* 1 when `text` is the key's default, in canonical form. */
static int is_default(const struct dlb_param_def *d, const char *text)
{
    struct dlb_value v;
    char why[256];
    int same = 0;
    if (dlb_param_parse(d, d->def, &v, why, sizeof why) != DLB_OK)
        return 0;
    same = v.s && !strcmp(v.s, text);
    dlb_value_clear(&v);
    return same;
}

/* The first value of key r the suite sets away from its default: *line
 * and *value, or 0. */
static int non_default(const struct dlb_suite *s, struct dlb_keyref r,
                       int *line, const char **value)
{
    const struct dlb_param_def *d = &s->ns[r.ns].defs[r.param];
    const struct dlb_setting *f[2] = {setting_ref(s->fixed, s->n_fixed, r),
                                      setting_ref(s->quick, s->n_quick, r)};
    const struct dlb_axis *a[2] = {axis_ref(s->axes, s->n_axes, r),
                                   axis_ref(s->quick_axes, s->n_quick_axes, r)};
    for (int j = 0; j < 2; j++) {
        if (f[j] && !is_default(d, f[j]->text)) {
            *line = f[j]->line;
            *value = f[j]->text;
            return 1;
        }
        for (size_t i = 0; a[j] && i < a[j]->n; i++)
            if (!is_default(d, a[j]->items[i])) {
                *line = a[j]->line;
                *value = a[j]->items[i];
                return 1;
            }
    }
    return 0;
}

dlb_status dlb_suite_check_backend_keys(struct dlb_suite_loader *L)
{
    const struct dlb_suite *s = L->s;
    int kb = dlb_param_find(s->ns[0].defs, s->ns[0].n, "backend");
    if (kb < 0 || axis_of(s->axes, s->n_axes, kb) ||
        axis_of(s->quick_axes, s->n_quick_axes, kb))
        return DLB_OK; /* swept: decided per configuration */
    const struct dlb_setting *fixed = setting_of(s->fixed, s->n_fixed, kb);
    const struct dlb_setting *quick = setting_of(s->quick, s->n_quick, kb);
    const char *backend = fixed ? fixed->text : s->ns[0].defs[kb].def;
    for (size_t i = 0; i < sizeof backend_keys / sizeof backend_keys[0]; i++) {
        const struct backend_key *bk = &backend_keys[i];
        struct dlb_keyref ref;
        struct dlb_error unknown = {""};
        int line = 0;
        const char *value = NULL;
        /* A plugin's key resolves only when the suite names the plugin. */
        if (dlb_suite_resolve_key(s, bk->key, &ref, &unknown) != DLB_OK ||
            !strcmp(backend, bk->backend) ||
            (quick && !strcmp(quick->text, bk->backend)) ||
            !non_default(s, ref, &line, &value))
            continue;
        char where[64];
        if (fixed)
            snprintf(where, sizeof where, "backend = %s (line %d)", backend,
                     fixed->line);
        else
            snprintf(where, sizeof where, "backend = %s (the default)",
                     backend);
        return dlb_suite_fail_at(L, line, DLB_ERR_INPUT, "%s = %s applies to "
                                 "backend = %s only, and this suite runs %s; "
                                 "remove the key, or set or sweep backend",
                                 bk->key, value, bk->backend, where);
    }
    return DLB_OK;
}
