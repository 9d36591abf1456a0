/* The plugin registry: search path, safe lookup by exact file name, dlopen,
 * and the load-time checks of a plugin's descriptor. */
#define _POSIX_C_SOURCE 200809L

#include "suite/registry.h"
#include "suite/param.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The size of ABI 1.0's descriptor: everything up to and including its last
 * field. A later minor version may append fields, so sizeof() of the current
 * struct would be the wrong floor once the header grows. */
#define DLB_PLUGIN_SIZE_1_0                                                 \
    (offsetof(struct dlb_plugin, metrics) +                                 \
     sizeof(((const struct dlb_plugin *)0)->metrics))

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static dlb_status add_dir(struct dlb_registry *r, const char *dir, size_t len,
                          struct dlb_error *err)
{
    /* An empty entry would mean the current directory, which is exactly the
     * kind of place a stray or planted .so lives; ignore it. */
    if (len == 0)
        return DLB_OK;
    char **dirs = realloc(r->dirs, (r->n_dirs + 1) * sizeof *dirs);
    if (!dirs)
        return dlb_errorf(err, DLB_ERR_NOMEM, "plugin search path: out of memory");
    r->dirs = dirs;
    char *d = malloc(len + 1);
    if (!d)
        return dlb_errorf(err, DLB_ERR_NOMEM, "plugin search path: out of memory");
    memcpy(d, dir, len);
    d[len] = '\0';
    /* Trailing slashes would only make the paths in messages look odd. */
    while (len > 1 && d[len - 1] == '/')
        d[--len] = '\0';
    r->dirs[r->n_dirs++] = d;
    return DLB_OK;
}

dlb_status dlb_registry_init(struct dlb_registry *r, const char *const *extra,
                             size_t n_extra, const char *installed_dir,
                             struct dlb_error *err)
{
    memset(r, 0, sizeof *r);
    dlb_status st = DLB_OK;
    for (size_t i = 0; i < n_extra && st == DLB_OK; i++)
        if (extra[i])
            st = add_dir(r, extra[i], strlen(extra[i]), err);

    const char *env = getenv("DLBENCH_PLUGIN_PATH");
    while (env && st == DLB_OK) {
        const char *colon = strchr(env, ':');
        size_t len = colon ? (size_t)(colon - env) : strlen(env);
        st = add_dir(r, env, len, err);
        env = colon ? colon + 1 : NULL;
    }

    if (installed_dir && st == DLB_OK)
        st = add_dir(r, installed_dir, strlen(installed_dir), err);
    if (st != DLB_OK)
        dlb_registry_free(r);
    return st;
}

void dlb_registry_free(struct dlb_registry *r)
{
    for (size_t i = 0; i < r->n_loaded; i++) {
        struct dlb_loaded_plugin *p = &r->loaded[i];
        if (p->handle)
            dlclose(p->handle);
        free(p->name);
        free(p->path);
    }
    free(r->loaded);
    for (size_t i = 0; i < r->n_dirs; i++)
        free(r->dirs[i]);
    free(r->dirs);
    memset(r, 0, sizeof *r);
}

/* A plugin name becomes part of a path, so it must not be able to climb
 * out of the plugin directory or name a hidden file. */
static int plain_name(const char *name)
{
    if (!name[0] || name[0] == '.' || name[0] == '-')
        return 0;
    for (const char *c = name; *c; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                 (*c >= '0' && *c <= '9') || *c == '_' || *c == '-';
        if (!ok)
            return 0;
    }
    return 1;
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + 1 + strlen(name) + sizeof ".so";
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s.so", dir, name);
    return p;
}

/* Whoever owns a file can change it: only root and the user running
 * dlbench may own the code it loads. */
static int foreign_owner(uid_t uid)
{
    return uid != 0 && uid != geteuid();
}

/* A directory above the plugin directory that anyone may write to, without
 * the sticky bit, lets anyone rename the plugin directory away and put
 * another in its place. */
static dlb_status check_ancestors(const char *name, const char *dir,
                                  struct dlb_error *err)
{
    char *real = realpath(dir, NULL);
    if (!real)
        return dlb_errorf(err, DLB_ERR_IO, "plugin %s: cannot resolve directory "
                          "%s: %s", name, dir, strerror(errno));
    dlb_status s = DLB_OK;
    for (char *slash = strrchr(real, '/'); slash && s == DLB_OK;
         slash = strrchr(real, '/')) {
        if (slash == real)
            slash[1] = '\0'; /* "/" itself */
        else
            *slash = '\0';
        struct stat as;
        if (stat(real, &as) == 0 && (as.st_mode & S_IWOTH) && !(as.st_mode & S_ISVTX))
            s = dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s: refusing plugins in "
                           "%s: the directory %s above it is world-writable "
                           "without the sticky bit, so any user could replace "
                           "it; run `chmod o-w %s`", name, dir, real, real);
        if (slash == real)
            break;
    }
    free(real);
    return s;
}

