/* A plugin's trusted companion module: a shared object that the plugin
 * dlopens from beside its own .so, never through a search path or a
 * suite value, so that a plugin can keep a library (the CUDA runtime,
 * NCCL) out of its own link and load it only when a configuration asks.
 *
 * For a plugin NAME.so in DIR the module FILE is looked for at
 *   DIR/NAME/FILE          the installed layout (pkglibdir/NAME)
 *   DIR/../NAME/.libs/FILE libtool's build tree (make check)
 * and, as for plugins, a file that others could have replaced
 * (world-writable, in a world-writable directory, or owned by another
 * user than root or this one) is refused. A loaded module stays loaded:
 * the CUDA runtime does not survive being unloaded. */
#ifndef DLB_PLUGIN_MODULE_H
#define DLB_PLUGIN_MODULE_H

#include <stddef.h>

struct dlb_plugin_module {
    const char *who;        /* what the messages begin with: "engine nccl" */
    const char *plugin;     /* the plugin's name: "dp" */
    const char *file;       /* the module's file name: "dp_nccl.so" */
    const char *entry;      /* its one exported function */
    const char *kind;       /* what a good one is: "a dp nccl module" */
    int version;            /* the table version the plugin was built with */
    const char *built_with; /* what configure needs to build it */
    const void *anchor;     /* an address inside the plugin, for dladdr */
};

/* 1 when the table that the module's entry function (its address in
 * entry) returns is one the plugin can call, which it then keeps through
 * ctx; else 0. */
typedef int (*dlb_plugin_module_accept)(void *entry, void *ctx);

/* Find, check and load the module, and have accept judge its table.
 * 1 when accepted; else 0 with why not (missing, refused, cannot be
 * loaded, or from another build: then unloaded again) in why. */
int dlb_plugin_module_load(const struct dlb_plugin_module *m,
                           dlb_plugin_module_accept accept, void *ctx,
                           char *why, size_t len);

#endif
