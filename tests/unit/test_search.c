/* Search strategies on crafted objective values: halving's rounds, their
 * budgets and survivors; random:N's seeded subset; the `search` syntax. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "search/search.h"
#include "select_fixture.h"
#include "util/hexbits.h"

static const char suite[] =
    "[suite]\nseed = 7\n[sweep]\nbatch = 1, 2, 3, 4, 5, 6, 7, 8\n";

/* Throughput of position k in round r: the middle ones are best, and in
 * round 1 the order of the top four changes, as a longer run may show. */
static double tput(size_t k, int r)
{
    static const double r0[8] = {10, 20, 80, 70, 60, 50, 30, 40};
    static const double r1[8] = {10, 20, 65, 70, 90, 50, 30, 40};
    return r ? r1[k] : r0[k];
}

static int positions_are(const struct dlb_search_round *rd, const char *want)
{
    char got[128] = "";
    for (size_t k = 0; k < rd->n; k++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu", k ? "," : "",
                 rd->pos[k]);
    if (strcmp(got, want)) {
        fprintf(stderr, "  round %d: positions %s, want %s\n", rd->round, got, want);
        return 0;
    }
    return 1;
}

/* Whether run_round's accuracy screenings say which images they got right
 * (test_correct), as the cnn workload's records do. */
static int with_marks;

enum { SCREEN_IMAGES = 2000 };

/* The marks of a model scoring `acc` on SCREEN_IMAGES images against a
 * baseline scoring `base`: the baseline's right images are the first
 * ones; a worse model loses the last of them, a better one gets the next
 * ones right too, so the two disagree only on the difference. */
static json_t *marks(double acc, double base)
{
    uint8_t bits[SCREEN_IMAGES / 8] = {0};
    size_t c = (size_t)(acc / 100 * SCREEN_IMAGES + 0.5);
    size_t cb = (size_t)(base / 100 * SCREEN_IMAGES + 0.5);
    for (size_t i = 0; i < SCREEN_IMAGES; i++)
        dlb_hexbits_set(bits, i, i < c && (i < cb || c > cb));
    char *text = dlb_hexbits_encode(bits, SCREEN_IMAGES);
    json_t *j = json_string(text);
    free(text);
    return j;
}

/* Run round r of `s`: crafted records for its configurations, with the
 * round and budget the runner records. Accuracy of position k: acc[k], or
 * none when acc is NULL. Returns 0 when the search is done. */
static int run_round(struct fixture *f, const struct dlb_search *s,
                     const struct dlb_select_settings *set, json_t *recs, int r,
                     const double *acc, struct dlb_search_round *rd)
{
    struct dlb_error err = {""};
    int done = 0;
    CHECK(dlb_search_round(&f->p, s, set, recs, r, rd, &done, &err) == DLB_OK);
    if (done)
        return 0;
    for (size_t k = 0; k < rd->n; k++) {
        size_t pos = rd->pos[k];
        /* screening rounds of a speed objective run no training; an
         * inference screening's first round evaluates the accuracy */
        double a = acc && (!rd->measure_only || rd->accuracy) ? acc[pos] : -1;
        json_t *rec = crafted(f, pos, tput(pos, r > 1 ? 1 : r), 0.01, a, -1);
        if (rd->accuracy) { /* scored on a subset, as the cnn workload does */
            json_object_set_new(json_object_get(rec, "metrics"), "test_images",
                                json_pack("{s:f,s:s}", "value", (double)SCREEN_IMAGES,
                                          "unit", "images"));
            if (with_marks)
                json_object_set_new(rec, "test_correct", marks(a, acc[0]));
        }
        json_object_set_new(rec, "round", json_integer(r));
        json_object_set_new(rec, "budget", json_real(rd->scale));
        json_array_append_new(recs, rec);
    }
    return 1;
}

/* Whether the selection over each configuration's latest record picks
 * `want`. */
static int winner_is(struct fixture *f, json_t *recs, const char *want)
{
    struct dlb_error err = {""};
    json_t *fin = dlb_search_final_records(&f->p, recs);
    struct dlb_selection sel;
    int made = dlb_select(&f->p, fin, &sel, &err) == DLB_OK;
    int ok = made && sel.winner && !strcmp(sel.winner, want);
    if (!ok)
        fprintf(stderr, "  winner %s, want %s\n", made ? sel.winner : err.msg, want);
    dlb_selection_free(&sel);
    json_decref(fin);
    return ok;
}

