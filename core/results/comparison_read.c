/* The one reader of a "dlbench-compare" document (core/results/comparison.h). */
#define _POSIX_C_SOURCE 200809L
#include "results/comparison.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd {
    struct dlb_error *err;
    dlb_status st;
};

static void bad(struct rd *c, const char *at, const char *key, const char *want)
{
    if (c->st == DLB_OK)
        c->st = dlb_errorf(c->err, DLB_ERR_INPUT, "comparison: \"%s%s%s\" is not %s",
                           at ? at : "", at ? "." : "", key, want);
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
        bad(c, at, key, "a string");
    return json_string_value(v);
}

static double num(struct rd *c, const json_t *o, const char *at, const char *key)
{
    json_t *v = member(o, key);
    if (v && !json_is_number(v))
        bad(c, at, key, "a number");
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static long long count(struct rd *c, const json_t *o, const char *at,
                       const char *key, long long none)
{
    json_t *v = member(o, key);
    if (v && !json_is_integer(v))
        bad(c, at, key, "an integer");
    return json_is_integer(v) ? (long long)json_integer_value(v) : none;
}

static json_t *array(struct rd *c, const json_t *o, const char *key)
{
    json_t *v = member(o, key);
    if (v && !json_is_array(v)) {
        bad(c, NULL, key, "an array");
        return NULL;
    }
    return v;
}

static void read_row(struct rd *c, json_t *o, const char *at, struct dlb_cmp_row *r)
{
    r->id = str(c, o, at, "id");
    r->verdict = str(c, o, at, "verdict");
    r->test = str(c, o, at, "test");
    r->note = str(c, o, at, "note");
    r->doubtful_why = str(c, o, at, "doubtful_why");
    r->base_median_s = num(c, o, at, "base_median_s");
    r->new_median_s = num(c, o, at, "new_median_s");
    r->ratio = num(c, o, at, "ratio");
    r->p = num(c, o, at, "p");
    r->resolution = num(c, o, at, "resolution");
    r->base_n = count(c, o, at, "base_n", -1);
    r->new_n = count(c, o, at, "new_n", -1);
    r->reference = json_is_true(member(o, "reference"));
    json_t *ci = member(o, "ratio_ci");
    if (ci && (!json_is_array(ci) || json_array_size(ci) != 2))
        bad(c, at, "ratio_ci", "an interval [lo, hi]");
    json_t *lo = json_array_get(ci, 0), *hi = json_array_get(ci, 1);
    r->ratio_ci_lo = json_is_number(lo) ? json_number_value(lo) : NAN;
    r->ratio_ci_hi = json_is_number(hi) ? json_number_value(hi) : NAN;
}

dlb_status dlb_comparison_read(json_t *doc, struct dlb_comparison *out,
                               struct dlb_error *err)
{
    struct rd c = {err, DLB_OK};
    memset(out, 0, sizeof *out);
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    if (!json_is_object(doc) || !schema || strcmp(schema, DLB_COMPARE_SCHEMA_NAME))
        return dlb_errorf(err, DLB_ERR_INPUT, "comparison: not a \"%s\" document",
                          DLB_COMPARE_SCHEMA_NAME);
    out->json = json_incref(doc);
    out->base = str(&c, doc, NULL, "base");
    out->new_file = str(&c, doc, NULL, "new");
    out->normalized_by = str(&c, doc, NULL, "normalized_by");
    out->threshold = num(&c, doc, NULL, "threshold");
    out->alpha = num(&c, doc, NULL, "alpha");
    out->geomean_ratio = num(&c, doc, NULL, "geomean_ratio");
    out->compared = count(&c, doc, NULL, "compared", 0);
    json_t *res = member(doc, "resolution");
    if (res && !json_is_object(res))
        bad(&c, NULL, "resolution", "an object");
    out->resolution_median = num(&c, res, "resolution", "median");
    out->resolution_max = num(&c, res, "resolution", "max");
    json_t *counts = member(doc, "counts");
    out->faster = count(&c, counts, "counts", "faster", 0);
    out->slower = count(&c, counts, "counts", "slower", 0);
    out->same = count(&c, counts, "counts", "same", 0);
    out->added = count(&c, counts, "counts", "new", 0);
    out->missing = count(&c, counts, "counts", "missing", 0);

    json_t *a = array(&c, doc, "warnings"), *v;
    size_t i;
    out->warnings = calloc(json_array_size(a) + 1, sizeof *out->warnings);
    a = array(&c, doc, "configs");
    out->rows = calloc(json_array_size(a) + 1, sizeof *out->rows);
    if (!out->warnings || !out->rows) {
        dlb_comparison_free(out);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory reading a comparison");
    }
    json_array_foreach(array(&c, doc, "warnings"), i, v)
        if (json_is_string(v))
            out->warnings[out->n_warnings++] = json_string_value(v);
    json_array_foreach(a, i, v) {
        char at[40];
        snprintf(at, sizeof at, "configs[%zu]", i);
        if (!json_is_object(v)) {
            bad(&c, NULL, at, "an object");
            continue;
        }
        read_row(&c, v, at, &out->rows[out->n_rows++]);
    }
    if (c.st != DLB_OK)
        dlb_comparison_free(out);
    return c.st;
}

void dlb_comparison_free(struct dlb_comparison *c)
{
    free(c->warnings);
    free(c->rows);
    json_decref(c->json);
    memset(c, 0, sizeof *c);
}
