/* Command-line parsing: one struct of options, filled by dlb_cli_parse. */
#ifndef DLB_CORE_CLI_H
#define DLB_CORE_CLI_H

#include <stddef.h>
#include "util/error.h"
#include "results/results.h"

enum dlb_command {
    DLB_CMD_NONE, DLB_CMD_RUN, DLB_CMD_LIST, DLB_CMD_PLUGIN_HELP, DLB_CMD_INFO,
    DLB_CMD_HELP, DLB_CMD_VERSION,
    DLB_CMD_COMPARE, DLB_CMD_HISTORY, DLB_CMD_BASELINE, DLB_CMD_MERGE,
    DLB_CMD_CHILD  /* internal: run one configuration, see child.c */
};

struct dlb_options {
    enum dlb_command cmd;
    const char *suite;          /* name or file */
    const char *plugin_name;    /* plugin-help NAME */
    const char *out_dir;
    const char *resume_dir;
    char **sets;                /* "key=value", from --set, --seed, --backend */
    size_t n_sets;
    const char **plugin_dirs;
    size_t n_plugin_dirs;
    enum dlb_format format;
    double time_limit_s;        /* 0: none */
    int quick;
    int verbose;
    int peak;                   /* info --peak */
    /* compare, history, baseline */
    char **args;                /* operands after the command word (into argv) */
    size_t n_args;
    double threshold;           /* --threshold, a fraction; < 0: the default */
    int normalize;              /* --normalize */
    int markdown;               /* --format markdown */
    const char *baseline_dir;   /* --baseline-dir */
    int as_repetitions;         /* merge --as-repetitions */
    const char *store;          /* run --store DB: add the run when it ends */
    const char *store_machine, *store_commit; /* --machine, --commit */
    int shard_k, shard_n;       /* --shard K/N: configurations K, K+N, ...
                                   (1-based); 0/0 when not sharded */
    char **owned;               /* strings the options own (from --resume) */
    size_t n_owned;
    /* internal, for DLB_CMD_CHILD */
    const char *origin;         /* the suite file as the user named it */
    long config_index;
    int record_fd;
    const char *record_file;    /* under a launcher: rank 0 writes here */
    const char *peak_file;      /* the run's roofline (DIR/peak.json) */
    int seed_rep;               /* > 0: train and evaluate from seed +
                                   seed_rep, no measurement (accuracy_seeds) */
    const char *export_onnx;    /* dlbench export: no measurement; the
                                   model, trained and transformed, written
                                   here as ONNX (core/cli/cmd_export.c) */
};

/* Parse argv. On bad usage returns DLB_ERR_INPUT with the message in err.
 * Strings point into argv or are owned by opts (free with dlb_cli_free). */
dlb_status dlb_cli_parse(int argc, char **argv, struct dlb_options *opts,
                         struct dlb_error *err);
void dlb_cli_free(struct dlb_options *opts);

/* Add a "key=value" override (copied). */
dlb_status dlb_cli_add_set(struct dlb_options *opts, const char *kv);

/* Add a plugin directory (copied). */
dlb_status dlb_cli_add_plugin_dir(struct dlb_options *opts, const char *dir);

void dlb_cli_usage(FILE *f);

#endif