static void test_halving(void)
{
    struct fixture f;
    if (!fixture_open(&f, suite))
        return;
    struct dlb_search s = {DLB_SEARCH_HALVING, 0, 0, 0};
    struct dlb_select_settings set;
    struct dlb_error err = {""};
    CHECK(dlb_select_settings(&f.p, &set, &err) == DLB_OK);
    json_t *recs = json_array();
    struct dlb_search_round rd;
    for (int r = 0; r < 3; r++) {
        CHECK(run_round(&f, &s, &set, recs, r, NULL, &rd));
        CHECK(rd.round == r && !rd.last);
        /* 8 configurations: screening at 1/8 and 1/4 of the budget, speed
         * only; the final round at the full budget */
        CHECK_NEAR(rd.scale, r < 2 ? 1.0 / (8 >> r) : 1.0, 1e-12);
        CHECK(rd.measure_only == (r < 2));
        /* speed only: every round gets the repetitions */
        CHECK(!rd.once);
        if (r == 0)
            CHECK(positions_are(&rd, "0,1,2,3,4,5,6,7"));
        if (r == 1) /* the best four of round 0: 80 70 60 50 */
            CHECK(positions_are(&rd, "2,3,4,5"));
        if (r == 2) /* the best two of round 1's own figures (90 70), and
                     * the baseline at the full budget */
            CHECK(positions_are(&rd, "0,3,4"));
        free(rd.pos);
    }
    /* A finalist meets the constraints: no fallback round. */
    CHECK(!run_round(&f, &s, &set, recs, 3, NULL, &rd));
    /* The records for results.json: each configuration's latest. */
    json_t *fin = dlb_search_final_records(&f.p, recs);
    CHECK(json_array_size(fin) == 8);
    CHECK(json_integer_value(json_object_get(json_array_get(fin, 4), "round")) == 2);
    CHECK(json_integer_value(json_object_get(json_array_get(fin, 1), "round")) == 0);
    /* Only full-budget records compete: position 4 wins, though position
     * 2's screening figure (80) beats the baseline's full one. */
    struct dlb_selection sel;
    CHECK(dlb_select(&f.p, fin, &sel, &err) == DLB_OK);
    CHECK(sel.winner && !strcmp(sel.winner, "batch=5"));
    dlb_selection_free(&sel);
    json_decref(fin);
    json_decref(recs);
    fixture_close(&f);
}

/* The finalists break the accuracy constraint: fallback rounds take the
 * next configurations of the first screening until one meets it. */
static void test_halving_fallback(void)
{
    /* a budget in images: the accuracies of the batch sizes compare */
    static const char tol[] = "[suite]\nseed = 7\ntrain_samples = 80\n"
                              "accuracy_tolerance = 0.5\n"
                              "[sweep]\nbatch = 1, 2, 3, 4, 5, 6, 7, 8\n";
    /* Round 0 ranks 2 3 4 5 5 7 ...; 3 and 4 (the finalists) and 2 lose
     * accuracy; 5 keeps it. */
    static const double acc[8] = {90, 90, 80, 80, 80, 89.8, 90, 90};
    struct fixture f;
    if (!fixture_open(&f, tol))
        return;
    struct dlb_search s = {DLB_SEARCH_HALVING, 0, 0, 0};
    struct dlb_select_settings set;
    struct dlb_error err = {""};
    CHECK(dlb_select_settings(&f.p, &set, &err) == DLB_OK);
    json_t *recs = json_array();
    struct dlb_search_round rd;
    for (int r = 0; r < 3; r++) {
        CHECK(run_round(&f, &s, &set, recs, r, acc, &rd));
        free(rd.pos);
    }
    /* Round 3: the best two of round 0 without a full-budget record; the
     * baseline's of round 2 stands. */
    CHECK(run_round(&f, &s, &set, recs, 3, acc, &rd));
    CHECK(rd.scale == 1 && positions_are(&rd, "2,5"));
    free(rd.pos);
    CHECK(!run_round(&f, &s, &set, recs, 4, acc, &rd));
    CHECK(winner_is(&f, recs, "batch=6"));
    json_decref(recs);
    fixture_close(&f);
}

