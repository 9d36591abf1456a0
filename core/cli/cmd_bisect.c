/* `dlbench bisect GOOD BAD`: the first commit between GOOD and BAD that
 * is slower, each commit built (once: the A/B gate's build cache) and run
 * interleaved with the others being compared, repeated until each
 * comparison is decisive (history/bisect.h has the search). */
#include "cli/bisect_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "history/alerts.h"
#include "util/rng.h"

/* The A/B gate's builder: one build per commit, cached (ci/build-rev). */
#define DEFAULT_BUILD "sh \"$DLB_BISECT_REPO/ci/build-rev\" \"$DLB_BISECT_COMMIT\""
/* A build's own dlbench with its plugins, suites and roofline cache, as
 * ci/perf-ab runs each side. */
#define DEFAULT_RUN \
    "src=$(sed -n 's/^abs_top_srcdir = //p' \"$DLB_BISECT_BUILD/Makefile\"); " \
    "DLBENCH_PLUGIN_PATH=\"$DLB_BISECT_BUILD/plugins/.libs${DLBENCH_PLUGIN_PATH:+:$DLBENCH_PLUGIN_PATH}\" " \
    "DLBENCH_SUITE_PATH=\"$src/suites${DLBENCH_SUITE_PATH:+:$DLBENCH_SUITE_PATH}\" " \
    "DLBENCH_CACHE_DIR=\"$DLB_BISECT_BUILD/.dlbench-cache\" " \
    "\"$DLB_BISECT_BUILD/dlbench\" run \"$DLB_BISECT_SUITE\" --quick --out \"$DLB_BISECT_OUT\""
#define DEFAULT_BUDGET 120

struct job {
    struct dlb_hist_args *a;
    char repo[PATH_MAX], out[PATH_MAX];
    const char *suite;
    char **shas, **builds;
    size_t n;
    struct dlb_bisect b;
    const char **configs;
    size_t n_configs;
    json_t *chosen;
    size_t builds_done, runs, failed;
    long budget;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The range and the job's per-commit slots. */
static dlb_status commit_range(struct job *j, const char *good, const char *bad,
                               struct dlb_error *err)
{
    dlb_status s = dlb_bisect_range(j->repo, good, bad, &j->shas, &j->n, err);
    if (s == DLB_OK && !(j->builds = calloc(j->n + 1, sizeof *j->builds)))
        s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    return s;
}

static void log_path(char *buf, size_t n, const struct job *j, const char *what,
                     size_t i, size_t k, const char *ext)
{
    snprintf(buf, n, "%s/logs/%s-%02zu-%.12s%s%.0zu.%s", j->out, what, i, j->shas[i],
             k ? "-" : "", k, ext);
}

/* Build commit i; its build folder is the last line the command prints. */
static int build(struct job *j, size_t i)
{
    char out[PATH_MAX + 64], err_log[PATH_MAX + 64], env_c[256], env_r[PATH_MAX + 32];
    log_path(out, sizeof out, j, "build", i, 0, "out");
    log_path(err_log, sizeof err_log, j, "build", i, 0, "log");
    snprintf(env_c, sizeof env_c, "DLB_BISECT_COMMIT=%s", j->shas[i]);
    snprintf(env_r, sizeof env_r, "DLB_BISECT_REPO=%s", j->repo);
    const char *env[] = {env_c, env_r, NULL};
    fprintf(stderr, "dlbench: bisect: building #%zu %.12s (log: %s)\n", i, j->shas[i], err_log);
    int rc = dlb_sh(j->a->build_cmd ? j->a->build_cmd : DEFAULT_BUILD, j->repo, env,
                    out, err_log);
    j->builds_done++;
    FILE *f = rc == 0 ? fopen(out, "r") : NULL;
    char line[PATH_MAX], last[PATH_MAX] = "";
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (*line)
            snprintf(last, sizeof last, "%s", line);
    }
    if (f)
        fclose(f);
    struct stat sb;
    if (rc != 0 || !*last || stat(last, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "dlbench: bisect: #%zu %.12s did not build (exit %d%s%s); see %s\n",
                i, j->shas[i], rc, *last ? ", last line " : "", last, err_log);
        return -1;
    }
    j->builds[i] = strdup(last);
    return j->builds[i] ? 0 : -1;
}

