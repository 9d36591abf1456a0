/* The search loop of the parent: round after round (core/search/search.h decides
 * each from the records of the ones before), each round's configurations
 * in as many passes as the suite has repetitions, each pass in its own
 * order; each run of a configuration is a child process (core/run/runner.h)
 * whose record goes to the journal at once. */
#include "search/search_loop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cpu_quota.h"
#include "proc/interrupt.h"
#include "stats/measure.h"
#include "util/path.h"
#include "run/progress.h"
#include "results/dataset_context.h"
#include "results/record.h"
#include "results/remeasure.h"
#include "results/seeds.h"
#include "results/repeat.h"
#include "run/run_child_args.h"
#include "run/run_launch.h"
#include "run/runner.h"
#include "search/search.h"
#include "search/search_loop_impl.h"
#include "stats/stats_shift.h"

/* CV above this earns a warning: the median is still sound, but the user
 * should know the machine was noisy. */
#define CV_WARN 0.05

/* A level shift within the process (stats_shift.h): its figure mixes two
 * speeds of the machine. */
static void warn_shift(const char *id, const struct dlb_record *rec)
{
    struct dlb_level_shift sh;
    if (dlb_level_shift(rec->samples, rec->n_samples, &sh)) {
        double rel = sh.second_median / sh.first_median - 1;
        fprintf(stderr, "dlbench: warning: %s: the step time moved %+.0f%% from the "
                        "first half of the samples to the second (medians %.4g and "
                        "%.4g ms, U test p %s %.2g): the machine's speed changed "
                        "during the measurement; rerun it, or compare it with "
                        "care\n", id, 100 * rel, sh.first_median * 1e3,
                sh.second_median * 1e3, sh.p < 1e-16 ? "<" : "=",
                sh.p < 1e-16 ? 1e-16 : sh.p);
    }
}

/* Data that are not the plain files (synthetic, padded to the model's
 * input, an image folder with its corrupt files) are said on the console,
 * as the record says them. */
static void note_data(struct dlb_search_loop *r, const char *id,
                      const struct dlb_record *rec)
{
    json_t *d = rec->dataset;
    int syn = json_is_true(json_object_get(d, "synthetic"));
    if (!json_is_object(d) || (!syn && !json_object_get(d, "padded_from") &&
                               !json_object_get(d, "corrupt_images")))
        return;
    char line[sizeof r->data_said];
    dlb_dataset_line(line, sizeof line, d);
    if (!strcmp(line, r->data_said))
        return;
    snprintf(r->data_said, sizeof r->data_said, "%s", line);
    const char *why = json_string_value(json_object_get(d, "synthetic_because"));
    fprintf(stderr, "dlbench: %s: %s: data: %s%s%s%s%s\n",
            syn ? "warning" : "note", id, line, why ? " (" : "", why ? why : "",
            why ? ")" : "", syn ? "; the figures of quality are not those of "
                                  "real images" : "");
}

static void warn_noise(struct dlb_search_loop *r, const char *id, json_t *json)
{
    struct dlb_record rec;
    struct dlb_error err = {""};
    /* the journal took it, so the reader does too */
    if (dlb_record_read(json, NULL, &rec, &err) != DLB_OK)
        return;
    note_data(r, id, &rec);
    warn_shift(id, &rec);
    if (rec.system.doubtful)
        fprintf(stderr, "dlbench: warning: %s: doubtful figure: %s during the "
                        "measurement\n", id, rec.system.doubtful);
    double cv = rec.stats.cv;
    if (cv > CV_WARN)
        fprintf(stderr, "dlbench: warning: %s: step times vary a lot (CV %.1f%% > %.0f%%); "
                        "is something else running?\n", id, cv * 100, CV_WARN * 100);
    if (rec.stats.ci_exact == 0 && rec.stats.n >= 2 &&
        dlb_rec_has(rec.stats.median))
        /* [min, max] of n samples holds the median with probability
         * 1 - 2^(1-n): 50% at 2, 93.75% at 5; 6 is the fewest for 95% */
        fprintf(stderr, "dlbench: note: %s: only %lld samples before "
                        "time_cap: their range holds the median with %.4g%% "
                        "confidence, not 95%%, so this row's intervals are "
                        "narrower than they should be; 6 samples give 95%% "
                        "(a time_cap of %.2g s at this step time)\n", id,
                rec.stats.n, 100 * (1 - ldexp(1, 1 - (int)rec.stats.n)),
                6 * rec.stats.median * (rec.measure.steps_per_sample > 0
                                            ? rec.measure.steps_per_sample : 1));
    else if (rec.measure.converged == 0 && dlb_rec_has(rec.stats.ci_rel_halfwidth))
        fprintf(stderr, "dlbench: note: %s: the median's CI did not reach the target "
                        "before time_cap (%.2f%%)\n", id,
                rec.stats.ci_rel_halfwidth * 100);
    dlb_record_free(&rec);
}