/* A screening round keeps half, and when it cannot tell many from its
 * best, the half is taken from those, alternately the simplest (fewest
 * changes from the baseline, the selection's choice among ties) and the
 * fastest. Plan order is batch, then seed; batch=1 seed=1 (position 0)
 * is the baseline, so positions 1, 2, 4 and 6 change one setting and 3,
 * 5 and 7 two. */
static const char two_axes[] =
    "[suite]\nworkload_axes = none\n[sweep]\nbatch = 1, 2, 3, 4\nseed = 1, 2\n";

/* The baseline (78.5) ties with the best too, and is the simplest of
 * all, but the final round runs it anyway: it takes no place. */
static void test_halving_ties(void)
{
    static const double r0[8] = {78.5, 76, 10, 79, 30, 78, 77, 80};
    struct fixture f;
    int opened = fixture_open(&f, two_axes);
    CHECK(opened);
    if (!opened)
        return;
    struct dlb_search s = {DLB_SEARCH_HALVING, 0, 0, 0};
    struct dlb_select_settings set;
    struct dlb_error err = {""};
    CHECK(dlb_select_settings(&f.p, &set, &err) == DLB_OK);
    CHECK(set.baseline == 0);
    json_t *recs = json_array();
    struct dlb_search_round rd;
    int done = 0;
    CHECK(dlb_search_round(&f.p, &s, &set, recs, 0, &rd, &done, &err) == DLB_OK);
    CHECK(!done && rd.n == 8);
    for (size_t k = 0; k < rd.n; k++) {
        json_t *rec = crafted(&f, rd.pos[k], r0[rd.pos[k]], 0.3, -1, -1);
        json_object_set_new(rec, "round", json_integer(0));
        json_object_set_new(rec, "budget", json_real(rd.scale));
        json_array_append_new(recs, rec);
    }
    free(rd.pos);
    /* of 7 (80, the best) and 3, 5, 6 and 1 (tied with it), taken in
     * turn the simplest (6, then 1: one change each, the faster first)
     * and the fastest (7, then 3); 5 goes */
    CHECK(dlb_search_round(&f.p, &s, &set, recs, 1, &rd, &done, &err) == DLB_OK);
    CHECK(!done && positions_are(&rd, "1,3,6,7"));
    free(rd.pos);
    /* The same figures measured tightly: nothing tied, the fastest half
     * of the seven that are not the baseline. */
    json_array_clear(recs);
    for (size_t k = 0; k < 8; k++) {
        json_t *rec = crafted(&f, k, r0[k], 0.01, -1, -1);
        json_object_set_new(rec, "round", json_integer(0));
        json_array_append_new(recs, rec);
    }
    CHECK(dlb_search_round(&f.p, &s, &set, recs, 1, &rd, &done, &err) == DLB_OK);
    CHECK(!done && positions_are(&rd, "3,5,6,7"));
    free(rd.pos);
    json_decref(recs);
    fixture_close(&f);
}

/* mode = infer: the first screening round judges the accuracy too, on
 * 2,000 test images, and the configurations breaking the constraint by
 * more than its sampling error never go on, however fast; the better half
 * is of those that meet it. A near miss goes on, and the final round's
 * full figures judge it. Round 0 ranks 2 3 4 5 7 6 1 0; the two fastest
 * lose 10 points, far beyond 0.5 + 3 standard errors (3.4 points); 4
 * loses 1.5 (30 of the 2,000 images). Without the records' marks its
 * error is that of two independent proportions, 0.98 points, so 4 is
 * within it and goes on: the finalists are the better half of the five
 * besides the baseline that keep their accuracy, 60 50 40, with the
 * baseline. With the marks (`marked`: the two scored on the same images,
 * disagreeing on those 30 alone) it is the paired error, 0.27 points:
 * 1.5 is beyond 0.5 + 3 x 0.27 and 4 goes no further. Three or fewer end
 * the screening: the final round at the full budget, where on every test
 * image 4's drop breaks the constraint either way. */
