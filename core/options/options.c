#include "options/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_SUITE = 256, OPT_OUT, OPT_SET, OPT_FORMAT, OPT_SEED, OPT_TIME_LIMIT,
    OPT_RESUME, OPT_QUICK, OPT_VERSION, OPT_HELP, OPT_PLUGIN_DIR, OPT_BACKEND,
    OPT_VERBOSE, OPT_INDEX, OPT_RECORD_FD, OPT_PEAK, OPT_ORIGIN,
    OPT_THRESHOLD, OPT_NORMALIZE, OPT_BASELINE_DIR, OPT_SHARD, OPT_LAUNCHER,
    OPT_RECORD_FILE, OPT_AS_REPETITIONS, OPT_PEAK_FILE, OPT_SEED_REP,
    OPT_STORE, OPT_MACHINE, OPT_COMMIT, OPT_EXPORT_ONNX
};

static const struct option long_opts[] = {
    {"suite", required_argument, NULL, OPT_SUITE},
    {"out", required_argument, NULL, OPT_OUT},
    {"set", required_argument, NULL, OPT_SET},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"time-limit", required_argument, NULL, OPT_TIME_LIMIT},
    {"resume", required_argument, NULL, OPT_RESUME},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, OPT_HELP},
    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"peak", no_argument, NULL, OPT_PEAK},
    {"config-index", required_argument, NULL, OPT_INDEX},
    {"record-fd", required_argument, NULL, OPT_RECORD_FD},
    {"origin", required_argument, NULL, OPT_ORIGIN},
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"normalize", no_argument, NULL, OPT_NORMALIZE},
    {"baseline-dir", required_argument, NULL, OPT_BASELINE_DIR},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"launcher", required_argument, NULL, OPT_LAUNCHER},
    {"record-file", required_argument, NULL, OPT_RECORD_FILE},
    {"as-repetitions", no_argument, NULL, OPT_AS_REPETITIONS},
    {"peak-file", required_argument, NULL, OPT_PEAK_FILE},
    {"seed-rep", required_argument, NULL, OPT_SEED_REP},
    {"store", required_argument, NULL, OPT_STORE},
    {"machine", required_argument, NULL, OPT_MACHINE},
    {"commit", required_argument, NULL, OPT_COMMIT},
    {"export-onnx", required_argument, NULL, OPT_EXPORT_ONNX},
    {NULL, 0, NULL, 0}
};

