/* DIR/best.ini: the winner as a suite of one configuration. Every value
 * that differs from its default is written, resolved (the suite's fixed
 * settings, the axes' values, [quick] and --set all included), so the file
 * stands alone. */
#define _POSIX_C_SOURCE 200809L
#include "select/select.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_find.h"
#include "suite/param.h"
#include "plan/session.h"
#include "results/selection.h"
#include "util/path.h"

/* Keys that describe the sweep, not the configuration. */
static int skipped_key(unsigned ns, const char *name)
{
    return ns == 0 && (!strcmp(name, "baseline") || !strcmp(name, "search") ||
                       !strcmp(name, "name") || !strcmp(name, "description") ||
                       !strcmp(name, "plugins"));
}

/* The model as a path, so that best.ini runs from any directory. */
static void write_model(FILE *f, const struct dlb_plan *plan,
                        const struct dlb_config *c, const char *origin)
{
    const char *model = c->core.model;
    const char *where[2] = {origin, plan->suite->path};
    struct dlb_error err = {""};
    char *path = dlb_model_file_find(model, where, 2,
                                     dlb_installed_suite_dir(), &err);
    char *abs = path ? realpath(path, NULL) : NULL;
    if (abs)
        fprintf(f, "model = %s\n", abs);
    else if (strcmp(model, plan->suite->ns[0].defs[DLB_KEY_model].def))
        fprintf(f, "model = %s\n", model);
    free(abs);
    free(path);
}

static void write_ns(FILE *f, const struct dlb_plan *plan,
                     const struct dlb_config *c, unsigned ns, const char *origin)
{
    const struct dlb_ns *n = &plan->suite->ns[ns];
    if (ns)
        fprintf(f, "\n[%s]\n", n->name);
    for (unsigned k = 0; k < n->n; k++) {
        const struct dlb_param_def *d = &n->defs[k];
        const char *v = c->values[ns][k].s;
        if (ns == 0 && !strcmp(d->name, "model")) {
            write_model(f, plan, c, origin);
            continue;
        }
        if (skipped_key(ns, d->name))
            continue;
        /* compare canonical texts: the default's own may differ ("1" and
         * "on"); `enable` is always written, it says what the section
         * means */
        struct dlb_value dv;
        char why[256];
        int parsed = dlb_param_parse(d, d->def ? d->def : "", &dv, why,
                                     sizeof why) == DLB_OK;
        int same = parsed && !strcmp(dv.s, v);
        if (parsed)
            dlb_value_clear(&dv);
        if (same && strcmp(d->name, "enable") != 0)
            continue;
        fprintf(f, "%s = %s\n", d->name, v);
    }
}

/* One winner's file: DIR/NAME. */
static dlb_status write_one(const char *dir, const char *name,
                            const struct dlb_plan *plan,
                            const struct dlb_sel_group *group,
                            const char *origin, struct dlb_error *err)
{
    long long w = group->winner_index;
    if (w < 0)
        return DLB_OK;
    const struct dlb_config *c = NULL;
    for (size_t k = 0; k < plan->n; k++)
        if (plan->configs[k].index == (size_t)w)
            c = &plan->configs[k];
    if (!c)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "%s: winner %lld is not in the "
                          "plan", name, w);
    char *path = dlb_path_join(dir, name);
    if (!path)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    FILE *f = fopen(path, "w");
    if (!f) {
        dlb_status st = dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", path,
                                   strerror(errno));
        free(path);
        return st;
    }
    const char *why = group->why, *wl = group->workload;
    fprintf(f, "; The winner of suite %s%s%s: %s\n; %s\n; Run it again with: "
            "dlbench run %s\n; (plugins from outside the installed directory "
            "need --plugin-dir or $DLBENCH_PLUGIN_PATH as before)\n\n[suite]\n"
            "name = %s-best\n", plan->suite->name, wl && wl[0] ? " for workload " : "",
            wl && wl[0] ? wl : "", c->id, why ? why : "", path, plan->suite->name);
    fprintf(f, "description = %s of suite %s\n", c->id, plan->suite->name);
    write_ns(f, plan, c, 0, origin);
    for (unsigned ns = 1; ns < plan->suite->n_ns; ns++)
        write_ns(f, plan, c, ns, origin);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    dlb_status st = bad ? dlb_errorf(err, DLB_ERR_IO, "cannot write %s: %s", path,
                                     strerror(errno)) : DLB_OK;
    free(path);
    return st;
}

dlb_status dlb_select_write_best(const char *dir, const struct dlb_plan *plan,
                                 const struct dlb_selection *sel,
                                 const char *origin, struct dlb_error *err)
{
    dlb_status st = DLB_OK;
    size_t n = sel->n_groups;
    struct dlb_sel_group top = dlb_selection_top(sel);
    if (n < 2)
        st = write_one(dir, "best.ini", plan, n ? &sel->groups[0] : &top, origin,
                       err);
    /* one per workload, numbered as the groups and the pareto-N plots */
    for (size_t g = 0; n >= 2 && g < n && st == DLB_OK; g++) {
        char name[32];
        snprintf(name, sizeof name, "best-%zu.ini", g + 1);
        st = write_one(dir, name, plan, &sel->groups[g], origin, err);
    }
    return st;
}
