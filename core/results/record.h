/* One configuration's result as a typed record: what the child measured,
 * what the parent added, and how the selection saw it. Every stage that
 * reads records (report, compare, history, select, plot, merge) reads this
 * struct, never the JSON keys, so a member renamed in one place cannot
 * silently read as 0 in another.
 *
 * The JSON form and the results.json document around it are described in
 * doc/results-schema.md; the schema's name and version live here and only
 * here. dlb_record_read is the one JSON reader, dlb_record_write the one
 * writer: a record read and written again is json_equal to the original,
 * members this struct does not model (device, controls, world, dataset
 * ...) kept
 * as they were. */
#ifndef DLB_CORE_RECORD_H
#define DLB_CORE_RECORD_H

#include <stddef.h>
#include <jansson.h>
#include "util/error.h"

#define DLB_RESULTS_SCHEMA_NAME "dlbench-results"
#define DLB_RESULTS_SCHEMA_VERSION 1

enum dlb_rec_status {
    DLB_REC_OK, DLB_REC_SKIPPED, DLB_REC_FAILED, DLB_REC_CRASHED,
    DLB_REC_TIMEOUT, DLB_REC_OOM,
};

/* A figure that is absent (or null) is NAN; a count that is absent is -1.
 * Test with isnan() or dlb_rec_has(): 0 is a real value. */

struct dlb_rec_stats {          /* seconds per step */
    long long n;
    double median, mean, stddev, cv, min, max, p5, p95, p99;
    double ci_lo, ci_hi, ci_rel_halfwidth;
    int ci_exact;               /* -1 when absent */
    struct {                    /* with repetitions: the spread between
                                 * processes the interval covers (repeat.h) */
        double sd_log, df, halfwidth_log;
    } ci_processes;
};

struct dlb_rec_throughput {     /* samples/s */
    double median, ci_lo, ci_hi;
};

struct dlb_rec_measure {
    const char *clock;          /* NULL when absent (monotonic) */
    const char *peak_unit;      /* the unit peak_share is of; NULL when absent */
    const char *fewer_flops;    /* the fast convolution algorithm some of the
                                   step's convolutions ran on ("winograd"):
                                   gflops and the shares are effective
                                   figures then; NULL when absent */
    int converged, settled;     /* -1 when absent */
    double steps_per_sample, warmup_steps, warmup_s, measure_s;
    double samples_per_step, flops_per_step, timer_overhead_s;
    double peak_measured_at;    /* Unix time of the roofline probe the
                                   shares are against; NAN when absent */
};

struct dlb_rec_metric {         /* name and unit owned by the record */
    char *name;
    double value;               /* NAN when the value is null */
    char *unit;                 /* NULL when absent */
};

struct dlb_rec_vs_baseline {    /* baseline_id NULL: the member is absent */
    const char *baseline_id;
    double speedup, speedup_ci_lo, speedup_ci_hi, accuracy_drop;
    double workers, scaling_efficiency;
};

struct dlb_rec_system {         /* what the system did while sampling */
    const char *doubtful;       /* NULL: not doubtful */
    double minor_faults, major_faults, voluntary_switches;
    double involuntary_switches, involuntary_per_s, steal_share;
    double cpu_per_wall, wall_s;
};

struct dlb_record {
    /* The JSON the record was read from (a reference the record holds),
     * NULL for one built in memory. Strings below point into it or into
     * memory the builder keeps alive until the record is written. */
    json_t *json;

    long long index;
    const char *id;
    enum dlb_rec_status status;
    const char *reason;         /* NULL when absent */
    json_t *config;             /* the settings; read through dlb_record_setting */

    struct dlb_rec_stats stats;
    struct dlb_rec_throughput throughput;
    double *samples;            /* owned; NULL with n_samples 0 when absent */
    size_t n_samples;
    int has_samples;
    struct dlb_rec_measure measure;
    int has_measure;            /* the member is there (an object) */
    struct dlb_rec_metric *metrics; /* owned array, in the record's order */
    size_t n_metrics;
    int has_metrics;            /* the member is there, even empty */
    double wall_s;

    long long round, rep, pass_position; /* -1 when absent */
    double budget;
    struct dlb_rec_vs_baseline vs_baseline;
    struct dlb_rec_system system;
    int has_system;

    /* Members read as they are (borrowed from json; NULL when absent).
     * The writer writes repetitions from here. */
    json_t *repetitions, *device, *controls, *world, *dataset;
    json_t *system_json;        /* "system" as read, to copy whole; the
                                 * writer writes `system` above */
    /* Read from repetitions for those who compute with them (owned; NAN
     * where a process has no median). */
    double *rep_medians;
    size_t n_reps;
};

/* Check that `rec` is a record: an object with an integer "index", a
 * string "id" and a "status" dlb_rec_status_parse knows. `where`
 * ("FILE:LINE", "FILE: records[3]") starts the message. Also for records a
 * child hands back, before they reach the journal. dlb_record_read
 * checks this first. */
dlb_status dlb_record_check(const json_t *rec, const char *where,
                            struct dlb_error *err);