/* Refuse anything another user could have put there or could swap: a
 * symlink (its target is chosen by whoever made it, and may lie outside
 * the plugin directory), a file that is not a regular file, a file or
 * directory that is world-writable or owned by another user who is not
 * root. */
static dlb_status check_file(const char *name, const char *dir,
                             const char *path, const struct stat *st,
                             struct dlb_error *err)
{
    if (S_ISLNK(st->st_mode))
        return dlb_errorf(err, DLB_ERR_PLUGIN,
                          "plugin %s: refusing %s: it is a symbolic link; "
                          "install or copy the plugin there instead", name, path);
    if (!S_ISREG(st->st_mode))
        return dlb_errorf(err, DLB_ERR_PLUGIN,
                          "plugin %s: refusing %s: it is not a regular file",
                          name, path);
    if (st->st_mode & S_IWOTH)
        return dlb_errorf(err, DLB_ERR_PLUGIN,
                          "plugin %s: refusing %s: the file is world-writable, "
                          "so any user could change the code dlbench runs; "
                          "run `chmod o-w %s`", name, path, path);
    if (foreign_owner(st->st_uid))
        return dlb_errorf(err, DLB_ERR_PLUGIN,
                          "plugin %s: refusing %s: it is owned by user %lu, who "
                          "is neither you nor root and could change the code "
                          "dlbench runs; install it as yourself or as root",
                          name, path, (unsigned long)st->st_uid);
    struct stat ds;
    if (stat(dir, &ds) != 0)
        return dlb_errorf(err, DLB_ERR_IO, "plugin %s: cannot inspect directory "
                          "%s: %s", name, dir, strerror(errno));
    if (ds.st_mode & S_IWOTH)
        return dlb_errorf(err, DLB_ERR_PLUGIN,
                          "plugin %s: refusing %s: its directory %s is "
                          "world-writable, so any user could replace the "
                          "plugin; run `chmod o-w %s`", name, path, dir, dir);
    if (foreign_owner(ds.st_uid))
        return dlb_errorf(err, DLB_ERR_PLUGIN,
                          "plugin %s: refusing %s: its directory %s is owned by "
                          "user %lu, who is neither you nor root and could "
                          "replace the plugin; use a directory of your own",
                          name, path, dir, (unsigned long)ds.st_uid);
    return check_ancestors(name, dir, err);
}

