/* The nccl engine as a loadable object of its own, dp_nccl.so.
 *
 * dp.so links no CUDA library: the engine that needs the CUDA runtime
 * and NCCL lives in dp_nccl.so, which dp loads (dp_nccl_load.c, with the
 * loader of nccl_load.h) only when a configuration asks for engine =
 * nccl. dp_nccl.so exports one symbol, DP_NCCL_MODULE_ENTRY, returning
 * the table of nccl_module.h with a struct dp_engine. */
#ifndef DLB_DP_NCCL_MODULE_H
#define DLB_DP_NCCL_MODULE_H

#include "dp.h"
#include "nccl_module.h"

/* Bump when struct dp_engine, dp_settings or dp_figures change meaning. */
#define DP_NCCL_MODULE_VERSION 1
#define DP_NCCL_MODULE_ENTRY "dlb_dp_nccl_module"
/* The file, in DIR/dp/ beside the installed dp.so (pkglibdir/dp), or
 * where libtool leaves it in the build tree. */
#define DP_NCCL_MODULE_FILE "dp_nccl.so"

#endif