static void halving_infer_screen(int marked, const char *finalists)
{
    static const char inf[] = "[suite]\nseed = 7\nmode = infer\n"
                              "accuracy_tolerance = 0.5\n"
                              "[sweep]\nbatch = 1, 2, 3, 4, 5, 6, 7, 8\n";
    static const double acc[8] = {90, 90, 80, 80, 88.5, 89.8, 90, 90};
    struct fixture f;
    if (!fixture_open(&f, inf))
        return;
    struct dlb_search s = {DLB_SEARCH_HALVING, 0, 0, 0};
    struct dlb_select_settings set;
    struct dlb_error err = {""};
    CHECK(dlb_select_settings(&f.p, &set, &err) == DLB_OK);
    json_t *recs = json_array();
    struct dlb_search_round rd;
    with_marks = marked;
    CHECK(run_round(&f, &s, &set, recs, 0, acc, &rd));
    CHECK(rd.measure_only && rd.accuracy && rd.n == 8);
    CHECK(rd.once); /* the accuracy screen: one process each */
    free(rd.pos);
    CHECK(run_round(&f, &s, &set, recs, 1, acc, &rd));
    CHECK(!rd.measure_only && !rd.accuracy && rd.scale == 1);
    CHECK(positions_are(&rd, finalists));
    CHECK(!rd.once);
    free(rd.pos);
    CHECK(!run_round(&f, &s, &set, recs, 2, acc, &rd));
    CHECK(winner_is(&f, recs, "batch=6"));
    with_marks = 0;
    json_decref(recs);
    fixture_close(&f);
}

static void test_halving_infer(void)
{
    halving_infer_screen(0, "0,4,5,7");
    halving_infer_screen(1, "0,5,7");
    /* Training: the screening judges speed alone, as before. */
    static const double acc[8] = {90, 90, 80, 80, 88.5, 89.8, 90, 90};
    struct fixture f;
    if (!fixture_open(&f, "[suite]\nseed = 7\ntrain_steps = 10\n[sweep]\n"
                          "batch = 1, 2, 3, 4, 5, 6, 7, 8\n"))
        return;
    struct dlb_search s = {DLB_SEARCH_HALVING, 0, 0, 0};
    struct dlb_select_settings set;
    struct dlb_error err = {""};
    json_t *recs = json_array();
    struct dlb_search_round rd;
    CHECK(dlb_select_settings(&f.p, &set, &err) == DLB_OK);
    CHECK(run_round(&f, &s, &set, recs, 0, acc, &rd));
    CHECK(rd.measure_only && !rd.accuracy);
    free(rd.pos);
    CHECK(run_round(&f, &s, &set, recs, 1, acc, &rd));
    CHECK(positions_are(&rd, "2,3,4,5"));
    free(rd.pos);
    /* Time to accuracy: a cut training budget's miss is no verdict, so the
     * half is of all seven besides the baseline (position 0, which runs
     * again in every round), though one alone reached the target. */
    static const double tta_acc[8] = {90, 80, 80, 80, 80, 80, 80, 80};
    json_array_clear(recs);
    fixture_close(&f);
    if (!fixture_open(&f, "[suite]\nseed = 7\ntrain_steps = 10\n"
                          "objective = time_to_accuracy\ntarget_accuracy = 85\n"
                          "[sweep]\nbatch = 1, 2, 3, 4, 5, 6, 7, 8\n"))
        return;
    CHECK(dlb_select_settings(&f.p, &set, &err) == DLB_OK);
    CHECK(run_round(&f, &s, &set, recs, 0, tta_acc, &rd));
    CHECK(!rd.measure_only && !rd.accuracy);
    free(rd.pos);
    CHECK(run_round(&f, &s, &set, recs, 1, tta_acc, &rd));
    CHECK(positions_are(&rd, "0,1,2,3,4"));
    free(rd.pos);
    json_decref(recs);
    fixture_close(&f);
}

/* 18 configurations of which 6 cannot run here (amp's fp16 rows on a CPU
 * without fp16 kernels): halving would screen down to one configuration
 * in five rounds; it stops once DLB_HALVING_FINALISTS are left, and the
 * final round holds them and the baseline. */
