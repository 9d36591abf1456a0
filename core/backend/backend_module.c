/* Loading backend modules: find the file, dlopen it once per process,
 * check its entry, and lend it the core's backend helpers. */
#include "backend.h"
#include "backend_impl.h"
#include "backend_module.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef DLB_PKGLIBDIR
#define DLB_PKGLIBDIR "/usr/local/lib/dlbench"
#endif

#define MAX_MODULES 4

/* Modules stay loaded for the life of the process: a GPU runtime does
 * not survive being unloaded, and handles point into the module. */
static struct {
    char file[64];
    const struct dlb_backend_module *mod;
} loaded[MAX_MODULES];

static const struct dlb_backend_core core = {
    sizeof core, dlb_backend_new, dlb_conv2d_desc_check, dlb_pool_desc_check,
};

/* The directories searched, in order, as one printable list. */
static void search_dirs(char *buf, size_t len)
{
    const char *env = getenv("DLBENCH_BACKEND_PATH");
    snprintf(buf, len, "%s%s%s/backends", env && *env ? env : "",
             env && *env ? ":" : "", DLB_PKGLIBDIR);
}

/* The first DIR/file that is a regular file, not world-writable (anyone
 * could replace what dlbench runs), else NULL with the reason. */
static char *find_module(const char *name, const char *file, char *reason,
                         size_t len)
{
    char dirs[4096];
    char *save = NULL;
    search_dirs(dirs, sizeof dirs);
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        size_t n = strlen(d) + strlen(file) + 2;
        char *path = malloc(n);
        struct stat st;
        if (!path)
            break;
        snprintf(path, n, "%s/%s", d, file);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (!(st.st_mode & S_IWOTH))
                return path;
            snprintf(reason, len, "backend %s: refusing %s: the file is "
                     "world-writable", name, path);
            free(path);
            return NULL;
        }
        free(path);
    }
    search_dirs(dirs, sizeof dirs);
    snprintf(reason, len, "backend %s is not built in: no %s in %s (configure "
             "found no toolkit for it, or it is not installed; "
             "DLBENCH_BACKEND_PATH adds directories)", name, file, dirs);
    return NULL;
}

static const struct dlb_backend_module *load(const char *name, const char *file,
                                             char *reason, size_t len)
{
    size_t slot = MAX_MODULES;
    for (size_t i = 0; i < MAX_MODULES; i++) {
        if (loaded[i].mod && !strcmp(loaded[i].file, file))
            return loaded[i].mod;
        if (!loaded[i].mod && slot == MAX_MODULES)
            slot = i;
    }
    char *path = find_module(name, file, reason, len);
    if (!path)
        return NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(reason, len, "backend %s: cannot load %s: %s (run ldd on it "
                 "to see which library is missing)", name, path, dlerror());
        free(path);
        return NULL;
    }
    union { void *obj; dlb_backend_module_entry_fn fn; } entry;
    entry.obj = dlsym(h, DLB_BACKEND_MODULE_ENTRY);
    const struct dlb_backend_module *m = entry.obj ? entry.fn() : NULL;
    if (!m || m->struct_size < sizeof *m || m->api_major != DLB_BACKEND_API_MAJOR ||
        !m->create || !m->probe || !m->name || strcmp(m->name, name) != 0) {
        snprintf(reason, len, "backend %s: %s is not a dlbench %s module of "
                 "interface %d.x (missing or mismatched %s): rebuild it with "
                 "this dlbench", name, path, name, DLB_BACKEND_API_MAJOR,
                 DLB_BACKEND_MODULE_ENTRY);
        dlclose(h);
        free(path);
        return NULL;
    }
    free(path);
    if (slot < MAX_MODULES) {
        snprintf(loaded[slot].file, sizeof loaded[slot].file, "%s", file);
        loaded[slot].mod = m;
    }
    return m;
}

dlb_status dlb_backend_module_open(const char *name, const char *file,
                                   const struct dlb_backend_config *cfg,
                                   struct dlb_backend **out, char *reason,
                                   size_t len)
{
    const struct dlb_backend_module *m = load(name, file, reason, len);
    *out = NULL;
    if (!m)
        return DLB_ERR_UNSUPPORTED;
    return m->create(&core, cfg, out, reason, len);
}

int dlb_backend_module_available(const char *name, const char *file,
                                 char *reason, size_t len)
{
    const struct dlb_backend_module *m = load(name, file, reason, len);
    return m ? m->probe(reason, len) : 0;
}

dlb_status dlb_backend_module_raw_alloc(const char *name, const char *file,
                                        int device, size_t bytes, void **out,
                                        char *reason, size_t len)
{
    const struct dlb_backend_module *m = load(name, file, reason, len);
    *out = NULL;
    if (!m)
        return DLB_ERR_UNSUPPORTED;
    if (!m->raw_alloc) {
        snprintf(reason, len, "backend %s lends no device memory outside its "
                 "buffers", name);
        return DLB_ERR_UNSUPPORTED;
    }
    return m->raw_alloc(device, bytes, out, reason, len);
}

/* Only memory raw_alloc gave, so the module is loaded already. */
void dlb_backend_module_raw_free(const char *name, const char *file,
                                 int device, void *p, size_t bytes)
{
    char why[256];
    const struct dlb_backend_module *m = load(name, file, why, sizeof why);
    if (m && m->raw_free && p)
        m->raw_free(device, p, bytes);
}
