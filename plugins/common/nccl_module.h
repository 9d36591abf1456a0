/* The table an engine nccl module returns: dp_nccl.so and mp_nccl.so
 * each export one function that returns it (dp_nccl_module.h,
 * mp_nccl_module.h), and the plugin's loader (nccl_load.h) checks it.
 *
 * Plugin and module come from one build, but a stale module left in an
 * installed tree must not be called with structures of another layout:
 * the loader refuses another version or other struct sizes. */
#ifndef DLB_NCCL_MODULE_H
#define DLB_NCCL_MODULE_H

#include <stdint.h>

struct dlb_nccl_module {
    uint32_t version;       /* the plugin's *_NCCL_MODULE_VERSION */
    uint32_t engine_size;   /* sizeof the plugin's engine struct */
    uint32_t settings_size; /* ... settings struct */
    uint32_t figures_size;  /* ... figures struct */
    const void *engine;     /* a struct dp_engine or struct mp_engine */
};

typedef const struct dlb_nccl_module *(*dlb_nccl_module_fn)(void);

#endif
