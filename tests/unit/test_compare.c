/* compare: the ratio and its interval, the verdicts a CI gate relies on,
 * normalization across machines, and clear errors on bad files. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "compare/compare.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* n step times around `s` seconds, spread +-3%, deterministic. */
static void fill(double *v, size_t n, double s)
{
    for (size_t i = 0; i < n; i++)
        v[i] = s * (0.97 + 0.06 * (double)((i * 7) % n) / (double)n);
}

static json_t *rec(const char *id, double s, const char *status)
{
    json_t *r = json_pack("{s:i, s:s, s:s}", "index", 0, "id", id, "status", status);
    if (strcmp(status, "ok"))
        return r;
    json_t *a = json_array();
    double v[40];
    fill(v, 40, s);
    for (int i = 0; i < 40; i++)
        json_array_append_new(a, json_real(v[i]));
    json_object_set_new(r, "samples", a);
    return r;
}

static json_t *doc(const char *host, json_t *records)
{
    return json_pack("{s:s, s:i, s:{s:s, s:s}, s:o}", "schema", "dlbench-results",
                     "schema_version", 1, "context", "host", host, "cpu.model", "X",
                     "records", records);
}

static json_t *run(const char *host, double a, double b, double scale)
{
    json_t *r = json_array();
    json_array_append_new(r, rec("batch=64", a * scale, "ok"));
    json_array_append_new(r, rec("batch=256", b * scale, "ok"));
    return doc(host, r);
}

static const struct dlb_compare_opts defaults = {DLB_COMPARE_THRESHOLD,
                                                 DLB_COMPARE_ALPHA, 0,
                                                 DLB_COMPARE_ACCURACY_THRESHOLD};

/* The comparison as `dlbench compare --format json` writes it: the checks
 * below read the document a CI job reads. */
static dlb_status compare_json(json_t *base, const char *bf, json_t *nw,
                               const char *nf, const struct dlb_compare_opts *o,
                               json_t **out, struct dlb_error *err)
{
    struct dlb_comparison c;
    dlb_status st = dlb_compare(base, bf, nw, nf, o, &c, err);
    *out = st == DLB_OK ? dlb_comparison_write(&c) : NULL;
    dlb_comparison_free(&c);
    return st == DLB_OK && !*out ? DLB_ERR_NOMEM : st;
}

static json_int_t count(json_t *cmp, const char *verdict)
{
    return json_integer_value(json_object_get(json_object_get(cmp, "counts"), verdict));
}

static const char *verdict_of(json_t *cmp, const char *id)
{
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(cmp, "configs"), i, row)
        if (!strcmp(json_string_value(json_object_get(row, "id")), id))
            return json_string_value(json_object_get(row, "verdict"));
    return "";
}

static void test_ratio(void)
{
    double a[50], b[50];
    struct dlb_ratio r;
    fill(a, 50, 0.010);
    fill(b, 50, 0.010);
    CHECK(dlb_ratio_estimate(a, 50, b, 50, &r) == DLB_OK);
    CHECK_NEAR(r.ratio, 1.0, 1e-12);
    CHECK(r.lo <= 1.0 && r.hi >= 1.0);
    CHECK(r.p > 0.5);
    fill(b, 50, 0.011);
    CHECK(dlb_ratio_estimate(a, 50, b, 50, &r) == DLB_OK);
    CHECK_NEAR(r.ratio, 1.1, 0.01);
    CHECK(r.lo > 1.0 && r.lo <= r.ratio && r.hi >= r.ratio && r.hi < 1.2);
    CHECK(r.p < 1e-6);
}

