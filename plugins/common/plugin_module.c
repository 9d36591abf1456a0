/* A plugin's trusted companion module (plugin_module.h). */
#define _GNU_SOURCE /* dladdr */
#include "plugin_module.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 when the file at path may be loaded, else 0 with why not. */
static int trusted(const struct dlb_plugin_module *m, const char *path,
                   char *why, size_t len)
{
    struct stat f, d;
    char dir[PATH_MAX];
    const char *bad = NULL;
    snprintf(dir, sizeof dir, "%s", path);
    if (lstat(path, &f) != 0 || stat(dirname(dir), &d) != 0)
        bad = "cannot stat it or its directory";
    else if (!S_ISREG(f.st_mode))
        bad = "not a regular file";
    else if ((f.st_mode & S_IWOTH) || (d.st_mode & S_IWOTH))
        bad = "it or its directory is world-writable";
    else if (f.st_uid != 0 && f.st_uid != geteuid())
        bad = "owned by another user than root or this one";
    if (bad)
        snprintf(why, len, "%s: refusing %s: %s", m->who, path, bad);
    return bad == NULL;
}

/* The module's path, or 0 with where it was looked for. */
static int find_module(const struct dlb_plugin_module *m, char *path,
                       size_t plen, char *why, size_t len)
{
    const char *const rel[] = {"", "../", NULL};
    Dl_info info;
    char self[PATH_MAX], *dir;
    if (!dladdr(m->anchor, &info) || !info.dli_fname) {
        snprintf(why, len, "%s: cannot tell where the %s plugin was loaded "
                 "from, so not where %s is", m->who, m->plugin, m->file);
        return 0;
    }
    snprintf(self, sizeof self, "%s", info.dli_fname);
    dir = dirname(self);
    for (const char *const *r = rel; *r; r++) {
        struct stat st;
        snprintf(path, plen, "%s/%s%s/%s%s", dir, *r, m->plugin,
                 **r ? ".libs/" : "", m->file);
        if (lstat(path, &st) == 0)
            return trusted(m, path, why, len);
    }
    snprintf(why, len, "%s: no %s in %s/%s (the %s plugin's directory); it "
             "is built with dlbench where configure finds the %s: reinstall "
             "dlbench", m->who, m->file, dir, m->plugin, m->plugin,
             m->built_with);
    return 0;
}

int dlb_plugin_module_load(const struct dlb_plugin_module *m,
                           dlb_plugin_module_accept accept, void *ctx,
                           char *why, size_t len)
{
    char path[PATH_MAX];
    if (!find_module(m, path, sizeof path, why, len))
        return 0;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, len, "%s: cannot load %s: %s (the CUDA runtime and "
                 "NCCL libraries must be installed; run ldd on it to see "
                 "which one is missing)", m->who, path, dlerror());
        return 0;
    }
    void *entry = dlsym(h, m->entry);
    if (!entry || !accept(entry, ctx)) {
        snprintf(why, len, "%s: %s is not %s of version %d (missing or "
                 "mismatched %s): it belongs to another build of dlbench; "
                 "reinstall", m->who, path, m->kind, m->version, m->entry);
        dlclose(h);
        return 0;
    }
    return 1;
}
