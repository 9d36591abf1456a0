/* results.json and results.csv: the versioned files a run leaves behind,
 * written so that a reader sees either the old file or the whole new one. */
#define _POSIX_C_SOURCE 200809L

#include "results/results.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCHEMA_NAME DLB_RESULTS_SCHEMA_NAME

json_t *dlb_results_document(json_t *context, json_t *records)
{
    json_t *ctx = context ? json_incref(context) : json_object();
    json_t *recs = records ? json_incref(records) : json_array();
    return json_pack("{s:s, s:i, s:o, s:o}", "schema", SCHEMA_NAME,
                     "schema_version", DLB_RESULTS_SCHEMA_VERSION,
                     "context", ctx, "records", recs);
}

typedef int (*emit_fn)(FILE *f, void *arg);

static int emit_json(FILE *f, void *doc)
{
    if (json_dumpf(doc, f, JSON_INDENT(2)) != 0)
        return -1;
    return fputc('\n', f) == EOF ? -1 : 0;
}

static int emit_csv(FILE *f, void *records)
{
    dlb_results_csv(f, records);
    return 0; /* stdio errors show in ferror() */
}

/* Write DIR/NAME through DIR/.NAME.tmp: fsync the data, rename over the old
 * name (atomic on POSIX), then fsync the directory so the rename lasts. */
static dlb_status write_atomic(const char *dir, const char *name, emit_fn emit,
                               void *arg, struct dlb_error *err)
{
    size_t n = strlen(dir) + strlen(name) + 8;
    char *tmp = malloc(n), *final = malloc(n);
    dlb_status s = DLB_OK;
    if (!tmp || !final) {
        s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory writing %s", name);
        goto out;
    }
    snprintf(tmp, n, "%s/.%s.tmp", dir, name);
    snprintf(final, n, "%s/%s", dir, name);

    FILE *f = fopen(tmp, "w");
    if (!f) {
        s = dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", tmp,
                       strerror(errno));
        goto out;
    }
    errno = 0; /* stdio may fail without setting it */
    int bad = emit(f, arg) != 0;
    bad = bad || fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
    int e = errno ? errno : EIO;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        s = dlb_errorf(err, DLB_ERR_IO, "cannot write %s: %s", tmp,
                       strerror(e));
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, final) != 0) {
        s = dlb_errorf(err, DLB_ERR_IO, "cannot rename %s to %s: %s", tmp,
                       final, strerror(errno));
        unlink(tmp);
        goto out;
    }
    s = dlb_fsync_dir(dir, err);
out:
    free(tmp);
    free(final);
    return s;
}

dlb_status dlb_results_write(const char *dir, json_t *context, json_t *records,
                             struct dlb_error *err)
{
    return dlb_results_write_extra(dir, context, records, NULL, err);
}

dlb_status dlb_results_write_extra(const char *dir, json_t *context,
                                   json_t *records, json_t *extra,
                                   struct dlb_error *err)
{
    if (!json_is_array(records))
        return dlb_errorf(err, DLB_ERR_INTERNAL,
                          "results for %s: records is not an array", dir);
    /* Never write a file that dlb_results_read would refuse. */
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec) {
        char where[512];
        snprintf(where, sizeof where, "results for %s: records[%zu]", dir, i);
        if (dlb_record_validate(rec, where, err) != DLB_OK)
            return DLB_ERR_INTERNAL;
    }
    json_t *doc = dlb_results_document(context, records);
    if (!doc)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory writing results");
    /* update_new would let a member of `extra` replace a required one */
    if (extra)
        json_object_update_missing(doc, extra);
    dlb_status s = write_atomic(dir, "results.json", emit_json, doc, err);
    json_decref(doc);
    if (s == DLB_OK)
        s = write_atomic(dir, "results.csv", emit_csv, records, err);
    return s;
}

