/* The selection as a struct: its one writer (dlb_selection_write) and the
 * reader of results files (dlb_selection_read) agree member for member,
 * the lookup of a configuration's entry finds what a JSON object would,
 * and a member of the wrong type in a file is an error that names it. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "results/selection.h"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fprintf(stderr, "  bad test JSON: %s\n", e.text);
    return j;
}

/* A selection with a member of every kind, as select.c writes it: two
 * groups (one without a winner), a doubtful winner, ties, a violation,
 * per-configuration entries with and without figures, a verdict of two
 * rows, attribution. */
static const char full[] =
    "{\"objective\": \"throughput\", \"workload_axes\": [\"batch\"],"
    " \"baseline\": \"batch=16 amp.enable=off\", \"winner\": null,"
    " \"winner_index\": null, \"fastest\": null,"
    " \"why\": \"2 workloads (batch differs), one winner each against its own"
    " baseline: see groups\","
    " \"winners\": [\"batch=16 amp.enable=on\"], \"ties\": [\"batch=16 amp.enable=off\"],"
    " \"pareto\": [\"batch=16 amp.enable=on\", \"batch=32 amp.enable=off\"],"
    " \"groups\": [{\"workload\": \"batch=16\", \"configs\": [\"batch=16 amp.enable=off\","
    " \"batch=16 amp.enable=on\"], \"baseline\": \"batch=16 amp.enable=off\","
    " \"winner\": \"batch=16 amp.enable=on\", \"winner_index\": 1,"
    " \"fastest\": \"batch=16 amp.enable=on\", \"ties\": [\"batch=16 amp.enable=off\"],"
    " \"why\": \"fastest\", \"winner_doubtful\": true,"
    " \"winner_doubtful_why\": \"its baseline batch=16 amp.enable=off: 5% stolen\","
    " \"pareto\": [\"batch=16 amp.enable=on\"]},"
    " {\"workload\": \"batch=32\", \"configs\": [\"batch=32 amp.enable=off\"],"
    " \"baseline\": null, \"winner\": null, \"winner_index\": null,"
    " \"fastest\": null, \"ties\": [], \"why\": \"nothing to choose from\","
    " \"pareto\": [\"batch=32 amp.enable=off\"]}],"
    " \"constraints\": {\"max_accuracy_drop\": 0.5, \"memory_budget\": 0.0,"
    " \"target_accuracy\": 0.0, \"significance\": 0.05},"
    " \"violations\": [{\"id\": \"batch=32 amp.enable=off\", \"constraint\":"
    " \"memory_budget\", \"value\": 2.0, \"limit\": 1.0}],"
    " \"per_config\": {\"batch=16 amp.enable=off\": {\"group\": 0, \"baseline\":"
    " \"batch=16 amp.enable=off\", \"speedup\": 1.0, \"speedup_ci\": [0.98, 1.02],"
    " \"accuracy_drop\": 0.0, \"doubtful\": true, \"doubtful_why\": \"5% stolen\","
    " \"trained_images\": 640.0, \"peak_memory\": 50000000.0, \"objective\":"
    " {\"median\": 100.0, \"ci_lo\": 99.0, \"ci_hi\": 101.0}, \"changes\": 0},"
    " \"batch=16 amp.enable=on\": {\"group\": 0, \"baseline\": \"batch=16 amp.enable=off\","
    " \"speedup\": 1.5, \"speedup_ci\": [1.4, 1.6], \"accuracy_drop\": 0.25,"
    " \"accuracy_drop_ci\": 1.5, \"accuracy_seeds\": 2, \"accuracy_effect\":"
    " \"no measurable effect\", \"accuracy_within\": \"cannot tell\","
    " \"changes\": 1, \"eliminated_in_round\": 0},"
    " \"batch=32 amp.enable=off\": {\"group\": 1, \"accuracy_note\": \"not compared\"}},"
    " \"verdicts\": [{\"setting\": \"amp.enable=on\", \"workloads\": [{\"workload\":"
    " \"batch=16\", \"id\": \"batch=16 amp.enable=on\", \"baseline\":"
    " \"batch=16 amp.enable=off\", \"speedup\": 1.5, \"speedup_ci\": [1.4, 1.6],"
    " \"doubtful\": true, \"doubtful_why\": \"its baseline: 5% stolen\","
    " \"accuracy_change\": -0.25, \"accuracy_ci\": 1.5, \"accuracy_seeds\": 2,"
    " \"accuracy_effect\": \"no measurable effect\", \"memory_change\": 0.1,"
    " \"verdict\": \"pays off\", \"why\": \"faster\"}, {\"workload\": \"batch=32\","
    " \"id\": \"batch=32 amp.enable=on\", \"verdict\": \"not measured\", \"why\":"
    " \"failed: no kernel\"}], \"doubtful\": true, \"doubtful_why\":"
    " \"its baseline: 5% stolen\", \"verdict\": \"pays off\", \"summary\":"
    " \"pays off wherever measured\"}],"
    " \"attribution\": [{\"plugin\": \"amp\", \"alone\": \"batch=16 amp.enable=on\","
    " \"speedup_alone\": 1.5, \"speedup_alone_ci\": [1.4, 1.6], \"in_winner\": true,"
    " \"speedup_winner\": 1.5, \"speedup_winner_ci\": [1.4, 1.6], \"workload\":"
    " \"batch=16\"}, {\"plugin\": \"amp\", \"workload\": \"batch=32\"}]}";

/* Read, write, compare: the writer gives back the document, member for
 * member and in the same order, from what the reader made of it. */