static int is_failure(json_t *rec)
{
    int s = dlb_rec_status_of(rec);
    return s != DLB_REC_OK && s != DLB_REC_SKIPPED;
}

/* The runner's `started` hook: the previous record's fsync, while the
 * next configuration's process starts up. */
void dlb_search_loop_sync(void *ctx)
{
    struct dlb_search_loop *r = ctx;
    struct dlb_error err = {""};
    if (!r->journal_failed && dlb_journal_sync(r->journal, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        r->journal_failed = 1;
    }
}

int dlb_plan_repetitions(const struct dlb_plan *p)
{
    return (int)p->configs[0].core.repetitions;
}

uint64_t dlb_plan_interleave_seed(const struct dlb_plan *p)
{
    return (uint64_t)p->configs[0].core.seed;
}

/* Whether (index, round, rep) has a record: rep -1 without repetitions. */
static int have_run(const struct dlb_search_loop *r, size_t index, int round, int rep)
{
    size_t i;
    json_t *v;
    json_array_foreach(r->records, i, v)
        if (dlb_rec_index_of(v) == (long long)index &&
            dlb_round_of(v) == round && dlb_rep_of(v) == rep &&
            !dlb_seed_rep_of(v))
            return 1;
    return 0;
}

/* Whether configuration `c`'s repetition `rep` of round `round` is still
 * to run: not in the journal, no earlier repetition failed or was
 * skipped, and no record stands for all of them (a journal `dlbench
 * merge` wrote from results.json holds merged records). */
static int to_run(const struct dlb_search_loop *r, const struct dlb_config *c,
                  int round, int rep, int reps)
{
    if (have_run(r, c->index, round, -1))
        return 0;
    if (reps < 2)
        return 1;
    return !have_run(r, c->index, round, rep) &&
           !dlb_reps_stopped(r->records, c->index, round);
}

int dlb_search_run_one(struct dlb_search_loop *r, const struct dlb_search_round *rd,
                       const struct dlb_config *c, const struct dlb_run_kind *kind,
                       struct dlb_progress *prog, size_t k, int *failures,
                       struct dlb_error *err)
{
    int rep = kind->rep, reps = kind->reps;
    long long attempt = kind->attempt;
    dlb_progress_start(prog, k, c->id);
    char idx[32], logname[96], sets[DLB_ROUND_SETS][64];
    struct dlb_round_budget budget = {rd->scale, rd->measure_only, rd->accuracy};
    dlb_child_round_sets(r->plan, c, &budget, rep, sets);
    struct dlb_child_cmd cmd = {r->opts, r->suite_copy, r->origin, r->peak_file,
                                kind->seed_rep};
    char **av = dlb_child_argv(&cmd, c, idx, sets);
    char rep_part[64] = "";
    if (reps > 1)
        snprintf(rep_part, sizeof rep_part, "-rep-%d", rep);
    if (attempt > 0)
        snprintf(rep_part + strlen(rep_part), sizeof rep_part - strlen(rep_part),
                 "-attempt-%lld", attempt);
    if (kind->seed_rep > 0)
        snprintf(rep_part + strlen(rep_part), sizeof rep_part - strlen(rep_part),
                 "-seed-%d", kind->seed_rep);
    if (rd->round >= 0)
        snprintf(logname, sizeof logname, "logs/config-%zu-round-%d%s.log",
                 c->index, rd->round, rep_part);
    else
        snprintf(logname, sizeof logname, "logs/config-%zu%s.log", c->index,
                 rep_part);
    char *log = dlb_path_join(r->dir, logname);
    double timeout = c->core.timeout_s;
    struct dlb_child_spec spec = {av, timeout, log, NULL, NULL, dlb_search_loop_sync, r, 0};
    spec.omp_passive =
        dlb_threads_oversubscribe((long)c->core.threads);
    json_t *rec = NULL;
    if (!av || !log ||
        dlb_run_launch_prepare(r->plan, c, r->dir, av, &spec, err) != DLB_OK ||
        dlb_runner_run(&spec, &rec, err) != DLB_OK) {
        dlb_run_launch_release(&spec);
        free(av);
        free(log);
        fprintf(stderr, "dlbench: %s: %s\n", c->id, err->msg);
        if (dlb_interrupted())
            return 0; /* stopped, not failed: --resume runs it */
        (*failures)++;
        return 1;
    }
    dlb_run_launch_release(&spec);
    free(av);
    free(log);
    /* The parent's view of which configuration this was wins over
     * whatever a dying child managed to write. */
    json_object_set_new(rec, "index", json_integer((json_int_t)c->index));
    json_object_set_new(rec, "id", json_string(c->id));
    if (attempt > 0)
        json_object_set_new(rec, "attempt", json_integer((json_int_t)attempt));
    if (kind->seed_rep > 0)
        json_object_set_new(rec, "seed_rep", json_integer(kind->seed_rep));
    struct dlb_record typed;
    struct dlb_error bad = {""};
    /* A record the reader refuses is refused by the journal below, which
     * says why. */
    if ((rd->round >= 0 || reps > 1) &&
        dlb_record_read(rec, NULL, &typed, &bad) == DLB_OK) {
        if (rd->round >= 0) {
            typed.round = rd->round;
            typed.budget = rd->scale;
        }
        if (reps > 1) {
            typed.rep = rep;
            typed.pass_position = (long long)kind->pass_pos;
        }
        dlb_status st = dlb_record_store(&typed, rec);
        dlb_record_free(&typed);
        if (st != DLB_OK) {
            json_decref(rec);
            fprintf(stderr, "dlbench: %s: out of memory\n", c->id);
            (*failures)++;
            return 1;
        }
    }
    /* Written now, synced while the next configuration starts. */
    int kept = dlb_journal_write(r->journal, rec, err) == DLB_OK;
    if (!kept) {
        /* A full disk or a file-size limit: what runs next could not be
         * kept either. */
        fprintf(stderr, "dlbench: %s\n", err->msg);
        r->journal_failed = 1;
    }
    dlb_progress_done(prog, k, c->id, rec);
    if (!is_failure(rec))
        warn_noise(r, c->id, rec);
    if (is_failure(rec))
        (*failures)++;
    /* Until the end a plain sweep needs only which configurations ran and
     * how they ended; a search's rounds need the figures. Journaled
     * records of a sweep stay in memory as that much, so the parent's size
     * does not grow with the sweep's length, and come back whole from the
     * journal at the end (dlb_search_loop_restore). */
    json_t *slim = NULL;
    if (kept && rd->round < 0 &&
        (slim = dlb_record_slim(rec, reps > 1))) {
        json_decref(rec);
        rec = slim;
        r->slimmed = 1;
    }
    json_array_append_new(r->records, rec);
    return 1;
}

/* Run the configurations of one search round not yet in the journal, in
 * as many passes as the suite has repetitions. Returns how many runs could
 * not start before --time-limit. */
static size_t run_round(struct dlb_search_loop *r, const struct dlb_search_round *rd,
                        double start, int *failures, struct dlb_error *err)
{
    struct dlb_progress prog;
    size_t todo = 0, k = 0, not_run = 0;
    int reps = rd->once ? 1 : dlb_plan_repetitions(r->plan);
    for (int rep = 0; rep < reps; rep++)
        for (size_t i = 0; i < rd->n; i++)
            if (dlb_run_in_shard(r->opts, rd->pos[i]) &&
                to_run(r, &r->plan->configs[rd->pos[i]], rd->round, rep, reps))
                todo++;
    const char *what = reps > 1 ? "runs" : todo == 1 ? "configuration" : "configurations";
    const char *judged = !rd->measure_only ? ""
                         : rd->accuracy    ? ", speed and accuracy"
                                           : ", speed only";
    if (rd->round >= 0 && todo)
        fprintf(stderr, "dlbench: search round %d: %zu %s at %.3g of the budget%s\n",
                rd->round, todo, what, rd->scale, judged);
    dlb_progress_init(&prog, todo);
    size_t *order = malloc((rd->n ? rd->n : 1) * sizeof *order);
    if (!order)
        return todo;
    for (int rep = 0; rep < reps; rep++) {
        /* With repetitions each pass runs in its own random order: see
         * dlb_reps_pass_order. A single pass keeps the plan's order. */
        if (reps > 1)
            dlb_reps_pass_order(dlb_plan_interleave_seed(r->plan), rd->round, rep, rd->n, order);
        else
            for (size_t i = 0; i < rd->n; i++)
                order[i] = i;
        for (size_t o = 0; o < rd->n; o++) {
            size_t i = order[o];
            const struct dlb_config *c = &r->plan->configs[rd->pos[i]];
            if (!dlb_run_in_shard(r->opts, rd->pos[i]) ||
                !to_run(r, c, rd->round, rep, reps))
                continue;
            if (r->journal_failed || dlb_interrupted() ||
                (r->opts->time_limit_s > 0 && dlb_now() - start >= r->opts->time_limit_s))
                not_run++;
            else if (!dlb_search_run_one(r, rd, c,
                                         &(struct dlb_run_kind){rep, reps, o, 0, 0},
                                         &prog, ++k, failures, err))
                not_run++;
        }
    }
    struct dlb_search_more more = {r, rd, reps, order, &prog, &k, start, failures, err};
    not_run += dlb_search_remeasure(&more);
    not_run += dlb_search_seeds(&more);
    free(order);
    return not_run;
}

/* Put back the whole records run_round slimmed, from the journal, whose
 * records are the first ones of r->records in the same order. A record
 * the journal could not take (a full disk) was kept whole. */
dlb_status dlb_search_loop_restore(struct dlb_search_loop *r, struct dlb_error *err)
{
    char *path = dlb_path_join(r->dir, "journal.jsonl");
    json_t *journal = NULL;
    dlb_status st = path ? dlb_journal_read(path, &journal, NULL, err)
                         : dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    free(path);
    if (st != DLB_OK)
        return st;
    size_t i;
    json_t *full;
    json_array_foreach(journal, i, full) {
        json_t *rec = json_array_get(r->records, i);
        if (!rec || !dlb_rec_same_config(rec, full)) {
            json_decref(journal);
            return dlb_errorf(err, DLB_ERR_INTERNAL, "%s/journal.jsonl: record %zu is "
                              "not the one this run wrote there", r->dir, i + 1);
        }
        json_array_set(r->records, i, full);
    }
    json_decref(journal);
    return DLB_OK;
}

/* Run the suite's search (core/search/search.c) round by round: a round is
 * decided from the records of the ones before, so it needs them all. */
size_t dlb_search_loop_run(struct dlb_search_loop *r, int *failures, struct dlb_error *err)
{
    struct dlb_search srch = dlb_search_of(r->plan);
    struct dlb_select_settings set;
    size_t not_run = 0;
    double start = dlb_now();
    if (dlb_select_settings(r->plan, &set, err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err->msg);
        (*failures)++;
        return 0;
    }
    if (srch.halving_small)
        fprintf(stderr, "dlbench: note: search = halving: %zu configuration%s "
                "are too few to gain from it (it needs %d); running the grid\n",
                r->plan->n, r->plan->n == 1 ? "" : "s",
                DLB_HALVING_MIN_CONFIGS);
    if (srch.halving_groups)
        fprintf(stderr, "dlbench: note: search = halving ranks configurations "
                "against each other, and this plan holds %zu workloads "
                "(workload_axes) that must not be: running the grid; run one "
                "workload at a time (--set) to halve within it\n",
                srch.halving_groups);
    for (int round = 0; !not_run; round++) {
        struct dlb_search_round rd;
        int done = 0;
        /* The search sees one record per configuration and round. */
        json_t *seen = dlb_records_as_configs(r->records, dlb_plan_repetitions(r->plan));
        dlb_status sst = seen ? dlb_search_round(r->plan, &srch, &set, seen, round,
                                                 &rd, &done, err)
                              : dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        json_decref(seen);
        if (sst != DLB_OK) {
            fprintf(stderr, "dlbench: %s\n", err->msg);
            (*failures)++;
            break;
        }
        if (done)
            break;
        not_run = run_round(r, &rd, start, failures, err);
        free(rd.pos);
        if (rd.last)
            break;
    }
    return not_run;
}

