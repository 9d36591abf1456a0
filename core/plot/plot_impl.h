/* Internals shared by the plot files: a plotter that writes NAME.dat,
 * NAME.gp and (through gnuplot) NAME.png and NAME.svg into one folder, the
 * escaping that keeps suite strings inert, and record accessors. */
#ifndef DLB_CORE_PLOT_IMPL_H
#define DLB_CORE_PLOT_IMPL_H

#include <stdio.h>
#include <sys/types.h>
#include <jansson.h>
#include "util/error.h"
#include "plot/plot.h"
#include "results/record.h"
#include "results/selection.h"

/* Seconds one gnuplot process may take before its process group is
 * killed, unless $DLBENCH_GNUPLOT_TIMEOUT says otherwise. */
#define DLB_GNUPLOT_TIMEOUT_S 60
/* Rows a one-row-per-configuration plot draws at most (plot_rows.c). */
#define DLB_PLOT_MAX_ROWS 60
/* Bytes of a label shown on a plot; the data file's comment says so. */
#define DLB_PLOT_LABEL_MAX 72

/* gnuplot processes one plotter runs at once, at most (and at most one
 * more than the cores): a run's plots are independent, so they are drawn
 * side by side. */
#define DLB_PLOT_JOBS 8

struct dlb_gp_job {
    pid_t pid;
    int seq;            /* the plotter's n_started when it started */
    double deadline;    /* dlb_now() after which it is stopped */
    char name[128];
};

struct dlb_plotter {
    char *dir;          /* the folder the files go into */
    char *rel;          /* the same folder as the JSON list names it ("plots/") */
    struct dlb_plot_list plots; /* what it wrote, in order */
    char *gnuplot;      /* the program found, NULL when there is none */
    int drawn;          /* 1 while every script that ran drew its images */
    char why[512];      /* why something was not drawn, "" when all was */
    double timeout_s;   /* the limit on one gnuplot process */
    char timed_out[256]; /* the plots whose gnuplot was stopped, "a, b" */
    int parallel;       /* draw side by side; then call dlb_plotter_wait */
    struct dlb_gp_job jobs[DLB_PLOT_JOBS];
    int n_jobs;
    int n_started;      /* gnuplot processes started so far */
    int why_seq;        /* the plot `why` is about */
    int sig0;           /* dlb_interrupted() when the first one started */
    const char *suite;  /* the suite's name, for titles (escaped there), or NULL */
    const char *rows_note; /* which rows the next plots draw, when not all;
                            * in their titles and data files, or NULL */
    const char *shared; /* the settings every row of the next plots has,
                         * left out of their labels and said in their
                         * titles ("" or NULL: none) */
};

/* Create `dir` (a missing last component only) and look for gnuplot:
 * $DLBENCH_GNUPLOT when set, else `gnuplot` in $PATH. `rel` prefixes the
 * paths in the JSON list. */
dlb_status dlb_plotter_init(struct dlb_plotter *p, const char *dir,
                            const char *rel, struct dlb_error *err);
void dlb_plotter_free(struct dlb_plotter *p);

/* Open DIR/NAME.dat for writing; a header comment names the columns. */
FILE *dlb_plot_data_open(struct dlb_plotter *p, const char *name,
                         const char *columns, struct dlb_error *err);
/* Close a data file, reporting a write error. */
dlb_status dlb_plot_data_close(FILE *f, const char *name, struct dlb_error *err);

/* Write DIR/NAME.gp, which draws `body` (settings and a plot command,
 * reading NAME.dat) once as PNG and once as SVG, `height` pixels high (0:
 * the default), run gnuplot on it when there is one, and add the plot to
 * the list. `title` may come from a suite: it is escaped here. `body` is
 * the caller's own text and must hold no suite string: labels travel in
 * the data file. */
dlb_status dlb_plot_emit(struct dlb_plotter *p, const char *name,
                         const char *title, const char *body, int height,
                         struct dlb_error *err);

/* The height of a plot with one row per configuration. */
int dlb_plot_rows_height(int rows);

/* Start gnuplot on DIR/NAME.gp, with standard input from the script, the
 * working directory DIR, standard error into DIR/gnuplot.log, in a process
 * group of its own. No shell is involved. Unless p->parallel, it is waited
 * for at once; otherwise up to one more than the cores run side by side until
 * dlb_plotter_wait. A gnuplot still running timeout_s after its start, or
 * after a signal to dlbench, is killed with its group. Whatever went wrong
 * ends up in p->drawn, p->why and p->timed_out. */
