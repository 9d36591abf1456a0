/* The console renderings of a run's records: an aligned table with a units
 * row (as nccl-tests prints), or the same JSON and CSV as the files. */
#define _POSIX_C_SOURCE 200809L

#include "results/results.h"
#include "scenario/scenario_json.h"
#include "util/figure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 13
#define CELL 64

struct column {
    const char *head, *unit;
    int left; /* text is left-aligned, numbers right-aligned */
};

/* Metrics with a column of their own when any record has them. */
static const struct featured {
    const char *metric, *head, *unit;
} featured[] = {
    {"accuracy", "accuracy", "%"},
    {"gflops", "gflops", "GFLOP/s"},
    {"peak_share", "peak", "%"},
};
#define N_FEATURED (sizeof featured / sizeof featured[0])

struct table {
    struct column cols[MAX_COLS];
    int ncols;
    int shown[N_FEATURED];  /* which featured metrics have a column */
    int scenario;           /* the scenarios' figures have a column */
};

/* Width as the terminal sees it: UTF-8 continuation bytes take no column
 * ("ci±" is three columns wide, four bytes long). */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void pad(FILE *f, size_t n)
{
    while (n--)
        fputc(' ', f);
}

/* Ids and reasons come from suites and plugins: keep a row on one line. */
static void put_clean(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
}

/* "-" for an absent figure (NAN), else x * scale. */
static void fmt_figure(char *b, double x, double scale, int fixed2)
{
    if (isnan(x)) {
        strcpy(b, "-");
        return;
    }
    x *= scale;
    if (fixed2)
        snprintf(b, CELL, "%.2f", x);
    else
        dlb_figure_text(b, CELL, x);
}

static const char *metric_unit(const struct dlb_record *recs, size_t n,
                               const char *name)
{
    for (size_t i = 0; i < n; i++) {
        const struct dlb_rec_metric *m = dlb_record_metric(&recs[i], name);
        if (m)
            return m->unit;
    }
    return NULL;
}

static void table_init(struct table *t, const struct dlb_record *recs, size_t n)
{
    static const struct column base[] = {
        {"#", "", 0},       {"config", "", 1},    {"status", "", 1},
        {"median", "ms", 0}, {"ci\u00b1", "%", 0}, {"p95", "ms", 0},
        {"cv", "%", 0},     {"throughput", "samples/s", 0},
    };
    t->ncols = (int)(sizeof base / sizeof *base);
    memcpy(t->cols, base, sizeof base);
    for (size_t f = 0; f < N_FEATURED; f++) {
        t->shown[f] = 0;
        for (size_t i = 0; i < n; i++)
            t->shown[f] |= dlb_record_metric(&recs[i], featured[f].metric) != NULL;
        if (t->shown[f]) {
            const char *u = metric_unit(recs, n, featured[f].metric);
            t->cols[t->ncols++] = (struct column){featured[f].head,
                                                  u && *u ? u : featured[f].unit, 0};
        }
    }
    /* An inference scenario's figure, with its unit in the cell: each
     * scenario has its own (p90 ms, samples/s, queries/s). */
    struct dlb_scen_summary sum;
    t->scenario = 0;
    for (size_t i = 0; i < n; i++)
        t->scenario |= dlb_scen_summary_read(recs[i].json, &sum) == 0;
    if (t->scenario)
        t->cols[t->ncols++] = (struct column){"scenario", "", 1};
}

/* Whether featured figure f of an ok record is a FLOP rate over a fast
 * algorithm's time, starred with print_table's note under the table. */
static int starred(const struct dlb_record *rec, size_t f)
{
    return rec->status == DLB_REC_OK && rec->measure.fewer_flops &&
           strcmp(featured[f].metric, "accuracy") != 0 &&
           dlb_record_metric(rec, featured[f].metric) != NULL;
}

/* Fill the cells of one record. Returns the number of cells to align: all
 * of them for an ok record; for others the first three, since the reason
 * runs on from the status column. */
