/* The one writer of a "dlbench-compare" document (results/comparison.h),
 * members in the order doc/results-schema.md lists them. */
#define _POSIX_C_SOURCE 200809L
#include "results/comparison.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A NULL value (a figure jansson refuses: NAN, inf) leaves the member out. */
static void put(json_t *o, const char *key, json_t *v)
{
    if (v)
        json_object_set_new(o, key, v);
}

static void put_num(json_t *o, const char *key, double v)
{
    if (!isnan(v))
        put(o, key, json_real(v));
}

static json_t *row(const struct dlb_cmp_row *r)
{
    json_t *o = json_pack("{s:s}", "id", r->id ? r->id : "");
    if (!o)
        return NULL;
    put_num(o, "base_median_s", r->base_median_s);
    put_num(o, "new_median_s", r->new_median_s);
    if (r->verdict)
        put(o, "verdict", json_string(r->verdict));
    if (r->test) {
        put_num(o, "ratio", r->ratio);
        put(o, "ratio_ci", json_pack("[f, f]", r->ratio_ci_lo, r->ratio_ci_hi));
        put(o, "p", isnan(r->p) ? json_null() : json_real(r->p));
        put(o, "base_n", json_integer((json_int_t)r->base_n));
        put(o, "new_n", json_integer((json_int_t)r->new_n));
        put(o, "test", json_string(r->test));
        put_num(o, "resolution", r->resolution);
        if (r->reference)
            put(o, "reference", json_true());
    }
    if (r->doubtful_why) {
        put(o, "doubtful", json_true());
        put(o, "doubtful_why", json_string(r->doubtful_why));
    }
    if (r->note)
        put(o, "note", json_string(r->note));
    if (r->accuracy_verdict) {
        json_t *a = json_object();
        put_num(a, "base", r->base_accuracy);
        put_num(a, "new", r->new_accuracy);
        put_num(a, "change", r->accuracy_change);
        put_num(a, "ci", r->accuracy_ci);
        put(a, "seeds", json_integer((json_int_t)r->accuracy_seeds));
        put(a, "test_images", json_string(r->accuracy_images_paired ? "paired"
                                                                    : "binomial"));
        put(a, "verdict", json_string(r->accuracy_verdict));
        put(o, "accuracy", a);
    }
    return o;
}

json_t *dlb_comparison_write(const struct dlb_comparison *c)
{
    json_t *o = json_pack("{s:s, s:i, s:s, s:s, s:f, s:f}", "schema",
                          DLB_COMPARE_SCHEMA_NAME, "schema_version",
                          DLB_COMPARE_SCHEMA_VERSION, "base", c->base ? c->base : "",
                          "new", c->new_file ? c->new_file : "", "threshold",
                          c->threshold, "alpha", c->alpha);
    json_t *a = json_array(), *rows = json_array();
    if (!o || !a || !rows) {
        json_decref(o);
        json_decref(a);
        json_decref(rows);
        return NULL;
    }
    for (size_t i = 0; i < c->n_warnings; i++)
        json_array_append_new(a, json_string(c->warnings[i]));
    put(o, "warnings", a);
    for (size_t i = 0; i < c->n_rows; i++)
        json_array_append_new(rows, row(&c->rows[i]));
    put(o, "configs", rows);
    put(o, "counts", json_pack("{s:I, s:I, s:I, s:I, s:I}", "faster",
                               (json_int_t)c->faster, "slower", (json_int_t)c->slower,
                               "same", (json_int_t)c->same, "new",
                               (json_int_t)c->added, "missing",
                               (json_int_t)c->missing));
    put(o, "accuracy", json_pack("{s:f, s:I, s:I, s:I}", "threshold",
                                 c->accuracy_threshold, "judged",
                                 (json_int_t)c->accuracy_judged, "lower",
                                 (json_int_t)c->accuracy_lower, "higher",
                                 (json_int_t)c->accuracy_higher));
    put(o, "normalized_by", c->normalized_by ? json_string(c->normalized_by)
                                             : json_null());
    put(o, "resolution", isnan(c->resolution_median) && isnan(c->resolution_max)
                             ? json_null()
                             : json_pack("{s:f,s:f}", "median", c->resolution_median,
                                         "max", c->resolution_max));
    put(o, "compared", json_integer((json_int_t)c->compared));
    put(o, "geomean_ratio", c->compared ? json_real(c->geomean_ratio) : json_null());
    return o;
}

void dlb_comparison_free(struct dlb_comparison *c)
{
    free(c->warnings);
    free(c->rows);
    dlb_strpool_free(&c->strings);
    memset(c, 0, sizeof *c);
}
