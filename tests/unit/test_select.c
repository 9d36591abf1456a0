/* Auto-selection on crafted records: constraints, ties (U test and
 * median intervals), the simpler tie preferred, violations never chosen,
 * the Pareto front, attribution and best.ini. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "select/select.h"
#include "select_fixture.h"
#include "select/select_impl.h"
#include "util/hexbits.h"

/* The selection as results.json holds it: the checks below read what a
 * user reads (and so check the writer too). */
static json_t *run_select(const struct fixture *f, json_t *recs)
{
    struct dlb_selection sel;
    struct dlb_error err = {""};
    json_t *out = NULL;
    if (dlb_select(&f->p, recs, &sel, &err) != DLB_OK)
        fprintf(stderr, "  %s\n", err.msg);
    else
        out = dlb_selection_write(&sel);
    dlb_selection_free(&sel);
    return out;
}

/* The selection read back from that JSON, as a results file gives it. */
static int read_back(json_t *json, struct dlb_selection *sel)
{
    struct dlb_error err = {""};
    if (dlb_selection_read(json, sel, &err) == DLB_OK)
        return 1;
    fprintf(stderr, "  %s\n", err.msg);
    return 0;
}

static dlb_status write_best(const char *dir, const struct fixture *f, json_t *json,
                             struct dlb_error *err)
{
    struct dlb_selection sel;
    if (!read_back(json, &sel))
        return DLB_ERR_INPUT;
    dlb_status st = dlb_select_write_best(dir, &f->p, &sel, NULL, err);
    dlb_selection_free(&sel);
    return st;
}

static int complete(json_t *json)
{
    struct dlb_selection sel;
    int done = read_back(json, &sel) && dlb_select_complete(&sel);
    dlb_selection_free(&sel);
    return done;
}

static const char *winner(json_t *sel)
{
    const char *w = json_string_value(json_object_get(sel, "winner"));
    return w ? w : "(none)";
}

static int has_violation(json_t *sel, const char *id, const char *what)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(sel, "violations"), i, v)
        if (!strcmp(json_string_value(json_object_get(v, "id")), id) &&
            !strcmp(json_string_value(json_object_get(v, "constraint")), what))
            return 1;
    return 0;
}

static int listed(json_t *list, const char *id)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
        if (!strcmp(json_string_value(v), id))
            return 1;
    return 0;
}

/* The fastest configurations break a constraint each: the best of the
 * rest wins, and the violators are listed, never chosen. */
