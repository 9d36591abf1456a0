/* `dlbench compare`'s result, the "dlbench-compare" document (its members
 * are listed in compare/compare.h and doc/results-schema.md), as a typed
 * struct: compare/ builds it, and the console table, the markdown and
 * `dlbench compare`'s exit status read it; dlb_comparison_write is the
 * one writer of its JSON (`--format json`). The struct owns its strings;
 * absent figures are NAN, absent strings NULL. */
#ifndef DLB_CORE_COMPARISON_H
#define DLB_CORE_COMPARISON_H

#include <stddef.h>
#include <jansson.h>
#include "util/strpool.h"

#define DLB_COMPARE_SCHEMA_NAME "dlbench-compare"
#define DLB_COMPARE_SCHEMA_VERSION 1

struct dlb_cmp_row {            /* one configuration */
    const char *id, *verdict, *note;   /* NULL when absent */
    const char *test;           /* "mann-whitney" or "welch": the row was
                                 * judged (ratio, p, counts); NULL when it
                                 * ran in one run only */
    const char *doubtful_why;   /* either record doubtful: which, why */
    double base_median_s, new_median_s;
    double ratio, ratio_ci_lo, ratio_ci_hi;
    double p;                   /* NAN: too few samples for a test (null) */
    double resolution;
    long long base_n, new_n;    /* -1 when absent */
    int reference;              /* the normalizing configuration */
    /* Accuracy, where both records scored it (compare_accuracy.c): the
     * two, new minus base (points) with its 95% half-width over the seeds
     * both trained from and the test images; accuracy_verdict "lower",
     * "higher", "same", or "not judged" (one seed: the training's noise
     * is unmeasured); NAN and NULL where not scored. */
    double base_accuracy, new_accuracy, accuracy_change, accuracy_ci;
    long long accuracy_seeds;   /* pairs of seeds; 0 when not scored */
    int accuracy_images_paired; /* the test images' error is the paired one */
    const char *accuracy_verdict;
};

struct dlb_comparison {
    const char *base, *new_file, *normalized_by;
    double threshold, alpha;
    double geomean_ratio;       /* NAN when nothing was compared (null) */
    long long compared;
    double resolution_median, resolution_max; /* NAN: no row was judged */
    long long faster, slower, same, added, missing; /* the counts */
    double accuracy_threshold;  /* points: a smaller change is "same" */
    long long accuracy_lower, accuracy_higher, accuracy_judged;
    const char **warnings;
    size_t n_warnings;
    struct dlb_cmp_row *rows;   /* "configs", in their order */
    size_t n_rows;
    struct dlb_strpool strings;
};

/* The document, a new object, members in their documented order. */
json_t *dlb_comparison_write(const struct dlb_comparison *c);

void dlb_comparison_free(struct dlb_comparison *c);

#endif
