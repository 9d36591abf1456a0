/* The nccl engine as a loadable object of its own, dp_nccl.so.
 *
 * dp.so links no CUDA library: the engine that needs the CUDA runtime
 * and NCCL lives in dp_nccl.so, which dp dlopens (dp_nccl_load.c) only
 * when a configuration asks for engine = nccl. On a machine without
 * those libraries dp still loads, and engine = nccl configurations are
 * skipped with the loader's reason.
 *
 * dp_nccl.so exports one symbol, DP_NCCL_MODULE_ENTRY, returning this
 * table. Both objects come from one build, but a stale dp_nccl.so left
 * in an installed tree must not be called with structures of another
 * layout: the loader refuses another version or other struct sizes. */
#ifndef DLB_DP_NCCL_MODULE_H
#define DLB_DP_NCCL_MODULE_H

#include <stdint.h>

#include "dp.h"

/* Bump when struct dp_engine, dp_settings or dp_figures change meaning. */
#define DP_NCCL_MODULE_VERSION 1
#define DP_NCCL_MODULE_ENTRY "dlb_dp_nccl_module"
/* The file, in DIR/dp/ beside the installed dp.so (pkglibdir/dp), or
 * where libtool leaves it in the build tree. */
#define DP_NCCL_MODULE_FILE "dp_nccl.so"

struct dp_nccl_module {
    uint32_t version;          /* DP_NCCL_MODULE_VERSION */
    uint32_t engine_size;      /* sizeof(struct dp_engine) */
    uint32_t settings_size;    /* sizeof(struct dp_settings) */
    uint32_t figures_size;     /* sizeof(struct dp_figures) */
    const struct dp_engine *engine;
};

typedef const struct dp_nccl_module *(*dp_nccl_module_fn)(void);

#endif
