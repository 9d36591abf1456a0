/* Engine nccl in a build with CUDA, NCCL and MPI: mp_nccl.so
 * (mp_nccl_module.h) loaded by the shared loader (nccl_load.h) on the
 * first configuration that asks for it, and every call passed on. */
#include <stdio.h>

#include "mp_nccl_module.h"
#include "nccl_load.h"

static int complete(const void *engine)
{
    const struct mp_engine *e = engine;
    return e->probe && e->init && e->step && e->figures && e->fini;
}

static struct dlb_nccl_loader loader = {
    .module = {
        .who = "engine nccl",
        .plugin = "mp",
        .file = MP_NCCL_MODULE_FILE,
        .entry = MP_NCCL_MODULE_ENTRY,
        .kind = "an mp nccl module",
        .version = MP_NCCL_MODULE_VERSION,
        .built_with = "CUDA toolkit with NCCL and MPI",
        .anchor = &mp_engine_nccl,
    },
    .engine_size = sizeof(struct mp_engine),
    .settings_size = sizeof(struct mp_settings),
    .figures_size = sizeof(struct mp_figures),
    .complete = complete,
};

static dlb_status load_probe(const struct dlb_host *h,
                             const struct mp_settings *s, char *reason,
                             size_t len)
{
    const struct mp_engine *e;
    if (dlb_nccl_need_cuda(h, "runs a stage per GPU", reason, len) != DLB_OK)
        return DLB_ERR_UNSUPPORTED;
    if (!DLB_MODEL_API_HAS(h->model_api, slice_backward_view)) {
        snprintf(reason, len, "engine nccl: this dlbench core's model "
                 "interface has no device views of the activations "
                 "(slice_input, slice_forward_view, slice_backward_view)");
        return DLB_ERR_UNSUPPORTED;
    }
    if (!(e = dlb_nccl_load(&loader, reason, len)))
        return DLB_ERR_UNSUPPORTED;
    return e->probe(h, s, reason, len);
}

static dlb_status load_init(const struct dlb_host *h,
                            const struct mp_settings *s, void **eng)
{
    const struct mp_engine *e = dlb_nccl_load_logged(&loader, h);
    return e ? e->init(h, s, eng) : DLB_ERR_UNSUPPORTED;
}

/* The core calls these only after init succeeded, so the engine is
 * loaded. */
static dlb_status load_step(void *eng, struct dlb_model *model,
                            const struct dlb_batch *batch)
{
    const struct mp_engine *e = loader.engine;
    return e->step(eng, model, batch);
}

static dlb_status load_figures(void *eng, struct mp_figures *out)
{
    const struct mp_engine *e = loader.engine;
    return e->figures(eng, out);
}

static void load_fini(void *eng)
{
    const struct mp_engine *e = loader.engine;
    if (e)
        e->fini(eng);
}

const struct mp_engine mp_engine_nccl = {
    .name = "nccl",
    .probe = load_probe,
    .init = load_init,
    .step = load_step,
    .figures = load_figures,
    .fini = load_fini,
};
