/* `dlbench baseline update SUITE RUNDIR` and `dlbench baseline check SUITE
 * RUNDIR`: the committed baselines the nightly gate compares against,
 * results/baselines/SUITE.json, each a results.json of a --quick run. */
#include "cli/cmd_compare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "results/results.h"

#define DEFAULT_BASELINE_DIR "results/baselines"

/* A suite name that is safe as a file name: no '/', no leading '.'. */
static int valid_name(const char *s)
{
    if (!*s || *s == '.' || strlen(s) > 200)
        return 0;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789._-") == strlen(s);
}

static void baseline_path(const struct dlb_options *o, const char *suite,
                          char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s.json", o->baseline_dir ? o->baseline_dir
             : DEFAULT_BASELINE_DIR, suite);
}

static dlb_status check_run(json_t *doc, const char *file, const char *suite,
                            struct dlb_error *err)
{
    const char *name = json_string_value(dlb_context_get(doc, "context.suite.name"));
    if (name && strcmp(name, suite))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s is a run of suite '%s', not "
                          "'%s'", file, name, suite);
    size_t ok = 0;
    struct dlb_results res;
    dlb_status s = dlb_results_parse(doc, file, &res, err);
    if (s != DLB_OK)
        return s;
    for (size_t i = 0; i < res.n; i++)
        ok += res.records[i].status == DLB_REC_OK;
    dlb_results_free(&res);
    if (!ok)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: no configuration ran (status "
                          "ok): it cannot be a baseline", file);
    if (!json_is_true(dlb_context_get(doc, "context.quick")))
        fprintf(stderr, "dlbench: warning: %s was not run with --quick, but the "
                "nightly gate (ci/perf-check) runs --quick: its configurations "
                "may not match\n", file);
    return DLB_OK;
}

/* Write `doc` to `path` through a temporary name, so that a reader sees
 * the old baseline or the new one, never half of one. */
static dlb_status write_atomic(const char *path, json_t *doc, struct dlb_error *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) != 0) {
        unlink(tmp);
        return dlb_errorf(err, DLB_ERR_IO, "cannot write %s: %s (does the "
                          "folder exist? see --baseline-dir)", tmp, strerror(errno));
    }
    if (rename(tmp, path) != 0) {
        dlb_status s = dlb_errorf(err, DLB_ERR_IO, "cannot rename %s to %s: %s",
                                  tmp, path, strerror(errno));
        unlink(tmp);
        return s;
    }
    return DLB_OK;
}

static int update(struct dlb_options *o, const char *suite, const char *rundir)
{
    struct dlb_error err = {""};
    json_t *doc = NULL;
    char *file = NULL, path[4096], stamp[32] = "unknown";
    baseline_path(o, suite, path, sizeof path);
    dlb_status s = dlb_compare_load(rundir, &doc, &file, &err);
    if (s == DLB_OK)
        s = check_run(doc, file, suite, &err);
    if (s == DLB_OK) {
        time_t now = time(NULL);
        struct tm tm;
        if (gmtime_r(&now, &tm))
            strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_set_new(doc, "baseline", json_pack("{s:s, s:s, s:s}",
                            "suite", suite, "from", file, "updated_utc", stamp));
        s = write_atomic(path, doc, &err);
    }
    json_decref(doc);
    if (s != DLB_OK) {
        fprintf(stderr, "dlbench: baseline update: %s\n", err.msg);
        free(file);
        return 2;
    }
    printf("dlbench: baseline for %s is now %s (from %s); commit it\n", suite,
           path, file);
    free(file);
    return 0;
}

static int check(struct dlb_options *o, const char *suite, const char *rundir)
{
    struct dlb_error err = {""};
    json_t *base = NULL, *nw = NULL;
    char *bf = NULL, *nf = NULL, path[4096];
    baseline_path(o, suite, path, sizeof path);
    int rc = 2;
    if (access(path, F_OK) != 0)
        fprintf(stderr, "dlbench: baseline check: no baseline %s; make one with "
                "dlbench baseline update %s RUNDIR\n", path, suite);
    else if (dlb_compare_load(path, &base, &bf, &err) != DLB_OK ||
             dlb_compare_load(rundir, &nw, &nf, &err) != DLB_OK ||
             check_run(nw, nf, suite, &err) != DLB_OK)
        fprintf(stderr, "dlbench: baseline check: %s\n", err.msg);
    else
        /* Machines differ between the commit and tonight: ratios inside
         * each run are what carries over. */
        rc = dlb_compare_report(o, base, bf, nw, nf, 1);
    json_decref(base);
    json_decref(nw);
    free(bf);
    free(nf);
    return rc;
}

int dlb_cmd_baseline(struct dlb_options *o)
{
    const char *verb = o->n_args ? o->args[0] : "";
    if ((strcmp(verb, "update") && strcmp(verb, "check")) || o->n_args != 3) {
        fprintf(stderr, "dlbench: baseline: expected 'baseline update SUITE "
                "RUNDIR' or 'baseline check SUITE RUNDIR'\n");
        return 2;
    }
    if (!valid_name(o->args[1])) {
        fprintf(stderr, "dlbench: baseline: '%s' is not a suite name (letters, "
                "digits, '.', '_', '-')\n", o->args[1]);
        return 2;
    }
    return !strcmp(verb, "update") ? update(o, o->args[1], o->args[2])
                                   : check(o, o->args[1], o->args[2]);
}
