/* The one reader of the selection's JSON (core/results/selection.h): each
 * member the struct models is checked for its type, and a wrong one is an
 * error that names it, instead of a figure read as 0. */
#define _POSIX_C_SOURCE 200809L
#include "results/selection.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd {
    struct dlb_error *err;
    dlb_status st;
};

static const char *kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* The first error only; the rest is read regardless and dropped. */
static void bad(struct rd *c, const char *at, const char *key, const json_t *v,
                const char *want)
{
    if (c->st == DLB_OK)
        c->st = dlb_errorf(c->err, DLB_ERR_INPUT, "selection: \"%s%s%s\" is %s; "
                           "expected %s", at ? at : "", at ? "." : "", key,
                           kind(v), want);
}

static void nomem(struct rd *c)
{
    if (c->st == DLB_OK)
        c->st = dlb_errorf(c->err, DLB_ERR_NOMEM, "out of memory reading the selection");
}

/* Absent and null read as absent. */
static json_t *member(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_null(v) ? NULL : v;
}

static const char *str(struct rd *c, const json_t *o, const char *at, const char *key)
{
    json_t *v = member(o, key);
    if (v && !json_is_string(v))
        bad(c, at, key, v, "a string");
    return json_string_value(v);
}

static double num(struct rd *c, const json_t *o, const char *at, const char *key)
{
    json_t *v = member(o, key);
    if (v && !json_is_number(v))
        bad(c, at, key, v, "a number");
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static long long count(struct rd *c, const json_t *o, const char *at, const char *key)
{
    json_t *v = member(o, key);
    if (v && !json_is_integer(v))
        bad(c, at, key, v, "an integer");
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static int flag(struct rd *c, const json_t *o, const char *at, const char *key)
{
    json_t *v = member(o, key);
    if (v && !json_is_boolean(v))
        bad(c, at, key, v, "true or false");
    return json_is_boolean(v) ? json_is_true(v) : -1;
}

static json_t *array(struct rd *c, const json_t *o, const char *at, const char *key)
{
    json_t *v = member(o, key);
    if (v && !json_is_array(v)) {
        bad(c, at, key, v, "an array");
        return NULL;
    }
    return v;
}

/* An interval [lo, hi]. */
static void pair(struct rd *c, const json_t *o, const char *at, const char *key,
                 double *lo, double *hi)
{
    json_t *a = array(c, o, at, key);
    *lo = json_is_number(json_array_get(a, 0)) ? json_number_value(json_array_get(a, 0)) : NAN;
    *hi = json_is_number(json_array_get(a, 1)) ? json_number_value(json_array_get(a, 1)) : NAN;
}

static void ids(struct rd *c, const json_t *o, const char *at, const char *key,
                struct dlb_sel_ids *out)
{
    json_t *a = array(c, o, at, key), *v;
    size_t i;
    out->id = calloc(json_array_size(a) + 1, sizeof *out->id);
    if (!out->id) {
        nomem(c);
        return;
    }
    json_array_foreach(a, i, v) {
        if (!json_is_string(v)) {
            char k[300];
            snprintf(k, sizeof k, "%s[%zu]", key, i);
            bad(c, at, k, v, "an id");
            continue;
        }
        out->id[out->n++] = json_string_value(v);
    }
}

/* Each object of the array `key`, with its path ("groups[2]"). */
#define EACH_OBJECT(c, arr, key, i, v, at)                                      \
    json_array_foreach(arr, i, v)                                               \
        if (snprintf(at, sizeof at, "%s[%zu]", key, i) > 0 &&                   \
            (json_is_object(v) || (bad(c, NULL, at, v, "an object"), 0)))

static void *table(struct rd *c, json_t *arr, size_t size)
{
    void *t = calloc(json_array_size(arr) + 1, size);
    if (!t)
        nomem(c);
    return t;
}

static void read_groups(struct rd *c, json_t *sel, struct dlb_selection *s)
{
    json_t *arr = array(c, sel, NULL, "groups"), *g;
    size_t i;
    char at[64];
    if (!(s->groups = table(c, arr, sizeof *s->groups)))
        return;
    EACH_OBJECT(c, arr, "groups", i, g, at) {
        struct dlb_sel_group *o = &s->groups[s->n_groups++];
        o->workload = str(c, g, at, "workload");
        o->baseline = str(c, g, at, "baseline");
        o->winner = str(c, g, at, "winner");
        o->fastest = str(c, g, at, "fastest");
        o->why = str(c, g, at, "why");
        o->winner_doubtful_why = str(c, g, at, "winner_doubtful_why");
        o->winner_index = count(c, g, at, "winner_index");
        ids(c, g, at, "configs", &o->configs);
        ids(c, g, at, "ties", &o->ties);
        ids(c, g, at, "pareto", &o->pareto);
    }
}

static void read_verdicts(struct rd *c, json_t *sel, struct dlb_selection *s)
{
    json_t *arr = array(c, sel, NULL, "verdicts"), *v, *w;
    size_t i, j;
    char at[64], rat[128];
    if (!(s->verdicts = table(c, arr, sizeof *s->verdicts)))
        return;
    EACH_OBJECT(c, arr, "verdicts", i, v, at) {
        struct dlb_sel_verdict *o = &s->verdicts[s->n_verdicts++];
        o->setting = str(c, v, at, "setting");
        o->verdict = str(c, v, at, "verdict");
        o->summary = str(c, v, at, "summary");
        o->doubtful_why = str(c, v, at, "doubtful_why");
        json_t *rows = array(c, v, at, "workloads");
        if (!(o->rows = table(c, rows, sizeof *o->rows)))
            return;
        json_array_foreach(rows, j, w) {
            snprintf(rat, sizeof rat, "%s.workloads[%zu]", at, j);
            if (!json_is_object(w)) {
                bad(c, NULL, rat, w, "an object");
                continue;
            }
            struct dlb_sel_verdict_row *r = &o->rows[o->n_rows++];
            r->workload = str(c, w, rat, "workload");
            r->verdict = str(c, w, rat, "verdict");
            r->why = str(c, w, rat, "why");
            r->accuracy_note = str(c, w, rat, "accuracy_note");
            r->doubtful_why = str(c, w, rat, "doubtful_why");
            r->speedup = num(c, w, rat, "speedup");
            pair(c, w, rat, "speedup_ci", &r->speedup_ci_lo, &r->speedup_ci_hi);
            r->accuracy_change = num(c, w, rat, "accuracy_change");
            r->accuracy_ci = num(c, w, rat, "accuracy_ci");
            r->accuracy_seeds = num(c, w, rat, "accuracy_seeds");
            r->accuracy_effect = str(c, w, rat, "accuracy_effect");
            r->memory_change = num(c, w, rat, "memory_change");
        }
    }
}

static void read_notes(struct rd *c, json_t *sel, struct dlb_selection *s)
{
    json_t *arr = array(c, sel, NULL, "violations"), *v;
    size_t i;
    char at[64];
    if (!(s->violations = table(c, arr, sizeof *s->violations)))
        return;
    EACH_OBJECT(c, arr, "violations", i, v, at) {
        struct dlb_sel_violation *o = &s->violations[s->n_violations++];
        o->id = str(c, v, at, "id");
        o->constraint = str(c, v, at, "constraint");
        o->value = num(c, v, at, "value");
        o->limit = num(c, v, at, "limit");
    }
    arr = array(c, sel, NULL, "attribution");
    if (!(s->attribution = table(c, arr, sizeof *s->attribution)))
        return;
    EACH_OBJECT(c, arr, "attribution", i, v, at) {
        struct dlb_sel_attribution *o = &s->attribution[s->n_attribution++];
        o->workload = str(c, v, at, "workload");
        o->plugin = str(c, v, at, "plugin");
        o->alone = str(c, v, at, "alone");
        o->speedup_alone = num(c, v, at, "speedup_alone");
        pair(c, v, at, "speedup_alone_ci", &o->speedup_alone_ci_lo,
             &o->speedup_alone_ci_hi);
        o->speedup_winner = num(c, v, at, "speedup_winner");
        pair(c, v, at, "speedup_winner_ci", &o->speedup_winner_ci_lo,
             &o->speedup_winner_ci_hi);
        o->in_winner = flag(c, v, at, "in_winner");
    }
}

dlb_status dlb_selection_read(json_t *json, struct dlb_selection *out,
                              struct dlb_error *err)
{
    struct rd c = {err, DLB_OK};
    memset(out, 0, sizeof *out);
    out->winner_index = -1;
    if (json && !json_is_object(json))
        return dlb_errorf(err, DLB_ERR_INPUT, "selection: is %s; expected an "
                          "object", kind(json));
    out->json = json_incref(json);
    out->present = json != NULL;
    out->objective = str(&c, json, NULL, "objective");
    out->winner = str(&c, json, NULL, "winner");
    out->fastest = str(&c, json, NULL, "fastest");
    out->why = str(&c, json, NULL, "why");
    out->baseline = str(&c, json, NULL, "baseline");
    out->winner_index = count(&c, json, NULL, "winner_index");
    ids(&c, json, NULL, "winners", &out->winners);
    ids(&c, json, NULL, "ties", &out->ties);
    ids(&c, json, NULL, "pareto", &out->pareto);
    read_groups(&c, json, out);
    read_verdicts(&c, json, out);
    read_notes(&c, json, out);
    if (c.st != DLB_OK)
        dlb_selection_free(out);
    return c.st;
}

void dlb_selection_free(struct dlb_selection *s)
{
    for (size_t i = 0; s->groups && i < s->n_groups; i++) {
        free(s->groups[i].configs.id);
        free(s->groups[i].ties.id);
        free(s->groups[i].pareto.id);
    }
    for (size_t i = 0; s->verdicts && i < s->n_verdicts; i++)
        free(s->verdicts[i].rows);
    free(s->groups);
    free(s->verdicts);
    free(s->violations);
    free(s->attribution);
    free(s->winners.id);
    free(s->ties.id);
    free(s->pareto.id);
    json_decref(s->json);
    memset(s, 0, sizeof *s);
    s->winner_index = -1;
}

int dlb_sel_ids_has(const struct dlb_sel_ids *ids, const char *id)
{
    for (size_t i = 0; id && i < ids->n; i++)
        if (!strcmp(ids->id[i], id))
            return 1;
    return 0;
}

struct dlb_sel_group dlb_selection_top(const struct dlb_selection *s)
{
    struct dlb_sel_group g;
    memset(&g, 0, sizeof g);
    g.baseline = s->baseline;
    g.winner = s->winner;
    g.fastest = s->fastest;
    g.why = s->why;
    g.winner_index = s->winner_index;
    g.ties = s->ties;
    g.pareto = s->pareto;
    return g;
}