void dlb_cli_usage(FILE *f)
{
    fputs(
"usage: dlbench --suite NAME|FILE [options]     run a suite\n"
"       dlbench run NAME|FILE [options]         the same\n"
"       dlbench list                            plugins, suites and backends\n"
"       dlbench plugin-help NAME                a plugin's parameters; suite: the\n"
"                                               keys of [suite]\n"
"       dlbench info [--peak]                   the environment record (JSON);\n"
"                                               --peak measures the FMA peak and\n"
"                                               memory bandwidth (cached)\n"
"       dlbench compare BASE NEW                NEW against BASE (run directories\n"
"                                               or results.json files); exit 1 on\n"
"                                               a significant slowdown\n"
"       dlbench history DIR...                  trend table and plot of many runs\n"
"       dlbench baseline update SUITE RUNDIR    make RUNDIR the committed baseline\n"
"       dlbench baseline check SUITE RUNDIR     compare RUNDIR with it (--normalize)\n"
"       dlbench merge DIR...                    join the run directories of a\n"
"                                               sharded run (--shard) into one;\n"
"                                               --as-repetitions: runs of the same\n"
"                                               suite as its repetitions\n"
"       dlbench export RUNDIR [--workload K] [--out FILE.onnx]\n"
"                                               the winner re-run (best.ini) and\n"
"                                               its trained, transformed model\n"
"                                               written as ONNX (doc/onnx.md)\n"
"       dlbench store add DB RUNDIR...          add runs to a results store (a\n"
"                                               SQLite file or postgresql:// URL;\n"
"                                               --machine NAME, --commit SHA)\n"
"       dlbench store info DB                   what the store holds\n"
"       dlbench changes DB                      change points over each series,\n"
"                                               grouped by commit range; exit 1 on\n"
"                                               a raised slowdown beyond threshold\n"
"       dlbench alerts DB [ack|dismiss|reopen ID --note TEXT]\n"
"                                               the alerts, and moving one on\n"
"       dlbench thresholds DB [set SUITE CONFIG PERCENT | unset SUITE CONFIG]\n"
"                                               per-benchmark thresholds (patterns)\n"
"       dlbench bisect GOOD BAD --suite NAME    the first commit that is slower\n"
"       dlbench dashboard DB --out DIR          the store as a static site\n", f);
    fputs(
"\n"
"options:\n"
"  --quick               a CI-sized run of the same suite ([quick] section)\n"
"  --out DIR             run directory (default results/SUITE/UTC-HOST);\n"
"                        history: where the trend files go (./history)\n"
"  --set KEY=VALUE       override a suite key, e.g. batch=64 or amp.precision=bf16;\n"
"                        on a sweep axis it keeps only that value (repeatable)\n"
"  --seed N              the same as --set seed=N\n"
"  --backend NAME        the same as --set backend=NAME (ref, cpu, cuda)\n"
"  --format FMT          table (default), json or csv on standard output;\n"
"                        compare and history: table, markdown or json\n"
"  --threshold PERCENT   compare: a slowdown beyond this is a regression (5)\n"
"  --normalize           compare: divide each configuration by its own run's\n"
"                        baseline configuration first (across machines)\n"
"  --baseline-dir DIR    baseline: where SUITE.json lives (results/baselines)\n"
"  --time-limit SECONDS  stop starting configurations after this long;\n"
"                        --resume finishes the rest\n"
"  --shard K/N           run configurations K, K+N, K+2N ... of the plan (1-based);\n"
"                        dlbench merge joins the shards' run directories\n"
"  --launcher CMD        how multi-process configurations start their ranks, with\n"
"                        {ranks} for the count: \"srun -n {ranks}\", \"mpirun -np\n"
"                        {ranks} --hostfile FILE\" (default: $DLBENCH_LAUNCHER, else\n"
"                        mpirun on this host); run without a shell; never taken\n"
"                        from a suite file\n"
"  --resume DIR          run the configurations missing from DIR's journal\n"
"  --store DB            add the run to a results store when it ends (the store\n"
"                        is opened first); --machine NAME and --commit SHA label it\n"
"  --plugin-dir DIR      look for plugins in DIR first (repeatable)\n"
"  --verbose             debug messages\n"
"  --version, --help\n"
"\n"
"Suites are looked up as given, then as NAME.ini in ./suites, in each directory\n"
"of $DLBENCH_SUITE_PATH and in the installed suites directory. Plugins are\n"
"looked up in --plugin-dir, $DLBENCH_PLUGIN_PATH and the installed plugin\n"
"directory. Exit status: 0 success, 1 a configuration failed, 2 bad usage\n"
"or bad input. See dlbench(1).\n", f);
}

dlb_status dlb_cli_add_set(struct dlb_options *o, const char *kv)
{
    char **v = realloc(o->sets, (o->n_sets + 1) * sizeof *v);
    if (!v)
        return DLB_ERR_NOMEM;
    o->sets = v;
    if (!(o->sets[o->n_sets] = strdup(kv)))
        return DLB_ERR_NOMEM;
    o->n_sets++;
    return DLB_OK;
}