static void test_constraints(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\naccuracy_tolerance = 0.5\n"
                          "memory_budget = 100M\n[sweep]\nbatch = 16, 32, 64, 128\n"))
        return;
    json_t *recs = json_array();
    json_array_append_new(recs, crafted(&f, 0, 100, 0.01, 90.0, 50e6));
    json_array_append_new(recs, crafted(&f, 1, 150, 0.01, 89.8, 60e6));
    json_array_append_new(recs, crafted(&f, 2, 300, 0.01, 88.0, 70e6));
    json_array_append_new(recs, crafted(&f, 3, 200, 0.01, 87.9, 200e6));
    json_t *sel = run_select(&f, recs);
    CHECK(!strcmp(winner(sel), "batch=32"));
    CHECK(has_violation(sel, "batch=64", "accuracy_drop"));
    CHECK(has_violation(sel, "batch=128", "memory_budget"));
    CHECK(!has_violation(sel, "batch=32", "accuracy_drop"));
    CHECK(!strcmp(json_string_value(json_object_get(sel, "baseline")), "batch=16"));
    json_t *pc = json_object_get(json_object_get(sel, "per_config"), "batch=32");
    CHECK_NEAR(json_number_value(json_object_get(pc, "speedup")), 1.5, 1e-9);
    CHECK_NEAR(json_number_value(json_object_get(pc, "accuracy_drop")), 0.2, 1e-9);
    CHECK(json_integer_value(json_object_get(pc, "changes")) == 1);
    /* Pareto over throughput (max), accuracy (max), memory (min): 64 is
     * the fastest, 16 the smallest and most accurate, 32 between; 64
     * beats 128 in all three. */
    json_t *front = json_object_get(sel, "pareto");
    CHECK(listed(front, "batch=16") && listed(front, "batch=32") &&
          listed(front, "batch=64") && !listed(front, "batch=128"));

    /* best.ini holds the winner's values and runs without a sweep. */
    char dir[512];
    struct dlb_error err = {""};
    check_temp_template(dir, sizeof dir, "dlb-best-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    CHECK(write_best(dir, &f, sel, &err) == DLB_OK);
    char path[600], text[4096] = "";
    snprintf(path, sizeof path, "%s/best.ini", dir);
    FILE *in = fopen(path, "r");
    size_t n = in ? fread(text, 1, sizeof text - 1, in) : 0;
    text[n] = '\0';
    if (in)
        fclose(in);
    CHECK(strstr(text, "\nbatch = 32\n") != NULL);
    CHECK(strstr(text, "[sweep]") == NULL);
    CHECK(strstr(text, "baseline") == NULL || strstr(text, "baseline =") == NULL);
    struct dlb_suite again;
    CHECK(dlb_suite_load(path, fake_lookup, NULL, &again, &err) == DLB_OK);
    if (!err.msg[0])
        dlb_suite_free(&again);
    else
        fprintf(stderr, "  %s\n", err.msg);
    unlink(path);
    rmdir(dir);

    /* An impossible budget: every configuration is marked, none chosen. */
    json_decref(sel);
    fixture_close(&f);
    if (!fixture_open(&f, "[suite]\nmemory_budget = 1K\n[sweep]\nbatch = 16, 32\n"))
        return;
    json_decref(recs);
    recs = json_array();
    json_array_append_new(recs, crafted(&f, 0, 100, 0.01, -1, 50e6));
    json_array_append_new(recs, crafted(&f, 1, 150, 0.01, -1, 60e6));
    sel = run_select(&f, recs);
    CHECK(json_is_null(json_object_get(sel, "winner")));
    CHECK(json_array_size(json_object_get(sel, "violations")) == 2);
    CHECK(strstr(json_string_value(json_object_get(sel, "why")), "no configuration") != NULL);
    CHECK(write_best("/nonexistent", &f, sel, &err) == DLB_OK);
    json_decref(sel);
    json_decref(recs);
    fixture_close(&f);
}

/* The fastest (amp on, batch 32) is not significantly faster than amp off
 * at batch 32, which changes one setting of the baseline instead of two:
 * the simpler one wins. Attribution: amp alone is (on, 16). */
static void test_ties_and_attribution(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\nbaseline = batch=16 amp.enable=off\n"
                          "[sweep]\namp.enable = off, on\nbatch = 16, 32\n"))
        return;
    /* plan order: (off,16) (off,32) (on,16) (on,32) */
    json_t *recs = json_array();
    json_array_append_new(recs, crafted(&f, 0, 100, 0.01, -1, -1));
    json_array_append_new(recs, crafted(&f, 1, 150, 0.02, -1, -1));
    json_array_append_new(recs, crafted(&f, 2, 120, 0.01, -1, -1));
    json_array_append_new(recs, crafted(&f, 3, 150.6, 0.02, -1, -1));
    json_t *sel = run_select(&f, recs);
    CHECK(!strcmp(json_string_value(json_object_get(sel, "fastest")),
                  "amp.enable=on batch=32"));
    CHECK(!strcmp(winner(sel), "amp.enable=off batch=32"));
    CHECK(listed(json_object_get(sel, "ties"), "amp.enable=off batch=32"));
    CHECK(strstr(json_string_value(json_object_get(sel, "why")), "tied") != NULL);
    json_t *a = json_array_get(json_object_get(sel, "attribution"), 0);
    CHECK(json_array_size(json_object_get(sel, "attribution")) == 1);
    CHECK(!strcmp(json_string_value(json_object_get(a, "plugin")), "amp"));
    CHECK(!strcmp(json_string_value(json_object_get(a, "alone")),
                  "amp.enable=on batch=16"));
    CHECK_NEAR(json_number_value(json_object_get(a, "speedup_alone")), 1.2, 1e-9);
    CHECK_NEAR(json_number_value(json_object_get(a, "speedup_winner")), 1.5, 1e-9);
    CHECK(json_is_false(json_object_get(a, "in_winner")));
    json_decref(sel);

    /* Clearly apart (1% spread, 150 vs 200): no tie, the fastest wins
     * though it changes more. */
    json_array_set_new(recs, 3, crafted(&f, 3, 200, 0.01, -1, -1));
    sel = run_select(&f, recs);
    CHECK(!strcmp(winner(sel), "amp.enable=on batch=32"));
    CHECK(json_array_size(json_object_get(sel, "ties")) == 0);
    json_decref(sel);

    /* A failed record is shown but never chosen. */
    json_object_set_new(json_array_get(recs, 3), "status", json_string("failed"));
    sel = run_select(&f, recs);
    CHECK(!strcmp(winner(sel), "amp.enable=off batch=32"));
    json_decref(sel);

    /* Tied and as simple (one change each): the better figure, the
     * fastest itself. */
    json_array_set_new(recs, 1, crafted(&f, 1, 150, 0.02, -1, -1));
    json_array_set_new(recs, 2, crafted(&f, 2, 150.6, 0.02, -1, -1));
    json_array_set_new(recs, 3, crafted(&f, 3, 120, 0.01, -1, -1));
    sel = run_select(&f, recs);
    CHECK(!strcmp(winner(sel), "amp.enable=on batch=16"));
    CHECK(listed(json_object_get(sel, "ties"), "amp.enable=off batch=32"));
    json_decref(sel);
    json_decref(recs);
    fixture_close(&f);
}

