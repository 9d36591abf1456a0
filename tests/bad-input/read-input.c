/* read-input KIND FILE: run one of dlbench's file readers on FILE, as the
 * harness would, and report as dlbench does: nothing and status 0 when the
 * file is good; "read-input: MESSAGE" and status 2 when the reader refuses
 * it as bad input (3 for any other status, which a bad file must not get).
 *
 * For the bad-input catalogue's kinds that no command reads directly:
 * safetensors checkpoints only reach dlbench as its reference-weights
 * cache, where a refused file is trained again with a warning. KIND is
 * safetensors, idx-images, idx-labels, model, journal or results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "data/idx.h"
#include "model/model_file.h"
#include "model/safetensors.h"
#include "results.h"

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
    } else {
        return dlb_errorf(err, DLB_ERR_INTERNAL, "unknown kind '%s'", kind);
    }
    return st;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: read-input safetensors|idx-images|idx-labels|"
                        "model|journal|results FILE\n");
        return 2;
    }
    struct dlb_error err = {""};
    dlb_status st = read_one(argv[1], argv[2], &err);
    if (st == DLB_OK)
        return 0;
    fprintf(stderr, "read-input: %s\n", err.msg);
    return st == DLB_ERR_INPUT || st == DLB_ERR_IO ? 2 : 3;
}
