#include "cmd_run.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "child_controls.h"
#include "device_record.h"
#include "interrupt.h"
#include "measure.h"
#include "model/model_file.h"
#include "model/model_find.h"
#include "peak.h"
#include "plot.h"
#include "postrun.h"
#include "progress.h"
#include "repeat.h"
#include "run_check.h"
#include "run_check_plugins.h"
#include "run_launch.h"
#include "runner.h"
#include "search.h"
#include "session.h"
#include "stats.h"
#include "vs_baseline.h"
#include "workloads.h"

/* CV above this earns a warning: the median is still sound, but the user
 * should know the machine was noisy. */
#define CV_WARN 0.05
/* A shift between the halves of the samples beyond this (and significant
 * at LEVEL_SHIFT_P, with LEVEL_SHIFT_MIN_HALF samples a half at least)
 * earns a warning: 20% is well above what a settled run drifts here. */
#define LEVEL_SHIFT_WARN 0.2
#define LEVEL_SHIFT_P 1e-3
#define LEVEL_SHIFT_MIN_HALF 10

struct run_state {
    struct dlb_options *opts;
    struct dlb_session ses;
    char *dir;
    char *suite_copy;          /* DIR/suite.ini */
    char *origin;              /* the suite file as the user named it */
    json_t *records;           /* finished, in plan order */
    json_t *context;
    struct dlb_journal *journal;
    int journal_failed;        /* an append failed: start nothing more */
    int slimmed;               /* some records are kept slim: see run_round */
};

static char *path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* What --resume needs to rebuild the same plan. */
static json_t *invocation_json(const struct dlb_options *o, const char *suite_path)
{
    json_t *sets = json_array(), *dirs = json_array();
    for (size_t i = 0; i < o->n_sets; i++)
        json_array_append_new(sets, json_string(o->sets[i]));
    for (size_t i = 0; i < o->n_plugin_dirs; i++) {
        char *abs = realpath(o->plugin_dirs[i], NULL);
        json_array_append_new(dirs, json_string(abs ? abs : o->plugin_dirs[i]));
        free(abs);
    }
    json_t *inv = json_pack("{s:s,s:o,s:b,s:o}", "suite", suite_path, "sets", sets,
                            "quick", o->quick, "plugin_dirs", dirs);
    if (inv && o->shard_n > 1)
        json_object_set_new(inv, "shard", json_pack("{s:i,s:i}", "k", o->shard_k,
                                                    "n", o->shard_n));
    return inv;
}

/* A --set that invocation.json holds (the first n_saved of o->sets) was
 * not typed by the user: say where it comes from. */
static void blame_invocation(const struct dlb_options *o, size_t n_saved,
                             const char *dir, struct dlb_error *err)
{
    for (size_t i = 0; i < n_saved && i < o->n_sets; i++) {
        char head[1100];
        snprintf(head, sizeof head, "--set %s:", o->sets[i]);
        if (!strncmp(err->msg, head, strlen(head))) {
            struct dlb_error e = *err;
            dlb_errorf(err, DLB_ERR_INPUT, "%s/invocation.json: \"sets\" holds %s",
                       dir, e.msg + 6);
            return;
        }
    }
}

static dlb_status load_invocation(struct dlb_options *o, const char *dir,
                                  char **origin, struct dlb_error *err)
{
    char *path = path_join(dir, "invocation.json");
    json_error_t jerr;
    json_t *inv = json_load_file(path, 0, &jerr);
    dlb_status st = DLB_OK;
    json_t *sets, *dirs;
    if (!inv) {
        st = dlb_errorf(err, DLB_ERR_INPUT, "--resume %s: cannot read %s: %s", dir, path,
                        jerr.text);
    } else if (!json_is_array(sets = json_object_get(inv, "sets")) ||
               !json_is_array(dirs = json_object_get(inv, "plugin_dirs"))) {
        st = dlb_errorf(err, DLB_ERR_INPUT, "%s: not a dlbench invocation record", path);
    } else {
        /* The run's own settings come first; options given now add to
         * them, as --set does on a fresh run. */
        char **extra = o->sets;
        size_t n_extra = o->n_sets;
        o->sets = NULL;
        o->n_sets = 0;
        size_t i;
        json_t *v;
        json_array_foreach(sets, i, v)
            if (json_is_string(v))
                dlb_cli_add_set(o, json_string_value(v));
        for (i = 0; i < n_extra; i++) {
            dlb_cli_add_set(o, extra[i]);
            free(extra[i]);
        }
        free(extra);
        o->quick |= json_is_true(json_object_get(inv, "quick"));
        json_t *shard = json_object_get(inv, "shard");
        if (json_is_object(shard) && !o->shard_n) {
            o->shard_k = (int)json_integer_value(json_object_get(shard, "k"));
            o->shard_n = (int)json_integer_value(json_object_get(shard, "n"));
        }
        const char *orig = json_string_value(json_object_get(inv, "suite"));
        *origin = orig ? strdup(orig) : NULL;
        json_array_foreach(dirs, i, v)
            if (json_is_string(v))
                dlb_cli_add_plugin_dir(o, json_string_value(v));
    }
    json_decref(inv);
    free(path);
    return st;
}