enum { DLB_GNUPLOT_OK = 0, DLB_GNUPLOT_FAILED = -1, DLB_GNUPLOT_TIMED_OUT = -2 };
void dlb_plotter_start(struct dlb_plotter *p, const char *name);
/* Wait for every gnuplot started (dlb_plotter_free does too). */
void dlb_plotter_wait(struct dlb_plotter *p);

/* `s` as a gnuplot single-quoted string literal, into buf: inside single
 * quotes gnuplot expands neither backquotes, macros (@) nor backslash
 * escapes, and '' is the only escape. Control characters become spaces, so
 * nothing can end the line and start a command. Truncated to fit. */
void dlb_gp_quote(const char *s, char *buf, size_t n);

/* Write `s` as a double-quoted data-file label: gnuplot reads labels as
 * data, never as commands; '"' and control characters are replaced so the
 * label stays one column of one line, and a long one is cut with "...". */
void dlb_plot_label(FILE *f, const char *s);

/* The records plots draw: n pointers to typed records (core/results/record.h). */
struct dlb_plot_recs {
    const struct dlb_record **v;
    size_t n;
};

/* All of `recs`, as pointers; malloc'ed (v NULL when out of memory). */
struct dlb_plot_recs dlb_plot_recs_all(const struct dlb_record *recs, size_t n);

/* The records a one-row-per-configuration plot draws: all of them up to
 * `max`, else the fastest, always with the selection's winner and
 * baseline, in the run's order; `note` then says so ("" when all).
 * Malloc'ed; v NULL when out of memory. */
struct dlb_plot_recs dlb_plot_rows(struct dlb_plot_recs all, const struct dlb_selection *selection,
                                   size_t max, char *note, size_t note_len);
/* The words ("key=value") of the first ok record's id that every ok
 * record's id has, space-separated, into out ("" when fewer than two ok
 * records): a label need not repeat them. */
void dlb_plot_shared_words(struct dlb_plot_recs recs, char *out, size_t n);
/* The same over n_ids ids (none shared by fewer than two). */
void dlb_plot_shared_words_of(const char *const *ids, size_t n_ids, char *out,
                              size_t n);
/* A row's label: `id` without the shared words (the whole id when
 * nothing else is left), then `tail` ("" for none), cut within
 * DLB_PLOT_LABEL_MAX characters so that the tail (a median) stays. */
void dlb_plot_row_label(const char *id, const char *shared, const char *tail,
                        char *out, size_t n);
/* The record's config[key] as text ("64", "bf16"), into buf; 0 if absent. */
int dlb_rec_config_text(const struct dlb_record *rec, const char *key,
                        char *buf, size_t n);

/* The plot kinds: each writes its files when the records support it and
 * returns DLB_OK when they do not. */
dlb_status dlb_plot_throughput(struct dlb_plotter *p, struct dlb_plot_recs recs,
                               const struct dlb_selection *selection, struct dlb_error *err);
/* A speedup bar's verdict, the speedup.dat column the colour follows:
 * the selection's words for the setting on the bar's workload. */
enum dlb_plot_verdict {
    DLB_PLOT_VERDICT_BASELINE, DLB_PLOT_VERDICT_PAYS_OFF, DLB_PLOT_VERDICT_NONE,
    DLB_PLOT_VERDICT_COSTS, DLB_PLOT_VERDICT_DOUBTFUL
};
long dlb_plot_verdict_colour(enum dlb_plot_verdict v);

dlb_status dlb_plot_speedup(struct dlb_plotter *p, struct dlb_plot_recs recs,
                            const struct dlb_selection *selection, struct dlb_error *err);
dlb_status dlb_plot_pareto(struct dlb_plotter *p, struct dlb_plot_recs recs,
                           const struct dlb_selection *selection, struct dlb_error *err);
dlb_status dlb_plot_scaling(struct dlb_plotter *p, struct dlb_plot_recs recs,
                            const char *axis, struct dlb_error *err);
dlb_status dlb_plot_steps(struct dlb_plotter *p, struct dlb_plot_recs recs,
                          struct dlb_error *err);
/* runs: results documents in time order (see cmd_history.c). */
dlb_status dlb_plot_trend(struct dlb_plotter *p, const struct dlb_results *runs,
                          size_t n_runs, struct dlb_error *err);

#endif