/* The tie rule against figures worked by hand: {1..5} against {6..10}.
 * U = 0, mean 12.5, variance 5*5*11/12 = 22.917 (no ties), continuity
 * corrected z = (12.5 - 0.5) / 4.787 = 2.5067, p = erfc(z / sqrt 2) =
 * 0.01219. With n = 5 the median interval is [min, max]: [1, 5] and
 * [6, 10] do not overlap. So they differ at 0.05 but not at 0.01. */
static void test_tie_rule_by_hand(void)
{
    double a[5] = {1, 2, 3, 4, 5}, b[5] = {6, 7, 8, 9, 10};
    struct dlb_sel_item x = {0}, y = {0};
    x.samples = a, x.n = 5, x.obj_lo = 1, x.obj_hi = 5;
    y.samples = b, y.n = 5, y.obj_lo = 6, y.obj_hi = 10;
    struct dlb_select_settings set = {0};
    double p;
    set.significance = 0.05;
    CHECK(dlb_sel_differ(&set, &x, &y, &p));
    CHECK_NEAR(p, 0.012185, 1e-4);
    set.significance = 0.01;
    CHECK(!dlb_sel_differ(&set, &x, &y, &p));
    /* Significant by U but overlapping intervals: tied. */
    set.significance = 0.05;
    y.obj_lo = 4.5;
    CHECK(!dlb_sel_differ(&set, &x, &y, &p));
}

/* Lower is better for latency: the speedup is the baseline's median over
 * the configuration's. */
static void test_latency(void)
{
    struct fixture f;
    /* batch as a setting: with latency each batch is otherwise a workload */
    if (!fixture_open(&f, "[suite]\nobjective = latency\nworkload_axes = none\n"
                          "[sweep]\nbatch = 1, 2\n"))
        return;
    json_t *recs = json_array();
    json_array_append_new(recs, crafted(&f, 0, 100, 0.01, -1, -1)); /* 10 ms */
    json_array_append_new(recs, crafted(&f, 1, 50, 0.01, -1, -1));  /* 20 ms */
    json_t *sel = run_select(&f, recs);
    CHECK(!strcmp(winner(sel), "batch=1"));
    json_t *pc = json_object_get(json_object_get(sel, "per_config"), "batch=2");
    CHECK_NEAR(json_number_value(json_object_get(pc, "speedup")), 0.5, 1e-9);
    json_decref(sel);
    json_decref(recs);
    fixture_close(&f);
}

/* Selection keys are checked when the plan is built, naming the line. */
/* Workloads: with workload_axes = batch each batch is its own question,
 * answered against its own baseline (amp off at that batch); the winner
 * of one never stands against a row of the other. */