static void test_round_trip(void)
{
    json_t *doc = parse(full);
    struct dlb_selection sel;
    struct dlb_error err = {""};
    CHECK(doc && dlb_selection_read(doc, &sel, &err) == DLB_OK);
    json_t *again = dlb_selection_write(&sel);
    CHECK(json_equal(doc, again));
    char *a = json_dumps(doc, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    char *b = json_dumps(again, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    CHECK(a && b && !strcmp(a, b));
    if (a && b && strcmp(a, b))
        fprintf(stderr, "  read:    %s\n  written: %s\n", a, b);
    free(a);
    free(b);
    /* the typed view */
    CHECK(sel.present && sel.n_groups == 2 && sel.n_configs == 3);
    CHECK(sel.workload_axes.n == 1 && !strcmp(sel.workload_axes.id[0], "batch"));
    CHECK(sel.constraints.significance == 0.05);
    CHECK(sel.groups[0].winner_index == 1 && sel.groups[1].winner_index == -1);
    CHECK(!sel.groups[1].baseline && !sel.winner);
    CHECK(sel.verdicts[0].n_rows == 2 && !strcmp(sel.verdicts[0].rows[1].id,
                                                 "batch=32 amp.enable=on"));
    CHECK(isnan(sel.verdicts[0].rows[1].speedup));
    CHECK(sel.attribution[1].in_winner == -1 && isnan(sel.attribution[1].speedup_alone));
    json_decref(again);
    dlb_selection_free(&sel);
    json_decref(doc);
}

static void test_lookup(void)
{
    json_t *doc = parse(full);
    struct dlb_selection sel;
    struct dlb_error err = {""};
    CHECK(doc && dlb_selection_read(doc, &sel, &err) == DLB_OK);
    const struct dlb_sel_config *c = dlb_selection_config(&sel, "batch=16 amp.enable=on");
    CHECK(c->id && c->group == 0 && c->changes == 1 && c->eliminated_in_round == 0);
    CHECK(c->speedup == 1.5 && c->speedup_ci_lo == 1.4 && c->speedup_ci_hi == 1.6);
    CHECK(c->accuracy_seeds == 2 && !strcmp(c->accuracy_within, "cannot tell"));
    CHECK(isnan(c->objective) && isnan(c->trained_images));
    c = dlb_selection_config(&sel, "batch=16 amp.enable=off");
    CHECK(c->objective == 100 && c->objective_ci_hi == 101 && c->changes == 0);
    c = dlb_selection_config(&sel, "batch=32 amp.enable=off");
    CHECK(c->group == 1 && !c->baseline && !strcmp(c->accuracy_note, "not compared"));
    /* absent: every figure absent, never a zero */
    c = dlb_selection_config(&sel, "batch=64");
    CHECK(!c->id && c->group == -1 && isnan(c->speedup) && isnan(c->peak_memory));
    CHECK(!dlb_selection_config(&sel, NULL)->id);
    dlb_selection_free(&sel);
    json_decref(doc);

    /* A selection built in memory may repeat an id, as a JSON object may
     * be set twice: the last entry is the one the document keeps. */
    struct dlb_selection b;
    dlb_selection_init(&b);
    struct dlb_sel_config e[3] = {dlb_sel_config_none, dlb_sel_config_none,
                                  dlb_sel_config_none};
    e[0].id = "x", e[0].speedup = 1;
    e[1].id = "y", e[1].speedup = 2;
    e[2].id = "x", e[2].speedup = 3;
    b.configs = e;
    b.n_configs = 3;
    CHECK(dlb_selection_index(&b) == DLB_OK);
    CHECK(dlb_selection_config(&b, "x")->speedup == 3);
    CHECK(dlb_selection_config(&b, "y")->speedup == 2);
    json_t *w = dlb_selection_write(&b);
    json_t *pc = json_object_get(w, "per_config");
    CHECK(json_object_size(pc) == 2 &&
          json_number_value(json_object_get(json_object_get(pc, "x"), "speedup")) == 3);
    json_decref(w);
    b.configs = NULL;
    b.n_configs = 0;
    dlb_selection_free(&b);
}

static void expect_error(const char *text, const char *says)
{
    json_t *doc = parse(text);
    struct dlb_selection sel;
    struct dlb_error err = {""};
    CHECK(doc && dlb_selection_read(doc, &sel, &err) == DLB_ERR_INPUT);
    if (!strstr(err.msg, says)) {
        fprintf(stderr, "  got \"%s\", want \"%s\"\n", err.msg, says);
        check_failures++;
    }
    json_decref(doc);
}

static void test_bad_members(void)
{
    expect_error("{\"groups\": [{\"ties\": \"a\"}]}",
                 "\"groups[0].ties\" is a string; expected an array");
    expect_error("{\"per_config\": {\"a\": {\"speedup\": \"fast\"}}}",
                 "\"per_config.a.speedup\" is a string; expected a number");
    expect_error("{\"per_config\": [1]}", "\"per_config\" is an array");
    expect_error("{\"constraints\": {\"significance\": true}}",
                 "\"constraints.significance\" is a boolean");
    expect_error("{\"verdicts\": [{\"workloads\": [{\"id\": 3}]}]}",
                 "\"verdicts[0].workloads[0].id\" is a number");
    /* no selection at all: empty, not an error */
    struct dlb_selection sel;
    struct dlb_error err = {""};
    CHECK(dlb_selection_read(NULL, &sel, &err) == DLB_OK && !sel.present &&
          sel.winner_index == -1 && isnan(sel.constraints.significance));
    dlb_selection_free(&sel);
}

int main(void)
{
    test_round_trip();
    test_lookup();
    test_bad_members();
    return check_exit();
}