static int record_cells(const struct table *t, const struct dlb_record *rec,
                        char cells[MAX_COLS][CELL])
{
    snprintf(cells[0], CELL, "%lld", rec->index);
    snprintf(cells[1], CELL, "%s", "");   /* id: printed in full, not here */
    snprintf(cells[2], CELL, "%s", dlb_rec_status_name(rec->status));
    if (rec->status != DLB_REC_OK)
        return 3;
    fmt_figure(cells[3], rec->stats.median, 1e3, 0);
    fmt_figure(cells[4], rec->stats.ci_rel_halfwidth, 1e2, 1);
    fmt_figure(cells[5], rec->stats.p95, 1e3, 0);
    fmt_figure(cells[6], rec->stats.cv, 1e2, 1);
    fmt_figure(cells[7], rec->throughput.median, 1, 0);
    int c = 8;
    for (size_t f = 0; f < N_FEATURED; f++)
        if (t->shown[f]) {
            const struct dlb_rec_metric *m = dlb_record_metric(rec, featured[f].metric);
            fmt_figure(cells[c], m ? m->value : NAN, 1, 0);
            if (m && starred(rec, f))
                strcat(cells[c], "*");
            c++;
        }
    if (t->scenario) {
        struct dlb_scen_summary sum;
        if (dlb_scen_summary_read(rec->json, &sum) == 0)
            dlb_scen_summary_cell(&sum, cells[c], CELL);
        else
            strcpy(cells[c], "-");
        c++;
    }
    return c;
}

static void print_row(FILE *f, const struct table *t, const size_t *w,
                      const char *const *cells, int n)
{
    for (int c = 0; c < n; c++) {
        size_t cw = width(cells[c]);
        if (c)
            fputs("  ", f);
        if (!t->cols[c].left)
            pad(f, w[c] - cw);
        put_clean(f, cells[c]);
        if (t->cols[c].left && c + 1 < n)
            pad(f, w[c] - cw);
    }
}

static void print_table(FILE *f, const struct dlb_record *recs, size_t n_recs)
{
    struct table t;
    table_init(&t, recs, n_recs);
    size_t w[MAX_COLS];
    for (int c = 0; c < t.ncols; c++)
        w[c] = width(t.cols[c].head) > width(t.cols[c].unit)
                   ? width(t.cols[c].head) : width(t.cols[c].unit);

    char cells[MAX_COLS][CELL];
    for (size_t i = 0; i < n_recs; i++) {
        int n = record_cells(&t, &recs[i], cells);
        size_t idw = width(recs[i].id);
        if (idw > w[1])
            w[1] = idw;
        for (int c = 0; c < n; c++)
            if (c != 1 && width(cells[c]) > w[c])
                w[c] = width(cells[c]);
    }

    const char *head[MAX_COLS], *unit[MAX_COLS];
    for (int c = 0; c < t.ncols; c++) {
        head[c] = t.cols[c].head;
        unit[c] = t.cols[c].unit;
    }
    print_row(f, &t, w, head, t.ncols);
    fputc('\n', f);
    print_row(f, &t, w, unit, t.ncols);
    fputc('\n', f);

    for (size_t i = 0; i < n_recs; i++) {
        const struct dlb_record *rec = &recs[i];
        int n = record_cells(&t, rec, cells);
        const char *row[MAX_COLS];
        for (int c = 0; c < n; c++)
            row[c] = c == 1 ? rec->id : cells[c];
        print_row(f, &t, w, row, n);
        if (n < t.ncols) {
            /* Not measured: say why in the space the figures would take. */
            pad(f, w[2] - width(cells[2]) + 2);
            put_clean(f, rec->reason ? rec->reason : "(no reason given)");
        }
        fputc('\n', f);
    }
    /* As benchdnn counts them: the direct convolution's FLOPs, which a
     * Winograd or FFT kernel does not all do. */
    const char *algo = NULL;
    for (size_t i = 0; i < n_recs && !algo; i++)
        for (size_t k = 0; k < N_FEATURED && !algo; k++)
            if (t.shown[k] && starred(&recs[i], k))
                algo = recs[i].measure.fewer_flops;
    if (algo)
        fprintf(f, "* effective figures: some convolutions ran on %s kernels, "
                   "which multiply less than the direct convolution whose "
                   "FLOPs are counted, so a share of peak can pass 100%%\n",
                algo);
}

void dlb_results_print(FILE *f, enum dlb_format fmt, json_t *context,
                       json_t *records)
{
    switch (fmt) {
    case DLB_FORMAT_TABLE: {
        struct dlb_record *recs;
        size_t n;
        struct dlb_error err;
        if (dlb_records_read(records, NULL, &recs, &n, &err) != DLB_OK) {
            fprintf(f, "%s\n", err.msg); /* never written by dlbench */
            break;
        }
        print_table(f, recs, n);
        dlb_records_free(recs, n);
        break;
    }
    case DLB_FORMAT_JSON: {
        json_t *doc = dlb_results_document(context, records);
        if (doc) {
            json_dumpf(doc, f, JSON_INDENT(2));
            fputc('\n', f);
        }
        json_decref(doc);
        break;
    }
    case DLB_FORMAT_CSV:
        dlb_results_csv(f, records);
        break;
    }
}
