/* --resume: the options the run was started with (invocation.json) and
 * the records its journal already holds, checked against the plan that
 * the same suite copy and options rebuild. */
#include "run/run_resume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/path.h"
#include "results/repeat.h"
#include "results/results.h"

/* What --resume needs to rebuild the same plan. */
json_t *dlb_invocation_json(const struct dlb_options *o, const char *suite_path)
{
    json_t *sets = json_array(), *dirs = json_array();
    for (size_t i = 0; i < o->n_sets; i++)
        json_array_append_new(sets, json_string(o->sets[i]));
    for (size_t i = 0; i < o->n_plugin_dirs; i++) {
        char *abs = realpath(o->plugin_dirs[i], NULL);
        json_array_append_new(dirs, json_string(abs ? abs : o->plugin_dirs[i]));
        free(abs);
    }
    json_t *inv = json_pack("{s:s,s:o,s:b,s:o}", "suite", suite_path, "sets", sets,
                            "quick", o->quick, "plugin_dirs", dirs);
    if (inv && o->shard_n > 1)
        json_object_set_new(inv, "shard", json_pack("{s:i,s:i}", "k", o->shard_k,
                                                    "n", o->shard_n));
    return inv;
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
    json_error_t jerr;
    json_t *inv = json_load_file(path, 0, &jerr);
    dlb_status st = DLB_OK;
    json_t *sets, *dirs;
    if (!inv) {
        st = dlb_errorf(err, DLB_ERR_INPUT, "--resume %s: cannot read %s: %s", dir, path,
                        jerr.text);
    } else if (!json_is_array(sets = json_object_get(inv, "sets")) ||
               !json_is_array(dirs = json_object_get(inv, "plugin_dirs"))) {
        st = dlb_errorf(err, DLB_ERR_INPUT, "%s: not a dlbench invocation record", path);
    } else {
        /* The run's own settings come first; options given now add to
         * them, as --set does on a fresh run. */
        char **extra = o->sets;
        size_t n_extra = o->n_sets;
        o->sets = NULL;
        o->n_sets = 0;
        size_t i;
        json_t *v;
        json_array_foreach(sets, i, v)
            if (json_is_string(v))
                dlb_cli_add_set(o, json_string_value(v));
        for (i = 0; i < n_extra; i++) {
            dlb_cli_add_set(o, extra[i]);
            free(extra[i]);
        }
        free(extra);
        o->quick |= json_is_true(json_object_get(inv, "quick"));
        json_t *shard = json_object_get(inv, "shard");
        if (json_is_object(shard) && !o->shard_n) {
            o->shard_k = (int)json_integer_value(json_object_get(shard, "k"));
            o->shard_n = (int)json_integer_value(json_object_get(shard, "n"));
        }
        const char *orig = json_string_value(json_object_get(inv, "suite"));
        *origin = orig ? strdup(orig) : NULL;
        json_array_foreach(dirs, i, v)
            if (json_is_string(v))
                dlb_cli_add_plugin_dir(o, json_string_value(v));
    }
    json_decref(inv);
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
        size_t idx = (size_t)json_integer_value(json_object_get(v, "index"));
        const char *id = json_string_value(json_object_get(v, "id"));
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
        /* halving runs a configuration once per round (and repetition) */
        for (size_t j = 0; j < i; j++)
            if ((size_t)json_integer_value(json_object_get(json_array_get(records, j),
                                                           "index")) == idx &&
                dlb_round_of(json_array_get(records, j)) == dlb_round_of(v) &&
                dlb_rep_of(json_array_get(records, j)) == dlb_rep_of(v))
                return dlb_errorf(err, DLB_ERR_INPUT,
                                  "%s/journal.jsonl: configuration %zu appears twice "
                                  "(records %zu and %zu)", dir, idx, j + 1, i + 1);
    }
    return DLB_OK;
}