/* The list of searched directories for the "not found" message. */
static void format_dirs(const struct dlb_registry *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (r->n_dirs == 0) {
        snprintf(buf, len, "(no plugin directory is configured)");
        return;
    }
    for (size_t i = 0; i < r->n_dirs && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                         r->dirs[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* The plugin file name closest to a misspelt NAME, for "did you mean";
 * NULL-terminated copy in buf, or "" when none is close. */
static void suggest_plugin(const struct dlb_registry *r, const char *name,
                           char *buf, size_t len)
{
    char *names[256];
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_dirs; i++) {
        DIR *d = opendir(r->dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) && n < 256) {
            size_t l = strlen(e->d_name);
            if (l > 3 && !strcmp(e->d_name + l - 3, ".so"))
                names[n++] = strndup(e->d_name, l - 3);
        }
        if (d)
            closedir(d);
    }
    const char *best = dlb_suggest(name, (const char *const *)names, n);
    if (best)
        snprintf(buf, len, " (did you mean '%s'?)", best);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
}

/* Look NAME.so up in the search path; *path_out is malloc'ed. */
static dlb_status find_plugin(const struct dlb_registry *r, const char *name,
                              char **path_out, struct dlb_error *err)
{
    for (size_t i = 0; i < r->n_dirs; i++) {
        char *path = join_path(r->dirs[i], name);
        if (!path)
            return dlb_errorf(err, DLB_ERR_NOMEM, "plugin %s: out of memory", name);
        struct stat st;
        if (lstat(path, &st) != 0) {
            int e = errno;
            if (e == ENOENT || e == ENOTDIR) {
                free(path);
                continue;
            }
            dlb_status s = dlb_errorf(err, DLB_ERR_IO, "plugin %s: cannot "
                                      "inspect %s: %s", name, path, strerror(e));
            free(path);
            return s;
        }
        /* The first directory that has the file decides: falling through
         * to a later one after a refusal would let the refused file's
         * presence silently change which code runs. */
        dlb_status s = check_file(name, r->dirs[i], path, &st, err);
        if (s != DLB_OK) {
            free(path);
            return s;
        }
        *path_out = path;
        return DLB_OK;
    }
    char dirs[768], hint[128];
    format_dirs(r, dirs, sizeof dirs);
    suggest_plugin(r, name, hint, sizeof hint);
    return dlb_errorf(err, DLB_ERR_INPUT,
                      "unknown plugin '%s'%s: no file %s.so in %s; add its directory "
                      "with --plugin-dir or $DLBENCH_PLUGIN_PATH", name, hint, name, dirs);
}

static const char *one_line(char *s)
{
    for (char *c = s; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    return s;
}

dlb_status dlb_plugin_validate(const struct dlb_plugin *d,
                               const char *expected_name, const char *path,
                               struct dlb_error *err)
{
    const char *n = expected_name;
    if (!d)
        return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s (%s): "
                          "dlb_plugin_entry returned NULL instead of a "
                          "descriptor", n, path);
    /* Only the first three fields are read before the version is known to
     * match: their layout is the one thing every ABI version shares. A 1.x
     * plugin reads model tables that 2.0 no longer has. */
    if (d->abi_major != DLB_PLUGIN_ABI_MAJOR)
        return dlb_errorf(err, DLB_ERR_PLUGIN,
                          "plugin %s (%s) was built for plugin ABI %u.%u; this "
                          "dlbench speaks %d.%d: rebuild it against dlbench "
                          "%d.%d's headers", n, path, (unsigned)d->abi_major,
                          (unsigned)d->abi_minor, DLB_PLUGIN_ABI_MAJOR,
                          DLB_PLUGIN_ABI_MINOR, DLB_PLUGIN_ABI_MAJOR,
                          DLB_PLUGIN_ABI_MINOR);
    if (d->struct_size < DLB_PLUGIN_SIZE_1_0)
        return dlb_errorf(err, DLB_ERR_PLUGIN,
                          "plugin %s (%s): short descriptor: struct_size is %u "
                          "bytes, plugin ABI %d.0 needs at least %zu; set "
                          ".struct_size = sizeof(struct dlb_plugin) and rebuild",
                          n, path, (unsigned)d->struct_size,
                          DLB_PLUGIN_ABI_MAJOR, (size_t)DLB_PLUGIN_SIZE_1_0);
    if (!d->name)
        return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s (%s): the descriptor "
                          "has no name; set .name = \"%s\"", n, path, n);
    if (strcmp(d->name, n) != 0)
        return dlb_errorf(err, DLB_ERR_PLUGIN,
                          "plugin %s (%s): the descriptor is named \"%.64s\", "
                          "not \"%s\"; the file name must be the descriptor's "
                          "name plus .so", n, path, d->name, n);
    /* Help output and results print these; NULL would crash them later,
     * far from the plugin at fault. */
    if (!d->version || !d->summary)
        return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s (%s): the descriptor "
                          "has no %s; set it to a short string", n, path,
                          d->version ? "summary" : "version");

    if (d->n_params > 0 && !d->params)
        return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s (%s): bad parameter "
                          "table: n_params is %u but params is NULL", n, path,
                          d->n_params);
    if (d->n_params > 0) {
        char why[512] = "";
        dlb_status st = dlb_param_table_check(d->params, d->n_params, why,
                                              sizeof why);
        if (st != DLB_OK)
            return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s (%s): bad "
                              "parameter table: %s", n, path, one_line(why));
        /* The suite parser adds an `enable` key to every plugin's table. */
        for (unsigned k = 0; k < d->n_params; k++)
            if (d->params[k].name && strcmp(d->params[k].name, "enable") == 0)
                return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s (%s): bad "
                                  "parameter table: the name \"enable\" is "
                                  "reserved by dlbench; rename the parameter",
                                  n, path);
    }

    /* Every hook point gets init's state; without init the hooks would run
     * on a NULL state the plugin never set up. */
    static const char *const point_names[] = {
        "allocator", "batch_source", "precision", "transform", "executor",
        "workload"
    };
    const void *points[] = {
        d->allocator, d->batch_source, d->precision, d->transform,
        d->executor, d->workload
    };
    for (size_t k = 0; k < sizeof points / sizeof points[0]; k++)
        if (points[k] && !d->init)
            return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s (%s): sets the %s "
                              "hook point but has no init; a plugin that "
                              "provides a hook point must provide init", n,
                              path, point_names[k]);

    /* The functions without which a hook point cannot stand in for its
     * baseline; the rest of each struct is optional. */
    const char *missing = NULL, *point = NULL;
    if (d->allocator) {
        point = "allocator";
        missing = !d->allocator->alloc ? "alloc"
                  : !d->allocator->free ? "free" : NULL;
    }
    if (!missing && d->batch_source) {
        point = "batch_source";
        missing = !d->batch_source->open ? "open"
                  : !d->batch_source->next ? "next"
                  : !d->batch_source->close ? "close" : NULL;
    }
    if (!missing && d->precision) {
        point = "precision";
        missing = !d->precision->compute_type ? "compute_type" : NULL;
    }
    if (!missing && d->transform) {
        point = "transform";
        missing = !d->transform->apply ? "apply" : NULL;
    }
    if (!missing && d->executor) {
        point = "executor";
        missing = !d->executor->train_step ? "train_step" : NULL;
    }
    if (!missing && d->workload) {
        point = "workload";
        missing = !d->workload->setup ? "setup"
                  : !d->workload->step ? "step"
                  : !d->workload->teardown ? "teardown" : NULL;
    }
    if (missing)
        return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s (%s): the %s hook "
                          "point has no %s, which it requires", n, path, point,
                          missing);
    return DLB_OK;
}

