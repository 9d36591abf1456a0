/* Suite files: parsing (inih) and validation against the core's key table
 * and the parameter tables of the plugins the suite uses.
 *
 * Layout of a suite file:
 *   [suite]    core keys (core/suite/suite_keys.c): name, mode, model, batch ...
 *   [sweep]    axes: `key = v1, v2` or a range `16:1024:x2`; plus filters
 *              `skip = key=v key2=a|b` and `only = ...` (repeatable)
 *   [quick]    overrides applied under --quick (fixed keys or axes)
 *   [NAME]     fixed settings of plugin NAME; the section itself makes the
 *              plugin active, as does any `NAME.key` in [sweep] or `plugins`.
 * Keys in [sweep] and [quick] are `key` for core keys, `NAME.key` for
 * plugin keys. Every plugin also has the implicit bool key `enable`. */
#ifndef DLB_CORE_SUITE_H
#define DLB_CORE_SUITE_H

#include <stddef.h>
#include <stdint.h>
#include <dlbench/param.h>
#include <dlbench/plugin.h>
#include "util/error.h"

/* A parameter namespace: ns 0 is always the core ("suite"); ns k >= 1 is
 * the k-th active plugin, whose table is its own plus `enable` appended. */
struct dlb_ns {
    char *name;                       /* "suite" or the plugin name */
    const struct dlb_plugin *plugin;  /* NULL for ns 0 */
    struct dlb_param_def *defs;       /* owned copy: plugin table + enable */
    unsigned n;
};

/* A key resolved to (namespace, parameter). */
struct dlb_keyref {
    unsigned ns, param;
};

struct dlb_setting {          /* a fixed `key = value` */
    struct dlb_keyref ref;
    char *text;
    int line;
};

struct dlb_axis {             /* a sweep axis, already expanded */
    struct dlb_keyref ref;
    char **items;
    size_t n;
    int line;
};

struct dlb_filter_term {
    struct dlb_keyref ref;
    char **items;             /* canonical texts; matches when equal to any */
    size_t n;
    int negate;               /* `key!=v` */
};

struct dlb_filter {           /* all terms must match */
    int only;                 /* 1: `only`, 0: `skip` */
    struct dlb_filter_term *terms;
    size_t n;
    int line;
};

struct dlb_suite {
    char *path;               /* as opened */
    char *name;               /* [suite] name, else the file's base name */
    uint32_t crc32;           /* of the file's bytes */
    struct dlb_ns *ns;
    unsigned n_ns;
    struct dlb_setting *fixed;    size_t n_fixed;
    struct dlb_axis *axes;        size_t n_axes;
    struct dlb_filter *filters;   size_t n_filters;
    struct dlb_setting *quick;    size_t n_quick;  /* [quick] fixed keys */
    struct dlb_axis *quick_axes;  size_t n_quick_axes; /* [quick] lists */
};

/* Finds a plugin's descriptor by name; on failure fills err (e.g. "unknown
 * plugin 'ampp' (did you mean 'amp'?)") and returns non-OK. */
typedef dlb_status (*dlb_plugin_lookup_fn)(void *ctx, const char *name,
                                           const struct dlb_plugin **out,
                                           struct dlb_error *err);

/* Parse and validate a suite file. Errors are "FILE:LINE: what; expected
 * ...", with a "did you mean" for misspelt keys, sections and choices. */
dlb_status dlb_suite_load(const char *path, dlb_plugin_lookup_fn lookup,
                          void *lookup_ctx, struct dlb_suite *out,
                          struct dlb_error *err);
void dlb_suite_free(struct dlb_suite *s);

/* Parse the value of a [sweep] `skip` (only = 0) or `only` (only = 1) line
 * at `line` of s->path and append it to s->filters (core/suite/suite_filter.c).
 * Errors are "FILE:LINE: skip: ...". */
dlb_status dlb_suite_add_filter(struct dlb_suite *s, int only,
                                const char *value, int line,
                                struct dlb_error *err);

/* Resolve "batch" or "amp.precision" against the suite's namespaces. */
dlb_status dlb_suite_resolve_key(const struct dlb_suite *s, const char *key,
                                 struct dlb_keyref *out, struct dlb_error *err);

/* Write the full key name ("batch", "amp.precision") into buf. */
void dlb_suite_key_name(const struct dlb_suite *s, struct dlb_keyref ref,
                        char *buf, size_t len);

/* Locate a suite by name: an existing path as given; else NAME.ini in
 * ./suites, each dir of $DLBENCH_SUITE_PATH (colon-separated), then
 * `installed_dir`. Returns a malloc'ed path or NULL with err set. */
char *dlb_suite_find(const char *name_or_path, const char *installed_dir,
                     struct dlb_error *err);

/* The core's [suite] key table (core/suite/suite_keys.c). */
extern const struct dlb_param_def dlb_suite_keys[];
extern const unsigned dlb_suite_n_keys;

#endif