static void test_workload_groups(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\nworkload_axes = batch\n"
                          "[sweep]\nbatch = 16, 32\namp.enable = off, on\n"))
        return;
    /* plan order: (16,off) (16,on) (32,off) (32,on); amp pays at 32 only,
     * and batch 32 is faster than anything at 16 */
    json_t *recs = json_array();
    json_array_append_new(recs, crafted(&f, 0, 100, 0.01, 80, 1e6));
    json_array_append_new(recs, crafted(&f, 1, 60, 0.01, 80, 1e6));
    json_array_append_new(recs, crafted(&f, 2, 300, 0.01, 80, 2e6));
    json_array_append_new(recs, crafted(&f, 3, 600, 0.01, 80, 1e6));
    json_t *sel = run_select(&f, recs);
    json_t *groups = json_object_get(sel, "groups");
    CHECK(json_array_size(groups) == 2);
    CHECK(json_is_null(json_object_get(sel, "winner")));
    CHECK(json_array_size(json_object_get(sel, "winners")) == 2);
    json_t *g0 = json_array_get(groups, 0), *g1 = json_array_get(groups, 1);
    CHECK(!strcmp(json_string_value(json_object_get(g0, "workload")), "batch=16"));
    CHECK(!strcmp(json_string_value(json_object_get(g0, "winner")),
                  "batch=16 amp.enable=off"));
    CHECK(!strcmp(json_string_value(json_object_get(g1, "baseline")),
                  "batch=32 amp.enable=off"));
    CHECK(!strcmp(json_string_value(json_object_get(g1, "winner")),
                  "batch=32 amp.enable=on"));
    CHECK(complete(sel));
    /* speedups against the row's own workload's baseline */
    json_t *pc = json_object_get(json_object_get(sel, "per_config"),
                                 "batch=32 amp.enable=on");
    CHECK_NEAR(json_number_value(json_object_get(pc, "speedup")), 2.0, 1e-9);
    CHECK(json_integer_value(json_object_get(pc, "group")) == 1);
    /* the verdict: one setting, judged on both workloads */
    json_t *v = json_array_get(json_object_get(sel, "verdicts"), 0);
    CHECK(json_array_size(json_object_get(sel, "verdicts")) == 1);
    CHECK(!strcmp(json_string_value(json_object_get(v, "setting")), "amp.enable=on"));
    CHECK(!strcmp(json_string_value(json_object_get(v, "verdict")), "mixed"));
    CHECK(!strcmp(json_string_value(json_object_get(v, "summary")),
                  "pays off on batch=32 only; costs on batch=16"));
    json_t *row = json_array_get(json_object_get(v, "workloads"), 1);
    CHECK(!strcmp(json_string_value(json_object_get(row, "verdict")), "pays off"));
    CHECK_NEAR(json_number_value(json_object_get(row, "memory_change")), -0.5, 1e-9);
    CHECK_NEAR(json_number_value(json_object_get(row, "accuracy_change")), 0, 1e-9);
    json_decref(sel);

    /* No difference anywhere: no measurable effect on every workload. */
    json_array_set_new(recs, 1, crafted(&f, 1, 100, 0.01, 80, 1e6));
    json_array_set_new(recs, 3, crafted(&f, 3, 300, 0.01, 80, 1e6));
    sel = run_select(&f, recs);
    v = json_array_get(json_object_get(sel, "verdicts"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(v, "summary")),
                  "no measurable effect on every workload"));
    json_decref(sel);
    json_decref(recs);
    fixture_close(&f);
}

/* Too few samples to tell: 2 and 4 samples whose ranges miss each other
 * (a time_cap under a few steps) give a speedup "interval" above 1, but
 * no U test on so few can reach p < 0.05 (the least exact p is 2/15).
 * The verdict says no measurable effect, as the winner's tie rule does;
 * with 21 samples each the same figures pay off. */
static void test_too_few_samples(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\n[sweep]\namp.enable = off, on\n"))
        return;
    json_t *recs = json_array();
    json_array_append_new(recs, crafted_n(&f, 0, 2, 100, 0.01, -1, -1));
    json_array_append_new(recs, crafted_n(&f, 1, 4, 200, 0.01, -1, -1));
    json_t *sel = run_select(&f, recs);
    json_t *v = json_array_get(json_object_get(sel, "verdicts"), 0);
    json_t *row = json_array_get(json_object_get(v, "workloads"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(v, "verdict")),
                  "no measurable effect"));
    CHECK(json_number_value(json_array_get(json_object_get(row, "speedup_ci"),
                                           0)) > 1);
    const char *why = json_string_value(json_object_get(row, "why"));
    CHECK(why && strstr(why, "the U test does not show a difference") &&
          strstr(why, "over 4 and 2 samples"));
    CHECK(!strcmp(winner(sel), "amp.enable=off"));
    json_decref(sel);
    json_array_set_new(recs, 0, crafted(&f, 0, 100, 0.01, -1, -1));
    json_array_set_new(recs, 1, crafted(&f, 1, 200, 0.01, -1, -1));
    sel = run_select(&f, recs);
    v = json_array_get(json_object_get(sel, "verdicts"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(v, "verdict")), "pays off"));
    CHECK(!strcmp(winner(sel), "amp.enable=on"));
    json_decref(sel);
    json_decref(recs);
    fixture_close(&f);
}

