/* The typed record: read then written is the same document; a member of
 * the wrong type is refused, naming the record and the member; an absent
 * metric or setting is told apart from 0. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "results/record.h"
#include "results/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *full_record =
    "{\"index\": 3, \"id\": \"batch=64 amp.precision=bf16\","
    " \"config\": {\"batch\": 64, \"amp.precision\": \"bf16\", \"lr\": 0.1},"
    " \"status\": \"ok\","
    " \"stats\": {\"n\": 4, \"median\": 0.0125, \"mean\": 0.0126, \"stddev\": 0.0002,"
    "  \"cv\": null, \"min\": 0.0123, \"max\": 0.0133, \"p5\": 0.0124, \"p95\": 0.013,"
    "  \"p99\": 0.0132, \"ci_lo\": 0.0123, \"ci_hi\": 0.0133,"
    "  \"ci_rel_halfwidth\": 0.04, \"ci_exact\": false},"
    " \"throughput\": {\"median\": 5120, \"ci_lo\": 4812.0, \"ci_hi\": 5203.2},"
    " \"samples\": [0.0125, 0.0123, 0.0133, 1],"
    " \"measure\": {\"clock\": \"monotonic\", \"converged\": true, \"settled\": false,"
    "  \"warmup_steps\": 12, \"warmup_s\": 0.81, \"measure_s\": 0.52,"
    "  \"samples_per_step\": 64, \"flops_per_step\": 1.9e9,"
    "  \"timer_overhead_s\": 2.1e-8, \"peak_unit\": \"avx512\","
    "  \"fewer_flops\": \"winograd\"},"
    " \"metrics\": {\"accuracy\": {\"value\": 91.25, \"unit\": \"%\"},"
    "  \"amp.overflows\": {\"value\": 0, \"unit\": \"count\"},"
    "  \"gone\": {\"value\": null}},"
    " \"wall_s\": 3.42, \"round\": 1, \"budget\": 0.5, \"rep\": 0,"
    " \"pass_position\": 2,"
    " \"vs_baseline\": {\"baseline_id\": \"batch=32\", \"speedup\": 1.5,"
    "  \"speedup_ci_lo\": 1.4, \"speedup_ci_hi\": 1.6},"
    " \"system\": {\"minor_faults\": 0.5, \"steal_share\": null,"
    "  \"doubtful\": \"steal 7%\"},"
    " \"controls\": {\"threads\": 4}, \"device\": {\"backend\": \"ref\"},"
    " \"unknown_member\": [1, 2]}";

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fprintf(stderr, "bad test JSON: %s\n", e.text);
    return j;
}

/* Read, write, compare; 1 when the written record equals the original. */
static int round_trips(json_t *rec, const char *where)
{
    struct dlb_record r;
    struct dlb_error err = {0};
    if (dlb_record_read(rec, where, &r, &err) != DLB_OK) {
        fprintf(stderr, "%s: %s\n", where, err.msg);
        return 0;
    }
    json_t *back = dlb_record_write(&r);
    int same = json_equal(back, rec);
    if (!same) {
        char *a = json_dumps(rec, JSON_SORT_KEYS), *b = json_dumps(back, JSON_SORT_KEYS);
        fprintf(stderr, "%s: not the same after a round trip:\n%s\n%s\n", where, a, b);
        free(a);
        free(b);
    }
    json_decref(back);
    dlb_record_free(&r);
    return same;
}

