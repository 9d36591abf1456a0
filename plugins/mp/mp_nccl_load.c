/* Engine nccl in a build with CUDA, NCCL and MPI: mp_nccl.so found beside
 * this plugin, dlopen'ed on the first configuration that asks for it, its
 * table checked, and every call passed on (mp_nccl_module.h).
 *
 * The module is looked for and checked as a companion module
 * (plugin_module.h): DIR/mp/mp_nccl.so beside the running mp.so, or
 * libtool's DIR/../mp/.libs/mp_nccl.so. */
#include <stdio.h>
#include <string.h>

#include "mp_nccl_module.h"
#include "plugin_module.h"

static const struct mp_engine *loaded;

static const struct dlb_plugin_module module = {
    .who = "engine nccl",
    .plugin = "mp",
    .file = MP_NCCL_MODULE_FILE,
    .entry = MP_NCCL_MODULE_ENTRY,
    .kind = "an mp nccl module",
    .version = MP_NCCL_MODULE_VERSION,
    .built_with = "CUDA toolkit with NCCL and MPI",
    .anchor = &mp_engine_nccl,
};

/* The table's version, struct sizes and hooks are this build's. */
static int accept(void *entry, void *ctx)
{
    union { void *obj; mp_nccl_module_fn fn; } f = {entry};
    const struct mp_nccl_module *m = f.fn();
    (void)ctx;
    if (!m || m->version != MP_NCCL_MODULE_VERSION ||
        m->engine_size != sizeof(struct mp_engine) ||
        m->settings_size != sizeof(struct mp_settings) ||
        m->figures_size != sizeof(struct mp_figures) || !m->engine ||
        !m->engine->probe || !m->engine->init || !m->engine->step ||
        !m->engine->figures || !m->engine->fini)
        return 0;
    loaded = m->engine;
    return 1;
}

static int load(char *why, size_t len)
{
    return loaded || dlb_plugin_module_load(&module, accept, NULL, why, len);
}

static dlb_status load_probe(const struct dlb_host *h,
                             const struct mp_settings *s, char *reason,
                             size_t len)
{
    /* Said first: on a CPU backend it is the reason that matters, whether
     * or not this machine could load the CUDA libraries. */
    if (!h->backend_name || strcmp(h->backend_name, "cuda") != 0) {
        snprintf(reason, len, "engine nccl runs a stage per GPU: it needs "
                 "backend = cuda (this configuration has backend %s)",
                 h->backend_name ? h->backend_name : "?");
        return DLB_ERR_UNSUPPORTED;
    }
    if (!DLB_STAGE_OPS_HAS(h->stage_ops, backward_view)) {
        snprintf(reason, len, "engine nccl: this dlbench core's stage_ops "
                 "has no device views of the activations (input_view, "
                 "forward_view, backward_view)");
        return DLB_ERR_UNSUPPORTED;
    }
    if (!load(reason, len))
        return DLB_ERR_UNSUPPORTED;
    return loaded->probe(h, s, reason, len);
}

/* The core probes before it initialises, so the module is loaded here;
 * the check is for a caller that skipped the probe. */
static dlb_status load_init(const struct dlb_host *h,
                            const struct mp_settings *s, void **eng)
{
    char why[512];
    if (!load(why, sizeof why)) {
        h->log(h, DLB_LOG_ERROR, "%s", why);
        return DLB_ERR_UNSUPPORTED;
    }
    return loaded->init(h, s, eng);
}

static dlb_status load_step(void *eng, struct dlb_model *model,
                            const struct dlb_batch *batch)
{
    return loaded->step(eng, model, batch);
}

static dlb_status load_figures(void *eng, struct mp_figures *out)
{
    return loaded->figures(eng, out);
}

static void load_fini(void *eng)
{
    if (loaded)
        loaded->fini(eng);
}

const struct mp_engine mp_engine_nccl = {
    .name = "nccl",
    .probe = load_probe,
    .init = load_init,
    .step = load_step,
    .figures = load_figures,
    .fini = load_fini,
};
