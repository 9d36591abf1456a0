/* libFuzzer harness: the files `dlbench compare` and `--resume` read.
 * The input is read as a journal (core/run/journal.c) and as a results.json
 * (core/results/results.c); what is accepted is used as the commands use it: the
 * journal's records rendered as CSV and a table, the results compared
 * (core/compare/compare.c) with themselves and with a good run both ways, and
 * printed in every format. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compare/compare.h"
#include "fuzz_file.h"
#include "results/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull(void);

/* A good run of two configurations, the other side of the comparisons. */
static const char good_json[] =
    "{\"schema\": \"dlbench-results\", \"schema_version\": 1, \"context\": "
    "{\"host\": \"a\", \"cpu\": {\"model\": \"x\"}, \"suite\": {\"crc32\": \"0\"}}, "
    "\"selection\": {\"baseline\": \"w=1\"}, \"records\": ["
    "{\"index\": 0, \"id\": \"w=1\", \"status\": \"ok\", "
    "\"samples\": [0.001, 0.0011, 0.0012, 0.00105, 0.00115]},"
    "{\"index\": 1, \"id\": \"w=2\", \"status\": \"ok\", "
    "\"samples\": [0.002, 0.0021, 0.0022], \"stats\": {\"median\": 0.0021}}]}";

static void compare_all(json_t *base, json_t *nw)
{
    struct dlb_compare_opts o = {DLB_COMPARE_THRESHOLD, DLB_COMPARE_ALPHA, 0,
                                  DLB_COMPARE_ACCURACY_THRESHOLD};
    struct dlb_error err = {""};
    for (o.normalize = 0; o.normalize <= 1; o.normalize++) {
        struct dlb_comparison cmp;
        if (dlb_compare(base, "base", nw, "new", &o, &cmp, &err) == DLB_OK) {
            dlb_compare_print(devnull(), DLB_COMPARE_TABLE, &cmp);
            dlb_compare_print(devnull(), DLB_COMPARE_MARKDOWN, &cmp);
            dlb_compare_print(devnull(), DLB_COMPARE_JSON, &cmp);
            dlb_comparison_free(&cmp);
        }
    }
}

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
        json_error_t jerr;
        json_t *good = json_loads(good_json, 0, &jerr);
        if (!good)
            __builtin_trap(); /* the harness's own document must parse */
        compare_all(doc, doc);
        compare_all(doc, good);
        compare_all(good, doc);
        json_decref(good);
        dlb_results_print(devnull(), DLB_FORMAT_TABLE, json_object_get(doc, "context"),
                          json_object_get(doc, "records"));
        json_decref(doc);
    }
    fuzz_file_close(&f);
    return 0;
}