static void test_verdicts(void)
{
    json_t *cmp = NULL, *base = run("a", 0.010, 0.030, 1);
    struct dlb_error err = {""};

    /* Identical runs: nothing moved, exit status 0. */
    json_t *same = run("a", 0.010, 0.030, 1);
    CHECK(compare_json(base, "b.json", same, "n.json", &defaults, &cmp, &err) == DLB_OK);
    CHECK(count(cmp, "same") == 2 && count(cmp, "slower") == 0);
    /* 40 samples spread +-3%: the intervals are narrower than the
     * threshold, which bounds the resolution from below. */
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(cmp, "resolution"),
                                                 "median")), DLB_COMPARE_THRESHOLD, 1e-12);
    CHECK_NEAR(json_number_value(json_object_get(cmp, "geomean_ratio")), 1.0, 1e-12);
    json_decref(cmp);

    /* A 10% regression of one configuration. */
    json_t *slow = run("a", 0.011, 0.030, 1);
    CHECK(compare_json(base, "b.json", slow, "n.json", &defaults, &cmp, &err) == DLB_OK);
    CHECK(!strcmp(verdict_of(cmp, "batch=64"), "slower"));
    CHECK(!strcmp(verdict_of(cmp, "batch=256"), "same"));
    CHECK(count(cmp, "slower") == 1);
    CHECK_NEAR(json_number_value(json_object_get(cmp, "geomean_ratio")), sqrt(1.1), 0.01);
    json_decref(cmp);

    /* Under the threshold it is "same", however significant. */
    struct dlb_compare_opts loose = defaults;
    loose.threshold = 0.20;
    CHECK(compare_json(base, "b.json", slow, "n.json", &loose, &cmp, &err) == DLB_OK);
    CHECK(count(cmp, "slower") == 0);
    json_decref(cmp);

    /* An improvement. */
    json_t *fast = run("a", 0.008, 0.030, 1);
    CHECK(compare_json(base, "b.json", fast, "n.json", &defaults, &cmp, &err) == DLB_OK);
    CHECK(!strcmp(verdict_of(cmp, "batch=64"), "faster"));
    CHECK(count(cmp, "slower") == 0);
    json_decref(cmp);

    /* New and missing configurations; a crashed one is missing. */
    json_t *r = json_array();
    json_array_append_new(r, rec("batch=64", 0.010, "crashed"));
    json_array_append_new(r, rec("batch=1024", 0.1, "ok"));
    json_t *other = doc("a", r);
    CHECK(compare_json(base, "b.json", other, "n.json", &defaults, &cmp, &err) == DLB_OK);
    CHECK(!strcmp(verdict_of(cmp, "batch=64"), "missing"));
    CHECK(!strcmp(verdict_of(cmp, "batch=256"), "missing"));
    CHECK(!strcmp(verdict_of(cmp, "batch=1024"), "new"));
    CHECK(json_is_null(json_object_get(cmp, "geomean_ratio")));
    json_decref(cmp);

    json_decref(base);
    json_decref(same);
    json_decref(slow);
    json_decref(fast);
    json_decref(other);
}

static void test_normalize(void)
{
    /* The new machine is 2x slower at everything: absolute times say
     * "slower" (with a warning), ratios inside each run say "same". */
    json_t *base = run("a", 0.010, 0.030, 1), *nw = run("b", 0.010, 0.030, 2);
    json_t *cmp = NULL;
    struct dlb_error err = {""};
    CHECK(compare_json(base, "b.json", nw, "n.json", &defaults, &cmp, &err) == DLB_OK);
    CHECK(count(cmp, "slower") == 2);
    CHECK(json_array_size(json_object_get(cmp, "warnings")) >= 1);
    json_decref(cmp);
    struct dlb_compare_opts norm = defaults;
    norm.normalize = 1;
    CHECK(compare_json(base, "b.json", nw, "n.json", &norm, &cmp, &err) == DLB_OK);
    CHECK(count(cmp, "slower") == 0);
    CHECK(!strcmp(json_string_value(json_object_get(cmp, "normalized_by")), "batch=64"));
    /* no machine warning: only that one process a side was compared */
    CHECK(json_array_size(json_object_get(cmp, "warnings")) == 1);
    CHECK(strstr(json_string_value(json_array_get(json_object_get(cmp, "warnings"), 0)),
                 "measured in one process on a side") != NULL);
    json_decref(cmp);
    json_decref(nw);

    /* A real regression relative to the baseline configuration survives
     * normalization on a slower machine. */
    nw = run("b", 0.010, 0.036, 2);
    CHECK(compare_json(base, "b.json", nw, "n.json", &norm, &cmp, &err) == DLB_OK);
    CHECK(!strcmp(verdict_of(cmp, "batch=256"), "slower"));
    CHECK(!strcmp(verdict_of(cmp, "batch=64"), "same"));
    json_decref(cmp);
    json_decref(nw);
    json_decref(base);
}

/* A record measured in three processes with medians `s` e^-0.05, `s` and
 * `s` e^0.05, 20 step times each within 1% of its median; with the run's
 * pooled spread of ln(process median) `sd` (df 30) when sd >= 0. */
static json_t *rec3(const char *id, double s, double sd)
{
    json_t *r = json_pack("{s:i, s:s, s:s}", "index", 0, "id", id, "status", "ok");
    json_t *a = json_array(), *reps = json_array();
    for (int k = -1; k <= 1; k++) {
        double m = s * exp(0.05 * k), v[20];
        fill(v, 20, m);
        for (int i = 0; i < 20; i++)
            json_array_append_new(a, json_real(v[i]));
        json_array_append_new(reps, json_pack("{s:f, s:i}", "median", m, "n", 20));
    }
    json_object_set_new(r, "samples", a);
    json_object_set_new(r, "repetitions", reps);
    json_t *st = json_pack("{s:f}", "median", s);
    if (sd >= 0)
        json_object_set_new(st, "ci_processes",
                            json_pack("{s:f, s:f}", "sd_log", sd, "df", 30.0));
    json_object_set_new(r, "stats", st);
    return r;
}

/* With repetitions on both sides the process is the unit: Welch's t test
 * on ln(process median). The pooled samples of a 20% slower new run
 * differ beyond doubt (U test), but the processes spread as the machine
 * does between them. */