static dlb_status check_workload(struct run_state *r, struct dlb_error *err)
{
    const struct dlb_config *c = &r->ses.plan.configs[0];
    const char *name = dlb_config_core(&r->ses.plan, c, "workload")->s;
    if (dlb_builtin_workload(name)) {
        /* Built-in workloads count their FLOPs: make sure the machine's
         * peak is known (measured once, then cached) so each record can
         * say what share of it was reached. */
        struct dlb_peak pk;
        struct dlb_error warn = {""}, perr = {""};
        int threads = (int)dlb_config_core(&r->ses.plan, c, "threads")->i;
        if (dlb_peak_get(threads, 1, &pk, &warn, &perr) != DLB_OK)
            fprintf(stderr, "dlbench: warning: no roofline figures: %s\n", perr.msg);
        else if (warn.msg[0])
            fprintf(stderr, "dlbench: warning: %s\n", warn.msg);
        return DLB_OK;
    }
    unsigned ns = dlb_session_plugin_ns(&r->ses, name);
    if (!ns || !r->ses.suite.ns[ns].plugin->workload)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "%s: workload '%s' is neither built in (cnn) nor provided by a "
                          "plugin active in the suite; add a [%s] section",
                          r->ses.suite_path, name, name);
    return DLB_OK;
}

/* Every network file the plan names must exist and parse: a mistake in
 * one is bad input, found before the run directory exists, rather than a
 * failure repeated in every configuration. Parsing is plain C: the parent
 * still initialises no library. */
static dlb_status check_models(struct run_state *r, const char *origin,
                               struct dlb_error *err)
{
    const struct dlb_plan *p = &r->ses.plan;
    if (!dlb_builtin_workload(dlb_config_core(p, &p->configs[0], "workload")->s))
        return DLB_OK;
    for (size_t i = 0; i < p->n; i++) {
        const char *model = dlb_config_core(p, &p->configs[i], "model")->s;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(model, dlb_config_core(p, &p->configs[j], "model")->s);
        if (seen)
            continue;
        const char *suites[2] = {origin, r->ses.suite_path};
        char *path = dlb_model_file_find(model, suites, 2, dlb_installed_suite_dir(), err);
        if (!path)
            return DLB_ERR_INPUT;
        struct dlb_model_spec *spec = NULL;
        dlb_status st = dlb_model_file_load(path, &spec, err);
        free(path);
        if (st != DLB_OK)
            return st;
        dlb_model_spec_free(spec);
    }
    return DLB_OK;
}

/* Records already in the journal, on --resume. */
static dlb_status read_journal(struct run_state *r, struct dlb_error *err)
{
    char *path = path_join(r->dir, "journal.jsonl");
    int torn = 0;
    json_t *recs = NULL;
    struct stat sb;
    dlb_status st = DLB_OK;
    if (stat(path, &sb) != 0) {
        recs = json_array();
    } else {
        st = dlb_journal_read(path, &recs, &torn, err);
    }
    /* dlb_journal_open cuts the torn line off before the next append. */
    if (st == DLB_OK && torn)
        fprintf(stderr, "dlbench: warning: %s: the last line was cut short (an "
                        "interrupted write); it is dropped and that configuration runs again\n",
                path);
    free(path);
    if (st != DLB_OK) {
        json_decref(recs);
        return st;
    }
    r->records = recs;
    return DLB_OK;
}