static dlb_status check_document(const char *path, json_t *root,
                                 struct dlb_error *err)
{
    if (!json_is_object(root))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: not a dlbench results file "
                          "(the top level is not an object)", path);
    const char *schema = json_string_value(json_object_get(root, "schema"));
    if (!schema || strcmp(schema, SCHEMA_NAME) != 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: not a dlbench results file "
                          "(\"schema\" is not \"%s\")", path, SCHEMA_NAME);
    json_t *v = json_object_get(root, "schema_version");
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: \"schema_version\" must be "
                          "a positive integer", path);
    if (json_integer_value(v) > DLB_RESULTS_SCHEMA_VERSION)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: schema_version %" JSON_INTEGER_FORMAT
                          " is newer than this dlbench understands (%d); "
                          "read it with a newer dlbench", path,
                          json_integer_value(v), DLB_RESULTS_SCHEMA_VERSION);
    if (!json_is_object(json_object_get(root, "context")))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: \"context\" is missing or "
                          "not an object", path);
    json_t *recs = json_object_get(root, "records");
    if (!json_is_array(recs))
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: \"records\" is missing or "
                          "not an array", path);
    size_t i;
    json_t *rec;
    json_array_foreach(recs, i, rec) {
        char where[512];
        snprintf(where, sizeof where, "%s: records[%zu]", path, i);
        /* the typed reader: a member of the wrong type is refused here,
         * naming it, rather than read as 0 by a later stage */
        dlb_status s = dlb_record_validate(rec, where, err);
        if (s != DLB_OK)
            return s;
    }
    return DLB_OK;
}

dlb_status dlb_results_read(const char *path, json_t **root,
                            struct dlb_error *err)
{
    json_error_t jerr;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) {
        if (jerr.line < 1)
            return dlb_errorf(err, DLB_ERR_IO, "cannot read %s: %s", path,
                              jerr.text);
        return dlb_errorf(err, DLB_ERR_INPUT, "%s:%d:%d: not valid JSON: %s",
                          path, jerr.line, jerr.column, jerr.text);
    }
    dlb_status s = check_document(path, doc, err);
    if (s != DLB_OK) {
        json_decref(doc);
        return s;
    }
    *root = doc;
    return DLB_OK;
}

/* ---- CSV: a header row, then one row per record, lines ending in "\n"
 * (friendlier to awk and cut than RFC 4180's "\r\n"; spreadsheets read
 * both). The column names are the JSON paths of
 * the values (stats.median, config.batch, metrics.accuracy ...), so the
 * units are those of doc/results-schema.md. */

static const char *const fixed_columns[] = {
    "index", "id", "status", "reason",
    "stats.n", "stats.median", "stats.mean", "stats.stddev", "stats.cv",
    "stats.min", "stats.max", "stats.p5", "stats.p95", "stats.p99",
    "stats.ci_lo", "stats.ci_hi", "stats.ci_rel_halfwidth",
    "throughput.median", "throughput.ci_lo", "throughput.ci_hi",
    "measure.converged", "measure.warmup_steps", "measure.warmup_s",
    "measure.measure_s", "measure.samples_per_step", "measure.flops_per_step",
    "measure.timer_overhead_s", "wall_s",
};

/* RFC 4180: quote when the field holds a separator, a quote, a line break
 * or edge spaces a spreadsheet would strip. */
