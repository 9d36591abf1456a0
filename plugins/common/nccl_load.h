/* Engine nccl's loader, for the plugins that keep that engine in a
 * module of its own (dp, mp): the plugin links no CUDA library, and the
 * module (PLUGIN_nccl.so, a companion module as plugin_module.h says) is
 * dlopen'ed on the first configuration that asks for engine = nccl. On a
 * machine without the CUDA runtime or NCCL the plugin still loads, and
 * those configurations are skipped with the loader's reason.
 *
 * The plugin keeps its typed engine: its own file fills a loader with
 * the module to look for and this build's struct sizes, and passes each
 * hook on to the engine the loader accepted. */
#ifndef DLB_NCCL_LOAD_H
#define DLB_NCCL_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/plugin.h>

#include "nccl_module.h"
#include "plugin_module.h"

struct dlb_nccl_loader {
    struct dlb_plugin_module module;
    /* This build's sizes of the plugin's engine, settings and figures. */
    uint32_t engine_size, settings_size, figures_size;
    /* 1 when the engine has every hook the plugin calls. */
    int (*complete)(const void *engine);
    /* The accepted engine; NULL until a load succeeds. */
    const void *engine;
};

/* DLB_OK when the configuration runs on backend cuda; else
 * DLB_ERR_UNSUPPORTED with "engine nccl WHAT: it needs backend = cuda
 * (...)". Ask this first: on a CPU backend it is the reason that
 * matters, whether or not the machine could load the module. */
dlb_status dlb_nccl_need_cuda(const struct dlb_host *h, const char *what,
                              char *reason, size_t len);

/* The module's engine, loaded and checked on the first call; NULL with
 * why not (missing, refused, from another build, a hook missing). */
const void *dlb_nccl_load(struct dlb_nccl_loader *l, char *why, size_t len);

/* The same for init, which has no reason to fill: why not goes to the
 * host's log. The core probes first, so this fails only for a caller
 * that skipped the probe. */
const void *dlb_nccl_load_logged(struct dlb_nccl_loader *l,
                                 const struct dlb_host *h);

#endif