static void test_halving_finalists(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\nworkload_axes = none\n[sweep]\n"
                          "batch = 1, 2, 3, 4, 5, 6, 7, 8, 9\nseed = 1, 2\n"))
        return;
    struct dlb_search s = {DLB_SEARCH_HALVING, 0, 0, 0};
    struct dlb_select_settings set;
    struct dlb_error err = {""};
    CHECK(dlb_select_settings(&f.p, &set, &err) == DLB_OK);
    json_t *recs = json_array();
    struct dlb_search_round rd;
    int done = 0;
    static const char *const want[] = {
        "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
        "6,8,10,12,14,16", /* the best 6 of the 11 that ran, not the baseline */
        "0,12,14,16",      /* the best 3 of those, and the baseline */
    };
    for (int r = 0; r < 3; r++) {
        CHECK(dlb_search_round(&f.p, &s, &set, recs, r, &rd, &done, &err) == DLB_OK);
        CHECK(!done && positions_are(&rd, want[r]));
        CHECK_NEAR(rd.scale, r < 2 ? 1.0 / (32 >> r) : 1.0, 1e-12);
        CHECK(rd.measure_only == (r < 2));
        for (size_t k = 0; k < rd.n; k++) {
            size_t pos = rd.pos[k];
            json_t *rec = crafted(&f, pos, 10.0 + (double)pos, 0.01, -1, -1);
            /* seed = 2 at batch 4 and above cannot run */
            if (pos % 2 && pos >= 7)
                json_object_set_new(rec, "status", json_string("skipped"));
            json_object_set_new(rec, "round", json_integer(r));
            json_object_set_new(rec, "budget", json_real(rd.scale));
            json_array_append_new(recs, rec);
        }
        free(rd.pos);
    }
    CHECK(dlb_search_round(&f.p, &s, &set, recs, 3, &rd, &done, &err) == DLB_OK);
    CHECK(done);
    CHECK(winner_is(&f, recs, "batch=9 seed=1"));
    json_decref(recs);
    fixture_close(&f);
}

/* Two configurations: a single round at the full budget, as the grid. */
static void test_halving_two(void)
{
    struct fixture f;
    if (!fixture_open(&f, "[suite]\n[sweep]\nbatch = 1, 2\n"))
        return;
    struct dlb_search s = {DLB_SEARCH_HALVING, 0, 0, 0};
    struct dlb_select_settings set;
    struct dlb_error err = {""};
    CHECK(dlb_select_settings(&f.p, &set, &err) == DLB_OK);
    struct dlb_search_round rd;
    int done;
    CHECK(dlb_search_round(&f.p, &s, &set, NULL, 0, &rd, &done, &err) == DLB_OK);
    CHECK(rd.n == 2 && rd.scale == 1 && !rd.measure_only);
    free(rd.pos);
    fixture_close(&f);
}

/* Halving on fewer than DLB_HALVING_MIN_CONFIGS configurations runs the
 * grid (and says so); from that many on it halves. */
static void test_halving_small(void)
{
    struct fixture f;
    if (fixture_open(&f, "[suite]\nsearch = halving\n[sweep]\n"
                         "batch = 1, 2, 3, 4, 5, 6, 7, 8\n")) {
        struct dlb_search s = dlb_search_of(&f.p);
        CHECK(s.kind == DLB_SEARCH_GRID && s.halving_small);
        fixture_close(&f);
    }
    if (fixture_open(&f, "[suite]\nsearch = halving\nworkload_axes = none\n"
                         "[sweep]\nbatch = 1, 2, 3, 4, 5, 6, 7, 8\n"
                         "seed = 1, 2\n")) {
        struct dlb_search s = dlb_search_of(&f.p);
        CHECK(f.p.n == DLB_HALVING_MIN_CONFIGS);
        CHECK(s.kind == DLB_SEARCH_HALVING && !s.halving_small);
        CHECK(s.halving_groups == 0);
        fixture_close(&f);
    }
    /* Two workloads (seed is one by default): halving would rank one
     * against the other, so the grid runs, and says why. */
    if (fixture_open(&f, "[suite]\nsearch = halving\n[sweep]\n"
                         "batch = 1, 2, 3, 4, 5, 6, 7, 8\n"
                         "seed = 1, 2\n")) {
        struct dlb_search s = dlb_search_of(&f.p);
        CHECK(s.kind == DLB_SEARCH_GRID && s.halving_groups == 2);
        fixture_close(&f);
    }
}

/* The first screening round's budget, 2^-R of the suite's (R = 3 for 8
 * configurations), is halved only for a speed screening in several
 * processes a configuration: not with one process (repetitions = 1, or
 * the accuracy screen of mode = infer), nor for time to accuracy. */
