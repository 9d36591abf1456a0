/* dlb_plan_check_transforms: a transform needs trained weights. */
#include "plan/plan_transform.h"

#include <stdio.h>
#include <string.h>


/* The suite line that sets core key `key` to the configuration's value:
 * [quick], a sweep axis or [suite]; 0 when the default (or a --set) is in
 * force. */
static int line_of(const struct dlb_plan *p, const struct dlb_config *c,
                   enum dlb_core_key key)
{
    const struct dlb_suite *s = p->suite;
    int k = (int)key;
    const char *now = c->values[0][key].s;
    for (size_t i = 0; i < s->n_quick; i++)
        if (s->quick[i].ref.ns == 0 && (int)s->quick[i].ref.param == k &&
            !strcmp(s->quick[i].text, now))
            return s->quick[i].line;
    for (size_t i = 0; i < s->n_quick_axes; i++)
        if (s->quick_axes[i].ref.ns == 0 && (int)s->quick_axes[i].ref.param == k)
            return s->quick_axes[i].line;
    for (size_t i = 0; i < s->n_axes; i++)
        if (s->axes[i].ref.ns == 0 && (int)s->axes[i].ref.param == k)
            return s->axes[i].line;
    for (size_t i = 0; i < s->n_fixed; i++)
        if (s->fixed[i].ref.ns == 0 && (int)s->fixed[i].ref.param == k)
            return s->fixed[i].line;
    return 0;
}

static dlb_status refuse(const struct dlb_plan *p, const struct dlb_config *c,
                         const char *plugin, struct dlb_error *err)
{
    int line = line_of(p, c, DLB_KEY_train_steps);
    if (!line)
        line = line_of(p, c, DLB_KEY_mode);
    char where[64] = "";
    if (line)
        snprintf(where, sizeof where, ":%d", line);
    return dlb_errorf(err, DLB_ERR_INPUT, "%s%s: configuration '%s': plugin "
                      "%s transforms a trained model, but mode = train with "
                      "train_steps = 0 trains none (no trained weights, and "
                      "training disabled); set train_steps > 0, or mode = "
                      "infer to use the cached reference weights",
                      p->suite->path, where, c->id[0] ? c->id : "(the only one)",
                      plugin);
}

dlb_status dlb_plan_check_transforms(const struct dlb_plan *p,
                                     struct dlb_error *err)
{
    const struct dlb_suite *s = p->suite;
    for (size_t i = 0; i < p->n; i++) {
        const struct dlb_config *c = &p->configs[i];
        if (strcmp(c->core.workload, "cnn") != 0 ||
            c->core.mode != DLB_MODE_TRAIN || c->core.train_steps > 0)
            continue;
        for (unsigned ns = 1; ns < s->n_ns; ns++)
            if (s->ns[ns].plugin && s->ns[ns].plugin->transform &&
                dlb_config_plugin_enabled(p, c, ns))
                return refuse(p, c, s->ns[ns].name, err);
    }
    return DLB_OK;
}