/* Accuracy compares only after as much training: batch 16 and 32 for 10
 * steps each saw 160 and 320 images, so no drop is judged (a note says
 * why); with train_samples they see as many, and the drop counts. */
static void test_equal_training(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\ntrain_steps = 10\n[sweep]\nbatch = 16, 32\n"))
        return;
    json_t *recs = json_array();
    json_array_append_new(recs, crafted(&f, 0, 100, 0.01, 80, -1));
    json_array_append_new(recs, crafted(&f, 1, 200, 0.01, 70, -1));
    json_t *sel = run_select(&f, recs);
    json_t *pc = json_object_get(json_object_get(sel, "per_config"), "batch=32");
    CHECK(!json_object_get(pc, "accuracy_drop"));
    CHECK(strstr(json_string_value(json_object_get(pc, "accuracy_note")),
                 "320 images, its baseline on 160") != NULL);
    CHECK(!strcmp(winner(sel), "batch=32"));
    json_decref(sel);
    json_decref(recs);
    fixture_close(&f);

    if (!fixture_open(&f, "[suite]\ntrain_samples = 100\n[sweep]\nbatch = 16, 32\n"))
        return;
    /* ceil(100 / 16) = 7 steps, ceil(100 / 32) = 4 */
    CHECK(f.p.configs[0].core.train_steps == 7);
    CHECK(f.p.configs[1].core.train_steps == 4);
    recs = json_array();
    json_array_append_new(recs, crafted(&f, 0, 100, 0.01, 80, -1));
    json_array_append_new(recs, crafted(&f, 1, 200, 0.01, 70, -1));
    sel = run_select(&f, recs);
    pc = json_object_get(json_object_get(sel, "per_config"), "batch=32");
    CHECK_NEAR(json_number_value(json_object_get(pc, "accuracy_drop")), 10, 1e-9);
    CHECK(!strcmp(winner(sel), "batch=16")); /* 32 loses 10 points */
    json_decref(sel);
    json_decref(recs);
    fixture_close(&f);
}

