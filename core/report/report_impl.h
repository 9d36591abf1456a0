/* Private to the report files: the report's content as plain text cells,
 * which report_md.c and report_html.c each escape and lay out. */
#ifndef DLB_CORE_REPORT_IMPL_H
#define DLB_CORE_REPORT_IMPL_H

#include <stdio.h>
#include <jansson.h>
#include "util/error.h"
#include "plot/plot.h"
#include "results/record.h"
#include "results/selection.h"

#define DLB_REP_COLS 9

struct dlb_rep_row {
    char cell[DLB_REP_COLS][256];
    int winner, tied, violates, pareto; /* how the row is marked */
    int head;                  /* heads a workload's rows: cell[1] names the
                                * workload and its baseline, the rest empty */
};

struct dlb_rep {
    char title[300];
    char env[12][400];          /* "label: value" lines */
    int n_env;
    char (*winner)[1600];      /* per workload: its winner and why, one
                                * paragraph each */
    size_t n_winner;
    struct dlb_rep_line {      /* the verdicts: a setting (level 0), then
                                * its workloads (level 1) */
        int level;
        char text[1400];
    } *verdicts;
    size_t n_verdicts;
    struct dlb_rep_row *rows;
    size_t n_rows;
    char (*notes)[400];        /* violations, attribution, ties: bullet lines */
    size_t n_notes;
    char (*pareto)[256];
    size_t n_pareto;
    struct dlb_rep_line *scenarios; /* inference scenarios: a configuration
                                     * (level 0), its probes (level 1) */
    size_t n_scenarios;
    struct dlb_rep_line *profile; /* profile = ops: a configuration (level
                                   * 0), its longest operations (level 1) */
    size_t n_profile;
};

extern const char *const dlb_rep_heads[DLB_REP_COLS];

/* Build the content from the run's documents; 0 on success. */
int dlb_rep_build(struct dlb_rep *r, json_t *context,
                  const struct dlb_record *records, size_t n_records,
                  const struct dlb_selection *selection);
void dlb_rep_free(struct dlb_rep *r);

/* "12.3 MiB", "1.52" ...: figures as the report shows them. */
void dlb_rep_num(char *buf, size_t len, double v);
/* A figure as the report prints it: 0 when absent (NAN). */
double dlb_rep_or0(double v);
void dlb_rep_bytes(char *buf, size_t len, double v);

/* The table: one row per configuration, the rows of each workload under a
 * head row naming it and its baseline, each row's configuration shown by
 * what differs from that baseline (report_rows.c); 0 on success. */
int dlb_rep_rows(struct dlb_rep *r, const struct dlb_record *records,
                 size_t n_records, const struct dlb_selection *sel);

/* A verdict's row ("model=lenet batch=64: 0.71x (0.58-0.83), accuracy
 * -0.05 +-2.88 points, memory -4%: costs") and a workload's winner in
 * words (report_verdict.c). */
void dlb_rep_verdict_row(char *buf, size_t len, const struct dlb_sel_verdict_row *row);
void dlb_rep_group_winner(char *buf, size_t len, const struct dlb_selection *sel,
                          const struct dlb_sel_group *group);

/* What the scenarios' section says first, in both formats. */
#define DLB_REP_SCENARIO_INTRO                                               \
    "MLPerf-style runs after each configuration's step measurement "        \
    "(doc/measurement.md): single-stream's figure is the p90 latency, "     \
    "offline's samples/s, server's the highest Poisson arrival rate whose " \
    "p99 latency, counted from each query's scheduled arrival, is within "  \
    "the bound. Indicative, not a submission: MLPerf asks for at least "    \
    "600 s and 1,024 (SingleStream), 24,576 (Offline) or 270,336 (Server) " \
    "queries a run; these ran the suite's scenario_min_queries and "        \
    "scenario_min_duration."

/* The inference scenarios' lines, from the records' "scenario" members
 * (report_scenario.c); none when no record ran one. 0 on success. */
/* What the profile's section says first, in both formats. */
#define DLB_REP_PROFILE_INTRO                                                \
    "Where each profiled configuration's step went (profile = ops): each "   \
    "operation timed alone, the device waited for after it, so their sum "  \
    "is not the measured step's time; per kernel its share of that sum, "   \
    "then the longest operations with their share of the measured step. "   \
    "Every operation: the record's profile in results.json."

/* The profile's lines, from the records' "profile" members
 * (report_profile.c); none when no record has one. 0 on success. */
int dlb_rep_profile(struct dlb_rep *r, const struct dlb_record *records,
                    size_t n_records);

int dlb_rep_scenarios(struct dlb_rep *r, const struct dlb_record *records,
                      size_t n_records);

/* The verdicts as the console summary begins. */
void dlb_report_verdicts(FILE *f, const struct dlb_selection *sel);

dlb_status dlb_report_md(FILE *f, const struct dlb_rep *r,
                         const struct dlb_plot_list *plots);
dlb_status dlb_report_html(FILE *f, const struct dlb_rep *r,
                           const struct dlb_plot_list *plots, const char *dir);

#endif
