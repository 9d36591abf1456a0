/* The suite's selection keys, read from the plan and checked by the
 * parent before its run directory exists (run_check.h), so that a
 * misspelt baseline fails before anything runs, with the suite line at
 * fault. */
#define _POSIX_C_SOURCE 200809L
#include "select/select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/param.h"
#include "plan/plan_search.h"

/* Does configuration c have `key=value` (value in canonical form)? */
static dlb_status term_matches(const struct dlb_plan *p,
                               const struct dlb_config *c, const char *term,
                               int *match, struct dlb_error *err)
{
    const char *eq = strchr(term, '=');
    if (!eq || eq == term)
        return dlb_errorf(err, DLB_ERR_INPUT, "'%s' is not KEY=VALUE", term);
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - term), term);
    struct dlb_keyref r;
    if (dlb_suite_resolve_key(p->suite, key, &r, err) != DLB_OK)
        return DLB_ERR_INPUT;
    struct dlb_value v;
    char why[512];
    if (dlb_param_parse(&p->suite->ns[r.ns].defs[r.param], eq + 1, &v, why,
                        sizeof why) != DLB_OK)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s", key, why);
    *match = !strcmp(v.s, c->values[r.ns][r.param].s);
    dlb_value_clear(&v);
    return DLB_OK;
}

/* Which term of a baseline no configuration has, and the values its
 * key takes in the plan: after a --set model=resnet20 the suite's
 * "model=lenet ..." names a model the plan no longer runs. */
static dlb_status no_match(const struct dlb_plan *p, const char *spec,
                           struct dlb_error *err)
{
    char *copy = strdup(spec), *save = NULL;
    if (!copy)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    const char *bad = NULL;
    dlb_status st = DLB_OK;
    for (char *t = strtok_r(copy, " \t", &save); t && !bad && st == DLB_OK;
         t = strtok_r(NULL, " \t", &save)) {
        int any = 0;
        for (size_t i = 0; i < p->n && !any && st == DLB_OK; i++)
            st = term_matches(p, &p->configs[i], t, &any, err);
        if (st == DLB_OK && !any)
            bad = t;
    }
    if (st != DLB_OK) {
        free(copy);
        return st;
    }
    char values[512] = "";
    size_t used = 0;
    struct dlb_keyref r;
    struct dlb_error ignore = {""};
    char key[256];
    if (bad) {
        snprintf(key, sizeof key, "%.*s", (int)strcspn(bad, "="), bad);
        if (dlb_suite_resolve_key(p->suite, key, &r, &ignore) != DLB_OK)
            bad = NULL;
    }
    /* the key's distinct values, in plan order */
    for (size_t i = 0; bad && i < p->n && used < sizeof values; i++) {
        const char *v = p->configs[i].values[r.ns][r.param].s;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(v, p->configs[j].values[r.ns][r.param].s);
        if (!seen)
            used += (size_t)snprintf(values + used, sizeof values - used,
                                     "%s%s", used ? ", " : "", v);
    }
    dlb_status out;
    if (bad)
        out = dlb_errorf(err, DLB_ERR_INPUT, "matches no configuration of the "
                         "plan: no configuration has %s (%s takes %s in this "
                         "plan); name a value it takes, e.g. --set "
                         "\"baseline=%s\"", bad, key, values,
                         p->configs[0].id);
    else
        out = dlb_errorf(err, DLB_ERR_INPUT, "matches no configuration of the "
                         "plan; expected axis values as in a configuration "
                         "id, e.g. \"%s\"", p->configs[0].id);
    free(copy);
    return out;
}

/* The baseline names settings ("amp.precision=fp32"); on several
 * workloads it matches one configuration each, all with the same
 * settings: that is one baseline, each workload's own. */
static dlb_status find_baseline(const struct dlb_plan *p,
                                const struct dlb_select_settings *set,
                                const char *spec, size_t *pos,
                                struct dlb_error *err)
{
    int one_setting = 1;
    *pos = 0;
    char *copy = strdup(spec), *save = NULL;
    if (!copy)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    size_t hits = 0;
    dlb_status st = DLB_OK;
    for (size_t i = 0; i < p->n && st == DLB_OK; i++) {
        strcpy(copy, spec);
        int all = 1;
        for (char *t = strtok_r(copy, " \t", &save); t && all && st == DLB_OK;
             t = strtok_r(NULL, " \t", &save))
            st = term_matches(p, &p->configs[i], t, &all, err);
        if (st == DLB_OK && all && hits++ == 0)
            *pos = i;
        else if (st == DLB_OK && all)
            one_setting &= dlb_sel_same_settings(p, set, &p->configs[*pos],
                                                 &p->configs[i]);
    }
    free(copy);
    if (st != DLB_OK)
        return st;
    if (hits == 1 || (hits > 1 && one_setting))
        return DLB_OK;
    if (hits > 1)
        return dlb_errorf(err, DLB_ERR_INPUT, "matches %zu configurations "
                          "with different settings; name more axis values",
                          hits);
    return no_match(p, spec, err);
}