static long long round_of(json_t *rec)
{
    json_t *v = json_object_get(rec, "round");
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static dlb_status check_resume_records(struct run_state *r, struct dlb_error *err)
{
    size_t i;
    json_t *v;
    json_array_foreach(r->records, i, v) {
        size_t idx = (size_t)json_integer_value(json_object_get(v, "index"));
        const char *id = json_string_value(json_object_get(v, "id"));
        int known = 0;
        for (size_t k = 0; k < r->ses.plan.n; k++)
            if (r->ses.plan.configs[k].index == idx && id &&
                !strcmp(r->ses.plan.configs[k].id, id))
                known = 1;
        if (!known)
            return dlb_errorf(err, DLB_ERR_INPUT,
                              "%s/journal.jsonl: record %zu (index %zu, '%s') is not a "
                              "configuration of this run's suite; the journal does not "
                              "belong to %s/suite.ini", r->dir, i + 1, idx, id ? id : "?",
                              r->dir);
        /* halving runs a configuration once per round (and repetition) */
        for (size_t j = 0; j < i; j++)
            if ((size_t)json_integer_value(json_object_get(json_array_get(r->records, j),
                                                           "index")) == idx &&
                round_of(json_array_get(r->records, j)) == round_of(v) &&
                dlb_rep_of(json_array_get(r->records, j)) == dlb_rep_of(v))
                return dlb_errorf(err, DLB_ERR_INPUT,
                                  "%s/journal.jsonl: configuration %zu appears twice "
                                  "(records %zu and %zu)", r->dir, idx, j + 1, i + 1);
    }
    return DLB_OK;
}

#define DLB_ROUND_SETS 5

/* `--set` options giving a search round its share of the budget: keys
 * that are axes keep theirs, as a --set would collapse the axis and
 * renumber the plan. */
static void round_sets(struct run_state *r, const struct dlb_config *c,
                       const struct dlb_search_round *rd, int rep,
                       char sets[DLB_ROUND_SETS][64])
{
    double scale = rd->scale;
    for (size_t i = 0; i < DLB_ROUND_SETS; i++)
        sets[i][0] = '\0';
    const struct dlb_suite *s = &r->ses.suite;
    int swept_cap = 0, swept_steps = 0, swept_warmup = 0, swept_only = 0;
    int swept_acc = 0;
    char key[256];
    for (size_t a = 0; a < s->n_axes; a++) {
        dlb_suite_key_name(s, s->axes[a].ref, key, sizeof key);
        swept_cap |= !strcmp(key, "time_cap");
        swept_steps |= !strcmp(key, "train_steps") ||
                       !strcmp(key, "train_samples");
        swept_warmup |= !strcmp(key, "warmup");
        swept_only |= !strcmp(key, "measure_only");
        swept_acc |= !strcmp(key, "screen_accuracy");
    }
    /* Repetitions after the first measure speed alone: the first one's
     * quality figures stand for the configuration (repeat.h). */
    if (rep > 0 && !swept_only)
        snprintf(sets[3], 64, "measure_only=on");
    if (scale >= 1)
        return;
    /* The least warm-up still runs until the step time settles
     * (measure.c): a cut one only drops the fixed minimum. */
    if (!swept_warmup)
        snprintf(sets[2], 64, "warmup=%.9gs",
                 dlb_config_core(&r->ses.plan, c, "warmup")->f * scale);
    long long steps = (long long)dlb_config_core(&r->ses.plan, c, "train_steps")->i;
    if (!swept_cap)
        snprintf(sets[0], 64, "time_cap=%.9gs",
                 dlb_config_core(&r->ses.plan, c, "time_cap")->f * scale);
    /* Screening for speed: no training run (in mode = infer train_steps
     * names the reference weights, which must stay the same). */
    /* A budget in images (train_samples, plan_budget.h) is cut as one. */
    long long images = (long long)dlb_config_core(&r->ses.plan, c,
                                                  "train_samples")->i;
    const char *budget = images > 0 ? "train_samples" : "train_steps";
    long long amount = images > 0 ? images : steps;
    if (!swept_steps && steps > 0 && rd->measure_only &&
        !strcmp(dlb_config_core(&r->ses.plan, c, "mode")->s, "train"))
        snprintf(sets[1], 64, "%s=0", budget);
    else if (!swept_steps && steps > 0 && !rd->measure_only)
        snprintf(sets[1], 64, "%s=%lld", budget,
                 (long long)(amount * scale) > 0 ? (long long)(amount * scale) : 1LL);
    /* Plugins' work for quality figures alone (prune's fine-tuning of
     * 937 steps) would otherwise cost a screening round the grid's time. */
    if (!swept_only && rd->measure_only)
        snprintf(sets[3], 64, "measure_only=on");
    /* The first repetition's accuracy stands for the configuration. */
    if (!swept_acc && rd->measure_only && rd->accuracy && rep == 0)
        snprintf(sets[4], 64, "screen_accuracy=on");
}

static char **child_argv(struct run_state *r, const struct dlb_config *c, char *idx,
                         char sets[DLB_ROUND_SETS][64])
{
    const struct dlb_options *o = r->opts;
    size_t n = 0, cap = 14 + 2 * (DLB_ROUND_SETS + o->n_sets + o->n_plugin_dirs);
    char **av = calloc(cap, sizeof *av);
    if (!av)
        return NULL;
    snprintf(idx, 32, "%zu", c->index);
    av[n++] = "dlbench";
    av[n++] = "__child";
    av[n++] = "--suite";
    av[n++] = r->suite_copy;
    av[n++] = "--config-index";
    av[n++] = idx;
    av[n++] = "--record-fd";
    av[n++] = "%FD%";
    if (r->origin) {
        av[n++] = "--origin";
        av[n++] = r->origin;
    }
    if (o->quick)
        av[n++] = "--quick";
    if (o->verbose)
        av[n++] = "--verbose";
    for (size_t i = 0; i < o->n_sets; i++) {
        av[n++] = "--set";
        av[n++] = o->sets[i];
    }
    for (size_t i = 0; i < DLB_ROUND_SETS; i++)
        if (sets[i][0]) {
            av[n++] = "--set";
            av[n++] = sets[i];
        }
    for (size_t i = 0; i < o->n_plugin_dirs; i++) {
        av[n++] = "--plugin-dir";
        av[n++] = (char *)o->plugin_dirs[i];
    }
    return av;
}

/* A level shift: the second half of the samples (in the order taken)
 * against the first. On a shared VM the machine's speed changes in phases
 * of seconds that steal time does not show (measured on 2 cores: one
 * LeNet configuration at 8.6k, then 13.3k samples/s within one run, at
 * 1-2% steal): a figure from one phase does not compare with one from
 * another, whatever their confidence intervals say. */
static void warn_shift(const char *id, json_t *rec)
{
    json_t *js = json_object_get(rec, "samples");
    size_t n = json_array_size(js), h = n / 2;
    if (h < LEVEL_SHIFT_MIN_HALF)
        return;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_number_value(json_array_get(js, i));
    struct dlb_stats a, b;
    if (dlb_stats_compute(v, h, &a) == DLB_OK &&
        dlb_stats_compute(v + n - h, h, &b) == DLB_OK && a.median > 0 &&
        fabs(b.median / a.median - 1) > LEVEL_SHIFT_WARN) {
        double p = dlb_mann_whitney_p(v, h, v + n - h, h, NULL);
        if (p < LEVEL_SHIFT_P)
            fprintf(stderr, "dlbench: warning: %s: the step time moved %+.0f%% from the "
                            "first half of the samples to the second (medians %.4g and "
                            "%.4g ms, U test p %s %.2g): the machine's speed changed "
                            "during the measurement; rerun it, or compare it with "
                            "care\n", id, 100 * (b.median / a.median - 1),
                    a.median * 1e3, b.median * 1e3, p < 1e-16 ? "<" : "=",
                    p < 1e-16 ? 1e-16 : p);
    }
    free(v);
}

static void warn_noise(const char *id, json_t *rec)
{
    warn_shift(id, rec);
    const char *doubt = json_string_value(
        json_object_get(json_object_get(rec, "system"), "doubtful"));
    if (doubt)
        fprintf(stderr, "dlbench: warning: %s: doubtful figure: %s during the "
                        "measurement\n", id, doubt);
    json_t *st = json_object_get(rec, "stats");
    double cv = json_real_value(json_object_get(st, "cv"));
    if (cv > CV_WARN)
        fprintf(stderr, "dlbench: warning: %s: step times vary a lot (CV %.1f%% > %.0f%%); "
                        "is something else running?\n", id, cv * 100, CV_WARN * 100);
    if (json_is_false(json_object_get(json_object_get(rec, "measure"), "converged")) &&
        json_object_get(rec, "stats"))
        fprintf(stderr, "dlbench: note: %s: the median's CI did not reach the target "
                        "before time_cap (%.2f%%)\n", id,
                json_real_value(json_object_get(st, "ci_rel_halfwidth")) * 100);
}

static int is_failure(json_t *rec)
{
    const char *s = json_string_value(json_object_get(rec, "status"));
    return !s || (strcmp(s, "ok") != 0 && strcmp(s, "skipped") != 0);
}

/* The runner's `started` hook: the previous record's fsync, while the
 * next configuration's process starts up. */
static void sync_journal(void *ctx)
{
    struct run_state *r = ctx;
    struct dlb_error err = {""};
    if (!r->journal_failed && dlb_journal_sync(r->journal, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        r->journal_failed = 1;
    }
}

/* The suite's `repetitions` (repeat.h). */
static int repetitions(const struct run_state *r)
{
    return (int)dlb_config_core(&r->ses.plan, &r->ses.plan.configs[0],
                                "repetitions")->i;
}

/* The seed of the passes' orders: the suite's own `seed`. */
static uint64_t interleave_seed(const struct run_state *r)
{
    return (uint64_t)dlb_config_core(&r->ses.plan, &r->ses.plan.configs[0], "seed")->i;
}

/* Whether (index, round, rep) has a record: rep -1 without repetitions. */
static int have_run(const struct run_state *r, size_t index, int round, int rep)
{
    size_t i;
    json_t *v;
    json_array_foreach(r->records, i, v)
        if ((size_t)json_integer_value(json_object_get(v, "index")) == index &&
            round_of(v) == round && dlb_rep_of(v) == rep)
            return 1;
    return 0;
}

/* Whether configuration `c`'s repetition `rep` of round `round` is still
 * to run: not in the journal, no earlier repetition failed or was
 * skipped, and no record stands for all of them (a journal `dlbench
 * merge` wrote from results.json holds merged records). */
static int to_run(const struct run_state *r, const struct dlb_config *c,
                  int round, int rep, int reps)
{
    if (have_run(r, c->index, round, -1))
        return 0;
    if (reps < 2)
        return 1;
    return !have_run(r, c->index, round, rep) &&
           !dlb_reps_stopped(r->records, c->index, round);
}

/* Run repetition `rep` (of `reps`) of configuration `c` in round `rd`,
 * the k-th run of `prog`, and journal its record. Returns 0 when it was
 * stopped before it ended (--resume runs it), 1 otherwise; a failure
 * counts in *failures. */
static int run_one(struct run_state *r, const struct dlb_search_round *rd,
                   const struct dlb_config *c, int rep, int reps, size_t pass_pos,
                   struct dlb_progress *prog, size_t k, int *failures,
                   struct dlb_error *err)
{
    dlb_progress_start(prog, k, c->id);
    char idx[32], logname[96], sets[DLB_ROUND_SETS][64];
    round_sets(r, c, rd, rep, sets);
    char **av = child_argv(r, c, idx, sets);
    char rep_part[32] = "";
    if (reps > 1)
        snprintf(rep_part, sizeof rep_part, "-rep-%d", rep);
    if (rd->round >= 0)
        snprintf(logname, sizeof logname, "logs/config-%zu-round-%d%s.log",
                 c->index, rd->round, rep_part);
    else
        snprintf(logname, sizeof logname, "logs/config-%zu%s.log", c->index,
                 rep_part);
    char *log = path_join(r->dir, logname);
    double timeout = dlb_config_core(&r->ses.plan, c, "timeout")->f;
    struct dlb_child_spec spec = {av, timeout, log, NULL, NULL, sync_journal, r, 0};
    spec.omp_passive =
        dlb_threads_oversubscribe((long)dlb_config_core(&r->ses.plan, c, "threads")->i);
    json_t *rec = NULL;
    if (!av || !log ||
        dlb_run_launch_prepare(&r->ses.plan, c, r->dir, av, &spec, err) != DLB_OK ||
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
    if (rd->round >= 0) {
        json_object_set_new(rec, "round", json_integer(rd->round));
        json_object_set_new(rec, "budget", json_real(rd->scale));
    }
    if (reps > 1) {
        json_object_set_new(rec, "rep", json_integer(rep));
        json_object_set_new(rec, "pass_position", json_integer((json_int_t)pass_pos));
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
        warn_noise(c->id, rec);
    if (is_failure(rec))
        (*failures)++;
    /* Until the end a plain sweep needs only which configurations ran and
     * how they ended; a search's rounds need the figures. Journaled
     * records of a sweep stay in memory as that much, so the parent's size
     * does not grow with the sweep's length, and come back whole from the
     * journal at the end (restore_records). */
    json_t *slim = NULL;
    if (kept && rd->round < 0 &&
        (slim = json_pack("{s:O,s:O,s:O}", "index", json_object_get(rec, "index"),
                          "id", json_object_get(rec, "id"),
                          "status", json_object_get(rec, "status")))) {
        if (reps > 1)
            json_object_set(slim, "rep", json_object_get(rec, "rep"));
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
static size_t run_round(struct run_state *r, const struct dlb_search_round *rd,
                        double start, int *failures, struct dlb_error *err)
{
    struct dlb_progress prog;
    size_t todo = 0, k = 0, not_run = 0;
    int reps = rd->once ? 1 : repetitions(r);
    for (int rep = 0; rep < reps; rep++)
        for (size_t i = 0; i < rd->n; i++)
            if (dlb_run_in_shard(r->opts, rd->pos[i]) &&
                to_run(r, &r->ses.plan.configs[rd->pos[i]], rd->round, rep, reps))
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
            dlb_reps_pass_order(interleave_seed(r), rd->round, rep, rd->n, order);
        else
            for (size_t i = 0; i < rd->n; i++)
                order[i] = i;
        for (size_t o = 0; o < rd->n; o++) {
            size_t i = order[o];
            const struct dlb_config *c = &r->ses.plan.configs[rd->pos[i]];
            if (!dlb_run_in_shard(r->opts, rd->pos[i]) ||
                !to_run(r, c, rd->round, rep, reps))
                continue;
            if (r->journal_failed || dlb_interrupted() ||
                (r->opts->time_limit_s > 0 && dlb_now() - start >= r->opts->time_limit_s))
                not_run++;
            else if (!run_one(r, rd, c, rep, reps, o, &prog, ++k, failures, err))
                not_run++;
        }
    }
    free(order);
    return not_run;
}

/* Put back the whole records run_round slimmed, from the journal, whose
 * records are the first ones of r->records in the same order. A record
 * the journal could not take (a full disk) was kept whole. */
static dlb_status restore_records(struct run_state *r, struct dlb_error *err)
{
    char *path = path_join(r->dir, "journal.jsonl");
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
        if (!rec || !json_equal(json_object_get(rec, "index"), json_object_get(full, "index")) ||
            !json_equal(json_object_get(rec, "id"), json_object_get(full, "id"))) {
            json_decref(journal);
            return dlb_errorf(err, DLB_ERR_INTERNAL, "%s/journal.jsonl: record %zu is "
                              "not the one this run wrote there", r->dir, i + 1);
        }
        json_array_set(r->records, i, full);
    }
    json_decref(journal);
    return DLB_OK;
}

/* Run the suite's search (core/search.c) round by round: a round is
 * decided from the records of the ones before, so it needs them all. */
static size_t run_missing(struct run_state *r, int *failures, struct dlb_error *err)
{
    struct dlb_search srch = dlb_search_of(&r->ses.plan);
    struct dlb_select_settings set;
    size_t not_run = 0;
    double start = dlb_now();
    if (dlb_select_settings(&r->ses.plan, &set, err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err->msg);
        (*failures)++;
        return 0;
    }
    if (srch.halving_small)
        fprintf(stderr, "dlbench: note: search = halving: %zu configuration%s "
                "are too few to gain from it (it needs %d); running the grid\n",
                r->ses.plan.n, r->ses.plan.n == 1 ? "" : "s",
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
        json_t *seen = dlb_reps_merge(r->records, repetitions(r));
        dlb_status sst = seen ? dlb_search_round(&r->ses.plan, &srch, &set, seen, round,
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

static dlb_status prepare_dir(struct run_state *r, struct dlb_error *err)
{
    struct dlb_options *o = r->opts;
    dlb_status st;
    if (o->resume_dir) {
        r->dir = strdup(o->resume_dir);
        r->suite_copy = path_join(r->dir, "suite.ini");
        size_t n_given = o->n_sets;
        if ((st = dlb_rundir_check_set_up(r->dir, err)) != DLB_OK ||
            (st = load_invocation(o, r->dir, &r->origin, err)) != DLB_OK)
            return st;
        if ((st = dlb_session_open(&r->ses, o, r->suite_copy, err)) != DLB_OK) {
            blame_invocation(o, o->n_sets - n_given, r->dir, err);
            return st;
        }
        /* Input checks first, the roofline probe in check_workload
         * last: bad input costs no measurement. */
        if ((st = dlb_run_launch_check(o, &r->ses.plan, err)) != DLB_OK ||
            (st = check_models(r, r->origin, err)) != DLB_OK ||
            (st = dlb_run_check_data(&r->ses.plan,
                                     (const char *const[]){r->origin, r->ses.suite_path},
                                     2, err)) != DLB_OK ||
            (st = dlb_run_check_plugins(&r->ses.plan,
                                        (const char *const[]){r->origin, r->ses.suite_path},
                                        2, err)) != DLB_OK)
            return st;
        if ((st = read_journal(r, err)) != DLB_OK ||
            (st = check_resume_records(r, err)) != DLB_OK)
            return st;
        return check_workload(r, err);
    }
    if ((st = dlb_session_open(&r->ses, o, o->suite, err)) != DLB_OK)
        return st;
    r->origin = realpath(r->ses.suite_path, NULL);
    if ((st = dlb_run_launch_check(o, &r->ses.plan, err)) != DLB_OK ||
        (st = check_models(r, r->origin, err)) != DLB_OK ||
        (st = dlb_run_check_data(&r->ses.plan,
                                 (const char *const[]){r->origin, r->ses.suite_path},
                                 2, err)) != DLB_OK ||
        (st = dlb_run_check_plugins(&r->ses.plan,
                                    (const char *const[]){r->origin, r->ses.suite_path},
                                    2, err)) != DLB_OK ||
        (st = check_workload(r, err)) != DLB_OK)
        return st;
    r->dir = o->out_dir ? strdup(o->out_dir) : dlb_rundir_default("results", r->ses.suite.name);
    if (!r->dir)
        return DLB_ERR_NOMEM;
    if ((st = dlb_rundir_create(r->dir, err)) != DLB_OK)
        return st;
    r->suite_copy = path_join(r->dir, "suite.ini");
    json_t *inv = invocation_json(o, r->origin ? r->origin : r->ses.suite_path);
    st = inv ? dlb_rundir_setup(r->dir, r->ses.suite_path, inv, err)
             : dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    json_decref(inv);
    r->records = json_array();
    return st;
}

static void add_suite_context(struct run_state *r, double start_wall)
{
    char crc[16];
    snprintf(crc, sizeof crc, "%08x", (unsigned)r->ses.suite.crc32);
    json_object_set_new(r->context, "suite",
                        json_pack("{s:s,s:s,s:s,s:I,s:I}", "name", r->ses.suite.name,
                                  "path", r->ses.suite_path, "crc32", crc,
                                  "configurations", (json_int_t)r->ses.plan.n,
                                  "filtered_out", (json_int_t)r->ses.plan.n_filtered));
    json_object_set_new(r->context, "run_dir", json_string(r->dir));
    json_object_set_new(r->context, "quick", json_boolean(r->opts->quick));
    if (r->opts->shard_n > 1)
        json_object_set_new(r->context, "shard",
                            json_pack("{s:i,s:i}", "k", r->opts->shard_k,
                                      "n", r->opts->shard_n));
    json_object_set_new(r->context, "run_s", json_real(dlb_now() - start_wall));
    json_object_set_new(r->context, "resumed", json_boolean(r->opts->resume_dir != NULL));
    time_t now = time(NULL);
    struct tm tm;
    char end[32];
    gmtime_r(&now, &tm);
    strftime(end, sizeof end, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_object_set_new(r->context, "end_utc", json_string(end));
}

/* More threads than CPUs is a measurement of the oversubscription, not
 * of the code: say so before it runs. */
static void warn_oversubscribed(const struct run_state *r)
{
    long worst = 0;
    for (size_t i = 0; i < r->ses.plan.n; i++) {
        long t = (long)dlb_config_core(&r->ses.plan, &r->ses.plan.configs[i], "threads")->i;
        if (dlb_threads_oversubscribe(t) && t > worst)
            worst = t;
    }
    if (worst)
        fprintf(stderr, "dlbench: warning: threads=%ld on %d allowed CPUs: threads "
                "beyond the CPUs wait for each other at every barrier (LeNet batch "
                "256 on 2 CPUs: 10 ms a step with 2 threads, 48 ms with 4, 326 ms "
                "with 16); those configurations run with OMP_WAIT_POLICY=passive "
                "unless you set it, and measure the oversubscription\n", worst,
                dlb_allowed_cpu_count());
}

/* The measurement controls the whole run shares, for the context. */
static void add_measurement_context(const struct run_state *r)
{
    const struct dlb_plan *p = &r->ses.plan;
    const char *mal = dlb_config_core(p, &p->configs[0], "malloc")->s;
    for (size_t i = 1; i < p->n; i++)
        if (strcmp(mal, dlb_config_core(p, &p->configs[i], "malloc")->s))
            mal = "swept: see each record's controls";
    json_t *m = json_pack("{s:s}", "malloc", mal);
    int reps = repetitions(r);
    if (m && reps > 1)
        json_object_set_new(m, "interleave",
                            json_pack("{s:i,s:I,s:s}", "passes", reps, "seed",
                                      (json_int_t)interleave_seed(r), "order",
                                      "a seeded random permutation per pass "
                                      "(records carry pass_position)"));
    if (m)
        json_object_set_new(r->context, "measurement", m);
}

static void warn_if_busy(void)
{
    double load[1];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (getloadavg(load, 1) == 1 && cores > 0 && load[0] > 0.5 * (double)cores)
        fprintf(stderr, "dlbench: warning: load average %.2f on %ld cores: the machine is "
                        "busy and timings will be noisy\n", load[0], cores);
}

/* Why configurations were left out, and how to finish them; returns the
 * signal that stopped the run, or 0. */
static int say_why_stopped(const struct run_state *r, size_t not_run)
{
    int sig = dlb_interrupted();
    const char *why = sig == SIGINT    ? "interrupted by SIGINT"
                      : sig == SIGTERM ? "interrupted by SIGTERM"
                      : sig            ? "interrupted by a signal"
                      : r->journal_failed ? "the journal could not be written"
                                          : "--time-limit reached";
    if (not_run)
        fprintf(stderr, "dlbench: %s: %zu configuration%s not run; "
                        "finish with: dlbench --resume %s\n", why, not_run,
                not_run == 1 ? "" : "s", r->dir);
    else if (sig)
        fprintf(stderr, "dlbench: %s\n", why);
    return sig;
}

int dlb_cmd_run(struct dlb_options *o)
{
    struct run_state r;
    struct dlb_error err = {""};
    memset(&r, 0, sizeof r);
    r.opts = o;
    double start = dlb_now();
    int rc = 2, failures = 0;
    double plot_timeout;
    /* A setting the plots read at the end is checked before anything is
     * measured: a typo there must not cost a night's run its plots. */
    dlb_status st = dlb_gnuplot_timeout(&plot_timeout, &err);
    if (st == DLB_OK)
        st = prepare_dir(&r, &err);
    if (st == DLB_OK)
        st = dlb_journal_open(r.dir, &r.journal, &err);
    if (st != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        goto out;
    }
    char *logs = path_join(r.dir, "logs");
    mkdir(logs, 0755);
    free(logs);
    /* From here a signal stops the run in order: see core/interrupt.h. */
    if (dlb_interrupt_install(&err) != DLB_OK)
        fprintf(stderr, "dlbench: warning: %s\n", err.msg);
    warn_if_busy();
    warn_oversubscribed(&r);
    /* The environment as it was when the measurements started. */
    r.context = dlb_context_collect();
    add_measurement_context(&r);
    fprintf(stderr, "dlbench: suite %s: %zu configuration%s -> %s\n", r.ses.suite.name,
            r.ses.plan.n, r.ses.plan.n == 1 ? "" : "s", r.dir);

    size_t not_run = run_missing(&r, &failures, &err);
    sync_journal(&r);
    dlb_journal_close(r.journal);
    r.journal = NULL;
    if (r.slimmed && restore_records(&r, &err) != DLB_OK) {
        /* Without the journal's figures the results would be wrong, not
         * short: they stay in the journal for --resume to finish. */
        fprintf(stderr, "dlbench: %s; dlbench --resume %s writes the results\n",
                err.msg, r.dir);
        rc = 1;
        goto out;
    }

    add_suite_context(&r, start);
    json_t *merged = dlb_reps_merge(r.records, repetitions(&r));
    json_t *recs = dlb_search_final_records(&r.ses.plan, merged ? merged : r.records);
    json_decref(merged);
    dlb_vs_baseline_annotate(&r.ses.plan, recs);
    dlb_context_add_devices(r.context, recs);
    json_t *sel = NULL;
    if (dlb_postrun_results(r.dir, &r.ses.plan, r.context, recs, &sel,
                            &err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        json_decref(sel);
        json_decref(recs);
        int sig = say_why_stopped(&r, not_run);
        rc = sig ? 128 + sig : 1;
        goto out;
    }
    char *table = path_join(r.dir, "table.txt");
    FILE *tf = fopen(table, "w");
    if (tf) {
        dlb_results_print(tf, DLB_FORMAT_TABLE, r.context, recs);
        dlb_vs_baseline_print(tf, recs);
    }
    free(table);
    dlb_results_print(stdout, o->format, r.context, recs);
    if (o->format == DLB_FORMAT_TABLE)
        dlb_vs_baseline_print(stdout, recs);
    /* Plots, report and best.ini: after the result files, so a failure
     * there loses no measurement. */
    struct dlb_postrun pr = {r.dir, r.origin, &r.ses.plan, r.context, recs,
                             o->format == DLB_FORMAT_TABLE ? stdout : stderr, tf,
                             sel};
    int winner = 0;
    int post_failed = dlb_postrun(&pr, &winner) != DLB_OK;
    json_decref(sel);
    if (tf)
        fclose(tf);
    json_decref(recs);
    int sig = say_why_stopped(&r, not_run);
    fprintf(stderr, "dlbench: results in %s\n", r.dir);
    /* No winner (every configuration broke a constraint) is a result the
     * caller must notice, as a failed configuration is. */
    rc = failures || not_run || !winner || post_failed ? 1 : 0;
    if (sig)
        rc = 128 + sig; /* as a shell reports a death by that signal */
out:
    dlb_interrupt_restore();
    if (r.journal)
        dlb_journal_close(r.journal);
    json_decref(r.records);
    json_decref(r.context);
    dlb_session_close(&r.ses);
    free(r.dir);
    free(r.suite_copy);
    free(r.origin);
    return rc;
}
