/* libFuzzer harness: the files `dlbench compare` and `--resume` read.
 * The input is read as a journal (core/journal.c) and as a results.json
 * (core/results.c); what is accepted is used as the commands use it: the
 * journal's records rendered as CSV and a table, the results compared
 * with themselves (core/compare.c) and printed in every format. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compare.h"
#include "fuzz_file.h"
#include "results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_file f;
    if (fuzz_file_open(&f, data, size) != 0)
        return 0;
    struct dlb_error err = {""};
    json_t *recs = NULL;
    int torn = 0;
    if (dlb_journal_read(f.path, &recs, &torn, &err) == DLB_OK) {
        dlb_results_print(devnull(), DLB_FORMAT_CSV, NULL, recs);
        dlb_results_print(devnull(), DLB_FORMAT_TABLE, NULL, recs);
        json_decref(recs);
    }
    json_t *doc = NULL;
    if (dlb_results_read(f.path, &doc, &err) == DLB_OK) {
        struct dlb_compare_opts o = {DLB_COMPARE_THRESHOLD, DLB_COMPARE_ALPHA, 0};
        for (o.normalize = 0; o.normalize <= 1; o.normalize++) {
            json_t *cmp = NULL;
            if (dlb_compare(doc, "base", doc, "new", &o, &cmp, &err) == DLB_OK) {
                dlb_compare_print(devnull(), DLB_COMPARE_TABLE, cmp);
                dlb_compare_print(devnull(), DLB_COMPARE_MARKDOWN, cmp);
                dlb_compare_print(devnull(), DLB_COMPARE_JSON, cmp);
                json_decref(cmp);
            }
        }
        dlb_results_print(devnull(), DLB_FORMAT_TABLE, json_object_get(doc, "context"),
                          json_object_get(doc, "records"));
        json_decref(doc);
    }
    fuzz_file_close(&f);
    return 0;
}
