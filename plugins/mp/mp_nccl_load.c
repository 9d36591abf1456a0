/* Engine nccl in a build with CUDA, NCCL and MPI: mp_nccl.so found beside
 * this plugin, dlopen'ed on the first configuration that asks for it, its
 * table checked, and every call passed on (mp_nccl_module.h).
 *
 * The module is looked for only next to the mp.so that is running (found
 * with dladdr), never through a search path or a suite value:
 *   DIR/mp/mp_nccl.so          the installed layout (pkglibdir/mp)
 *   DIR/../mp/.libs/mp_nccl.so libtool's build tree (make check)
 * and, as for plugins, a file that others could have replaced
 * (world-writable, in a world-writable directory, or owned by another
 * user than root or this one) is refused. The module stays loaded: the
 * CUDA runtime does not survive being unloaded. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mp_nccl_module.h"

static const struct mp_engine *loaded;

/* 1 when the file at path may be loaded, else 0 with why not. */
static int trusted(const char *path, char *why, size_t len)
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
        snprintf(why, len, "engine nccl: refusing %s: %s", path, bad);
    return bad == NULL;
}

/* The module's path, or 0 with where it was looked for. */
static int find_module(char *path, size_t plen, char *why, size_t len)
{
    static const char *const rel[] = {"mp/" MP_NCCL_MODULE_FILE,
                                      "../mp/.libs/" MP_NCCL_MODULE_FILE, NULL};
    Dl_info info;
    char self[PATH_MAX], *dir;
    if (!dladdr((const void *)&mp_engine_nccl, &info) || !info.dli_fname) {
        snprintf(why, len, "engine nccl: cannot tell where the mp plugin was "
                 "loaded from, so not where %s is", MP_NCCL_MODULE_FILE);
        return 0;
    }
    snprintf(self, sizeof self, "%s", info.dli_fname);
    dir = dirname(self);
    for (const char *const *r = rel; *r; r++) {
        struct stat st;
        snprintf(path, plen, "%s/%s", dir, *r);
        if (lstat(path, &st) == 0)
            return trusted(path, why, len);
    }
    snprintf(why, len, "engine nccl: no %s in %s/mp (the mp plugin's "
             "directory); it is built with dlbench where configure finds the "
             "CUDA toolkit with NCCL and MPI: reinstall dlbench",
             MP_NCCL_MODULE_FILE, dir);
    return 0;
}

static int load(char *why, size_t len)
{
    char path[PATH_MAX];
    if (loaded)
        return 1;
    if (!find_module(path, sizeof path, why, len))
        return 0;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, len, "engine nccl: cannot load %s: %s (the CUDA runtime "
                 "and NCCL libraries must be installed; run ldd on it to see "
                 "which one is missing)", path, dlerror());
        return 0;
    }
    union { void *obj; mp_nccl_module_fn fn; } entry;
    entry.obj = dlsym(h, MP_NCCL_MODULE_ENTRY);
    const struct mp_nccl_module *m = entry.obj ? entry.fn() : NULL;
    if (!m || m->version != MP_NCCL_MODULE_VERSION ||
        m->engine_size != sizeof(struct mp_engine) ||
        m->settings_size != sizeof(struct mp_settings) ||
        m->figures_size != sizeof(struct mp_figures) || !m->engine ||
        !m->engine->probe || !m->engine->init || !m->engine->step ||
        !m->engine->figures || !m->engine->fini) {
        snprintf(why, len, "engine nccl: %s is not an mp nccl module of "
                 "version %d (missing or mismatched %s): it belongs to "
                 "another build of dlbench; reinstall", path,
                 MP_NCCL_MODULE_VERSION, MP_NCCL_MODULE_ENTRY);
        dlclose(h);
        return 0;
    }
    loaded = m->engine;
    return 1;
}

static dlb_status load_probe(const struct dlb_host *h,
                             const struct mp_settings *s, char *reason,
                             size_t len)
{
    /* Said first: on a CPU backend it is the reason that matters, whether
     * or not this machine could load the CUDA libraries. */
    if (!h->backend_name || strcmp(h->backend_name, "cuda") != 0) {
        snprintf(reason, len, "engine nccl runs a stage per GPU: it needs "
                 "backend = cuda (this configuration has backend %s)",
                 h->backend_name ? h->backend_name : "?");
        return DLB_ERR_UNSUPPORTED;
    }
    if (!DLB_STAGE_OPS_HAS(h->stage_ops, backward_view)) {
        snprintf(reason, len, "engine nccl: this dlbench core's stage_ops "
                 "has no device views of the activations (input_view, "
                 "forward_view, backward_view)");
        return DLB_ERR_UNSUPPORTED;
    }
    if (!load(reason, len))
        return DLB_ERR_UNSUPPORTED;
    return loaded->probe(h, s, reason, len);
}

/* The core probes before it initialises, so the module is loaded here;
 * the check is for a caller that skipped the probe. */
static dlb_status load_init(const struct dlb_host *h,
                            const struct mp_settings *s, void **eng)
{
    char why[512];
    if (!load(why, sizeof why)) {
        h->log(h, DLB_LOG_ERROR, "%s", why);
        return DLB_ERR_UNSUPPORTED;
    }
    return loaded->init(h, s, eng);
}

static dlb_status load_step(void *eng, struct dlb_model *model,
                            const struct dlb_batch *batch)
{
    return loaded->step(eng, model, batch);
}

static dlb_status load_figures(void *eng, struct mp_figures *out)
{
    return loaded->figures(eng, out);
}

static void load_fini(void *eng)
{
    if (loaded)
        loaded->fini(eng);
}

const struct mp_engine mp_engine_nccl = {
    .name = "nccl",
    .probe = load_probe,
    .init = load_init,
    .step = load_step,
    .figures = load_figures,
    .fini = load_fini,
};
