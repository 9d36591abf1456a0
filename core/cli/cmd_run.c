/* `dlbench --suite S` and `--resume DIR`: checks the inputs, makes the
 * run directory, hands the configurations to the search loop
 * (search_loop.h), then writes the results, the table, and what follows
 * them (postrun.h). */
#include "cli/cmd_run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cpu_quota.h"
#include "results/dataset_context.h"
#include "results/device_record.h"
#include "proc/interrupt.h"
#include "stats/measure.h"
#include "util/path.h"
#include "plot/plot.h"
#include "run/postrun.h"
#include "results/repeat.h"
#include "run/run_check.h"
#include "run/run_check_plugins.h"
#include "run/run_launch.h"
#include "run/run_resume.h"
#include "run/run_roofline.h"
#include "search/search.h"
#include "search/search_loop.h"
#include "plan/session.h"
#include "select/vs_baseline.h"

struct run_state {
    struct dlb_options *opts;
    struct dlb_session ses;
    char *dir;
    char *suite_copy;          /* DIR/suite.ini */
    char *origin;              /* the suite file as the user named it */
    json_t *context;
    struct dlb_run_roofline roof;  /* the run's peak figures, DIR/peak.json */
    char *peak_file;               /* that file's path, for the children */
    struct dlb_search_loop loop; /* records and journal */
};

/* The suite's line that names the model: the last `model` setting of its
 * [suite], [quick] or [sweep] sections; 0 when none does (the default, or
 * --set on the command line). */
static int later_model_line(const struct dlb_suite *s, struct dlb_keyref ref,
                            int at, int line)
{
    char name[128];
    dlb_suite_key_name(s, ref, name, sizeof name);
    return !strcmp(name, "model") && at > line ? at : line;
}

static int model_line(const struct dlb_suite *s)
{
    int line = 0;
    for (size_t i = 0; i < s->n_fixed; i++)
        line = later_model_line(s, s->fixed[i].ref, s->fixed[i].line, line);
    for (size_t i = 0; i < s->n_quick; i++)
        line = later_model_line(s, s->quick[i].ref, s->quick[i].line, line);
    for (size_t i = 0; i < s->n_axes; i++)
        line = later_model_line(s, s->axes[i].ref, s->axes[i].line, line);
    return line;
}

/* A network file that cannot be found or read is named by the suite line
 * that asks for it, as every other bad key is (a file that is found but
 * bad is named by its own file:line already). */
static dlb_status blame_model_line(const struct dlb_options *o,
                                   const struct dlb_suite *s, dlb_status st,
                                   struct dlb_error *err)
{
    int line = model_line(s);
    for (size_t i = 0; i < o->n_sets; i++)
        if (!strncmp(o->sets[i], "model=", 6))
            line = 0; /* --set model=... names it, not the suite */
    if (st != DLB_ERR_INPUT || !err || !line ||
        (strncmp(err->msg, "model '", 7) && strncmp(err->msg, "model file ", 11)))
        return st;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return dlb_errorf(err, st, "%s:%d: %s", s->path, line, msg);
}

/* The inputs every configuration shares, checked before anything runs:
 * the selection's keys, the launcher, the network files, the data and
 * the plugins' own checks. */
static dlb_status check_inputs(struct run_state *r, struct dlb_error *err)
{
    const char *const suites[2] = {r->origin, r->ses.suite_path};
    dlb_status st;
    if ((st = dlb_run_check_selection(&r->ses.plan, err)) != DLB_OK ||
        (st = dlb_run_launch_check(r->opts, &r->ses.plan, err)) != DLB_OK ||
        (st = blame_model_line(r->opts, &r->ses.suite,
                               dlb_run_check_models(&r->ses.plan, suites, 2, err),
                               err)) != DLB_OK ||
        (st = dlb_run_check_data(&r->ses.plan, suites, 2, err)) != DLB_OK)
        return st;
    return dlb_run_check_plugins(&r->ses.plan, suites, 2, err);
}

