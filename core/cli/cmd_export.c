/* dlbench export RUNDIR [--workload K] [--out FILE.onnx]: each workload's
 * winner written as ONNX (doc/onnx.md, "Export"). A run directory keeps
 * the winner's settings (best.ini, best-K.ini), not its weights, so the
 * winner is run again: its best-K.ini through the normal child process,
 * same seed, training budget and plugins (pruning, int8 calibration), with
 * no speed measurement, and the child writes the model it scored as ONNX.
 * The accuracy it reaches is printed beside the one the run recorded. */
#include "cli/cmd_export.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/interrupt.h"
#include "run/runner.h"
#include "util/path.h"

struct export_args {
    const char *dir, *out;
    long workload;             /* 1-based; 0: every workload */
    const char **plugin_dirs;  /* --plugin-dir, repeatable (into argv) */
    size_t n_plugin_dirs;
};

static void usage(FILE *f)
{
    fputs("usage: dlbench export RUNDIR [--workload K] [--out FILE.onnx] "
          "[--plugin-dir DIR]\n"
          "  runs each workload's winner again (RUNDIR/best.ini, or best-K.ini "
          "with several\n  workloads) and writes its trained, transformed "
          "model as ONNX (default\n  RUNDIR/best.onnx, best-K.onnx)\n", f);
}

static int parse(int argc, char **argv, struct export_args *a)
{
    enum { O_WORKLOAD = 256, O_OUT, O_PLUGIN_DIR, O_HELP };
    static const struct option opts[] = {
        {"workload", required_argument, NULL, O_WORKLOAD},
        {"out", required_argument, NULL, O_OUT},
        {"plugin-dir", required_argument, NULL, O_PLUGIN_DIR},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case O_WORKLOAD:
            errno = 0;
            a->workload = strtol(optarg, &end, 10);
            if (errno || *end || a->workload < 1) {
                fprintf(stderr, "dlbench export: --workload %s: expected a "
                        "workload number from 1 (best-K.ini's K)\n", optarg);
                return 2;
            }
            break;
        case O_OUT: a->out = optarg; break;
        case O_PLUGIN_DIR:
            a->plugin_dirs[a->n_plugin_dirs++] = optarg;
            break;
        case O_HELP: usage(stdout); return 0;
        default:
            fprintf(stderr, "dlbench export: unknown option '%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "dlbench export: %s\n", optind >= argc
                ? "which run directory? e.g. dlbench export results/amp/RUN"
                : "one run directory only");
        usage(stderr);
        return 2;
    }
    a->dir = argv[optind];
    return -1;
}

/* The run's recorded accuracy of configuration `id`, NAN if none. With
 * accuracy_seeds the record's accuracy is the mean over the seeds: the
 * re-run trains from the first, whose own figure is in "seeds". */
static double recorded_accuracy(json_t *res, const char *id)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(res, "records"), i, r) {
        if (!json_is_string(json_object_get(r, "id")) ||
            strcmp(json_string_value(json_object_get(r, "id")), id) != 0)
            continue;
        json_t *seeds = json_object_get(r, "seeds");
        json_t *v = json_array_size(seeds)
            ? json_object_get(json_array_get(seeds, 0), "accuracy")
            : json_object_get(json_object_get(json_object_get(r, "metrics"),
                                              "accuracy"), "value");
        return json_is_number(v) ? json_number_value(v) : NAN;
    }
    return NAN;
}

/* The run's invocation.json (NULL when unreadable). */
static json_t *load_invocation(const char *dir)
{
    char *p = dlb_path_join(dir, "invocation.json");
    json_error_t jerr;
    json_t *inv = p ? json_load_file(p, 0, &jerr) : NULL;
    free(p);
    return inv;
}

/* The plugin folders the run used (invocation.json), then the user's. */
static size_t add_plugin_dirs(json_t *inv, const struct export_args *a,
                              char **av, size_t n)
{
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(inv, "plugin_dirs"), i, d)
        if (json_is_string(d)) {
            av[n++] = "--plugin-dir";
            av[n++] = (char *)json_string_value(d);
        }
    for (i = 0; i < a->n_plugin_dirs; i++) {
        av[n++] = "--plugin-dir";
        av[n++] = (char *)a->plugin_dirs[i];
    }
    return n;
}

