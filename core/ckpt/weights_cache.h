/* Where trained reference weights are cached between runs:
 * $DLBENCH_CACHE_DIR, else $XDG_CACHE_HOME/dlbench, else
 * $HOME/.cache/dlbench; below it weights/MODEL-sSEED-nSTEPS.safetensors. */
#ifndef DLB_CORE_MODEL_WEIGHTS_CACHE_H
#define DLB_CORE_MODEL_WEIGHTS_CACHE_H

#include <stdint.h>

#include "util/error.h"

/* The cache file of (model, seed, steps) as a malloc'ed path, creating
 * the directories it needs. `model` is a model name or a model file path,
 * of which the base name without ".ini" is used. */
dlb_status dlb_weights_cache_path(const char *model, uint64_t seed,
                                  uint64_t steps, char **out,
                                  struct dlb_error *err);

#endif
