#include "plan/session.h"

#include <stdlib.h>
#include <string.h>

#ifndef DLB_PKGLIBDIR
#define DLB_PKGLIBDIR "/usr/local/lib/dlbench"
#endif
#ifndef DLB_PKGDATADIR
#define DLB_PKGDATADIR "/usr/local/share/dlbench"
#endif

const char *dlb_installed_plugin_dir(void)
{
    return DLB_PKGLIBDIR;
}

const char *dlb_installed_suite_dir(void)
{
    return DLB_PKGDATADIR "/suites";
}

static dlb_status lookup_plugin(void *ctx, const char *name,
                                const struct dlb_plugin **out,
                                struct dlb_error *err)
{
    const struct dlb_loaded_plugin *p;
    dlb_status st = dlb_registry_load(ctx, name, &p, err);
    if (st == DLB_OK)
        *out = p->desc;
    return st;
}

dlb_status dlb_session_open_registry(struct dlb_session *s,
                                     const struct dlb_options *o,
                                     struct dlb_error *err)
{
    if (s->have_reg)
        return DLB_OK;
    dlb_status st = dlb_registry_init(&s->reg, o->plugin_dirs, o->n_plugin_dirs,
                                      dlb_installed_plugin_dir(), err);
    if (st == DLB_OK)
        s->have_reg = 1;
    return st;
}

dlb_status dlb_session_open(struct dlb_session *s, const struct dlb_options *o,
                            const char *suite, struct dlb_error *err)
{
    dlb_status st = dlb_session_open_registry(s, o, err);
    if (st != DLB_OK)
        return st;
    s->suite_path = dlb_suite_find(suite, dlb_installed_suite_dir(), err);
    if (!s->suite_path)
        return DLB_ERR_INPUT;
    st = dlb_suite_load(s->suite_path, lookup_plugin, &s->reg, &s->suite, err);
    if (st != DLB_OK)
        return st;
    s->have_suite = 1;
    struct dlb_overrides ov = {o->sets, o->n_sets, o->quick};
    st = dlb_plan_build(&s->suite, &ov, &s->plan, err);
    if (st == DLB_OK)
        s->have_plan = 1;
    return st;
}

void dlb_session_close(struct dlb_session *s)
{
    if (s->have_plan)
        dlb_plan_free(&s->plan);
    if (s->have_suite)
        dlb_suite_free(&s->suite);
    if (s->have_reg)
        dlb_registry_free(&s->reg);
    free(s->suite_path);
    memset(s, 0, sizeof *s);
}

unsigned dlb_session_plugin_ns(const struct dlb_session *s, const char *name)
{
    for (unsigned k = 1; k < s->suite.n_ns; k++)
        if (!strcmp(s->suite.ns[k].name, name))
            return k;
    return 0;
}
