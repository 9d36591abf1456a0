/* The command line of the commands over the results store: store,
 * changes, alerts, thresholds, bisect and dashboard. They take their own
 * options (a run's are in options/options.h), parsed here once for all
 * six; each command checks the operands it needs. */
#ifndef DLB_CORE_HIST_ARGS_H
#define DLB_CORE_HIST_ARGS_H

#include <stddef.h>
#include <stdio.h>
#include "util/error.h"

enum dlb_hist_format { DLB_HIST_TABLE, DLB_HIST_JSON, DLB_HIST_MARKDOWN };

struct dlb_hist_args {
    const char *cmd;            /* the command word */
    char **pos;                 /* operands after it (into argv) */
    size_t n_pos;
    enum dlb_hist_format format;
    const char *machine, *commit, *suite, *config, *note, *out, *title;
    const char *repo, *build_cmd, *run_cmd, *store;
    const char **configs;       /* bisect --config, repeatable */
    size_t n_configs;
    double alpha;               /* < 0: the default */
    long long seed;             /* < 0: the default */
    long long alert;            /* bisect --alert; < 0: none */
    long runs_min, runs_max, budget;
    int all, no_record;
};

/* 1 when `word` is one of these commands. */
int dlb_hist_is_command(const char *word);

/* Parse argv[0] (the command word) and what follows. */
dlb_status dlb_hist_parse(int argc, char **argv, struct dlb_hist_args *a,
                          struct dlb_error *err);
void dlb_hist_free(struct dlb_hist_args *a);

/* Each command: its exit status (0, 1 as the command says, 2 bad input). */
int dlb_cmd_store(struct dlb_hist_args *a);
int dlb_cmd_changes(struct dlb_hist_args *a);
int dlb_cmd_alerts(struct dlb_hist_args *a);
int dlb_cmd_thresholds(struct dlb_hist_args *a);
int dlb_cmd_bisect(struct dlb_hist_args *a);
int dlb_cmd_dashboard(struct dlb_hist_args *a);

/* Dispatch argv (argv[0] the command word) to its command. */
int dlb_hist_main(int argc, char **argv);

#endif