/* One run of commit i; its figure into the search. */
static dlb_status run_once(struct job *j, size_t i, struct dlb_error *err)
{
    size_t k = j->b.c[i].n_fig + 1;
    char dir[PATH_MAX + 64], log[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/runs/%02zu-%.12s-%zu", j->out, i, j->shas[i], k);
    log_path(log, sizeof log, j, "run", i, k, "log");
    char e_build[PATH_MAX + 32], e_out[PATH_MAX + 128], e_suite[512], e_commit[128],
        e_seed[64], e_repo[PATH_MAX + 32];
    snprintf(e_build, sizeof e_build, "DLB_BISECT_BUILD=%s", j->builds[i]);
    snprintf(e_out, sizeof e_out, "DLB_BISECT_OUT=%s", dir);
    snprintf(e_suite, sizeof e_suite, "DLB_BISECT_SUITE=%s", j->suite);
    snprintf(e_commit, sizeof e_commit, "DLB_BISECT_COMMIT=%s", j->shas[i]);
    snprintf(e_seed, sizeof e_seed, "DLB_BISECT_SEED=%lld",
             (j->a->seed >= 0 ? j->a->seed : 1) * 1000 + (long long)j->runs);
    snprintf(e_repo, sizeof e_repo, "DLB_BISECT_REPO=%s", j->repo);
    const char *env[] = {e_build, e_out, e_suite, e_commit, e_seed, e_repo, NULL};
    dlb_sh(j->a->run_cmd ? j->a->run_cmd : DEFAULT_RUN, j->out, env, log, log);
    j->runs++;
    double fig = 0;
    char why[1200];
    json_t *chosen = NULL;
    if (dlb_bisect_figure(dir, j->configs, j->n_configs, j->n_configs ? NULL : &chosen,
                          &fig, why, sizeof why) != 0) {
        j->failed++;
        fprintf(stderr, "dlbench: bisect: run %zu of #%zu %.12s failed: %s (log: %s)\n",
                k, i, j->shas[i], why, log);
        /* A commit that cannot be run cannot be compared: the search goes
         * around it, as around one that does not build. GOOD and BAD must
         * run. */
        if (i == 0 || i == j->n - 1)
            return dlb_errorf(err, DLB_ERR_INPUT, "#%zu %.12s cannot be measured: %s",
                              i, j->shas[i], why);
        dlb_bisect_built(&j->b, i, 0);
        return DLB_OK;
    }
    if (chosen) {
        /* The first run decides which configurations count: the ones it ran. */
        j->chosen = chosen;
        j->n_configs = json_array_size(chosen);
        j->configs = calloc(j->n_configs + 1, sizeof *j->configs);
        for (size_t c = 0; j->configs && c < j->n_configs; c++)
            j->configs[c] = json_string_value(json_array_get(chosen, c));
        if (!j->configs)
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    fprintf(stderr, "dlbench: bisect: #%zu %.12s run %zu: %.6g ms\n", i, j->shas[i], k,
            1e3 * fig);
    return dlb_bisect_add(&j->b, i, fig, err);
}

/* The range, suite and configurations of a stored alert: its first
 * member slower beyond its threshold decides the suite, and that suite's
 * members on that machine are the configurations. */
static dlb_status from_alert(struct job *j, const char **good, const char **bad,
                             char **owned, struct dlb_error *err)
{
    struct dlb_store *st = NULL;
    struct dlb_alert_row *rows = NULL;
    size_t n = 0;
    dlb_status s = dlb_store_open(j->a->store, DLB_DB_EXISTING, &st, err);
    if (s == DLB_OK)
        s = dlb_store_alerts_read(st, &rows, &n, err);
    const struct dlb_alert_row *a = NULL;
    for (size_t i = 0; s == DLB_OK && i < n; i++)
        if (rows[i].id == j->a->alert)
            a = &rows[i];
    if (s == DLB_OK && !a)
        s = dlb_errorf(err, DLB_ERR_INPUT, "%s: no alert %lld", j->a->store, j->a->alert);
    json_t *m = a ? json_loads(a->members ? a->members : "[]", 0, NULL) : NULL, *v, *pick = NULL;
    size_t i;
    json_array_foreach(m, i, v)
        if (!pick || (!json_is_string(json_object_get(pick, "beyond")) &&
                      json_is_string(json_object_get(v, "beyond"))))
            pick = v;
    if (s == DLB_OK && !pick)
        s = dlb_errorf(err, DLB_ERR_INPUT, "alert %lld has no members", j->a->alert);
    if (s == DLB_OK) {
        owned[0] = strdup(a->good_commit);
        owned[1] = strdup(a->bad_commit);
        owned[2] = strdup(json_string_value(json_object_get(pick, "suite")));
        j->chosen = json_array();
        json_array_foreach(m, i, v)
            if (json_equal(json_object_get(v, "suite"), json_object_get(pick, "suite")) &&
                json_equal(json_object_get(v, "machine"), json_object_get(pick, "machine")))
                json_array_append(j->chosen, json_object_get(v, "config"));
        j->n_configs = json_array_size(j->chosen);
        j->configs = calloc(j->n_configs + 1, sizeof *j->configs);
        for (size_t c = 0; j->configs && c < j->n_configs; c++)
            j->configs[c] = json_string_value(json_array_get(j->chosen, c));
        if (!owned[0] || !owned[1] || !owned[2] || !j->configs)
            s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        *good = owned[0];
        *bad = owned[1];
        j->suite = owned[2];
    }
    json_decref(m);
    dlb_alert_rows_free(rows, n);
    dlb_store_close(st);
    return s;
}

/* OUT must not exist or be empty, as a run directory: a bisection's runs
 * and logs are never mixed with another's. */
static dlb_status make_out(struct job *j, struct dlb_error *err)
{
    const char *out = j->a->out ? j->a->out : "bisect";
    char sub[PATH_MAX + 16];
    if (mkdir(out, 0755) != 0 && errno != EEXIST)
        return dlb_errorf(err, DLB_ERR_INPUT, "cannot create %s: %s", out, strerror(errno));
    if (rmdir(out) != 0 && errno != ENOENT) {
        if (errno == ENOTEMPTY || errno == EEXIST)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s is not empty: give --out a new "
                              "folder (a bisection keeps its runs and logs there)", out);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: %s", out, strerror(errno));
    }
    if (mkdir(out, 0755) != 0 || !realpath(out, j->out))
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", out, strerror(errno));
    snprintf(sub, sizeof sub, "%s/runs", j->out);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/logs", j->out);
    mkdir(sub, 0755);
    return DLB_OK;
}

static void shuffle(size_t *v, size_t n, struct dlb_rng *r)
{
    for (size_t i = n; i > 1; i--) {
        size_t k = (size_t)dlb_rng_below(r, i), t = v[i - 1];
        v[i - 1] = v[k];
        v[k] = t;
    }
}

/* Builds and rounds of runs until the search is done or the budget out. */
static dlb_status search(struct job *j, int *out_of_budget, struct dlb_error *err)
{
    size_t *which = calloc(j->n + 1, sizeof *which), n_which = 0, round = 0;
    if (!which)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    struct dlb_rng rng;
    dlb_rng_seed(&rng, (uint64_t)(j->a->seed >= 0 ? j->a->seed : 1));
    dlb_status s = DLB_OK;
    *out_of_budget = 0;
    for (;;) {
        enum dlb_bisect_step step = dlb_bisect_next(&j->b, which, &n_which);
        if (step == DLB_BISECT_DONE)
            break;
        if (step == DLB_BISECT_BUILD) {
            int ok = build(j, which[0]) == 0;
            if (!ok && (which[0] == 0 || which[0] == j->n - 1)) {
                s = dlb_errorf(err, DLB_ERR_INPUT, "the %s commit %.12s did not build "
                               "(see %s/logs)", which[0] ? "BAD" : "GOOD",
                               j->shas[which[0]], j->out);
                break;
            }
            dlb_bisect_built(&j->b, which[0], ok);
            continue;
        }
        if ((long)(j->runs + n_which) > j->budget) {
            *out_of_budget = 1;
            break;
        }
        /* One run of each in a random order: a phase of the machine falls
         * on all the commits being compared alike. */
        shuffle(which, n_which, &rng);
        fprintf(stderr, "dlbench: bisect: round %zu:", ++round);
        for (size_t k = 0; k < n_which; k++)
            fprintf(stderr, " #%zu", which[k]);
        fputc('\n', stderr);
        for (size_t k = 0; k < n_which && s == DLB_OK; k++)
            s = run_once(j, which[k], err);
        if (s != DLB_OK)
            break;
    }
    free(which);
    return s;
}

static void job_free(struct job *j)
{
    for (size_t i = 0; j->shas && i < j->n; i++) {
        free(j->shas[i]);
        if (j->builds)
            free(j->builds[i]);
    }
    free(j->shas);
    free(j->builds);
    free(j->configs);
    json_decref(j->chosen);
    dlb_bisect_free(&j->b);
}

static dlb_status write_reports(struct job *j, json_t *doc, struct dlb_error *err)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/bisect.json", j->out);
    if (json_dump_file(doc, path, JSON_INDENT(2)) != 0)
        return dlb_errorf(err, DLB_ERR_IO, "cannot write %s", path);
    snprintf(path, sizeof path, "%s/report.md", j->out);
    FILE *f = fopen(path, "w");
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    dlb_bisect_print(f, doc, DLB_HIST_MARKDOWN);
    return fclose(f) == 0 ? DLB_OK : dlb_errorf(err, DLB_ERR_IO, "cannot write %s", path);
}

