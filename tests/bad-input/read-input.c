/* read-input KIND FILE: run one of dlbench's file readers on FILE, as the
 * harness would, and report as dlbench does: nothing and status 0 when the
 * file is good; "read-input: MESSAGE" and status 2 when the reader refuses
 * it as bad input (3 for any other status, which a bad file must not get).
 *
 * For the bad-input catalogue's kinds that no command reads directly:
 * safetensors checkpoints only reach dlbench as its reference-weights
 * cache, where a refused file is trained again with a warning. KIND is
 * safetensors, idx-images, idx-labels, model, journal or results.
 *
 * KIND round-trip reads the records of a journal (FILE ends in .jsonl) or
 * of a results.json through the typed reader, writes each again and
 * fails (status 3) unless every one comes back the same (record.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "data/idx.h"
#include "model/model_file.h"
#include "ckpt/safetensors.h"
#include "results/results.h"

/* Each record of `records` read and written again must be json_equal to
 * itself. */
static dlb_status round_trip(const char *path, json_t *records,
                             struct dlb_error *err)
{
    struct dlb_record *recs;
    size_t n;
    dlb_status st = dlb_records_read(records, path, &recs, &n, err);
    if (st != DLB_OK)
        return st;
    for (size_t i = 0; st == DLB_OK && i < n; i++) {
        json_t *back = dlb_record_write(&recs[i]);
        if (!json_equal(back, recs[i].json))
            st = dlb_errorf(err, DLB_ERR_INTERNAL, "%s: records[%zu] (%s) is not "
                            "the same after reading and writing it", path, i,
                            recs[i].id);
        json_decref(back);
    }
    dlb_records_free(recs, n);
    return st;
}

static dlb_status read_one(const char *kind, const char *path,
                           struct dlb_error *err)
{
    dlb_status st;
    if (!strcmp(kind, "safetensors")) {
        struct dlb_st_file f;
        if ((st = dlb_st_read(path, &f, err)) == DLB_OK)
            dlb_st_free(&f);
    } else if (!strcmp(kind, "idx-images") || !strcmp(kind, "idx-labels")) {
        struct dlb_idx x;
        if ((st = dlb_idx_read(path, kind[4] == 'i' ? 3 : 1, &x, err)) == DLB_OK)
            dlb_idx_free(&x);
    } else if (!strcmp(kind, "model")) {
        struct dlb_model_spec *m = NULL;
        if ((st = dlb_model_file_load(path, &m, err)) == DLB_OK)
            dlb_model_spec_free(m);
    } else if (!strcmp(kind, "journal")) {
        json_t *recs = NULL;
        int torn = 0;
        if ((st = dlb_journal_read(path, &recs, &torn, err)) == DLB_OK)
            json_decref(recs);
    } else if (!strcmp(kind, "results")) {
        json_t *doc = NULL;
        char *file = NULL;
        if ((st = dlb_compare_load(path, &doc, &file, err)) == DLB_OK) {
            json_decref(doc);
            free(file);
        }
    } else if (!strcmp(kind, "round-trip")) {
        json_t *doc = NULL;
        int torn = 0;
        size_t len = strlen(path);
        int journal = len > 6 && !strcmp(path + len - 6, ".jsonl");
        st = journal ? dlb_journal_read(path, &doc, &torn, err)
                     : dlb_results_read(path, &doc, err);
        if (st == DLB_OK)
            st = round_trip(path, journal ? doc : json_object_get(doc, "records"),
                            err);
        json_decref(doc);
    } else {
        return dlb_errorf(err, DLB_ERR_INTERNAL, "unknown kind '%s'", kind);
    }
    return st;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: read-input safetensors|idx-images|idx-labels|"
                        "model|journal|results|round-trip FILE\n");
        return 2;
    }
    struct dlb_error err = {""};
    dlb_status st = read_one(argv[1], argv[2], &err);
    if (st == DLB_OK)
        return 0;
    fprintf(stderr, "read-input: %s\n", err.msg);
    return st == DLB_ERR_INPUT || st == DLB_ERR_IO ? 2 : 3;
}
