/* The directory dlbench keeps its caches in (reference weights, the peak
 * probe, cuDNN's algorithm choices, plugins' decoded data), one rule for
 * all of them. */
#ifndef DLB_CORE_CACHE_DIR_H
#define DLB_CORE_CACHE_DIR_H

#include <stddef.h>

#include "util/error.h"

/* buf = $DLBENCH_CACHE_DIR, else $XDG_CACHE_HOME/dlbench, else
 * $HOME/.cache/dlbench (empty variables count as unset, as the XDG spec
 * says). DLB_ERR_INPUT with err saying which to set when none is, or when
 * the name does not fit in len; err may be NULL. */
dlb_status dlb_cache_dir(char *buf, size_t len, struct dlb_error *err);

/* mkdir -p dir (0755); DLB_ERR_IO with err naming the directory that
 * could not be made. */
dlb_status dlb_make_dirs(const char *dir, struct dlb_error *err);

#endif
