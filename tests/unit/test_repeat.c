/* Merging a configuration's repetitions (core/results/repeat.c) on crafted
 * journal records: the pooled samples in the order taken, the median
 * from each process's, the other statistics over the pooled samples,
 * throughput and GFLOP/s from the median, the first repetition's quality
 * figures, each process's summary; incomplete groups left out, a failure
 * standing for its group. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "results/repeat.h"
#include "stats/stats.h"

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
    /* the median: each process one vote, the geometric mean of theirs
     * (2, 4.5, 6), not the pooled samples' (3.5), which the first
     * process, with the most samples, would weigh most */
    double c = cbrt(2 * 4.5 * 6);
    CHECK_NEAR(num(c0, "stats", "median"), c, 1e-12);
    CHECK(num(c0, "stats", "ci_lo") <= c && num(c0, "stats", "ci_hi") >= c);
    CHECK_NEAR(num(c0, "stats", "max"), 6, 1e-12); /* the pooled samples' */
    CHECK_NEAR(num(c0, "throughput", "median"), 2 / c, 1e-12);
    json_t *mt = json_object_get(c0, "metrics");
    CHECK_NEAR(num(json_object_get(mt, "gflops"), "value", NULL), 1e6 / c * 1e-9, 1e-12);
    CHECK_NEAR(num(json_object_get(mt, "peak_fp32_share"), "value", NULL),
               1e6 / c * 1e-9 * 10, 1e-9);
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

/* The median interval covers the spread between processes: ln of the
 * process medians pooled over a round (one-way analysis of variance),
 * t(0.975, df) * sd / sqrt(processes) each side of their geometric mean;
 * records of another budget are pooled apart. */
static double sq(double x)
{
    return x * x;
}

static void test_spread(void)
{
    static const double m0[3][3] = {{1.8, 1.8, 1.8}, {2, 2, 2}, {2.2, 2.2, 2.2}};
    static const double m1[3][3] = {{2, 2, 2}, {2, 2, 2}, {2, 2, 2}};
    static const double m2[3][3] = {{1, 1, 1}, {2, 2, 2}, {4, 4, 4}};
    const double (*m[3])[3] = {m0, m1, m2};
    json_t *recs = json_array();
    for (int r = 0; r < 3; r++)
        for (size_t c = 0; c < 3; c++)
            json_array_append_new(recs, rec(c, r, "ok", m[c][r], 3, -1));
    /* a screening round of configuration 0 on half the budget: equal
     * process medians, pooled apart from the full-budget ones */
    for (int r = 0; r < 3; r++) {
        json_t *x = rec(0, r, "ok", m1[r], 3, -1);
        json_object_set_new(x, "round", json_integer(1));
        json_object_set_new(x, "budget", json_real(0.5));
        json_array_append_new(recs, x);
    }
    json_array_append_new(recs, rec(5, -1, "ok", m0[0], 3, -1));
    json_t *out = dlb_reps_merge(recs, 3);
    CHECK(out && json_array_size(out) == 5);
    /* ln of the process medians about their configuration's mean; two
     * degrees of freedom from each of the three */
    double g = (log(1.8) + log(2) + log(2.2)) / 3;
    double ss = sq(log(1.8) - g) + sq(log(2) - g) + sq(log(2.2) - g) +
                2 * sq(log(2));
    double sd = sqrt(ss / 6), h = dlb_student_t_975(6) * sd / sqrt(3);
    json_t *c0 = json_array_get(out, 0), *c1 = json_array_get(out, 1),
           *c2 = json_array_get(out, 2);
    CHECK(h > 0.5 && h < 0.6);
    CHECK_NEAR(num(c0, "stats", "median"), exp(g), 1e-12);
    CHECK_NEAR(num(json_object_get(c0, "stats"), "ci_processes", "sd_log"), sd, 1e-12);
    CHECK(num(json_object_get(c0, "stats"), "ci_processes", "df") == 6);
    /* 0: the order-statistic interval of its nine pooled samples is
     * [1.8, 2.2]; the round's spread widens it to [e^(g-h), e^(g+h)] */
    CHECK_NEAR(num(c0, "stats", "ci_lo"), exp(g - h), 1e-12);
    CHECK_NEAR(num(c0, "stats", "ci_hi"), exp(g + h), 1e-12);
    CHECK_NEAR(num(c0, "stats", "ci_rel_halfwidth"), (exp(h) - exp(-h)) / 2, 1e-12);
    CHECK_NEAR(num(c0, "throughput", "ci_lo"), 2 / exp(g + h), 1e-12);
    CHECK_NEAR(num(c0, "throughput", "ci_hi"), 2 / exp(g - h), 1e-12);
    /* 1: equal processes, still as uncertain as the round's machine */
    CHECK_NEAR(num(c1, "stats", "ci_lo"), 2 * exp(-h), 1e-12);
    CHECK_NEAR(num(c1, "stats", "ci_hi"), 2 * exp(h), 1e-12);
    /* 2: its own interval, [1, 4], is the wider one and stands */
    CHECK_NEAR(num(c2, "stats", "ci_lo"), 1, 1e-12);
    CHECK_NEAR(num(c2, "stats", "ci_hi"), 4, 1e-12);
    /* the half budget has no spread: its pooled interval, [2, 2], stands */
    json_t *r1 = json_array_get(out, 3);
    CHECK(num(r1, "round", NULL) == 1);
    CHECK_NEAR(num(r1, "stats", "ci_lo"), 2, 1e-12);
    CHECK_NEAR(num(r1, "stats", "ci_hi"), 2, 1e-12);
    CHECK(num(json_object_get(r1, "stats"), "ci_processes", "sd_log") == 0);
    /* one process: nothing to pool */
    CHECK(!json_object_get(json_object_get(json_array_get(out, 4), "stats"),
                           "ci_processes"));
    json_decref(out);
    json_decref(recs);
}

int main(void)
{
    test_merge();
    test_spread();
    return check_exit();
}
