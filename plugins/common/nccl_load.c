/* Engine nccl's loader (nccl_load.h). */
#include "nccl_load.h"

#include <stdio.h>
#include <string.h>

dlb_status dlb_nccl_need_cuda(const struct dlb_host *h, const char *what,
                              char *reason, size_t len)
{
    if (h->backend_name && strcmp(h->backend_name, "cuda") == 0)
        return DLB_OK;
    snprintf(reason, len, "engine nccl %s: it needs backend = cuda (this "
             "configuration has backend %s)", what,
             h->backend_name ? h->backend_name : "?");
    return DLB_ERR_UNSUPPORTED;
}

/* The table's version and struct sizes are this build's, and the engine
 * has every hook. */
static int accept(void *entry, void *ctx)
{
    struct dlb_nccl_loader *l = ctx;
    union { void *obj; dlb_nccl_module_fn fn; } f = {entry};
    const struct dlb_nccl_module *m = f.fn();
    if (!m || m->version != (uint32_t)l->module.version ||
        m->engine_size != l->engine_size ||
        m->settings_size != l->settings_size ||
        m->figures_size != l->figures_size || !m->engine ||
        !l->complete(m->engine))
        return 0;
    l->engine = m->engine;
    return 1;
}

const void *dlb_nccl_load(struct dlb_nccl_loader *l, char *why, size_t len)
{
    if (!l->engine)
        dlb_plugin_module_load(&l->module, accept, l, why, len);
    return l->engine;
}

const void *dlb_nccl_load_logged(struct dlb_nccl_loader *l,
                                 const struct dlb_host *h)
{
    char why[512];
    const void *engine = dlb_nccl_load(l, why, sizeof why);
    if (!engine)
        h->log(h, DLB_LOG_ERROR, "%s", why);
    return engine;
}
