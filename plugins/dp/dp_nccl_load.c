/* Engine nccl in a build with CUDA: dp_nccl.so (dp_nccl_module.h) loaded
 * by the shared loader (nccl_load.h) on the first configuration that asks
 * for it, and every call passed on. */
#include "dp_nccl_module.h"
#include "nccl_load.h"

static int complete(const void *engine)
{
    const struct dp_engine *e = engine;
    return e->probe && e->init && e->step && e->figures && e->fini;
}

static struct dlb_nccl_loader loader = {
    .module = {
        .who = "engine nccl",
        .plugin = "dp",
        .file = DP_NCCL_MODULE_FILE,
        .entry = DP_NCCL_MODULE_ENTRY,
        .kind = "a dp nccl module",
        .version = DP_NCCL_MODULE_VERSION,
        .built_with = "CUDA toolkit with NCCL",
        .anchor = &dp_engine_nccl,
    },
    .engine_size = sizeof(struct dp_engine),
    .settings_size = sizeof(struct dp_settings),
    .figures_size = sizeof(struct dp_figures),
    .complete = complete,
};

static dlb_status load_probe(const struct dlb_host *h,
                             const struct dp_settings *s, char *reason,
                             size_t len)
{
    const struct dp_engine *e;
    if (dlb_nccl_need_cuda(h, "runs on GPUs", reason, len) != DLB_OK ||
        !(e = dlb_nccl_load(&loader, reason, len)))
        return DLB_ERR_UNSUPPORTED;
    return e->probe(h, s, reason, len);
}

static dlb_status load_init(const struct dlb_host *h,
                            const struct dp_settings *s, void **eng)
{
    const struct dp_engine *e = dlb_nccl_load_logged(&loader, h);
    return e ? e->init(h, s, eng) : DLB_ERR_UNSUPPORTED;
}

/* The core calls these only after init succeeded, so the engine is
 * loaded. */
static dlb_status load_step(void *eng, struct dlb_model *model,
                            const struct dlb_batch *batch)
{
    const struct dp_engine *e = loader.engine;
    return e->step(eng, model, batch);
}

static dlb_status load_figures(void *eng, struct dlb_model *model,
                               struct dp_figures *out)
{
    const struct dp_engine *e = loader.engine;
    return e->figures(eng, model, out);
}

static void load_fini(void *eng)
{
    const struct dp_engine *e = loader.engine;
    if (e)
        e->fini(eng);
}

const struct dp_engine dp_engine_nccl = {
    .name = "nccl",
    .probe = load_probe,
    .init = load_init,
    .step = load_step,
    .figures = load_figures,
    .fini = load_fini,
};