static void test_read_fields(void)
{
    json_t *j = parse(full_record);
    struct dlb_record r;
    struct dlb_error err = {0};
    CHECK(dlb_record_read(j, "t", &r, &err) == DLB_OK);
    CHECK(r.index == 3);
    CHECK(!strcmp(r.id, "batch=64 amp.precision=bf16"));
    CHECK(r.status == DLB_REC_OK);
    CHECK(r.reason == NULL);
    CHECK(r.stats.n == 4);
    CHECK(r.stats.median == 0.0125);
    CHECK(isnan(r.stats.cv)); /* null: absent, not 0 */
    CHECK(r.throughput.median == 5120);
    CHECK(r.n_samples == 4 && r.samples[3] == 1);
    CHECK(r.measure.converged == 1 && r.measure.settled == 0);
    CHECK(isnan(r.measure.steps_per_sample));
    CHECK(r.measure.samples_per_step == 64);
    CHECK(!strcmp(r.measure.clock, "monotonic"));
    CHECK(!strcmp(r.measure.peak_unit, "avx512"));
    CHECK(r.measure.fewer_flops && !strcmp(r.measure.fewer_flops, "winograd"));
    CHECK(r.wall_s == 3.42 && r.round == 1 && r.budget == 0.5);
    CHECK(r.rep == 0 && r.pass_position == 2);
    CHECK(!strcmp(r.vs_baseline.baseline_id, "batch=32"));
    CHECK(r.vs_baseline.speedup == 1.5 && isnan(r.vs_baseline.accuracy_drop));
    CHECK(r.has_system && !strcmp(r.system.doubtful, "steal 7%"));
    CHECK(isnan(r.system.steal_share));
    CHECK(json_is_object(r.device) && json_is_object(r.controls) && !r.world);

    /* metrics: present, present at 0, present without a value, absent */
    double v = -1;
    CHECK(dlb_record_metric_value(&r, "accuracy", &v) && v == 91.25);
    CHECK(!strcmp(dlb_record_metric(&r, "accuracy")->unit, "%"));
    v = -1;
    CHECK(dlb_record_metric_value(&r, "amp.overflows", &v) && v == 0);
    v = -1;
    CHECK(!dlb_record_metric_value(&r, "gone", &v) && v == -1);
    CHECK(dlb_record_metric(&r, "gone") != NULL);
    CHECK(!dlb_record_metric_value(&r, "acuracy", &v) && v == -1);
    CHECK(dlb_record_metric(&r, "acuracy") == NULL);

    /* settings, likewise */
    double b = -1;
    CHECK(dlb_record_setting_num(&r, "batch", &b) && b == 64);
    CHECK(!strcmp(dlb_record_setting_str(&r, "amp.precision"), "bf16"));
    CHECK(!dlb_record_setting_num(&r, "amp.precision", &b) && b == 64);
    CHECK(dlb_record_setting(&r, "btach") == NULL);
    CHECK(dlb_record_setting_str(&r, "batch") == NULL);
    dlb_record_free(&r);
    json_decref(j);
}

static void test_round_trip(void)
{
    json_t *j = parse(full_record);
    CHECK(round_trips(j, "full"));
    json_decref(j);
    j = parse("{\"index\": 0, \"id\": \"a\", \"status\": \"crashed\","
              " \"reason\": \"signal 11\", \"metrics\": {}}");
    CHECK(round_trips(j, "crashed"));
    json_decref(j);

    /* the records of the results files kept in the source tree */
    const char *files[] = {"tests/bad-input/fixtures/results.json",
                           "results/baselines/baseline.json",
                           "results/baselines/infer.json"};
    const char *top = getenv("srcdir") ? getenv("srcdir") : ".";
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", top, files[f]);
        json_t *doc = NULL;
        struct dlb_error err = {0};
        CHECK(dlb_results_read(path, &doc, &err) == DLB_OK);
        size_t i;
        json_t *rec;
        json_array_foreach(json_object_get(doc, "records"), i, rec)
            CHECK(round_trips(rec, path));
        struct dlb_results res;
        CHECK(dlb_results_parse(doc, path, &res, &err) == DLB_OK);
        CHECK(res.n == json_array_size(json_object_get(doc, "records")));
        CHECK(res.context == json_object_get(doc, "context"));
        dlb_results_free(&res);
        json_decref(doc);
    }
}