/* The default workload: what changes what is computed. Batch is a
 * setting to tune when the objective is throughput (the batch that gives
 * the most samples/s is an answer); for latency or time to accuracy each
 * batch is its own question. An inference scenario measures a different
 * thing from the step time: never compared across. */
static const char *const default_workload[] = {
    "mode", "workload", "model", "dataset", "dataset_path", "augment", "lr",
    "momentum", "train_steps", "train_samples", "seed", "scenario", NULL};

static dlb_status add_workload(const struct dlb_plan *p,
                               struct dlb_select_settings *out,
                               const char *key, struct dlb_error *err)
{
    struct dlb_keyref r;
    struct dlb_error inner = {""};
    char where[1200];
    if (dlb_suite_resolve_key(p->suite, key, &r, &inner) != DLB_OK) {
        dlb_plan_key_where(p, DLB_KEY_workload_axes, where, sizeof where);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: '%s': %s", where, key,
                          inner.msg);
    }
    for (size_t k = 0; k < out->n_workload; k++)
        if (out->workload[k].ns == r.ns && out->workload[k].param == r.param)
            return DLB_OK;
    if (out->n_workload == DLB_SEL_MAX_WORKLOAD) {
        dlb_plan_key_where(p, DLB_KEY_workload_axes, where, sizeof where);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: more than %d keys",
                          where, DLB_SEL_MAX_WORKLOAD);
    }
    out->workload[out->n_workload++] = r;
    return DLB_OK;
}

static dlb_status workload_keys(const struct dlb_plan *p,
                                struct dlb_select_settings *out,
                                struct dlb_error *err)
{
    const char *spec = p->configs[0].core.workload_axes;
    out->n_workload = 0;
    if (!spec[0]) {
        dlb_status st = DLB_OK;
        for (size_t k = 0; default_workload[k] && st == DLB_OK; k++)
            st = add_workload(p, out, default_workload[k], err);
        if (st == DLB_OK && out->objective != DLB_OBJ_THROUGHPUT)
            st = add_workload(p, out, "batch", err);
        return st;
    }
    if (!strcmp(spec, "none"))
        return DLB_OK;
    char *copy = strdup(spec), *save = NULL;
    if (!copy)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    dlb_status st = DLB_OK;
    for (char *t = strtok_r(copy, ", \t", &save); t && st == DLB_OK;
         t = strtok_r(NULL, ", \t", &save))
        st = add_workload(p, out, t, err);
    free(copy);
    return st;
}

dlb_status dlb_select_settings(const struct dlb_plan *p,
                               struct dlb_select_settings *out,
                               struct dlb_error *err)
{
    const struct dlb_config *c = &p->configs[0];
    char where[1200];
    out->objective = c->core.objective;
    out->max_accuracy_drop = c->core.accuracy_tolerance;
    out->accuracy_noise = c->core.accuracy_noise;
    out->memory_budget = (double)c->core.memory_budget;
    out->target_accuracy = c->core.target_accuracy;
    out->significance = c->core.significance;
    dlb_status st = workload_keys(p, out, err);
    if (st != DLB_OK)
        return st;
    const char *spec = c->core.baseline;
    struct dlb_error inner = {""};
    if (spec[0] && find_baseline(p, out, spec, &out->baseline, &inner) != DLB_OK) {
        dlb_plan_key_where(p, DLB_KEY_baseline, where, sizeof where);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s = %s: %s", where, spec,
                          inner.msg);
    }
    if (!spec[0])
        out->baseline = 0;
    if (out->objective == DLB_OBJ_TIME_TO_ACCURACY &&
        !(out->target_accuracy > 0)) {
        dlb_plan_key_where(p, DLB_KEY_objective, where, sizeof where);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s = time_to_accuracy needs "
                          "target_accuracy (%%) > 0 in [suite]", where);
    }
    return DLB_OK;
}
