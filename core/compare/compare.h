/* Comparing two runs: per configuration the ratio NEW/BASE of the median
 * step time with a distribution-free confidence interval, the Mann-Whitney
 * U test, a verdict, and the geometric mean over configurations.
 *
 * The result is struct dlb_comparison (results/comparison.h), which the
 * table, the markdown and the exit status read; its JSON form
 * (dlb_comparison_write, `--format json`) is:
 *   { "schema": "dlbench-compare", "schema_version": 1,
 *     "base": FILE, "new": FILE, "threshold": 0.05, "alpha": 0.05,
 *     "normalized_by": ID | null,    each run divided by its own ID first
 *     "warnings": [ "..." ],
 *     "configs": [ { "id", "verdict": "faster"|"slower"|"same"|"new"|"missing",
 *                    "base_median_s", "new_median_s", "ratio",
 *                    "ratio_ci": [lo, hi], "p", "base_n", "new_n",
 *                    "test": "mann-whitney" (samples) | "welch"
 *                    (processes' medians, when both ran several; then
 *                    base_n and new_n count processes),
 *                    "resolution": the smallest relative change this
 *                    row could have detected (the ratio interval's
 *                    half-width on the log scale, at least threshold),
 *                    "reference": true (the normalizing configuration),
 *                    "note": "...",
 *                    "doubtful": true, "doubtful_why": "base: ...; new: ..."
 *                    (either record measured on a busy machine; the row
 *                    still counts, and its note says so) } ],
 *     "geomean_ratio": x | null, "compared": n,
 *     "resolution": { "median", "max" } | null   over the judged rows,
 *     "counts": { "faster", "slower", "same", "new", "missing" },
 *     "accuracy": { "threshold" (points), "judged", "lower", "higher" } }
 *   where a row both runs scored also has "accuracy": { "base", "new",
 *   "change" (points, new - base), "ci" (95% half-width), "seeds" (pairs;
 *   0: none in common), "test_images": "paired" | "binomial", "verdict":
 *   "lower" | "higher" | "same" | "not judged" }. */
#ifndef DLB_CORE_COMPARE_H
#define DLB_CORE_COMPARE_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include "util/error.h"
#include "results/comparison.h"
#include "results/record.h"
#include "results/results.h" /* dlb_context_get */

#define DLB_COMPARE_THRESHOLD 0.05
/* Points of accuracy: the accuracy_tolerance suites default to. */
#define DLB_COMPARE_ACCURACY_THRESHOLD 0.5
#define DLB_COMPARE_ALPHA 0.05

struct dlb_compare_opts {
    double threshold; /* a change smaller than this fraction is "same" */
    double alpha;     /* significance level of the test */
    int normalize;    /* divide each configuration by its run's baseline one */
    double accuracy_threshold; /* points: a smaller accuracy change is "same" */
};

/* Read a run directory (its results.json) or a results.json file. *file is
 * the file read (malloc'ed). Errors name the file and say what to do. */
dlb_status dlb_compare_load(const char *path, json_t **doc, char **file,
                            struct dlb_error *err);

/* Compare two results documents (as dlb_results_read returns them) into
 * `out`; free it with dlb_comparison_free (on failure it is empty). */
dlb_status dlb_compare(json_t *base, const char *base_file, json_t *new_doc,
                       const char *new_file, const struct dlb_compare_opts *o,
                       struct dlb_comparison *out, struct dlb_error *err);

/* The accuracy of configuration `id` in both runs (b and n, both ok) into
 * row and the comparison's counts (compare_accuracy.c): new against base,
 * paired by seed and by test image (results/accuracy_pair.h). "lower" or
 * "higher" when the interval excludes 0 over two seeds or more and the
 * change is beyond cmp->accuracy_threshold; "same" otherwise, or when
 * the two predicted every test image alike at every seed; "not judged"
 * with one seed (a rebuilt training moves by its own noise). */
void dlb_compare_accuracy(struct dlb_comparison *cmp, const struct dlb_record *b,
                          const struct dlb_record *n, struct dlb_cmp_row *row);

enum dlb_compare_format { DLB_COMPARE_TABLE, DLB_COMPARE_MARKDOWN, DLB_COMPARE_JSON };

/* Render a comparison: a console table, markdown for a pull-request
 * comment, or its JSON form. */
void dlb_compare_print(FILE *f, enum dlb_compare_format fmt,
                       const struct dlb_comparison *cmp);

/* NEW/BASE of the medians of two samples, the 95% interval of the ratio
 * (Hodges-Lehmann on the logarithms, inverted U test, so it agrees with
 * the test), and the U test's two-sided p-value. */
struct dlb_ratio {
    double ratio, lo, hi, p;
};
dlb_status dlb_ratio_estimate(const double *base, size_t nb, const double *new_s,
                              size_t nn, struct dlb_ratio *r);

/* A configuration measured in several processes (core/compare/compare_reps.c):
 * the mean of ln(process median / scale), the standard deviation of those
 * logarithms with its degrees of freedom (the run's pooled estimate,
 * stats.ci_processes, where it recorded one), and the process count. */
struct dlb_log_spread {
    double mean, sd, df, count;
};

/* Fill `out` from a record's "repetitions"; 0 when it has fewer than two
 * processes or one without a positive median. */
int dlb_compare_processes_of(const struct dlb_record *rec, double scale,
                             struct dlb_log_spread *out);

/* NEW/BASE from the processes' medians: exp of the difference of the
 * means, Welch's 95% interval and two-sided t test p-value. */
dlb_status dlb_ratio_from_processes(const struct dlb_log_spread *b,
                                    const struct dlb_log_spread *n,
                                    struct dlb_ratio *r);

#endif