dlb_status dlb_cli_add_plugin_dir(struct dlb_options *o, const char *dir)
{
    char **own = realloc(o->owned, (o->n_owned + 1) * sizeof *own);
    if (!own)
        return DLB_ERR_NOMEM;
    o->owned = own;
    const char **v = realloc(o->plugin_dirs, (o->n_plugin_dirs + 1) * sizeof *v);
    if (!v)
        return DLB_ERR_NOMEM;
    o->plugin_dirs = v;
    char *copy = strdup(dir);
    if (!copy)
        return DLB_ERR_NOMEM;
    o->owned[o->n_owned++] = copy;
    o->plugin_dirs[o->n_plugin_dirs++] = copy;
    return DLB_OK;
}

static dlb_status add_set_pair(struct dlb_options *o, const char *key,
                               const char *val)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s=%s", key, val);
    return dlb_cli_add_set(o, buf);
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

/* "5", "5%" or "0.5" (percent) into a fraction. */
static int parse_percent(const char *s, double *out)
{
    char buf[64];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n + 1);
    if (buf[n - 1] == '%')
        buf[n - 1] = '\0';
    double v;
    if (parse_double(buf, &v) || !(v >= 0 && v <= 100))
        return -1;
    *out = v / 100;
    return 0;
}

/* Commands that take operands (run directories, a suite) after the word. */
static int takes_operands(enum dlb_command c)
{
    return c == DLB_CMD_COMPARE || c == DLB_CMD_HISTORY || c == DLB_CMD_BASELINE ||
           c == DLB_CMD_MERGE;
}

static dlb_status add_operand(struct dlb_options *o, char *arg)
{
    char **v = realloc(o->args, (o->n_args + 1) * sizeof *v);
    if (!v)
        return DLB_ERR_NOMEM;
    o->args = v;
    o->args[o->n_args++] = arg;
    return DLB_OK;
}

static dlb_status parse_command(int argc, char **argv, struct dlb_options *o,
                                struct dlb_error *err)
{
    if (optind >= argc)
        return DLB_OK;
    const char *word = argv[optind++];
    enum dlb_command c = DLB_CMD_NONE;
    if (!strcmp(word, "run"))
        c = DLB_CMD_RUN;
    else if (!strcmp(word, "list"))
        c = DLB_CMD_LIST;
    else if (!strcmp(word, "plugin-help"))
        c = DLB_CMD_PLUGIN_HELP;
    else if (!strcmp(word, "info"))
        c = DLB_CMD_INFO;
    else if (!strcmp(word, "__child"))
        c = DLB_CMD_CHILD;
    else if (!strcmp(word, "help"))
        c = DLB_CMD_HELP;
    else if (!strcmp(word, "compare"))
        c = DLB_CMD_COMPARE;
    else if (!strcmp(word, "history"))
        c = DLB_CMD_HISTORY;
    else if (!strcmp(word, "baseline"))
        c = DLB_CMD_BASELINE;
    else if (!strcmp(word, "merge"))
        c = DLB_CMD_MERGE;
    else
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "unknown command '%s'; commands are run, list, "
                          "plugin-help, info, compare, history, baseline, "
                          "merge, and as the first word export, store, changes, alerts, "
                          "thresholds, bisect, dashboard (see dlbench --help)", word);
    if (o->cmd != DLB_CMD_NONE && o->cmd != c)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "'%s' cannot be combined with --suite", word);
    o->cmd = c;
    if (c == DLB_CMD_RUN && !o->suite) {
        if (optind >= argc)
            return dlb_errorf(err, DLB_ERR_INPUT, "run: which suite? e.g. dlbench run amp");
        o->suite = argv[optind++];
    } else if (c == DLB_CMD_PLUGIN_HELP) {
        if (optind >= argc)
            return dlb_errorf(err, DLB_ERR_INPUT,
                              "plugin-help: which plugin? e.g. dlbench plugin-help amp");
        o->plugin_name = argv[optind++];
    }
    return DLB_OK;
}

