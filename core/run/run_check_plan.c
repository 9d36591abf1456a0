/* dlb_run_check_workload, dlb_run_check_models, dlb_run_check_selection:
 * what the plan names, checked once in the parent before the run
 * directory exists. */
#include "run/run_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_file.h"
#include "model/model_find.h"
#include "plan/plan_workloads.h"
#include "select/select.h"

dlb_status dlb_run_check_workload(const struct dlb_session *ses, struct dlb_error *err)
{
    const struct dlb_config *c = &ses->plan.configs[0];
    const char *name = dlb_config_core(&ses->plan, c, "workload")->s;
    if (dlb_is_builtin_workload(name))
        return DLB_OK;
    unsigned ns = dlb_session_plugin_ns(ses, name);
    if (!ns || !ses->suite.ns[ns].plugin->workload)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "%s: workload '%s' is neither built in (cnn) nor provided by a "
                          "plugin active in the suite; add a [%s] section",
                          ses->suite_path, name, name);
    return DLB_OK;
}

/* Every network file the plan names must exist and parse: a mistake in
 * one is bad input, found before the run directory exists, rather than a
 * failure repeated in every configuration. Parsing is plain C: the parent
 * still initialises no library. */
dlb_status dlb_run_check_models(const struct dlb_plan *p,
                                const char *const *suite_paths,
                                size_t n_suite_paths, struct dlb_error *err)
{
    if (!dlb_is_builtin_workload(dlb_config_core(p, &p->configs[0], "workload")->s))
        return DLB_OK;
    for (size_t i = 0; i < p->n; i++) {
        const char *model = dlb_config_core(p, &p->configs[i], "model")->s;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(model, dlb_config_core(p, &p->configs[j], "model")->s);
        if (seen)
            continue;
        char *path = dlb_model_file_find(model, suite_paths, n_suite_paths,
                                         dlb_installed_suite_dir(), err);
        if (!path)
            return DLB_ERR_INPUT;
        struct dlb_model_spec *spec = NULL;
        dlb_status st = dlb_model_file_load(path, &spec, err);
        free(path);
        if (st != DLB_OK)
            return st;
        dlb_model_spec_free(spec);
    }
    return DLB_OK;
}

dlb_status dlb_run_check_selection(const struct dlb_plan *p, struct dlb_error *err)
{
    struct dlb_select_settings set;
    return dlb_select_settings(p, &set, err);
}
