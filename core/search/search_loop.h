/* The parent's search loop: runs the suite's search (core/search/search.h) round
 * by round, repetitions and all, each configuration in a child process,
 * and journals every record as it comes. cmd_run.c sets it up and writes
 * the results from what it leaves in `records`. */
#ifndef DLB_CORE_SEARCH_LOOP_H
#define DLB_CORE_SEARCH_LOOP_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "options/options.h"
#include "util/error.h"
#include "plan/plan.h"
#include "results/results.h"

struct dlb_search_loop {
    const struct dlb_options *opts;
    const struct dlb_plan *plan;
    const char *dir;        /* the run directory */
    const char *suite_copy; /* DIR/suite.ini, what each child reads */
    const char *origin;     /* the suite file as the user named it, or NULL */
    const char *peak_file;  /* DIR/peak.json, the run's roofline, or NULL */
    json_t *records;        /* finished runs so far (the journal's on
                             * --resume); the loop appends to it */
    struct dlb_journal *journal;
    int journal_failed;     /* an append failed: start nothing more */
    int slimmed;            /* some records are kept slim: see
                             * dlb_search_loop_restore */
    char data_said[256];    /* the last data note printed: said once a run,
                             * again when it changes */
};

/* Run what the search still needs, round by round, until it is done, a
 * signal or --time-limit stops it, or the journal fails. Failed
 * configurations count in *failures. Returns how many runs were left
 * out (0 when the search finished). */
size_t dlb_search_loop_run(struct dlb_search_loop *l, int *failures,
                           struct dlb_error *err);

/* The fsync of the last journaled record (the runner's `started` hook,
 * and once at the end). */
void dlb_search_loop_sync(void *loop);

/* A plain sweep keeps its journaled records in memory as index, id and
 * status only; this puts the whole records back from the journal. */
dlb_status dlb_search_loop_restore(struct dlb_search_loop *l,
                                   struct dlb_error *err);

/* The suite's `repetitions` (repeat.h) and the seed of the passes'
 * orders (its `seed`). */
int dlb_plan_repetitions(const struct dlb_plan *p);
uint64_t dlb_plan_interleave_seed(const struct dlb_plan *p);

#endif
