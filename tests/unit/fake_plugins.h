/* Fake plugin descriptors and a lookup callback for the suite and plan
 * tests: static tables, no dlopen. */
#ifndef DLB_TEST_FAKE_PLUGINS_H
#define DLB_TEST_FAKE_PLUGINS_H

#include <string.h>

#include <dlbench/plugin.h>
#include "util/error.h"
#include "suite/param.h"

static const char *const fake_precisions[] = {"fp32", "bf16", "fp16", NULL};

static const struct dlb_param_def fake_amp_params[] = {
    {"precision", DLB_PARAM_ENUM, "fp32", 0, 0, 0, fake_precisions, NULL,
     "compute type of conv and linear layers"},
    {"init_scale", DLB_PARAM_FLOAT, "65536", DLB_PARAM_HAS_MIN, 1, 0, NULL,
     NULL, "initial loss scale"},
    {"growth_interval", DLB_PARAM_INT, "2000", DLB_PARAM_HAS_MIN |
     DLB_PARAM_NO_SWEEP, 1, 0, NULL, "steps", "steps between scale growth"},
};

static const struct dlb_param_def fake_pool_params[] = {
    {"pool_size", DLB_PARAM_SIZE, "256M", 0, 0, 0, NULL, "bytes",
     "bytes reserved up front"},
};

/* A default outside its own bounds: the loader must refuse the table. */
static const struct dlb_param_def fake_broken_params[] = {
    {"level", DLB_PARAM_INT, "11", DLB_PARAM_HAS_MAX, 0, 10, NULL, NULL,
     "how loud"},
};

static const struct dlb_workload_hooks fake_workload = {NULL, NULL, NULL, NULL, NULL};

#define FAKE_PLUGIN(var, nm, params, n, wl)                                 \
    static const struct dlb_plugin var = {                                  \
        DLB_PLUGIN_ABI_MAJOR, DLB_PLUGIN_ABI_MINOR, sizeof(struct dlb_plugin),\
        nm, "1.0", "fake " nm " for tests", 0, params, n, NULL, NULL, NULL,  \
        NULL, NULL, NULL, NULL, NULL, wl, NULL, NULL}

FAKE_PLUGIN(fake_amp, "amp", fake_amp_params, 3, NULL);
FAKE_PLUGIN(fake_mempool, "mempool", fake_pool_params, 1, NULL);
FAKE_PLUGIN(fake_tiny, "tiny", NULL, 0, &fake_workload);
FAKE_PLUGIN(fake_broken, "broken", fake_broken_params, 1, NULL);

static dlb_status fake_lookup(void *ctx, const char *name,
                              const struct dlb_plugin **out,
                              struct dlb_error *err)
{
    static const struct dlb_plugin *const all[] = {&fake_amp, &fake_mempool,
                                                   &fake_tiny, &fake_broken};
    const char *names[4];
    (void)ctx;
    for (int k = 0; k < 4; k++) {
        names[k] = all[k]->name;
        if (!strcmp(name, all[k]->name)) {
            *out = all[k];
            return DLB_OK;
        }
    }
    const char *best = dlb_suggest(name, names, 4);
    if (best)
        return dlb_errorf(err, DLB_ERR_INPUT, "unknown plugin '%s' (did you "
                          "mean '%s'?)", name, best);
    return dlb_errorf(err, DLB_ERR_INPUT, "unknown plugin '%s'", name);
}

#endif
