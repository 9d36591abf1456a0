/* Engine nccl as a loadable object of its own, mp_nccl.so.
 *
 * mp.so links no CUDA library: the engine that needs the CUDA runtime and
 * NCCL lives in mp_nccl.so, which mp dlopens (mp_nccl_load.c) only when a
 * configuration asks for engine = nccl, as dp does with dp_nccl.so. On a
 * machine without those libraries mp still loads, and engine = nccl
 * configurations are skipped with the loader's reason.
 *
 * mp_nccl.so exports one symbol, MP_NCCL_MODULE_ENTRY, returning this
 * table; the loader refuses another version or other struct sizes (a
 * stale module left in an installed tree by another build). */
#ifndef DLB_MP_NCCL_MODULE_H
#define DLB_MP_NCCL_MODULE_H

#include <stdint.h>

#include "mp.h"

/* Bump when struct mp_engine, mp_settings or mp_figures change meaning. */
#define MP_NCCL_MODULE_VERSION 1
#define MP_NCCL_MODULE_ENTRY "dlb_mp_nccl_module"
/* In DIR/mp/ beside the installed mp.so (pkglibdir/mp), or where libtool
 * leaves it in the build tree. */
#define MP_NCCL_MODULE_FILE "mp_nccl.so"

struct mp_nccl_module {
    uint32_t version;          /* MP_NCCL_MODULE_VERSION */
    uint32_t engine_size;      /* sizeof(struct mp_engine) */
    uint32_t settings_size;    /* sizeof(struct mp_settings) */
    uint32_t figures_size;     /* sizeof(struct mp_figures) */
    const struct mp_engine *engine;
};

typedef const struct mp_nccl_module *(*mp_nccl_module_fn)(void);

#endif