static const struct dlb_loaded_plugin *find_loaded(const struct dlb_registry *r,
                                                   const char *name)
{
    for (size_t i = 0; i < r->n_loaded; i++)
        if (strcmp(r->loaded[i].name, name) == 0)
            return &r->loaded[i];
    return NULL;
}

/* A file that is not ELF at all (a text file, a script, an archive) gets
 * its own message: dlopen's "file too short" or "invalid ELF header" with
 * advice to run ldd would send the user the wrong way. */
static dlb_status check_elf(const char *name, const char *path,
                            struct dlb_error *err)
{
    unsigned char magic[4] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "plugin %s: cannot open %s: %s", name,
                          path, strerror(errno));
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    if (n < sizeof magic || memcmp(magic, "\177ELF", 4) != 0)
        return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s: refusing %s: it is "
                          "not a shared object (%s); rebuild the plugin or "
                          "remove the file", name, path,
                          n == 0 ? "the file is empty" : "no ELF header");
    return DLB_OK;
}

/* What to do about a dlopen error, from its text. */
static const char *dlopen_advice(const char *why)
{
    if (strstr(why, "cannot open shared object file"))
        return "a library it needs is missing: run `ldd` on the plugin";
    if (strstr(why, "undefined symbol"))
        return "it uses a symbol nothing provides: rebuild it against this "
               "dlbench's headers (plugins must not use core symbols)";
    return "the file is damaged or not built for this machine: rebuild or "
           "reinstall it";
}

/* dlopen the file, find the entry point and check what it returns. */
static dlb_status open_plugin(const char *name, const char *path,
                              void **handle_out,
                              const struct dlb_plugin **desc_out,
                              struct dlb_error *err)
{
    dlb_status est = check_elf(name, path, err);
    if (est != DLB_OK)
        return est;
    dlerror();
    /* RTLD_NOW: an unresolved symbol is reported here, naming the plugin,
     * not as a crash in the middle of a measurement. RTLD_LOCAL: plugins
     * cannot see each other's symbols. */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        char why[512];
        snprintf(why, sizeof why, "%s", e ? e : "unknown error");
        one_line(why);
        return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s (%s): cannot load: "
                          "%s; %s", name, path, why, dlopen_advice(why));
    }
    dlerror();
    void *sym = dlsym(h, DLB_PLUGIN_ENTRY_NAME);
    if (!sym) {
        dlclose(h);
        return dlb_errorf(err, DLB_ERR_PLUGIN, "plugin %s (%s): no symbol "
                          DLB_PLUGIN_ENTRY_NAME "; is it a dlbench plugin?",
                          name, path);
    }
    /* ISO C has no conversion from object to function pointer; POSIX
     * guarantees the representation, so copy the bits. */
    dlb_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    const struct dlb_plugin *d = entry();
    dlb_status st = dlb_plugin_validate(d, name, path, err);
    if (st != DLB_OK) {
        dlclose(h);
        return st;
    }
    *handle_out = h;
    *desc_out = d;
    return DLB_OK;
}