static void test_halving_scale(void)
{
    static const struct {
        const char *suite;
        double scale;
    } cases[] = {
        {"[suite]\n", 1.0 / 8},
        {"[suite]\nrepetitions = 3\n", 1.0 / 16},
        {"[suite]\nrepetitions = 3\nmode = infer\n", 1.0 / 8},
        {"[suite]\nrepetitions = 3\ntrain_steps = 10\n"
         "objective = time_to_accuracy\ntarget_accuracy = 85\n", 1.0 / 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "%s[sweep]\nbatch = 1, 2, 3, 4, 5, 6, 7, 8\n",
                 cases[i].suite);
        struct fixture f;
        if (!fixture_open(&f, text))
            return;
        struct dlb_search s = {DLB_SEARCH_HALVING, 0, 0, 0};
        struct dlb_select_settings set;
        struct dlb_error err = {""};
        struct dlb_search_round rd;
        json_t *recs = json_array();
        int done = 0;
        CHECK(dlb_select_settings(&f.p, &set, &err) == DLB_OK);
        CHECK(dlb_search_round(&f.p, &s, &set, recs, 0, &rd, &done, &err) == DLB_OK);
        CHECK(!done && rd.n == 8);
        CHECK_NEAR(rd.scale, cases[i].scale, 1e-12);
        if (!done)
            free(rd.pos);
        json_decref(recs);
        fixture_close(&f);
    }
}

static void test_random(void)
{
    struct fixture f;
    if (!fixture_open(&f, suite))
        return;
    struct dlb_search s;
    char why[256];
    CHECK(dlb_search_parse("random:3", &s, why, sizeof why) == DLB_OK);
    CHECK(s.kind == DLB_SEARCH_RANDOM && s.n == 3);
    struct dlb_select_settings set;
    struct dlb_error err = {""};
    CHECK(dlb_select_settings(&f.p, &set, &err) == DLB_OK);
    struct dlb_search_round a, b;
    int done;
    CHECK(dlb_search_round(&f.p, &s, &set, NULL, 0, &a, &done, &err) == DLB_OK);
    CHECK(dlb_search_round(&f.p, &s, &set, NULL, 0, &b, &done, &err) == DLB_OK);
    CHECK(a.n == 3 && a.round == -1 && a.last && a.scale == 1);
    CHECK(a.pos[0] == 0); /* the baseline is always in, plan order */
    CHECK(a.pos[0] < a.pos[1] && a.pos[1] < a.pos[2]);
    CHECK(a.n == b.n && !memcmp(a.pos, b.pos, a.n * sizeof *a.pos));
    free(a.pos);
    free(b.pos);
    CHECK(dlb_search_round(&f.p, &s, &set, NULL, 1, &a, &done, &err) == DLB_OK && done);
    /* more than the plan holds: all of it */
    CHECK(dlb_search_parse("random:50", &s, why, sizeof why) == DLB_OK);
    CHECK(dlb_search_round(&f.p, &s, &set, NULL, 0, &a, &done, &err) == DLB_OK);
    CHECK(a.n == 8);
    free(a.pos);
    fixture_close(&f);
}

static void test_parse(void)
{
    struct dlb_search s;
    char why[256];
    CHECK(dlb_search_parse("grid", &s, why, sizeof why) == DLB_OK &&
          s.kind == DLB_SEARCH_GRID);
    CHECK(dlb_search_parse("halving", &s, why, sizeof why) == DLB_OK &&
          s.kind == DLB_SEARCH_HALVING);
    CHECK(dlb_search_parse("random:", &s, why, sizeof why) != DLB_OK);
    CHECK(dlb_search_parse("random:0", &s, why, sizeof why) != DLB_OK);
    CHECK(dlb_search_parse("random:3x", &s, why, sizeof why) != DLB_OK);
    CHECK(dlb_search_parse("Grid", &s, why, sizeof why) != DLB_OK);
    CHECK(strstr(why, "random:N") != NULL);
}

int main(void)
{
    test_halving();
    test_halving_finalists();
    test_halving_two();
    test_halving_ties();
    test_halving_small();
    test_halving_fallback();
    test_halving_infer();
    test_halving_scale();
    test_random();
    test_parse();
    return check_exit();
}
