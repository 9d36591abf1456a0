/* Engine nccl as a loadable object of its own, mp_nccl.so.
 *
 * mp.so links no CUDA library: the engine that needs the CUDA runtime and
 * NCCL lives in mp_nccl.so, which mp loads (mp_nccl_load.c, with the
 * loader of nccl_load.h) only when a configuration asks for engine =
 * nccl, as dp does with dp_nccl.so. mp_nccl.so exports one symbol,
 * MP_NCCL_MODULE_ENTRY, returning the table of nccl_module.h with a
 * struct mp_engine. */
#ifndef DLB_MP_NCCL_MODULE_H
#define DLB_MP_NCCL_MODULE_H

#include "mp.h"
#include "nccl_module.h"

/* Bump when struct mp_engine, mp_settings or mp_figures change meaning. */
#define MP_NCCL_MODULE_VERSION 1
#define MP_NCCL_MODULE_ENTRY "dlb_mp_nccl_module"
/* In DIR/mp/ beside the installed mp.so (pkglibdir/mp), or where libtool
 * leaves it in the build tree. */
#define MP_NCCL_MODULE_FILE "mp_nccl.so"

#endif
