#include "util/cache_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int set(const char *v) { return v && *v; }

dlb_status dlb_cache_dir(char *buf, size_t len, struct dlb_error *err)
{
    const char *d = getenv("DLBENCH_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    struct dlb_error ignored;
    int n;
    if (!err)
        err = &ignored;
    if (set(d))
        n = snprintf(buf, len, "%s", d);
    else if (set(x))
        n = snprintf(buf, len, "%s/dlbench", x);
    else if (set(home))
        n = snprintf(buf, len, "%s/.cache/dlbench", home);
    else
        return dlb_errorf(err, DLB_ERR_INPUT, "no cache directory: set "
                          "DLBENCH_CACHE_DIR, XDG_CACHE_HOME or HOME");
    if (n < 0 || (size_t)n >= len)
        return dlb_errorf(err, DLB_ERR_INPUT, "the cache directory's name "
                          "is too long (%d characters); set a shorter "
                          "DLBENCH_CACHE_DIR", n);
    return DLB_OK;
}

dlb_status dlb_make_dirs(const char *dir, struct dlb_error *err)
{
    char d[4096];
    if (snprintf(d, sizeof d, "%s", dir) >= (int)sizeof d)
        return dlb_errorf(err, DLB_ERR_INPUT, "%.200s...: path too long", dir);
    for (char *p = d + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        int rc = mkdir(d, 0755), e = errno;
        *p = c;
        if (rc != 0 && e != EEXIST)
            return dlb_errorf(err, DLB_ERR_IO, "cannot create the cache "
                              "directory %s: %s (set DLBENCH_CACHE_DIR to "
                              "one that can be)", d, strerror(e));
        if (c == '\0')
            return DLB_OK;
    }
}
