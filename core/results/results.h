/* Run directories and result files: the journal (one JSON record per
 * finished configuration, fsync'ed at once), results.json (versioned, see
 * doc/results-schema.md), results.csv and the console table.
 *
 * A record is a JSON object (core/results/record.h reads and writes it typed):
 *   { "index": 3, "id": "batch=64 amp.precision=bf16",
 *     "config": { "batch": 64, "amp.precision": "bf16", ... },
 *     "status": "ok" | "skipped" | "failed" | "crashed" | "timeout" | "oom",
 *     "reason": "...",                       (absent when ok)
 *     "stats": { "n", "median", "mean", "stddev", "cv", "min", "max", "p5",
 *                "p95", "p99", "ci_lo", "ci_hi", "ci_rel_halfwidth" }  (s)
 *     "throughput": { "median", "ci_lo", "ci_hi" }  (samples/s)
 *     "samples": [ step seconds ... ],
 *     "measure": { "converged", "warmup_steps", "warmup_s", "measure_s",
 *                  "samples_per_step", "flops_per_step", "timer_overhead_s" },
 *     "metrics": { "name": { "value": 1.0, "unit": "count" } },
 *     "wall_s": 1.23 } */
#ifndef DLB_CORE_RESULTS_H
#define DLB_CORE_RESULTS_H

#include <stdio.h>
#include <jansson.h>
#include "util/error.h"
#include "results/record.h" /* the schema's name and version; the typed record */

/* Create `dir` (and missing parents). It is an error if `dir` exists and is
 * not empty, so that no earlier result is ever overwritten. */
dlb_status dlb_rundir_create(const char *dir, struct dlb_error *err);

/* Locks DIR for this process (DIR/.lock, held until exit), so that a second
 * run given the same directory stops at once with DLB_ERR_INPUT naming the
 * process that holds it. dlb_rundir_create takes it; --resume calls it. */
#define DLB_RUNDIR_LOCK ".lock"
dlb_status dlb_rundir_lock(const char *dir, struct dlb_error *err);

/* The first files of a run, in an empty DIR: suite.ini (a copy of
 * `suite_path`), then invocation.json (what --resume needs to rebuild the
 * plan), each written whole under a temporary name and renamed, then DIR
 * synced. A run killed at any moment leaves either no invocation.json
 * (nothing ran) or a complete pair. */
dlb_status dlb_rundir_setup(const char *dir, const char *suite_path,
                            json_t *invocation, struct dlb_error *err);

/* DIR/NAME holding `doc`, whole or not at all (a temporary name, synced,
 * renamed, the directory synced). */
dlb_status dlb_rundir_write_json(const char *dir, const char *name,
                                 json_t *doc, struct dlb_error *err);

/* For --resume DIR: DLB_ERR_INPUT, saying what to do, unless DIR is a run
 * directory whose set-up finished (see dlb_rundir_setup). */
dlb_status dlb_rundir_check_set_up(const char *dir, struct dlb_error *err);

/* The default run directory: <base>/<suite>/<UTC yyyymmddThhmmssZ>-<host>,
 * base being the results root ("results" when NULL or ""); malloc'ed. */
char *dlb_rundir_default(const char *base, const char *suite_name);

/* fsync the directory itself, so that a file created or renamed in it
 * survives a crash (the file's own fsync does not cover its name). */
dlb_status dlb_fsync_dir(const char *dir, struct dlb_error *err);

struct dlb_journal;
/* Open DIR/journal.jsonl for appending (created if absent). A torn last
 * line (see dlb_journal_read) is cut off first, so that the next record
 * starts on a line of its own; any other bad line is an error. */
dlb_status dlb_journal_open(const char *dir, struct dlb_journal **out,
                            struct dlb_error *err);
/* Append one record as a single line, then fflush and fsync. */
dlb_status dlb_journal_append(struct dlb_journal *j, json_t *record,
                              struct dlb_error *err);
/* The same without the fsync: once write() returned the record survives
 * dlbench being killed (it is in the kernel's page cache); only a crash of
 * the machine before dlb_journal_sync can lose it. A run writes each
 * record at once and syncs while the next configuration's process starts,
 * so the disk's latency is not added to the sweep's time. */
dlb_status dlb_journal_write(struct dlb_journal *j, json_t *record,
                             struct dlb_error *err);
/* fsync what dlb_journal_write left unsynced (nothing to do otherwise). A
 * failure is an error naming the journal, and nothing more is appended. */
dlb_status dlb_journal_sync(struct dlb_journal *j, struct dlb_error *err);
void dlb_journal_close(struct dlb_journal *j);

/* Read a journal. A torn last line (no newline at the end, or not JSON) is
 * dropped and *torn set to 1; any other bad line is an error naming the
 * file and line. *records is a new JSON array. */
dlb_status dlb_journal_read(const char *path, json_t **records, int *torn,
                            struct dlb_error *err);

/* A context member by its documented name ("cpu.model", "suite.name"):
 * the member of that name, else the nested path; NULL when absent. */
json_t *dlb_context_get(json_t *context, const char *name);

/* Write DIR/results.json (schema version, context, records) and
 * DIR/results.csv, each to a temporary name, fsync'ed, then renamed. */
dlb_status dlb_results_write(const char *dir, json_t *context, json_t *records,
                             struct dlb_error *err);

/* The same, with the members of `extra` (an object, may be NULL) added at
 * the top level of results.json, after the required ones ("selection"). */
dlb_status dlb_results_write_extra(const char *dir, json_t *context,
                                   json_t *records, json_t *extra,
                                   struct dlb_error *err);

/* Read and check a results.json (schema version, required members). */
dlb_status dlb_results_read(const char *path, json_t **root,
                            struct dlb_error *err);

/* The results.json document for `context` (NULL: empty) and `records`: a
 * new reference that shares both. */
json_t *dlb_results_document(json_t *context, json_t *records);

enum dlb_format { DLB_FORMAT_TABLE, DLB_FORMAT_JSON, DLB_FORMAT_CSV };

/* Render records to `f`: the table has a header row and a units row;
 * json is the same document as results.json; csv as results.csv. */
void dlb_results_print(FILE *f, enum dlb_format fmt, json_t *context,
                       json_t *records);

/* Write the CSV form (header row then one row per record). */
void dlb_results_csv(FILE *f, json_t *records);

/* The environment record: host, CPU model and flags, cores, memory, OS,
 * compiler and flags, dlbench version and git commit, library versions
 * (jansson, zlib, inih, oneDNN where built), load average, UTC time. The
 * caller adds suite members. */
json_t *dlb_context_collect(void);

#endif
