/* invocation.json, a run directory's record of how the run was started:
 * the suite file, the --set options, --quick, the plugin folders and the
 * shard. `--resume` rebuilds the plan from it and `dlbench merge` checks
 * that shards ran the same way; both read it through this struct, and its
 * one writer is here too. */
#ifndef DLB_CORE_INVOCATION_H
#define DLB_CORE_INVOCATION_H

#include <stddef.h>
#include <jansson.h>
#include "util/error.h"

struct dlb_invocation {
    char *suite;                /* the suite file as given; NULL when absent */
    char **sets;                /* --set options, in their order */
    size_t n_sets;
    int quick;
    char **plugin_dirs;         /* absolute where they could be resolved */
    size_t n_plugin_dirs;
    int shard_k, shard_n;       /* 0 and 0: not a shard */
};

/* Read PATH. A file that cannot be read or parsed is DLB_ERR_IO with the
 * parser's words alone in err->msg, for the caller to say what it was
 * doing; one without the "sets" and "plugin_dirs" arrays is DLB_ERR_INPUT,
 * "PATH: not a dlbench invocation record". Strings in the arrays that are
 * not strings are skipped. Free with dlb_invocation_free. */
dlb_status dlb_invocation_read(const char *path, struct dlb_invocation *out,
                               struct dlb_error *err);

/* The JSON form: suite, sets, quick, plugin_dirs, then shard when shard_n
 * is over 1. NULL when out of memory. */
json_t *dlb_invocation_write(const struct dlb_invocation *inv);

/* Append a --set option (copied). */
dlb_status dlb_invocation_add_set(struct dlb_invocation *inv, const char *set);

/* Whether two runs built the same plan from their suite: the same --set
 * options in the same order, and --quick alike. */
int dlb_invocation_same_plan(const struct dlb_invocation *a,
                             const struct dlb_invocation *b);

void dlb_invocation_free(struct dlb_invocation *inv);

#endif
