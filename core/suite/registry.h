/* The plugin registry: finds plugins by exact file name NAME.so in the
 * plugin search path, dlopen()s them, and validates their descriptors. */
#ifndef DLB_CORE_REGISTRY_H
#define DLB_CORE_REGISTRY_H

#include <stddef.h>
#include <dlbench/plugin.h>
#include "util/error.h"

struct dlb_loaded_plugin {
    char *name;
    char *path;
    void *handle;                 /* from dlopen */
    const struct dlb_plugin *desc;
};

struct dlb_registry {
    char **dirs;                  /* search order */
    size_t n_dirs;
    struct dlb_loaded_plugin *loaded;
    size_t n_loaded;
};

/* Search path, in order: each --plugin-dir (`extra`, may be NULL), each dir
 * of $DLBENCH_PLUGIN_PATH (colon-separated), then `installed_dir`. */
dlb_status dlb_registry_init(struct dlb_registry *r, const char *const *extra,
                             size_t n_extra, const char *installed_dir,
                             struct dlb_error *err);
void dlb_registry_free(struct dlb_registry *r);

/* Load (once) the plugin NAME. Refuses, with one line naming the plugin and
 * what to do: no such file (lists the dirs searched), a symlink, a
 * world-writable file or directory, a file or directory owned by another
 * user who is not root, a world-writable directory above the plugin
 * directory without the sticky bit, a file that is not ELF, dlopen
 * failure (with what to do for its cause), missing
 * entry symbol, ABI major mismatch (both versions), a short descriptor, a
 * name that differs from the file name, a bad parameter table, hook points
 * set without init. *out points into r->loaded: it stays valid until the
 * next load or dlb_registry_free; (*out)->desc stays valid until the
 * registry is freed. */
dlb_status dlb_registry_load(struct dlb_registry *r, const char *name,
                             const struct dlb_loaded_plugin **out,
                             struct dlb_error *err);

/* Validate a descriptor as dlb_registry_load does (for unit tests). */
dlb_status dlb_plugin_validate(const struct dlb_plugin *d,
                               const char *expected_name, const char *path,
                               struct dlb_error *err);

/* Call fn for every NAME.so found in the search path (first dir wins for a
 * duplicate name), with the load status and error text. */
typedef void (*dlb_registry_visit_fn)(void *ctx, const char *name,
                                      const char *path,
                                      const struct dlb_loaded_plugin *p,
                                      dlb_status st, const char *why);
void dlb_registry_scan(struct dlb_registry *r, dlb_registry_visit_fn fn,
                       void *ctx);

#endif