int dlb_cmd_bisect(struct dlb_hist_args *a)
{
    struct job j;
    struct dlb_error err = {""};
    char *owned[3] = {NULL, NULL, NULL};
    memset(&j, 0, sizeof j);
    j.a = a;
    j.suite = a->suite;
    j.budget = a->budget > 0 ? a->budget : DEFAULT_BUDGET;
    const char *good = a->n_pos > 0 ? a->pos[0] : NULL, *bad = a->n_pos > 1 ? a->pos[1] : NULL;
    int from_store = a->alert > 0;
    if ((from_store ? a->n_pos != 0 || !a->store : a->n_pos != 2 || !a->suite) ||
        (a->store && !from_store)) {
        fprintf(stderr, "dlbench: bisect: expected GOOD BAD --suite NAME [--config ID]..., "
                "or --store DB --alert ID\n");
        return 2;
    }
    if (!realpath(a->repo ? a->repo : ".", j.repo)) {
        fprintf(stderr, "dlbench: bisect: --repo %s: %s\n", a->repo ? a->repo : ".",
                strerror(errno));
        return 2;
    }
    dlb_status s = from_store ? from_alert(&j, &good, &bad, owned, &err) : DLB_OK;
    if (!from_store && a->n_configs) {
        /* The job frees its list: a copy of the options'. */
        j.configs = calloc(a->n_configs + 1, sizeof *j.configs);
        j.chosen = json_array();
        if (j.configs && j.chosen) {
            memcpy(j.configs, a->configs, a->n_configs * sizeof *j.configs);
            j.n_configs = a->n_configs;
            for (size_t i = 0; i < a->n_configs; i++)
                json_array_append_new(j.chosen, json_string(a->configs[i]));
        } else {
            s = dlb_errorf(&err, DLB_ERR_NOMEM, "out of memory");
        }
    }
    if (s == DLB_OK)
        s = commit_range(&j, good, bad, &err);
    if (s == DLB_OK)
        s = dlb_bisect_init(&j.b, (const char *const *)j.shas, j.n,
                            a->alpha > 0 ? a->alpha : DLB_BISECT_ALPHA,
                            a->runs_min > 0 ? (size_t)a->runs_min : DLB_BISECT_RUNS_MIN,
                            a->runs_max > 0 ? (size_t)a->runs_max : DLB_BISECT_RUNS_MAX,
                            &err);
    if (s == DLB_OK)
        s = make_out(&j, &err);
    int out_of_budget = 0, rc = 2;
    double t0 = now_s();
    if (s == DLB_OK) {
        fprintf(stderr, "dlbench: bisect: %zu commits from %.12s to %.12s, suite %s; runs "
                "and logs in %s\n", j.n, j.shas[0], j.shas[j.n - 1], j.suite, j.out);
        s = search(&j, &out_of_budget, &err);
    }
    if (s == DLB_OK) {
        char **subjects = calloc(j.n + 1, sizeof *subjects);
        for (size_t i = 0; subjects && i < j.n; i++)
            if (j.b.c[i].measured) {
                const char *args[] = {"log", "-1", "--format=%s", j.shas[i], NULL};
                subjects[i] = dlb_git(j.repo, args, &err);
            }
        struct dlb_bisect_run r = {&j.b, j.repo, j.suite, j.out, subjects, j.chosen,
                                   j.builds_done, j.runs, j.failed, now_s() - t0,
                                   out_of_budget};
        json_t *doc = dlb_bisect_document(&r);
        if (!doc) {
            s = dlb_errorf(&err, DLB_ERR_NOMEM, "out of memory");
        } else {
            dlb_bisect_print(stdout, doc, a->format);
            s = write_reports(&j, doc, &err);
            rc = json_is_object(json_object_get(doc, "culprit")) ? 0 : 1;
        }
        json_decref(doc);
        for (size_t i = 0; subjects && i < j.n; i++)
            free(subjects[i]);
        free(subjects);
    }
    if (s != DLB_OK) {
        fprintf(stderr, "dlbench: bisect: %s\n", err.msg);
        rc = 2;
    }
    job_free(&j);
    for (int i = 0; i < 3; i++)
        free(owned[i]);
    return rc;
}
