/* invocation.json's one reader and one writer (core/results/invocation.h). */
#define _POSIX_C_SOURCE 200809L
#include "results/invocation.h"

#include <stdlib.h>
#include <string.h>

static dlb_status push(char ***list, size_t *n, const char *s)
{
    char *copy = strdup(s);
    char **grown = copy ? realloc(*list, (*n + 1) * sizeof *grown) : NULL;
    if (!grown) {
        free(copy);
        return DLB_ERR_NOMEM;
    }
    grown[(*n)++] = copy;
    *list = grown;
    return DLB_OK;
}

static dlb_status strings(json_t *a, char ***list, size_t *n)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
        if (json_is_string(v) && push(list, n, json_string_value(v)) != DLB_OK)
            return DLB_ERR_NOMEM;
    return DLB_OK;
}

dlb_status dlb_invocation_read(const char *path, struct dlb_invocation *out,
                               struct dlb_error *err)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    if (!doc)
        return dlb_errorf(err, DLB_ERR_IO, "%s", jerr.text);
    json_t *sets = json_object_get(doc, "sets");
    json_t *dirs = json_object_get(doc, "plugin_dirs");
    json_t *shard = json_object_get(doc, "shard");
    const char *suite = json_string_value(json_object_get(doc, "suite"));
    dlb_status st = DLB_OK;
    if (!json_is_array(sets) || !json_is_array(dirs))
        st = dlb_errorf(err, DLB_ERR_INPUT, "%s: not a dlbench invocation record",
                        path);
    else if ((suite && !(out->suite = strdup(suite))) ||
             strings(sets, &out->sets, &out->n_sets) != DLB_OK ||
             strings(dirs, &out->plugin_dirs, &out->n_plugin_dirs) != DLB_OK)
        st = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory reading %s", path);
    out->quick = json_is_true(json_object_get(doc, "quick"));
    if (json_is_object(shard)) {
        out->shard_k = (int)json_integer_value(json_object_get(shard, "k"));
        out->shard_n = (int)json_integer_value(json_object_get(shard, "n"));
    }
    json_decref(doc);
    if (st != DLB_OK)
        dlb_invocation_free(out);
    return st;
}

static json_t *array_of(char *const *list, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(list[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

json_t *dlb_invocation_write(const struct dlb_invocation *inv)
{
    json_t *doc = json_pack("{s:s?,s:o?,s:b,s:o?}", "suite", inv->suite,
                            "sets", array_of(inv->sets, inv->n_sets),
                            "quick", inv->quick, "plugin_dirs",
                            array_of(inv->plugin_dirs, inv->n_plugin_dirs));
    if (doc && inv->shard_n > 1 &&
        json_object_set_new(doc, "shard", json_pack("{s:i,s:i}", "k", inv->shard_k,
                                                     "n", inv->shard_n))) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

dlb_status dlb_invocation_add_set(struct dlb_invocation *inv, const char *set)
{
    return push(&inv->sets, &inv->n_sets, set);
}

int dlb_invocation_same_plan(const struct dlb_invocation *a,
                             const struct dlb_invocation *b)
{
    if (a->n_sets != b->n_sets || !a->quick != !b->quick)
        return 0;
    for (size_t i = 0; i < a->n_sets; i++)
        if (strcmp(a->sets[i], b->sets[i]))
            return 0;
    return 1;
}

static void free_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

void dlb_invocation_free(struct dlb_invocation *inv)
{
    free(inv->suite);
    free_list(inv->sets, inv->n_sets);
    free_list(inv->plugin_dirs, inv->n_plugin_dirs);
    memset(inv, 0, sizeof *inv);
}