/* Run workload k's winner (suite `ini`) again, its model written to out. */
static int export_one(const struct export_args *a, json_t *res, size_t k,
                      const char *ini, const char *out, const char *id)
{
    json_t *inv = load_invocation(a->dir), *rec = NULL;
    struct dlb_error err = {""};
    size_t n = 0, cap = 16 + 2 * (a->n_plugin_dirs +
                                  json_array_size(json_object_get(inv,
                                                  "plugin_dirs")));
    char **av = calloc(cap, sizeof *av);
    if (!av) {
        json_decref(inv);
        return 3;
    }
    av[n++] = "dlbench";
    av[n++] = "__child";
    av[n++] = "--suite";
    av[n++] = (char *)ini;
    av[n++] = "--origin";
    av[n++] = (char *)ini;
    av[n++] = "--config-index";
    av[n++] = "0";
    av[n++] = "--record-fd";
    av[n++] = "%FD%";
    av[n++] = "--export-onnx";
    av[n++] = (char *)out;
    /* --quick scores 2,000 test images and calibrates on fewer: the
     * accuracy to compare with is the quick run's */
    json_t *quick = json_object_get(json_object_get(res, "context"), "quick");
    if (json_is_true(quick))
        av[n++] = "--quick";
    n = add_plugin_dirs(inv, a, av, n);
    printf("workload %zu: running %s again (winner %s): its training, "
           "transform and test-set accuracy, no speed measurement\n",
           k, ini, id);
    struct dlb_child_spec spec = {.argv = av};
    dlb_status s = dlb_runner_run(&spec, &rec, &err);
    json_decref(inv);
    free(av);
    if (dlb_interrupted()) {
        fprintf(stderr, "dlbench export: interrupted; %s may not be "
                "written\n", out);
        json_decref(rec);
        return 128 + dlb_interrupted();
    }
    if (s != DLB_OK) {
        fprintf(stderr, "dlbench export: %s: %s\n", ini, err.msg);
        return 1;
    }
    const char *st = json_string_value(json_object_get(rec, "status"));
    if (!st || strcmp(st, "ok") != 0) {
        const char *why = json_string_value(json_object_get(rec, "reason"));
        fprintf(stderr, "dlbench export: %s: the re-run %s: %s; nothing "
                "written to %s\n", ini, st ? st : "wrote no record",
                why ? why : "no reason given", out);
        json_decref(rec);
        return 1;
    }
    json_t *acc = json_object_get(json_object_get(json_object_get(rec,
                                  "metrics"), "accuracy"), "value");
    double now = json_is_number(acc) ? json_number_value(acc) : NAN;
    double was = recorded_accuracy(res, id);
    json_decref(rec);
    printf("workload %zu: accuracy %.2f%% re-run, %.2f%% recorded (%s)\n", k,
           now, was, isnan(was) ? "the run recorded none"
           : fabs(now - was) < 0.005 ? "they agree"
           : "they differ: the backend or a plugin is not deterministic "
             "here, so the file holds the re-run's model, not the run's");
    printf("workload %zu: written %s\n", k, out);
    return 0;
}

/* The run's best suite of workload k of n ("best.ini" for one). */
static char *best_path(const char *dir, size_t k, size_t n, const char *ext)
{
    char name[64];
    if (n < 2)
        snprintf(name, sizeof name, "best.%s", ext);
    else
        snprintf(name, sizeof name, "best-%zu.%s", k, ext);
    return dlb_path_join(dir, name);
}

int dlb_cmd_export(int argc, char **argv)
{
    struct export_args a = {0};
    a.plugin_dirs = calloc((size_t)argc + 1, sizeof *a.plugin_dirs);
    if (!a.plugin_dirs)
        return 3;
    int rc = parse(argc, argv, &a);
    if (rc >= 0) {
        free(a.plugin_dirs);
        return rc;
    }
    struct stat sb;
    char *rp = dlb_path_join(a.dir, "results.json");
    json_error_t jerr;
    json_t *res = NULL, *groups = NULL;
    if (stat(a.dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "dlbench export: %s: no such run directory; give the "
                "--out directory of a dlbench run\n", a.dir);
        rc = 2;
    } else if (!(res = json_load_file(rp, 0, &jerr))) {
        fprintf(stderr, "dlbench export: %s: %s; is %s a finished run "
                "directory (dlbench --suite ... --out DIR)?\n", rp, jerr.text,
                a.dir);
        rc = 2;
    } else if (!json_is_array(groups = json_object_get(json_object_get(res,
                                        "selection"), "groups")) ||
               !json_array_size(groups)) {
        fprintf(stderr, "dlbench export: %s: no selection of winners; the "
                "run has no winner to export\n", rp);
        rc = 2;
    }
    size_t n = groups ? json_array_size(groups) : 0;
    if (rc < 0 && a.workload > (long)n) {
        fprintf(stderr, "dlbench export: --workload %ld: the run in %s has "
                "%zu workload%s (1 to %zu)\n", a.workload, a.dir, n,
                n == 1 ? "" : "s", n);
        rc = 2;
    }
    if (rc < 0 && a.out && !a.workload && n > 1) {
        fprintf(stderr, "dlbench export: --out names one file and the run "
                "has %zu workloads; add --workload K\n", n);
        rc = 2;
    }
    /* Every workload asked for, whatever the ones before did: 1 when a
     * re-run failed, 2 when a workload has no winner. */
    int worst = 0;
    /* a signal stops the re-run in order (proc/interrupt.h) */
    struct dlb_error ierr = {""};
    if (rc < 0 && dlb_interrupt_install(&ierr) != DLB_OK)
        fprintf(stderr, "dlbench export: warning: %s\n", ierr.msg);
    for (size_t k = 1; rc < 0 && k <= n && worst < 128; k++) {
        if (a.workload && (long)k != a.workload)
            continue;
        json_t *g = json_array_get(groups, k - 1);
        const char *id = json_string_value(json_object_get(g, "winner"));
        char *ini = best_path(a.dir, k, n, "ini");
        char *def = best_path(a.dir, k, n, "onnx");
        if (!ini || !def) {
            worst = 3;
        } else if (!id || access(ini, R_OK) != 0) {
            const char *why = json_string_value(json_object_get(g, "why"));
            fprintf(stderr, "dlbench export: %s: %s; workload %zu has no "
                    "winner to export%s%s\n", ini,
                    access(ini, R_OK) ? strerror(errno) : "no winner recorded",
                    k, why ? ": " : "", why ? why : "");
            worst = worst > 2 ? worst : 2;
        } else {
            int r1 = export_one(&a, res, k, ini, a.out ? a.out : def, id);
            worst = worst > r1 ? worst : r1;
        }
        free(ini);
        free(def);
    }
    dlb_interrupt_restore();
    json_decref(res);
    free(rp);
    free(a.plugin_dirs);
    return rc < 0 ? worst : rc;
}