dlb_status dlb_registry_load(struct dlb_registry *r, const char *name,
                             const struct dlb_loaded_plugin **out,
                             struct dlb_error *err)
{
    if (!name || !plain_name(name))
        return dlb_errorf(err, DLB_ERR_INPUT, "plugin name \"%.64s\" is not a "
                          "plain name: use letters, digits, '_' and '-'",
                          name ? name : "");
    const struct dlb_loaded_plugin *have = find_loaded(r, name);
    if (have) {
        if (out)
            *out = have;
        return DLB_OK;
    }

    char *path = NULL;
    dlb_status st = find_plugin(r, name, &path, err);
    if (st != DLB_OK)
        return st;

    struct dlb_loaded_plugin *grown =
        realloc(r->loaded, (r->n_loaded + 1) * sizeof *grown);
    if (!grown) {
        free(path);
        return dlb_errorf(err, DLB_ERR_NOMEM, "plugin %s: out of memory", name);
    }
    r->loaded = grown;
    struct dlb_loaded_plugin lp = { .name = dup_str(name), .path = path };
    if (!lp.name) {
        free(path);
        return dlb_errorf(err, DLB_ERR_NOMEM, "plugin %s: out of memory", name);
    }
    st = open_plugin(name, path, &lp.handle, &lp.desc, err);
    if (st != DLB_OK) {
        free(lp.name);
        free(path);
        return st;
    }
    r->loaded[r->n_loaded] = lp;
    if (out)
        *out = &r->loaded[r->n_loaded];
    r->n_loaded++;
    return DLB_OK;
}

/* ---- scan ------------------------------------------------------------- */

struct scan_entry {
    char *name;
    char *path;
};

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct scan_entry *)a)->name,
                  ((const struct scan_entry *)b)->name);
}

/* Collect NAME.so from every directory, keeping the first directory's file
 * for a name that appears twice, as dlb_registry_load would. */
static dlb_status collect(const struct dlb_registry *r, struct scan_entry **out,
                          size_t *n_out)
{
    struct scan_entry *v = NULL;
    size_t n = 0;
    for (size_t i = 0; i < r->n_dirs; i++) {
        DIR *dir = opendir(r->dirs[i]);
        if (!dir)
            continue; /* a missing directory in the path is not an error */
        struct dirent *de;
        while ((de = readdir(dir)) != NULL) {
            size_t len = strlen(de->d_name);
            if (len <= 3 || strcmp(de->d_name + len - 3, ".so") != 0)
                continue;
            char base[256];
            if (len - 3 >= sizeof base)
                continue;
            memcpy(base, de->d_name, len - 3);
            base[len - 3] = '\0';
            if (!plain_name(base))
                continue;
            int seen = 0;
            for (size_t k = 0; k < n && !seen; k++)
                seen = strcmp(v[k].name, base) == 0;
            if (seen)
                continue;
            struct scan_entry *g = realloc(v, (n + 1) * sizeof *g);
            if (!g)
                goto nomem;
            v = g;
            v[n].name = dup_str(base);
            v[n].path = join_path(r->dirs[i], base);
            if (!v[n].name || !v[n].path) {
                free(v[n].name);
                free(v[n].path);
                goto nomem;
            }
            n++;
            continue;
        nomem:
            closedir(dir);
            for (size_t k = 0; k < n; k++) {
                free(v[k].name);
                free(v[k].path);
            }
            free(v);
            return DLB_ERR_NOMEM;
        }
        closedir(dir);
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_entry);
    *out = v;
    *n_out = n;
    return DLB_OK;
}

void dlb_registry_scan(struct dlb_registry *r, dlb_registry_visit_fn fn,
                       void *ctx)
{
    struct scan_entry *v = NULL;
    size_t n = 0;
    if (collect(r, &v, &n) != DLB_OK) {
        fn(ctx, "", "", NULL, DLB_ERR_NOMEM,
           "listing plugins: out of memory");
        return;
    }
    for (size_t k = 0; k < n; k++) {
        struct dlb_error err = { "" };
        const struct dlb_loaded_plugin *p = NULL;
        dlb_status st = dlb_registry_load(r, v[k].name, &p, &err);
        fn(ctx, v[k].name, p ? p->path : v[k].path, st == DLB_OK ? p : NULL,
           st, st == DLB_OK ? "" : err.msg);
        free(v[k].name);
        free(v[k].path);
    }
    free(v);
}