static void csv_field(FILE *f, const char *s)
{
    size_t n = strlen(s);
    if (!strpbrk(s, ",\"\r\n") && !(n && (s[0] == ' ' || s[n - 1] == ' '))) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The shortest of %.15g..%.17g that reads back as the same double: exact,
 * without the 0.10000000000000001 noise. */
static void csv_real(FILE *f, double x)
{
    char buf[40];
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    fputs(buf, f);
}

static void csv_value(FILE *f, json_t *v)
{
    if (json_is_string(v)) {
        csv_field(f, json_string_value(v));
    } else if (json_is_integer(v)) {
        fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else if (json_is_real(v)) {
        csv_real(f, json_real_value(v));
    } else if (json_is_boolean(v)) {
        fputs(json_is_true(v) ? "true" : "false", f);
    } else if (json_is_object(v) || json_is_array(v)) {
        char *s = json_dumps(v, JSON_COMPACT);
        if (s)
            csv_field(f, s);
        free(s);
    } /* null or absent: empty cell */
}

/* A header cell ",PREFIXKEY", quoted as one field when it needs it. */
static void csv_name(FILE *f, const char *prefix, const char *key)
{
    size_t n = strlen(prefix) + strlen(key) + 1;
    char *name = malloc(n);
    fputc(',', f);
    if (!name)
        return;
    snprintf(name, n, "%s%s", prefix, key);
    csv_field(f, name);
    free(name);
}

/* "stats.median" -> rec.stats.median (one level of nesting at most). */
static json_t *lookup(json_t *rec, const char *path)
{
    const char *dot = strchr(path, '.');
    if (!dot)
        return json_object_get(rec, path);
    char head[32];
    size_t n = (size_t)(dot - path);
    if (n >= sizeof head)
        return NULL;
    memcpy(head, path, n);
    head[n] = '\0';
    return json_object_get(json_object_get(rec, head), dot + 1);
}

/* The union of the keys of rec[member] over all records, in order of
 * first appearance (a JSON object serves as an ordered set). */
static json_t *key_union(json_t *records, const char *member)
{
    json_t *keys = json_object();
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec) {
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(rec, member), k, v)
            json_object_set_new(keys, k, json_null());
    }
    return keys;
}

/* The inference scenarios' columns, after the fixed ones, when any record
 * ran one: scenario.NAME is the member's NAME, scenario.figure its
 * figure's value and scenario.unit its unit, scenario.pNN its latency. */
static const char *const scenario_columns[][3] = {
    {"scenario.name", "name", NULL}, {"scenario.figure", "figure", "value"},
    {"scenario.unit", "figure", "unit"}, {"scenario.valid", "valid", NULL},
    {"scenario.qps", "qps", NULL}, {"scenario.p50", "latency_s", "p50"},
    {"scenario.p90", "latency_s", "p90"}, {"scenario.p99", "latency_s", "p99"},
};
#define N_SCENARIO_COLUMNS (sizeof scenario_columns / sizeof *scenario_columns)

static int any_scenario(json_t *records)
{
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec)
        if (json_is_object(json_object_get(rec, "scenario")))
            return 1;
    return 0;
}

static void scenario_cells(FILE *f, json_t *rec)
{
    json_t *s = json_object_get(rec, "scenario");
    for (size_t c = 0; c < N_SCENARIO_COLUMNS; c++) {
        json_t *v = json_object_get(s, scenario_columns[c][1]);
        if (scenario_columns[c][2])
            v = json_object_get(v, scenario_columns[c][2]);
        fputc(',', f);
        csv_value(f, v);
    }
}

void dlb_results_csv(FILE *f, json_t *records)
{
    int scen = any_scenario(records);
    size_t nfixed = sizeof fixed_columns / sizeof *fixed_columns;
    json_t *config = key_union(records, "config");
    json_t *metrics = key_union(records, "metrics");
    const char *k;
    json_t *v;

    for (size_t c = 0; c < nfixed; c++)
        fprintf(f, "%s%s", c ? "," : "", fixed_columns[c]);
    for (size_t c = 0; scen && c < N_SCENARIO_COLUMNS; c++)
        fprintf(f, ",%s", scenario_columns[c][0]);
    json_object_foreach(config, k, v)
        csv_name(f, "config.", k);
    json_object_foreach(metrics, k, v)
        csv_name(f, "metrics.", k);
    fputc('\n', f);

    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec) {
        for (size_t c = 0; c < nfixed; c++) {
            if (c)
                fputc(',', f);
            csv_value(f, lookup(rec, fixed_columns[c]));
        }
        if (scen)
            scenario_cells(f, rec);
        json_t *cfg = json_object_get(rec, "config");
        json_object_foreach(config, k, v) {
            fputc(',', f);
            csv_value(f, json_object_get(cfg, k));
        }
        json_t *met = json_object_get(rec, "metrics");
        json_object_foreach(metrics, k, v) {
            fputc(',', f);
            csv_value(f, json_object_get(json_object_get(met, k), "value"));
        }
        fputc('\n', f);
    }
    json_decref(config);
    json_decref(metrics);
}