static dlb_status prepare_dir(struct run_state *r, struct dlb_error *err)
{
    struct dlb_options *o = r->opts;
    dlb_status st;
    if (o->resume_dir) {
        r->dir = strdup(o->resume_dir);
        r->suite_copy = dlb_path_join(r->dir, "suite.ini");
        size_t n_given = o->n_sets;
        if ((st = dlb_rundir_check_set_up(r->dir, err)) != DLB_OK ||
            (st = dlb_resume_load_invocation(o, r->dir, &r->origin, err)) != DLB_OK)
            return st;
        if ((st = dlb_session_open(&r->ses, o, r->suite_copy, err)) != DLB_OK) {
            dlb_resume_blame_invocation(o, o->n_sets - n_given, r->dir, err);
            return st;
        }
        if ((st = check_inputs(r, err)) != DLB_OK)
            return st;
        if ((st = dlb_resume_read_journal(r->dir, &r->loop.records, err)) != DLB_OK ||
            (st = dlb_resume_check_records(&r->ses.plan, r->dir, r->loop.records,
                                           err)) != DLB_OK ||
            (st = dlb_run_check_workload(&r->ses, err)) != DLB_OK)
            return st;
        /* Locked once its inputs are checked: a refused --resume leaves the
         * directory as it was, not even a lock file in it. The roofline is
         * the run's own (DIR/peak.json) where it has one. */
        if ((st = dlb_rundir_lock(r->dir, err)) != DLB_OK)
            return st;
        dlb_run_roofline_choose(&r->ses, r->dir, &r->roof);
        return dlb_run_roofline_write(r->dir, &r->roof, err);
    }
    if ((st = dlb_session_open(&r->ses, o, o->suite, err)) != DLB_OK)
        return st;
    r->origin = realpath(r->ses.suite_path, NULL);
    if ((st = check_inputs(r, err)) != DLB_OK ||
        (st = dlb_run_check_workload(&r->ses, err)) != DLB_OK)
        return st;
    /* After the input checks: bad input costs no measurement. */
    dlb_run_roofline_choose(&r->ses, NULL, &r->roof);
    r->dir = o->out_dir ? strdup(o->out_dir) : dlb_rundir_default("results", r->ses.suite.name);
    if (!r->dir)
        return DLB_ERR_NOMEM;
    if ((st = dlb_rundir_create(r->dir, err)) != DLB_OK)
        return st;
    r->suite_copy = dlb_path_join(r->dir, "suite.ini");
    json_t *inv = dlb_invocation_json(o, r->origin ? r->origin : r->ses.suite_path);
    st = inv ? dlb_rundir_setup(r->dir, r->ses.suite_path, inv, err)
             : dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    json_decref(inv);
    if (st == DLB_OK)
        st = dlb_run_roofline_write(r->dir, &r->roof, err);
    r->loop.records = json_array();
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
        long t = (long)r->ses.plan.configs[i].core.threads;
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
    const char *mal = dlb_malloc_policy_names[p->configs[0].core.malloc_policy];
    for (size_t i = 1; i < p->n; i++)
        if (p->configs[i].core.malloc_policy != p->configs[0].core.malloc_policy)
            mal = "swept: see each record's controls";
    json_t *m = json_pack("{s:s}", "malloc", mal);
    int reps = dlb_plan_repetitions(&r->ses.plan);
    if (m && reps > 1)
        json_object_set_new(m, "interleave",
                            json_pack("{s:i,s:I,s:s}", "passes", reps, "seed",
                                      (json_int_t)dlb_plan_interleave_seed(&r->ses.plan), "order",
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
                      : r->loop.journal_failed ? "the journal could not be written"
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
        st = dlb_run_store_check(o, &err);
    if (st == DLB_OK)
        st = prepare_dir(&r, &err);
    if (st == DLB_OK)
        st = dlb_journal_open(r.dir, &r.loop.journal, &err);
    if (st != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        goto out;
    }
    char *logs = dlb_path_join(r.dir, "logs");
    mkdir(logs, 0755);
    free(logs);
    /* From here a signal stops the run in order: see core/proc/interrupt.h. */
    if (dlb_interrupt_install(&err) != DLB_OK)
        fprintf(stderr, "dlbench: warning: %s\n", err.msg);
    warn_if_busy();
    warn_oversubscribed(&r);
    /* The environment as it was when the measurements started. */
    r.context = dlb_context_collect();
    add_measurement_context(&r);
    if (r.roof.have && r.context)
        json_object_set(r.context, "peak", r.roof.json);
    fprintf(stderr, "dlbench: suite %s: %zu configuration%s -> %s\n", r.ses.suite.name,
            r.ses.plan.n, r.ses.plan.n == 1 ? "" : "s", r.dir);

    r.loop.opts = o;
    r.loop.plan = &r.ses.plan;
    r.loop.dir = r.dir;
    r.loop.suite_copy = r.suite_copy;
    r.loop.origin = r.origin;
    r.peak_file = r.roof.have ? dlb_path_join(r.dir, DLB_RUN_PEAK_FILE) : NULL;
    r.loop.peak_file = r.peak_file;
    size_t not_run = dlb_search_loop_run(&r.loop, &failures, &err);
    dlb_search_loop_sync(&r.loop);
    dlb_journal_close(r.loop.journal);
    r.loop.journal = NULL;
    if (r.loop.slimmed && dlb_search_loop_restore(&r.loop, &err) != DLB_OK) {
        /* Without the journal's figures the results would be wrong, not
         * short: they stay in the journal for --resume to finish. */
        fprintf(stderr, "dlbench: %s; dlbench --resume %s writes the results\n",
                err.msg, r.dir);
        rc = 1;
        goto out;
    }

    add_suite_context(&r, start);
    json_t *merged = dlb_records_as_configs(r.loop.records,
                                            dlb_plan_repetitions(&r.ses.plan));
    json_t *recs = dlb_search_final_records(&r.ses.plan, merged ? merged : r.loop.records);
    json_decref(merged);
    dlb_vs_baseline_annotate(&r.ses.plan, recs);
    dlb_context_add_devices(r.context, recs);
    dlb_context_add_datasets(r.context, recs);
    struct dlb_selection sel;
    if (dlb_postrun_results(r.dir, &r.ses.plan, r.context, recs, &sel,
                            &err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        dlb_selection_free(&sel);
        json_decref(recs);
        int sig = say_why_stopped(&r, not_run);
        rc = sig ? 128 + sig : 1;
        goto out;
    }
    char *table = dlb_path_join(r.dir, "table.txt");
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
                             sel.present ? &sel : NULL};
    int winner = 0;
    int post_failed = dlb_postrun(&pr, &winner) != DLB_OK;
    dlb_selection_free(&sel);
    if (tf)
        fclose(tf);
    json_decref(recs);
    int sig = say_why_stopped(&r, not_run);
    fprintf(stderr, "dlbench: results in %s\n", r.dir);
    /* No winner (every configuration broke a constraint) is a result the
     * caller must notice, as a failed configuration is. */
    rc = failures || not_run || !winner || post_failed ? 1 : 0;
    if (dlb_run_store_add(o, r.dir) != 0 && rc == 0)
        rc = 1;
    if (sig)
        rc = 128 + sig; /* as a shell reports a death by that signal */
out:
    dlb_interrupt_restore();
    if (r.loop.journal)
        dlb_journal_close(r.loop.journal);
    json_decref(r.loop.records);
    json_decref(r.context);
    dlb_run_roofline_free(&r.roof);
    free(r.peak_file);
    dlb_session_close(&r.ses);
    free(r.dir);
    free(r.suite_copy);
    free(r.origin);
    return rc;
}
