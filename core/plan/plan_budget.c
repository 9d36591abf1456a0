/* train_samples -> train_steps per configuration. */
#define _POSIX_C_SOURCE 200809L
#include "plan/plan_budget.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "suite/param.h"

static dlb_status apply_one(struct dlb_plan *p, struct dlb_config *c,
                            struct dlb_error *err)
{
    const struct dlb_ns *core = &p->suite->ns[0];
    long long samples = (long long)c->core.train_samples;
    if (samples <= 0)
        return DLB_OK;
    const char *id = c->id[0] ? c->id : "(the only one)";
    if (c->core.mode != DLB_MODE_TRAIN)
        return dlb_errorf(err, DLB_ERR_INPUT, "suite '%s', configuration '%s': "
                          "train_samples = %lld needs mode = train; in mode = "
                          "infer train_steps names the reference weights",
                          p->suite->name, id, samples);
    if (c->core.train_steps != 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "suite '%s', configuration '%s': "
                          "both train_samples (%lld) and train_steps (%s) are "
                          "set; give the training budget once: train_samples "
                          "for images, train_steps for steps",
                          p->suite->name, id, samples,
                          c->values[0][DLB_KEY_train_steps].s);
    long long batch = (long long)c->core.batch;
    long long steps = (samples + batch - 1) / batch;
    int k = DLB_KEY_train_steps;
    char text[32], why[256];
    struct dlb_value v;
    snprintf(text, sizeof text, "%lld", steps);
    if (dlb_param_parse(&core->defs[k], text, &v, why, sizeof why) != DLB_OK)
        return dlb_errorf(err, DLB_ERR_INPUT, "suite '%s', configuration '%s': "
                          "train_samples = %lld gives %s", p->suite->name, id,
                          samples, why);
    dlb_value_clear(&c->values[0][k]);
    c->values[0][k] = v;
    dlb_core_settings_fill(&c->core, c->values[0]);
    return DLB_OK;
}

dlb_status dlb_plan_apply_train_samples(struct dlb_plan *p,
                                        struct dlb_error *err)
{
    for (size_t k = 0; k < p->n; k++) {
        dlb_status st = apply_one(p, &p->configs[k], err);
        if (st != DLB_OK)
            return st;
    }
    return DLB_OK;
}

double dlb_plan_trained_images(const struct dlb_config *c)
{
    if (c->core.mode != DLB_MODE_TRAIN)
        return 0;
    return (double)c->core.train_steps * (double)c->core.batch;
}

int dlb_plan_same_training(double images_a, double batch_a, double images_b,
                           double batch_b)
{
    double step = batch_a > batch_b ? batch_a : batch_b;
    return fabs(images_a - images_b) < (step > 1 ? step : 1);
}
