/* dlb_run_check_plugins: plugins' settings against the model and batch. */
#include "run/run_check_plugins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_file.h"
#include "model/model_find.h"
#include "plan/plan_workloads.h"
#include "plan/session.h"

/* The suite line that sets parameter `param` of namespace `ns`: [quick]
 * (under --quick its settings win), a sweep axis, or the plugin's
 * section; 0 when its default is in force. */
static int line_of(const struct dlb_suite *s, unsigned ns, unsigned param)
{
    for (size_t i = 0; i < s->n_quick; i++)
        if (s->quick[i].ref.ns == ns && s->quick[i].ref.param == param)
            return s->quick[i].line;
    for (size_t i = 0; i < s->n_quick_axes; i++)
        if (s->quick_axes[i].ref.ns == ns && s->quick_axes[i].ref.param == param)
            return s->quick_axes[i].line;
    for (size_t i = 0; i < s->n_axes; i++)
        if (s->axes[i].ref.ns == ns && s->axes[i].ref.param == param)
            return s->axes[i].line;
    for (size_t i = 0; i < s->n_fixed; i++)
        if (s->fixed[i].ref.ns == ns && s->fixed[i].ref.param == param)
            return s->fixed[i].line;
    return 0;
}

static int has_check(const struct dlb_plugin *d)
{
    return d && d->struct_size >= offsetof(struct dlb_plugin, check) +
                                      sizeof d->check && d->check;
}

/* The view of a model spec that check hooks get. */
struct view {
    struct dlb_config_view v;  /* first: find_model's cv is the view */
    const char **names;
    enum dlb_layer_kind *kinds;
    uint32_t *cut_reader;
    const char *const *suite_paths;
    size_t n_suite_paths;
};

/* As model_api's find does in the configuration's process. */
static dlb_status view_find_model(const struct dlb_config_view *cv,
                                  const char *name, char *reason, size_t len)
{
    const struct view *w = (const struct view *)cv;
    return dlb_model_file_check(name, w->suite_paths, w->n_suite_paths,
                                dlb_installed_suite_dir(), reason, len);
}

static dlb_status view_of(const char *path, const struct dlb_model_spec *m,
                          uint32_t batch, struct view *out)
{
    size_t n = m->n_layers ? m->n_layers : 1;
    out->names = malloc(n * sizeof *out->names);
    out->kinds = malloc(n * sizeof *out->kinds);
    out->cut_reader = malloc(n * sizeof *out->cut_reader);
    if (!out->names || !out->kinds || !out->cut_reader)
        return DLB_ERR_NOMEM;
    for (size_t i = 0; i < m->n_layers; i++) {
        out->names[i] = m->layers[i].name;
        out->kinds[i] = m->layers[i].kind;
        out->cut_reader[i] = (uint32_t)(i ? dlb_model_spec_cut_reader(m, i)
                                          : m->n_layers);
    }
    out->v = (struct dlb_config_view){sizeof out->v, path, batch,
                                      (unsigned)m->n_layers, out->names,
                                      out->kinds, view_find_model,
                                      out->cut_reader};
    return DLB_OK;
}

static dlb_status check_config(const struct dlb_plan *p, size_t i,
                               const struct dlb_config_view *v,
                               struct dlb_error *err)
{
    const struct dlb_suite *s = p->suite;
    const struct dlb_config *c = &p->configs[i];
    for (unsigned ns = 1; ns < s->n_ns; ns++) {
        const struct dlb_plugin *d = s->ns[ns].plugin;
        if (!has_check(d) || !dlb_config_plugin_enabled(p, c, ns))
            continue;
        struct dlb_params prm = {s->ns[ns].defs, c->values[ns], d->n_params};
        char why[512] = "";
        int param = -1;
        dlb_status st = d->check(&prm, v, &param, why, sizeof why);
        if (st == DLB_OK)
            continue;
        int line = param >= 0 && (unsigned)param < d->n_params
                       ? line_of(s, ns, (unsigned)param) : 0;
        char where[32] = "";
        if (line)
            snprintf(where, sizeof where, ":%d", line);
        return dlb_errorf(err, st == DLB_ERR_NOMEM ? st : DLB_ERR_INPUT,
                          "%s%s: plugin %s: configuration '%s': %s", s->path,
                          where, d->name, c->id[0] ? c->id : "(the only one)",
                          why[0] ? why : "refused by the plugin's check");
    }
    return DLB_OK;
}

dlb_status dlb_run_check_plugins(const struct dlb_plan *p,
                                 const char *const *suite_paths,
                                 size_t n_suite_paths, struct dlb_error *err)
{
    const struct dlb_suite *s = p->suite;
    int any = 0;
    for (unsigned ns = 1; ns < s->n_ns; ns++)
        any |= has_check(s->ns[ns].plugin);
    if (!any || !p->n)
        return DLB_OK;
    for (size_t i = 0; i < p->n; i++) {
        const struct dlb_config *c = &p->configs[i];
        if (!dlb_is_builtin_workload(c->core.workload))
            continue;
        char *path = dlb_model_file_find(c->core.model,
                                         suite_paths, n_suite_paths,
                                         dlb_installed_suite_dir(), err);
        if (!path)
            return DLB_ERR_INPUT;
        struct dlb_model_spec *m = NULL;
        struct view v = {.suite_paths = suite_paths,
                         .n_suite_paths = n_suite_paths};
        dlb_status st = dlb_model_file_load(path, &m, err);
        if (st == DLB_OK &&
            (st = view_of(path, m, (uint32_t)c->core.batch,
                          &v)) != DLB_OK)
            dlb_errorf(err, st, "out of memory checking plugin settings");
        if (st == DLB_OK)
            st = check_config(p, i, &v.v, err);
        free(v.names);
        free(v.kinds);
        free(v.cut_reader);
        dlb_model_spec_free(m);
        free(path);
        if (st != DLB_OK)
            return st;
    }
    return DLB_OK;
}
