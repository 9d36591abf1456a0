/* `dlbench compare`'s result, the "dlbench-compare" document (its members
 * are listed in compare/compare.h and doc/results-schema.md), as a typed
 * struct: compare/ builds the document, and the console table, the
 * markdown and `dlbench compare`'s exit status read it through
 * dlb_comparison_read, its one reader. Strings are borrowed from the
 * document; absent figures are NAN, absent counts 0. */
#ifndef DLB_CORE_COMPARISON_H
#define DLB_CORE_COMPARISON_H

#include <stddef.h>
#include <jansson.h>
#include "util/error.h"

#define DLB_COMPARE_SCHEMA_NAME "dlbench-compare"
#define DLB_COMPARE_SCHEMA_VERSION 1

struct dlb_cmp_row {            /* one configuration */
    const char *id, *verdict, *test, *note;   /* NULL when absent */
    const char *doubtful_why;   /* either record doubtful: which, why */
    double base_median_s, new_median_s;
    double ratio, ratio_ci_lo, ratio_ci_hi, p, resolution;
    long long base_n, new_n;    /* -1 when absent */
    int reference;              /* the normalizing configuration */
};

struct dlb_comparison {
    json_t *json;               /* the document (a reference) */
    const char *base, *new_file, *normalized_by;
    double threshold, alpha, geomean_ratio;
    long long compared;
    double resolution_median, resolution_max; /* NAN: no row was judged */
    long long faster, slower, same, added, missing; /* the counts */
    const char **warnings;
    size_t n_warnings;
    struct dlb_cmp_row *rows;   /* "configs", in their order */
    size_t n_rows;
};

/* Read `doc` into `out`; a member of the wrong type is an error naming
 * it. Free with dlb_comparison_free. */
dlb_status dlb_comparison_read(json_t *doc, struct dlb_comparison *out,
                               struct dlb_error *err);
void dlb_comparison_free(struct dlb_comparison *c);

#endif