/* A change to the struct is what the writer writes; nothing else moves. */
static void test_write_changes(void)
{
    json_t *j = parse(full_record);
    struct dlb_record r;
    struct dlb_error err = {0};
    CHECK(dlb_record_read(j, "t", &r, &err) == DLB_OK);
    r.throughput.median = 6000.5;
    r.vs_baseline.speedup = NAN;
    r.status = DLB_REC_TIMEOUT;
    r.reason = "took too long";
    CHECK(dlb_record_set_metric(&r, "accuracy", 90, "%") == DLB_OK);
    CHECK(dlb_record_set_metric(&r, "new", 2, NULL) == DLB_OK);
    json_t *w = dlb_record_write(&r);
    CHECK(json_real_value(json_object_get(json_object_get(w, "throughput"),
                                          "median")) == 6000.5);
    CHECK(!json_object_get(json_object_get(w, "vs_baseline"), "speedup"));
    CHECK(!strcmp(json_string_value(json_object_get(w, "status")), "timeout"));
    CHECK(!strcmp(json_string_value(json_object_get(w, "reason")), "took too long"));
    json_t *m = json_object_get(w, "metrics");
    CHECK(json_number_value(json_object_get(json_object_get(m, "accuracy"), "value")) == 90);
    CHECK(json_number_value(json_object_get(json_object_get(m, "new"), "value")) == 2);
    CHECK(json_equal(json_object_get(w, "unknown_member"),
                     json_object_get(j, "unknown_member")));
    CHECK(json_equal(json_object_get(w, "samples"), json_object_get(j, "samples")));
    /* the order of members is the original's, new ones last */
    const char *first = json_object_iter_key(json_object_iter(w));
    CHECK(!strcmp(first, "index"));
    json_decref(w);
    dlb_record_free(&r);
    json_decref(j);

    /* a record built in memory: the schema's order, only what is set */
    dlb_record_init(&r);
    r.index = 0;
    r.id = "batch=1";
    r.stats.n = 2;
    r.stats.median = 0.5;
    r.wall_s = 1;
    w = dlb_record_write(&r);
    CHECK(json_object_size(w) == 5); /* index id status stats wall_s */
    CHECK(json_object_size(json_object_get(w, "stats")) == 2);
    CHECK(!json_object_get(w, "throughput") && !json_object_get(w, "vs_baseline"));
    CHECK(dlb_record_check(w, "built", &err) == DLB_OK);
    CHECK(round_trips(w, "built"));
    json_decref(w);
    dlb_record_free(&r);
}

static void expect_error(const char *text, const char *needle)
{
    json_t *j = parse(text);
    struct dlb_record r;
    struct dlb_error err = {0};
    CHECK(dlb_record_read(j, "f.json: records[0]", &r, &err) == DLB_ERR_INPUT);
    if (!strstr(err.msg, needle) || !strstr(err.msg, "f.json: records[0]")) {
        fprintf(stderr, "message \"%s\" lacks \"%s\"\n", err.msg, needle);
        CHECK(0);
    }
    json_decref(j);
}

static void test_wrong_types(void)
{
    expect_error("{\"index\": 1, \"id\": \"x\", \"status\": \"ok\","
                 " \"stats\": {\"median\": \"fast\"}}",
                 "record 1 (x): \"stats.median\" is a string; expected a number");
    expect_error("{\"index\": 2, \"id\": \"y\", \"status\": \"ok\","
                 " \"metrics\": {\"accuracy\": {\"value\": true}}}",
                 "record 2 (y): \"metrics.accuracy.value\" is a boolean");
    expect_error("{\"index\": 2, \"id\": \"y\", \"status\": \"ok\","
                 " \"metrics\": {\"accuracy\": 91}}",
                 "\"metrics.accuracy\" is a number");
    expect_error("{\"index\": 0, \"id\": \"z\", \"status\": \"ok\", \"round\": 1.5}",
                 "\"round\" is a number; expected an integer");
    expect_error("{\"index\": 0, \"id\": \"z\", \"status\": \"ok\","
                 " \"samples\": [0.1, \"x\"]}", "\"samples[1]\" is a string");
    expect_error("{\"index\": 0, \"id\": \"z\", \"status\": \"ok\", \"stats\": [1]}",
                 "\"stats\" is an array; expected an object");
    expect_error("{\"index\": 0, \"id\": \"z\", \"status\": \"fine\"}",
                 "unknown status \"fine\"");
}

static void test_status_names(void)
{
    CHECK(!strcmp(dlb_rec_status_name(DLB_REC_OOM), "oom"));
    CHECK(dlb_rec_status_parse("timeout") == DLB_REC_TIMEOUT);
    CHECK(dlb_rec_status_parse("great") == -1);
}

int main(void)
{
    test_read_fields();
    test_round_trip();
    test_write_changes();
    test_wrong_types();
    test_status_names();
    return check_exit();
}
