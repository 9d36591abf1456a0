/* --resume: the options the run was started with (invocation.json) and
 * the records its journal already holds, checked against the plan that
 * the same suite copy and options rebuild. */
#include "run/run_resume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/path.h"
#include "results/invocation.h"
#include "results/record.h"
#include "results/remeasure.h"
#include "results/seeds.h"
#include "results/repeat.h"
#include "results/results.h"

/* What --resume needs to rebuild the same plan. */
json_t *dlb_invocation_json(const struct dlb_options *o, const char *suite_path)
{
    struct dlb_invocation inv = {0};
    json_t *doc = NULL;
    inv.suite = strdup(suite_path);
    inv.quick = o->quick;
    inv.plugin_dirs = calloc(o->n_plugin_dirs + 1, sizeof *inv.plugin_dirs);
    if (!inv.suite || !inv.plugin_dirs)
        goto out;
    for (size_t i = 0; i < o->n_sets; i++)
        if (dlb_invocation_add_set(&inv, o->sets[i]) != DLB_OK)
            goto out;
    for (; inv.n_plugin_dirs < o->n_plugin_dirs; inv.n_plugin_dirs++) {
        const char *d = o->plugin_dirs[inv.n_plugin_dirs];
        char *abs = realpath(d, NULL);
        if (!abs && !(abs = strdup(d)))
            goto out;
        inv.plugin_dirs[inv.n_plugin_dirs] = abs;
    }
    if (o->shard_n > 1) {
        inv.shard_k = o->shard_k;
        inv.shard_n = o->shard_n;
    }
    doc = dlb_invocation_write(&inv);
out:
    dlb_invocation_free(&inv);
    return doc;
}

/* A --set that invocation.json holds (the first n_saved of o->sets) was
 * not typed by the user: say where it comes from. */
void dlb_resume_blame_invocation(const struct dlb_options *o, size_t n_saved,
                             const char *dir, struct dlb_error *err)
{
    for (size_t i = 0; i < n_saved && i < o->n_sets; i++) {
        char head[1100];
        snprintf(head, sizeof head, "--set %s:", o->sets[i]);
        if (!strncmp(err->msg, head, strlen(head))) {
            struct dlb_error e = *err;
            dlb_errorf(err, DLB_ERR_INPUT, "%s/invocation.json: \"sets\" holds %s",
                       dir, e.msg + 6);
            return;
        }
    }
}

dlb_status dlb_resume_load_invocation(struct dlb_options *o, const char *dir,
                                  char **origin, struct dlb_error *err)
{
    char *path = dlb_path_join(dir, "invocation.json");
    struct dlb_invocation inv;
    dlb_status st = path ? dlb_invocation_read(path, &inv, err)
                         : dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    if (st == DLB_ERR_IO) {
        struct dlb_error e = *err;
        st = dlb_errorf(err, DLB_ERR_INPUT, "--resume %s: cannot read %s: %s", dir,
                        path, e.msg);
    }
    if (st == DLB_OK) {
        /* The run's own settings come first; options given now add to
         * them, as --set does on a fresh run. */
        char **extra = o->sets;
        size_t n_extra = o->n_sets, i;
        o->sets = NULL;
        o->n_sets = 0;
        for (i = 0; i < inv.n_sets; i++)
            dlb_cli_add_set(o, inv.sets[i]);
        for (i = 0; i < n_extra; i++) {
            dlb_cli_add_set(o, extra[i]);
            free(extra[i]);
        }
        free(extra);
        o->quick |= inv.quick;
        if (inv.shard_n && !o->shard_n) {
            o->shard_k = inv.shard_k;
            o->shard_n = inv.shard_n;
        }
        *origin = inv.suite;
        inv.suite = NULL;
        for (i = 0; i < inv.n_plugin_dirs; i++)
            dlb_cli_add_plugin_dir(o, inv.plugin_dirs[i]);
        dlb_invocation_free(&inv);
    }
    free(path);
    return st;
}

/* Records already in the journal, on --resume. */
dlb_status dlb_resume_read_journal(const char *dir, json_t **records,
                                   struct dlb_error *err)
{
    char *path = dlb_path_join(dir, "journal.jsonl");
    int torn = 0;
    json_t *recs = NULL;
    struct stat sb;
    dlb_status st = DLB_OK;
    if (stat(path, &sb) != 0) {
        recs = json_array();
    } else {
        st = dlb_journal_read(path, &recs, &torn, err);
    }
    /* dlb_journal_open cuts the torn line off before the next append. */
    if (st == DLB_OK && torn)
        fprintf(stderr, "dlbench: warning: %s: the last line was cut short (an "
                        "interrupted write); it is dropped and that configuration runs again\n",
                path);
    free(path);
    if (st != DLB_OK) {
        json_decref(recs);
        return st;
    }
    *records = recs;
    return DLB_OK;
}

dlb_status dlb_resume_check_records(const struct dlb_plan *p, const char *dir,
                                    json_t *records, struct dlb_error *err)
{
    size_t i;
    json_t *v;
    json_array_foreach(records, i, v) {
        size_t idx = (size_t)dlb_rec_index_of(v);
        const char *id = dlb_rec_id_of(v);
        int known = 0;
        for (size_t k = 0; k < p->n; k++)
            if (p->configs[k].index == idx && id &&
                !strcmp(p->configs[k].id, id))
                known = 1;
        if (!known)
            return dlb_errorf(err, DLB_ERR_INPUT,
                              "%s/journal.jsonl: record %zu (index %zu, '%s') is not a "
                              "configuration of this run's suite; the journal does not "
                              "belong to %s/suite.ini", dir, i + 1, idx, id ? id : "?",
                              dir);
        /* halving runs a configuration once per round (and repetition),
         * remeasure_doubtful once per attempt */
        for (size_t j = 0; j < i; j++)
            if (dlb_rec_index_of(json_array_get(records, j)) == (long long)idx &&
                dlb_round_of(json_array_get(records, j)) == dlb_round_of(v) &&
                dlb_rep_of(json_array_get(records, j)) == dlb_rep_of(v) &&
                dlb_attempt_of(json_array_get(records, j)) == dlb_attempt_of(v) &&
                dlb_seed_rep_of(json_array_get(records, j)) == dlb_seed_rep_of(v))
                return dlb_errorf(err, DLB_ERR_INPUT,
                                  "%s/journal.jsonl: configuration %zu appears twice "
                                  "(records %zu and %zu)", dir, idx, j + 1, i + 1);
    }
    return DLB_OK;
}

