/* Key names of a suite: "batch" for the core, "amp.precision" for plugin
 * NAME's key, resolved against the suite's namespaces with "did you mean". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/param.h"
#include "suite/suite.h"

/* The table's closest name to `name`, or NULL. */
static const char *suggest_param(const struct dlb_ns *ns, const char *name)
{
    const char **names = malloc((ns->n ? ns->n : 1) * sizeof *names);
    if (!names)
        return NULL;
    for (unsigned k = 0; k < ns->n; k++)
        names[k] = ns->defs[k].name;
    const char *best = dlb_suggest(name, names, ns->n);
    free(names);
    return best;
}

static dlb_status resolve_plain(const struct dlb_suite *s, const char *key,
                                struct dlb_keyref *out, struct dlb_error *err)
{
    int k = dlb_param_find(s->ns[0].defs, s->ns[0].n, key);
    if (k >= 0) {
        *out = (struct dlb_keyref){0, (unsigned)k};
        return DLB_OK;
    }
    /* "precision" alone most likely means a plugin's key of that name. */
    for (unsigned n = 1; n < s->n_ns; n++)
        if (dlb_param_find(s->ns[n].defs, s->ns[n].n, key) >= 0)
            return dlb_errorf(err, DLB_ERR_INPUT,
                              "unknown key '%s' (did you mean '%s.%s'?)", key,
                              s->ns[n].name, key);
    const char *best = suggest_param(&s->ns[0], key);
    if (best)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "unknown key '%s' (did you mean '%s'?)", key, best);
    return dlb_errorf(err, DLB_ERR_INPUT,
                      "unknown key '%s'; expected a [suite] key or PLUGIN.key",
                      key);
}

dlb_status dlb_suite_resolve_key(const struct dlb_suite *s, const char *key,
                                 struct dlb_keyref *out, struct dlb_error *err)
{
    const char *dot = strchr(key, '.');
    if (!dot)
        return resolve_plain(s, key, out, err);
    /* Core keys may have dotted names of their own (cuda.graphs). */
    int core = dlb_param_find(s->ns[0].defs, s->ns[0].n, key);
    if (core >= 0) {
        *out = (struct dlb_keyref){0, (unsigned)core};
        return DLB_OK;
    }
    size_t len = (size_t)(dot - key);
    unsigned n;
    for (n = 0; n < s->n_ns; n++)
        if (strlen(s->ns[n].name) == len && !strncmp(s->ns[n].name, key, len))
            break;
    if (n == s->n_ns) {
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)len, key);
        const char **names = malloc((s->n_ns ? s->n_ns : 1) * sizeof *names);
        const char *best = NULL;
        if (names) {
            for (unsigned k = 0; k < s->n_ns; k++)
                names[k] = s->ns[k].name;
            best = dlb_suggest(name, names, s->n_ns);
            free(names);
        }
        if (best)
            return dlb_errorf(err, DLB_ERR_INPUT,
                              "unknown key '%s': no plugin '%s' in this suite "
                              "(did you mean '%s'?)",
                              key, name, best);
        return dlb_errorf(
            err, DLB_ERR_INPUT,
            "unknown key '%s': no plugin '%s' in this suite; a plugin's keys "
            "need its [%s] section, a sweep axis or `plugins = %s`",
            key, name, name, name);
    }
    int k = dlb_param_find(s->ns[n].defs, s->ns[n].n, dot + 1);
    if (k >= 0) {
        *out = (struct dlb_keyref){n, (unsigned)k};
        return DLB_OK;
    }
    const char *best = suggest_param(&s->ns[n], dot + 1);
    if (best)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "unknown key '%s' (did you mean '%s.%s'?)", key,
                          s->ns[n].name, best);
    return dlb_errorf(err, DLB_ERR_INPUT,
                      "unknown key '%s': %s has no key '%s'", key,
                      s->ns[n].name, dot + 1);
}

void dlb_suite_key_name(const struct dlb_suite *s, struct dlb_keyref ref,
                        char *buf, size_t len)
{
    const char *param = s->ns[ref.ns].defs[ref.param].name;
    if (ref.ns == 0)
        snprintf(buf, len, "%s", param);
    else
        snprintf(buf, len, "%s.%s", s->ns[ref.ns].name, param);
}