static void test_bad_keys(void)
{
    static const char *const bad[][2] = {
        {"[suite]\nbaseline = batch=48\n[sweep]\nbatch = 16, 32\n", ":2: baseline"},
        {"[suite]\nsearch = random:0\n[sweep]\nbatch = 16, 32\n", ":2: search"},
        {"[suite]\nsearch = halve\n[sweep]\nbatch = 16, 32\n", "expected grid"},
        {"[suite]\nobjective = time_to_accuracy\n[sweep]\nbatch = 16\n",
         "target_accuracy"},
        {"[suite]\n[sweep]\nbatch = 16, 32\nobjective = latency, throughput\n",
         "objective"},
        {"[suite]\nworkload_axes = model, btach\n[sweep]\nbatch = 16, 32\n",
         ":2: workload_axes: 'btach'"},
        {"[suite]\ntrain_samples = 100\ntrain_steps = 5\n[sweep]\nbatch = 16, 32\n",
         "both train_samples (100) and train_steps (5)"},
        {"[suite]\nmode = infer\ntrain_samples = 100\n[sweep]\nbatch = 16, 32\n",
         "train_samples = 100 needs mode = train"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char path[512];
        check_temp_template(path, sizeof path, "dlb-badsel-XXXXXX");
        int fd = mkstemp(path);
        CHECK(fd >= 0 && write(fd, bad[k][0], strlen(bad[k][0])) > 0);
        close(fd);
        struct dlb_suite s;
        struct dlb_plan p;
        struct dlb_error err = {""};
        dlb_status st = dlb_suite_load(path, fake_lookup, NULL, &s, &err);
        if (st == DLB_OK) {
            /* The plan checks `search`; the run checks the selection's
             * keys before it runs anything. */
            st = dlb_plan_build(&s, NULL, &p, &err);
            if (st == DLB_OK) {
                struct dlb_select_settings set;
                st = dlb_select_settings(&p, &set, &err);
                dlb_plan_free(&p);
            }
            dlb_suite_free(&s);
        }
        CHECK(st != DLB_OK);
        if (!strstr(err.msg, bad[k][1])) {
            check_failures++;
            fprintf(stderr, "  case %zu: \"%s\" lacks \"%s\"\n", k, err.msg, bad[k][1]);
        }
        unlink(path);
    }
}

/* Seeds scored on 10,000 images with which ones each got right: a setting
 * that loses 3 images and gains 1 at every seed (-0.02 points) gets the
 * paired test-set interval (+-0.04 points: "no measurable effect", shown
 * within a tolerance of 0.5), where the unpaired binomial one (+-1.04)
 * could not tell; without the marks, that older interval stands. */
static json_t *seeded(const struct fixture *f, size_t pos, double shift, int marked)
{
    enum { IMAGES = 10000 };
    json_t *r = crafted(f, pos, pos ? 200 : 100, 0.01, 0, 1e6);
    json_t *seeds = json_array();
    uint8_t bits[IMAGES / 8];
    for (int k = 0; k < 3; k++) {
        int right = 8300 + 10 * k; /* the seed moves the baseline */
        memset(bits, 0, sizeof bits);
        for (int i = 0; i < right; i++)
            dlb_hexbits_set(bits, (size_t)i, 1);
        if (shift) { /* images 0-2 lost, image 9000 gained */
            for (int i = 0; i < 3; i++)
                dlb_hexbits_set(bits, (size_t)i, 0);
            dlb_hexbits_set(bits, 9000, 1);
        }
        double acc = 100.0 * right / IMAGES + shift;
        json_t *e = json_pack("{s:i,s:f}", "seed", 42 + k, "accuracy", acc);
        char *t = dlb_hexbits_encode(bits, IMAGES);
        if (marked)
            json_object_set_new(e, "test_correct", json_string(t));
        free(t);
        json_array_append_new(seeds, e);
    }
    json_t *m = json_object_get(r, "metrics");
    json_object_set_new(m, "accuracy", json_pack("{s:f,s:s}", "value",
                                                 83.1 + shift, "unit", "%"));
    json_object_set_new(m, "test_images", json_pack("{s:i,s:s}", "value",
                                                    IMAGES, "unit", "images"));
    json_object_set_new(r, "seeds", seeds);
    return r;
}

static void test_paired_images(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\naccuracy_tolerance = 0.5\n"
                          "[sweep]\namp.enable = off, on\n"))
        return;
    for (int marked = 1; marked >= 0; marked--) {
        json_t *recs = json_array();
        json_array_append_new(recs, seeded(&f, 0, 0, marked));
        json_array_append_new(recs, seeded(&f, 1, -0.02, marked));
        json_t *sel = run_select(&f, recs);
        json_t *row = json_array_get(json_object_get(json_array_get(
            json_object_get(sel, "verdicts"), 0), "workloads"), 0);
        json_t *pc = json_object_get(json_object_get(sel, "per_config"),
                                     "amp.enable=on");
        double ci = json_number_value(json_object_get(row, "accuracy_ci"));
        CHECK_NEAR(json_number_value(json_object_get(row, "accuracy_change")),
                   -0.02, 1e-9);
        const char *within = json_string_value(json_object_get(pc, "accuracy_within"));
        if (marked) {
            /* D = -1 on 3 images, +1 on 1: mean -2e-4, sd^2 (4 - 4e-4) / 9999 */
            CHECK_NEAR(ci, 100 * 1.96 * sqrt((4 - 4e-4) / 9999.0 / 10000), 1e-9);
            CHECK(within && !strcmp(within, "yes"));
        } else {
            CHECK_NEAR(ci, 100 * 1.96 * sqrt((0.831 * 0.169 + 0.8308 * 0.1692) / 10000),
                       1e-6);
            CHECK(within && !strcmp(within, "cannot tell"));
        }
        CHECK(!strcmp(json_string_value(json_object_get(row, "accuracy_effect")),
                      "no measurable effect"));
        json_decref(sel);
        json_decref(recs);
    }
    fixture_close(&f);
}

int main(void)
{
    test_constraints();
    test_ties_and_attribution();
    test_tie_rule_by_hand();
    test_latency();
    test_bad_keys();
    test_workload_groups();
    test_too_few_samples();
    test_equal_training();
    test_paired_images();
    return check_exit();
}
