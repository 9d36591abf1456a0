/* The reference-weights cache directory and file names. */
#include "ckpt/weights_cache.h"

#include "util/cache_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dlb_status dlb_weights_cache_path(const char *model, uint64_t seed,
                                  uint64_t steps, char **out,
                                  struct dlb_error *err)
{
    const char *base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
    size_t blen = strlen(base);
    char dir[4096], *path;
    dlb_status s;
    *out = NULL;
    if (blen > 4 && !strcmp(base + blen - 4, ".ini"))
        blen -= 4;
    if ((s = dlb_cache_dir(dir, sizeof dir - 8, err)) != DLB_OK)
        return s;
    strcat(dir, "/weights");
    if ((s = dlb_make_dirs(dir, err)) != DLB_OK)
        return s;
    size_t len = strlen(dir) + blen + 64;
    if (!(path = malloc(len)))
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    snprintf(path, len, "%s/%.*s-s%llu-n%llu.safetensors", dir, (int)blen, base,
             (unsigned long long)seed, (unsigned long long)steps);
    *out = path;
    return DLB_OK;
}