/* dlb_record_check, then the type of every member the struct models: what
 * dlb_record_read accepts. For records on their way into a file that is
 * read back (the journal, results.json). */
dlb_status dlb_record_validate(json_t *rec, const char *where,
                               struct dlb_error *err);

/* A record with nothing in it: every figure absent, status ok, index -1. */
void dlb_record_init(struct dlb_record *r);

struct dlb_stats;
/* The statistics of one process's samples (stats/stats.h) as a record's;
 * figures that are not finite are absent. */
void dlb_rec_stats_set(struct dlb_rec_stats *out, const struct dlb_stats *st);

/* Add the metrics of `metrics`, in the record's form ({"NAME": {"value",
 * "unit"}}, as plugins report them), to `r`; a value that is not a number
 * is an error naming the metric. */
dlb_status dlb_record_set_metrics_json(struct dlb_record *r, json_t *metrics,
                                       struct dlb_error *err);

/* Read `json` into `out` (initialised here). An error names `where`
 * ("FILE: records[3]"; NULL: "record"), the record's id and the member
 * with the wrong type or value. On success `out` holds a reference to
 * `json`; free with dlb_record_free. */
dlb_status dlb_record_read(json_t *json, const char *where,
                           struct dlb_record *out, struct dlb_error *err);

/* The same for a JSON array of records: *out is a malloc'ed array of *n. */
dlb_status dlb_records_read(json_t *array, const char *where,
                            struct dlb_record **out, size_t *n,
                            struct dlb_error *err);

/* The JSON form of `r`, a new object: r->json's members in their order
 * with every modelled member set from the struct (a member whose figure
 * equals the JSON's keeps its JSON form), then new members appended. */
json_t *dlb_record_write(const struct dlb_record *r);

/* The same written over `dst` (the object r was read from, typically), so
 * that those who hold `dst` see the change: members keep their places,
 * new ones come last, dropped ones leave. */
dlb_status dlb_record_store(const struct dlb_record *r, json_t *dst);

void dlb_record_free(struct dlb_record *r);
void dlb_records_free(struct dlb_record *recs, size_t n);

/* "ok", "skipped" ...; dlb_rec_status_parse returns -1 for an unknown name. */
const char *dlb_rec_status_name(enum dlb_rec_status s);
int dlb_rec_status_parse(const char *name);

/* A record's identity in its JSON form, without reading it whole: for
 * scans over many records (a journal's, a round's), for the slim records a
 * sweep keeps, and for a child's record before it is checked. Index -1,
 * id NULL and status -1 when absent or not of their type. */
long long dlb_rec_index_of(const json_t *rec);
const char *dlb_rec_id_of(const json_t *rec);
int dlb_rec_status_of(const json_t *rec);
const char *dlb_rec_reason_of(const json_t *rec);
/* Set the status and the reason (NULL: left as it is) of a record in its
 * JSON form, one the runner is still putting together (it may have no
 * index yet, which dlb_record_read requires). */
dlb_status dlb_rec_set_outcome(json_t *rec, enum dlb_rec_status st,
                               const char *reason);
/* Whether both are records of one configuration: same index and id. */
int dlb_rec_same_config(const json_t *a, const json_t *b);
/* The slim form of a record: index, id and status, and rep when
 * `with_rep` (what a sweep needs of a run until its end). A new object. */
json_t *dlb_record_slim(const json_t *rec, int with_rep);

/* Whether a figure is present (not NAN). */
int dlb_rec_has(double v);

/* The metric named `name`, NULL when the record has none of that name. */
const struct dlb_rec_metric *dlb_record_metric(const struct dlb_record *r,
                                               const char *name);
/* Its value in *v: 1 when present with a number, 0 when absent or null
 * (*v untouched), so that a renamed metric never reads as 0. */
int dlb_record_metric_value(const struct dlb_record *r, const char *name,
                            double *v);
/* Add or replace a metric (name and unit are copied). */
dlb_status dlb_record_set_metric(struct dlb_record *r, const char *name,
                                 double value, const char *unit);

/* A setting of the configuration ("batch", "amp.precision"): NULL when the
 * record's config has no such key. The typed forms return 1 when present
 * with that type, 0 otherwise (*v untouched). */
json_t *dlb_record_setting(const struct dlb_record *r, const char *key);
int dlb_record_setting_num(const struct dlb_record *r, const char *key,
                           double *v);
const char *dlb_record_setting_str(const struct dlb_record *r,
                                   const char *key);

/* A results.json document, its records typed. */
struct dlb_results {
    json_t *root;               /* the whole document */
    json_t *context, *selection;/* borrowed; selection NULL when absent */
    struct dlb_record *records;
    size_t n;
};

/* Read every record of `root`, a document dlb_results_read returned (it
 * checked the schema and version); `path` names the file in messages.
 * Takes a reference to `root`. */
dlb_status dlb_results_parse(json_t *root, const char *path,
                             struct dlb_results *out, struct dlb_error *err);
void dlb_results_free(struct dlb_results *res);

#endif