static void test_processes(void)
{
    json_t *cmp = NULL;
    struct dlb_error err = {""};
    json_t *base = doc("a", json_pack("[o]", rec3("batch=64", 0.010, -1)));
    json_t *nw = doc("a", json_pack("[o]", rec3("batch=64", 0.012, -1)));
    CHECK(compare_json(base, "b.json", nw, "n.json", &defaults, &cmp, &err) == DLB_OK);
    json_t *row = json_array_get(json_object_get(cmp, "configs"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(row, "test")), "welch"));
    CHECK(json_integer_value(json_object_get(row, "base_n")) == 3);
    /* processes on both sides: no warning about one process's samples */
    CHECK(json_array_size(json_object_get(cmp, "warnings")) == 0);
    /* the medians each run reports: the processes' geometric mean */
    CHECK_NEAR(json_number_value(json_object_get(row, "base_median_s")), 0.010, 1e-12);
    /* by hand: the logs differ by ln 1.2; each side's sd is 0.05, so the
     * variance of the difference is 2 * 0.05^2 / 3 with (Welch) 4
     * degrees of freedom, where t(0.975) = 2.776445 and the two-sided p
     * is I_x(2, 1/2) = 1 - 1.5 sqrt(1 - x) + 0.5 (1 - x)^1.5 at
     * x = 4 / (4 + t^2) */
    double se = sqrt(2 * 0.0025 / 3), t = log(1.2) / se, x = 4 / (4 + t * t);
    CHECK_NEAR(json_number_value(json_object_get(row, "ratio")), 1.2, 1e-12);
    json_t *ci = json_object_get(row, "ratio_ci");
    CHECK_NEAR(json_number_value(json_array_get(ci, 0)), 1.2 * exp(-2.776445 * se), 1e-3);
    CHECK_NEAR(json_number_value(json_array_get(ci, 1)), 1.2 * exp(2.776445 * se), 1e-3);
    CHECK_NEAR(json_number_value(json_object_get(row, "p")),
               1 - 1.5 * sqrt(1 - x) + 0.5 * pow(1 - x, 1.5), 1e-9);
    CHECK(!strcmp(verdict_of(cmp, "batch=64"), "slower"));
    /* What the comparison could see: the interval's half-width, 12%. */
    CHECK_NEAR(json_number_value(json_object_get(row, "resolution")),
               expm1(2.776445 * se), 1e-3);
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(cmp, "resolution"),
                                                 "max")), expm1(2.776445 * se), 1e-3);
    json_decref(cmp);
    json_decref(base);
    json_decref(nw);
    /* The runs measured their machine's spread between processes at 0.2
     * (pooled, 30 degrees of freedom): 20% is within it. */
    base = doc("a", json_pack("[o]", rec3("batch=64", 0.010, 0.2)));
    nw = doc("a", json_pack("[o]", rec3("batch=64", 0.012, 0.2)));
    CHECK(compare_json(base, "b.json", nw, "n.json", &defaults, &cmp, &err) == DLB_OK);
    CHECK(!strcmp(verdict_of(cmp, "batch=64"), "same"));
    row = json_array_get(json_object_get(cmp, "configs"), 0);
    CHECK(json_number_value(json_object_get(row, "p")) > 0.2);
    /* "same" here means blind to changes under about 39% (Welch's t at
     * about 60 degrees of freedom times sqrt(2 * 0.04 / 3)), and says so. */
    CHECK(json_number_value(json_object_get(row, "resolution")) > 0.35 &&
          json_number_value(json_object_get(row, "resolution")) < 0.42);
    json_decref(cmp);
    /* One process on one side: the samples, by the U test. */
    json_t *one = doc("a", json_pack("[o]", rec("batch=64", 0.012, "ok")));
    CHECK(compare_json(base, "b.json", one, "n.json", &defaults, &cmp, &err) == DLB_OK);
    row = json_array_get(json_object_get(cmp, "configs"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(row, "test")), "mann-whitney"));
    CHECK(!strcmp(verdict_of(cmp, "batch=64"), "slower"));
    json_decref(cmp);
    json_decref(one);
    json_decref(base);
    json_decref(nw);
}

static void test_bad_files(void)
{
    char dir[512], path[600];
    check_temp_template(dir, sizeof dir, "dlb-compare-XXXXXX");
    if (!mkdtemp(dir))
        return;
    snprintf(path, sizeof path, "%s/results.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"schema\": \"dlbench-results\", \"schema_version\": 1, \"cont", f);
    fclose(f);
    json_t *d = NULL;
    char *file = NULL;
    struct dlb_error err = {""};
    CHECK(dlb_compare_load(dir, &d, &file, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, path) != NULL);
    CHECK(dlb_compare_load("/nonexistent/run", &d, &file, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "/nonexistent/run") != NULL);
    unlink(path);
    CHECK(dlb_compare_load(dir, &d, &file, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "no results.json") != NULL);
    rmdir(dir);
}

int main(void)
{
    test_ratio();
    test_verdicts();
    test_normalize();
    test_processes();
    test_bad_files();
    return check_exit();
}