dlb_status dlb_cli_parse(int argc, char **argv, struct dlb_options *o,
                         struct dlb_error *err)
{
    memset(o, 0, sizeof *o);
    o->config_index = -1;
    o->record_fd = -1;
    o->threshold = -1;
    dlb_status st;
    /* '+' stops at the first non-option (the command word); options after
     * it are parsed in a second round. */
    optind = 1;
    opterr = 0;
    for (int round = 0; round < 2; round++) {
        int c;
        while ((c = getopt_long(argc, argv, "+", long_opts, NULL)) != -1) {
            switch (c) {
            case OPT_SUITE:
                o->suite = optarg;
                if (o->cmd == DLB_CMD_NONE)
                    o->cmd = DLB_CMD_RUN;
                break;
            case OPT_OUT: o->out_dir = optarg; break;
            case OPT_RESUME:
                o->resume_dir = optarg;
                if (o->cmd == DLB_CMD_NONE)
                    o->cmd = DLB_CMD_RUN;
                break;
            case OPT_QUICK: o->quick = 1; break;
            case OPT_VERBOSE: o->verbose = 1; break;
            case OPT_PEAK: o->peak = 1; break;
            case OPT_ORIGIN: o->origin = optarg; break;
            case OPT_NORMALIZE: o->normalize = 1; break;
            case OPT_BASELINE_DIR: o->baseline_dir = optarg; break;
            case OPT_RECORD_FILE: o->record_file = optarg; break;
            case OPT_PEAK_FILE: o->peak_file = optarg; break;
            case OPT_EXPORT_ONNX: o->export_onnx = optarg; break;
            case OPT_SEED_REP: {
                char *end;
                errno = 0;
                long k = strtol(optarg, &end, 10);
                if (errno || *end || k < 1 || k > 1000)
                    return dlb_errorf(err, DLB_ERR_INPUT, "--seed-rep %s: "
                                      "expected 1 to 1000", optarg);
                o->seed_rep = (int)k;
                break;
            }
            case OPT_AS_REPETITIONS: o->as_repetitions = 1; break;
            case OPT_STORE: o->store = optarg; break;
            case OPT_MACHINE: o->store_machine = optarg; break;
            case OPT_COMMIT: o->store_commit = optarg; break;
            case OPT_SHARD: {
                int k, n, used = 0;
                if (sscanf(optarg, "%d/%d%n", &k, &n, &used) != 2 ||
                    optarg[used] || n < 1 || k < 1 || k > n)
                    return dlb_errorf(err, DLB_ERR_INPUT, "--shard %s: expected "
                                      "K/N with 1 <= K <= N, e.g. --shard 2/4",
                                      optarg);
                o->shard_k = k;
                o->shard_n = n;
                break;
            }
            case OPT_LAUNCHER:
                if ((st = add_set_pair(o, "launcher", optarg)) != DLB_OK)
                    return st;
                break;
            case OPT_THRESHOLD:
                if (parse_percent(optarg, &o->threshold))
                    return dlb_errorf(err, DLB_ERR_INPUT, "--threshold %s: expected "
                                      "a percentage from 0 to 100, e.g. 5 or 5%%", optarg);
                break;
            case OPT_VERSION: o->cmd = DLB_CMD_VERSION; break;
            case OPT_HELP: o->cmd = DLB_CMD_HELP; break;
            case OPT_SET:
                if (!strchr(optarg, '=') || optarg[0] == '=')
                    return dlb_errorf(err, DLB_ERR_INPUT,
                                      "--set %s: expected KEY=VALUE, e.g. --set batch=64", optarg);
                if ((st = dlb_cli_add_set(o, optarg)) != DLB_OK)
                    return st;
                break;
            case OPT_SEED: {
                long v;
                if (parse_long(optarg, &v) || v < 0)
                    return dlb_errorf(err, DLB_ERR_INPUT,
                                      "--seed %s: expected a non-negative integer", optarg);
                if ((st = add_set_pair(o, "seed", optarg)) != DLB_OK)
                    return st;
                break;
            }
            case OPT_BACKEND:
                if ((st = add_set_pair(o, "backend", optarg)) != DLB_OK)
                    return st;
                break;
            case OPT_FORMAT:
                if (!strcmp(optarg, "table"))
                    o->format = DLB_FORMAT_TABLE;
                else if (!strcmp(optarg, "json"))
                    o->format = DLB_FORMAT_JSON;
                else if (!strcmp(optarg, "csv"))
                    o->format = DLB_FORMAT_CSV;
                else if (!strcmp(optarg, "markdown"))
                    o->markdown = 1;
                else
                    return dlb_errorf(err, DLB_ERR_INPUT,
                                      "--format %s: expected table, json, csv or "
                                      "markdown", optarg);
                break;
            case OPT_TIME_LIMIT:
                if (parse_double(optarg, &o->time_limit_s) || o->time_limit_s <= 0)
                    return dlb_errorf(err, DLB_ERR_INPUT,
                                      "--time-limit %s: expected a positive number of seconds", optarg);
                break;
            case OPT_PLUGIN_DIR: {
                const char **v = realloc(o->plugin_dirs, (o->n_plugin_dirs + 1) * sizeof *v);
                if (!v)
                    return DLB_ERR_NOMEM;
                o->plugin_dirs = v;
                o->plugin_dirs[o->n_plugin_dirs++] = optarg;
                break;
            }
            case OPT_INDEX:
                if (parse_long(optarg, &o->config_index) || o->config_index < 0)
                    return dlb_errorf(err, DLB_ERR_INPUT, "--config-index %s: bad index", optarg);
                break;
            case OPT_RECORD_FD: {
                long fd;
                if (parse_long(optarg, &fd) || fd < 0)
                    return dlb_errorf(err, DLB_ERR_INPUT, "--record-fd %s: bad descriptor", optarg);
                o->record_fd = (int)fd;
                break;
            }
            case ':':
                return dlb_errorf(err, DLB_ERR_INPUT, "%s needs a value", argv[optind - 1]);
            default:
                return dlb_errorf(err, DLB_ERR_INPUT,
                                  "unknown option '%s' (see dlbench --help)", argv[optind - 1]);
            }
        }
        if (round == 0 && (st = parse_command(argc, argv, o, err)) != DLB_OK)
            return st;
        /* Operands may come between options: collect one, read on. */
        if (round > 0 && optind < argc && takes_operands(o->cmd)) {
            if ((st = add_operand(o, argv[optind++])) != DLB_OK)
                return st;
            round = 0;
        }
    }
    if (optind < argc)
        return dlb_errorf(err, DLB_ERR_INPUT, "unexpected argument '%s' (see dlbench --help)",
                          argv[optind]);
    if (o->cmd == DLB_CMD_RUN && o->suite && o->resume_dir)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "--resume DIR takes the suite from DIR; drop --suite %s", o->suite);
    if (o->markdown && !takes_operands(o->cmd))
        return dlb_errorf(err, DLB_ERR_INPUT, "--format markdown is for compare, "
                          "history and baseline check; use table, json or csv");
    if (o->resume_dir && o->out_dir)
        return dlb_errorf(err, DLB_ERR_INPUT, "--resume writes into DIR; drop --out");
    if ((o->store || o->store_machine || o->store_commit) && o->cmd != DLB_CMD_RUN)
        return dlb_errorf(err, DLB_ERR_INPUT, "--store, --machine and --commit are for "
                          "a run (dlbench store add DB RUNDIR adds a finished one)");
    if ((o->store_machine || o->store_commit) && !o->store)
        return dlb_errorf(err, DLB_ERR_INPUT, "--machine and --commit label a run in "
                          "a store: give --store DB too");
    return DLB_OK;
}

void dlb_cli_free(struct dlb_options *o)
{
    for (size_t i = 0; i < o->n_sets; i++)
        free(o->sets[i]);
    free(o->sets);
    free(o->plugin_dirs);
    free(o->args);
    for (size_t i = 0; i < o->n_owned; i++)
        free(o->owned[i]);
    free(o->owned);
    memset(o, 0, sizeof *o);
}
