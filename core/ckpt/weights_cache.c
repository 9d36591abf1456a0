/* The reference-weights cache directory and file names. */
#include "ckpt/weights_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* mkdir -p, for directories only the user needs to read. */
static dlb_status make_dirs(char *path, struct dlb_error *err)
{
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        int rc = mkdir(path, 0755);
        int e = errno;
        *p = c;
        if (rc != 0 && e != EEXIST)
            return dlb_errorf(err, DLB_ERR_IO, "cannot create the weights "
                              "cache directory %s: %s (set DLBENCH_CACHE_DIR)",
                              path, strerror(e));
        if (c == '\0')
            return DLB_OK;
    }
}

static int set(const char *v) { return v && *v; }

dlb_status dlb_weights_cache_path(const char *model, uint64_t seed,
                                  uint64_t steps, char **out,
                                  struct dlb_error *err)
{
    const char *env = getenv("DLBENCH_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    const char *base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
    size_t blen = strlen(base);
    char dir[4096], *path;
    int n;
    *out = NULL;
    if (blen > 4 && !strcmp(base + blen - 4, ".ini"))
        blen -= 4;
    if (set(env))
        n = snprintf(dir, sizeof dir, "%s/weights", env);
    else if (set(xdg))
        n = snprintf(dir, sizeof dir, "%s/dlbench/weights", xdg);
    else if (set(home))
        n = snprintf(dir, sizeof dir, "%s/.cache/dlbench/weights", home);
    else
        return dlb_errorf(err, DLB_ERR_INPUT, "no cache directory for the "
                          "reference weights: set DLBENCH_CACHE_DIR");
    if (n < 0 || (size_t)n >= sizeof dir)
        return dlb_errorf(err, DLB_ERR_INPUT, "weights cache path too long");
    dlb_status s = make_dirs(dir, err);
    if (s != DLB_OK)
        return s;
    size_t len = strlen(dir) + blen + 64;
    if (!(path = malloc(len)))
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    snprintf(path, len, "%s/%.*s-s%llu-n%llu.safetensors", dir, (int)blen, base,
             (unsigned long long)seed, (unsigned long long)steps);
    *out = path;
    return DLB_OK;
}
