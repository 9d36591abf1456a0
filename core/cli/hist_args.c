/* The options of the commands over the results store (hist_args.h). */
#include "cli/hist_args.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *const commands[] = {"store", "changes", "alerts", "thresholds",
                                       "bisect", "dashboard", NULL};

int dlb_hist_is_command(const char *word)
{
    for (const char *const *c = commands; word && *c; c++)
        if (!strcmp(word, *c))
            return 1;
    return 0;
}

enum {
    O_FORMAT = 256, O_MACHINE, O_COMMIT, O_SUITE, O_CONFIG, O_NOTE, O_OUT,
    O_TITLE, O_REPO, O_BUILD_CMD, O_RUN_CMD, O_STORE, O_ALPHA, O_SEED,
    O_ALERT, O_RUNS_MIN, O_RUNS_MAX, O_BUDGET, O_ALL, O_NO_RECORD
};

static const struct option opts[] = {
    {"format", required_argument, NULL, O_FORMAT},
    {"machine", required_argument, NULL, O_MACHINE},
    {"commit", required_argument, NULL, O_COMMIT},
    {"suite", required_argument, NULL, O_SUITE},
    {"config", required_argument, NULL, O_CONFIG},
    {"note", required_argument, NULL, O_NOTE},
    {"out", required_argument, NULL, O_OUT},
    {"title", required_argument, NULL, O_TITLE},
    {"repo", required_argument, NULL, O_REPO},
    {"build-cmd", required_argument, NULL, O_BUILD_CMD},
    {"run-cmd", required_argument, NULL, O_RUN_CMD},
    {"store", required_argument, NULL, O_STORE},
    {"alpha", required_argument, NULL, O_ALPHA},
    {"seed", required_argument, NULL, O_SEED},
    {"alert", required_argument, NULL, O_ALERT},
    {"runs-min", required_argument, NULL, O_RUNS_MIN},
    {"runs-max", required_argument, NULL, O_RUNS_MAX},
    {"budget", required_argument, NULL, O_BUDGET},
    {"all", no_argument, NULL, O_ALL},
    {"no-record", no_argument, NULL, O_NO_RECORD},
    {NULL, 0, NULL, 0}
};

static int add_pos(struct dlb_hist_args *a, char *arg)
{
    char **p = realloc(a->pos, (a->n_pos + 1) * sizeof *p);
    if (!p)
        return -1;
    a->pos = p;
    a->pos[a->n_pos++] = arg;
    return 0;
}

static int whole(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

dlb_status dlb_hist_parse(int argc, char **argv, struct dlb_hist_args *a,
                          struct dlb_error *err)
{
    memset(a, 0, sizeof *a);
    a->cmd = argv[0];
    a->alpha = a->seed = a->alert = -1;
    a->runs_min = a->runs_max = a->budget = -1;
    long long v;
    optind = 1;
    opterr = 0;
    for (;;) {
        /* Operands and options in any order: each operand is kept as met. */
        while (optind < argc && (argv[optind][0] != '-' || !argv[optind][1]))
            if (add_pos(a, argv[optind++]))
                return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
        if (optind >= argc)
            break;
        int c = getopt_long(argc, argv, "+", opts, NULL);
        if (c == -1) {
            /* After "--" everything is an operand. */
            while (optind < argc)
                if (add_pos(a, argv[optind++]))
                    return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
            break;
        }
        switch (c) {
        case O_FORMAT:
            if (!strcmp(optarg, "table"))
                a->format = DLB_HIST_TABLE;
            else if (!strcmp(optarg, "json"))
                a->format = DLB_HIST_JSON;
            else if (!strcmp(optarg, "markdown"))
                a->format = DLB_HIST_MARKDOWN;
            else
                return dlb_errorf(err, DLB_ERR_INPUT, "--format %s: expected table, "
                                  "json or markdown", optarg);
            break;
        case O_MACHINE: a->machine = optarg; break;
        case O_COMMIT: a->commit = optarg; break;
        case O_SUITE: a->suite = optarg; break;
        case O_NOTE: a->note = optarg; break;
        case O_OUT: a->out = optarg; break;
        case O_TITLE: a->title = optarg; break;
        case O_REPO: a->repo = optarg; break;
        case O_BUILD_CMD: a->build_cmd = optarg; break;
        case O_RUN_CMD: a->run_cmd = optarg; break;
        case O_STORE: a->store = optarg; break;
        case O_ALL: a->all = 1; break;
        case O_NO_RECORD: a->no_record = 1; break;
        case O_CONFIG: {
            const char **p = realloc(a->configs, (a->n_configs + 1) * sizeof *p);
            if (!p)
                return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
            a->configs = p;
            a->configs[a->n_configs++] = optarg;
            a->config = optarg;
            break;
        }
        case O_ALPHA: {
            char *end;
            errno = 0;
            a->alpha = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(a->alpha > 0 && a->alpha < 0.5))
                return dlb_errorf(err, DLB_ERR_INPUT, "--alpha %s: expected a "
                                  "significance level between 0 and 0.5, e.g. 0.01",
                                  optarg);
            break;
        }
        case O_SEED:
            if (whole(optarg, 0, (long long)1 << 62, &v))
                return dlb_errorf(err, DLB_ERR_INPUT, "--seed %s: expected a "
                                  "non-negative integer", optarg);
            a->seed = v;
            break;
        case O_ALERT:
            if (whole(optarg, 1, (long long)1 << 62, &v))
                return dlb_errorf(err, DLB_ERR_INPUT, "--alert %s: expected an "
                                  "alert's number (dlbench alerts DB lists them)", optarg);
            a->alert = v;
            break;
        case O_RUNS_MIN: case O_RUNS_MAX: case O_BUDGET: {
            const char *name = c == O_RUNS_MIN ? "--runs-min" : c == O_RUNS_MAX
                               ? "--runs-max" : "--budget";
            if (whole(optarg, c == O_BUDGET ? 4 : 2, 1000000, &v))
                return dlb_errorf(err, DLB_ERR_INPUT, "%s %s: expected a whole number "
                                  "of runs, %d or more", name, optarg,
                                  c == O_BUDGET ? 4 : 2);
            *(c == O_RUNS_MIN ? &a->runs_min : c == O_RUNS_MAX ? &a->runs_max
              : &a->budget) = (long)v;
            break;
        }
        case ':':
            return dlb_errorf(err, DLB_ERR_INPUT, "%s needs a value", argv[optind - 1]);
        default:
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: unknown option '%s' (see "
                              "dlbench --help)", a->cmd, argv[optind - 1]);
        }
    }
    return DLB_OK;
}

void dlb_hist_free(struct dlb_hist_args *a)
{
    free(a->pos);
    free(a->configs);
    memset(a, 0, sizeof *a);
}

int dlb_hist_main(int argc, char **argv)
{
    struct dlb_hist_args a;
    struct dlb_error err = {""};
    if (dlb_hist_parse(argc, argv, &a, &err) != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        dlb_hist_free(&a);
        return 2;
    }
    int rc;
    if (!strcmp(a.cmd, "store"))
        rc = dlb_cmd_store(&a);
    else if (!strcmp(a.cmd, "changes"))
        rc = dlb_cmd_changes(&a);
    else if (!strcmp(a.cmd, "alerts"))
        rc = dlb_cmd_alerts(&a);
    else if (!strcmp(a.cmd, "thresholds"))
        rc = dlb_cmd_thresholds(&a);
    else if (!strcmp(a.cmd, "bisect"))
        rc = dlb_cmd_bisect(&a);
    else
        rc = dlb_cmd_dashboard(&a);
    dlb_hist_free(&a);
    return rc;
}
