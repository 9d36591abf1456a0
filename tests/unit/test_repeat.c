/* Merging a configuration's repetitions (core/repeat.c) on crafted
 * journal records: the pooled samples in the order taken, statistics,
 * throughput and GFLOP/s over them, the first repetition's quality
 * figures, each process's summary; incomplete groups left out, a failure
 * standing for its group. */
#include <string.h>

#include "check.h"
#include "repeat.h"
#include "stats.h"

/* A record of configuration `index`, repetition `rep` (-1: none), with n
 * step times (samples_per_step 2, 1e6 FLOP a step), an accuracy when
 * `acc` >= 0. */
static json_t *rec(size_t index, int rep, const char *status, const double *t,
                   size_t n, double acc)
{
    json_t *samples = json_array();
    for (size_t k = 0; k < n; k++)
        json_array_append_new(samples, json_real(t[k]));
    struct dlb_stats st = {0};
    if (n)
        dlb_stats_compute(t, n, &st);
    json_t *metrics = json_pack("{s:{s:f,s:s},s:{s:f,s:s}}",
                                "gflops", "value", n ? 1e6 / st.median * 1e-9 : 0.0,
                                "unit", "GFLOP/s", "peak_fp32_share", "value",
                                n ? 1e6 / st.median * 1e-9 * 10 : 0.0, "unit", "%");
    if (acc >= 0)
        json_object_set_new(metrics, "accuracy", json_pack("{s:f,s:s}", "value", acc,
                                                           "unit", "%"));
    json_t *r = json_pack("{s:I,s:s,s:s,s:o,s:{s:f},s:{s:f},s:{s:f,s:f,s:b},s:o,s:f}",
                          "index", (json_int_t)index, "id", "x", "status", status,
                          "samples", samples, "stats", "median", st.median,
                          "throughput", "median", n ? 2 / st.median : 0.0,
                          "measure", "samples_per_step", 2.0, "flops_per_step", 1e6,
                          "converged", 1, "metrics", metrics, "wall_s", 1.5);
    if (rep >= 0)
        json_object_set_new(r, "rep", json_integer(rep));
    return r;
}

/* o[a][b], a and b optional. */
static double num(json_t *o, const char *a, const char *b)
{
    json_t *v = a ? json_object_get(o, a) : o;
    if (b)
        v = json_object_get(v, b);
    return json_number_value(v);
}

static void test_merge(void)
{
    static const double a0[] = {1, 2, 3}, a1[] = {4, 5}, a2[] = {6};
    json_t *recs = json_array();
    /* Pass 0: configurations 0, 1, 2; pass 1: 0, 1 and 2 (crashed); pass
     * 2: 0 only (the run stopped); and a record without repetitions. */
    json_array_append_new(recs, rec(0, 0, "ok", a0, 3, 80));
    json_array_append_new(recs, rec(1, 0, "ok", a0, 3, 70));
    json_array_append_new(recs, rec(2, 0, "ok", a0, 3, 60));
    json_array_append_new(recs, rec(0, 1, "ok", a1, 2, -1));
    json_array_append_new(recs, rec(1, 1, "ok", a1, 2, -1));
    json_array_append_new(recs, rec(2, 1, "crashed", NULL, 0, -1));
    json_array_append_new(recs, rec(0, 2, "ok", a2, 1, -1));
    json_array_append_new(recs, rec(3, -1, "ok", a2, 1, 50));

    json_t *m = dlb_reps_merge(recs, 3);
    CHECK(m && json_array_size(m) == 3);
    json_t *c0 = json_array_get(m, 0), *c2 = json_array_get(m, 1),
           *c3 = json_array_get(m, 2);
    CHECK(num(c0, "index", NULL) == 0 && dlb_rep_of(c0) == -1);
    /* the samples of all three processes, in the order taken */
    json_t *s = json_object_get(c0, "samples");
    CHECK(json_array_size(s) == 6);
    for (size_t k = 0; k < 6; k++)
        CHECK(num(json_array_get(s, k), NULL, NULL) == (double)(k + 1));
    CHECK(num(c0, "stats", "n") == 6);
    CHECK_NEAR(num(c0, "stats", "median"), 3.5, 1e-12);
    CHECK_NEAR(num(c0, "throughput", "median"), 2 / 3.5, 1e-12);
    json_t *mt = json_object_get(c0, "metrics");
    CHECK_NEAR(num(json_object_get(mt, "gflops"), "value", NULL), 1e6 / 3.5 * 1e-9, 1e-12);
    CHECK_NEAR(num(json_object_get(mt, "peak_fp32_share"), "value", NULL),
               1e6 / 3.5 * 1e-9 * 10, 1e-9);
    /* the first repetition's accuracy; the wall time of all three */
    CHECK(num(json_object_get(mt, "accuracy"), "value", NULL) == 80);
    CHECK_NEAR(num(c0, "wall_s", NULL), 4.5, 1e-12);
    json_t *reps = json_object_get(c0, "repetitions");
    CHECK(json_array_size(reps) == 3);
    CHECK(num(json_array_get(reps, 0), "n", NULL) == 3 &&
          num(json_array_get(reps, 1), "n", NULL) == 2 &&
          num(json_array_get(reps, 2), "n", NULL) == 1);
    CHECK_NEAR(num(json_array_get(reps, 1), "median", NULL), 4.5, 1e-12);
    CHECK_NEAR(num(json_array_get(reps, 2), "throughput", NULL), 2.0 / 6, 1e-12);
    /* configuration 1 misses its third repetition: left out; 2's crash
     * stands for it; 3 had none and is as it was */
    CHECK(num(c2, "index", NULL) == 2 &&
          !strcmp(json_string_value(json_object_get(c2, "status")), "crashed"));
    CHECK(c3 == json_array_get(recs, 7));
    /* the input is untouched */
    CHECK(json_array_size(json_object_get(json_array_get(recs, 0), "samples")) == 3);
    CHECK(dlb_rep_of(json_array_get(recs, 3)) == 1);

    CHECK(dlb_reps_stopped(recs, 2, -1));
    CHECK(!dlb_reps_stopped(recs, 0, -1));
    CHECK(!dlb_reps_stopped(recs, 0, 1)); /* another round */
    json_decref(m);
    json_decref(recs);
}

int main(void)
{
    test_merge();
    return check_exit();
}
