/* Change points over the store's series (store.h) and the groups they
 * form: each series (suite, configuration, machine) is searched with
 * E-divisive means (edivisive.h) on the logarithm of its nightly median
 * step time; each change point gets its size, the ratio of the median
 * after it to the median before it within the neighbouring segments, with
 * a 95% interval; and change points of different series that name the
 * same commit range are one group: one alert, not twenty. */
#ifndef DLB_CORE_CHANGES_H
#define DLB_CORE_CHANGES_H

#include <stddef.h>
#include "history/edivisive.h"
#include "store/store.h"
#include "store/store_alerts.h"

/* The default threshold of a series no rule matches: compare's 5%. */
#define DLB_CHANGES_THRESHOLD 0.05

/* One change point of one series. */
struct dlb_change {
    size_t series;              /* index into the set */
    size_t at;                  /* its first point after the change */
    size_t seg_lo, seg_hi;      /* the segments compared: [seg_lo, at), [at, seg_hi) */
    double ratio, lo, hi;       /* median step time after / before, 95% CI */
    double p;                   /* the permutation test's p-value */
    double threshold;           /* of its series (thresholds.c) */
    int beyond;                 /* +1 slower beyond it, -1 faster beyond it, 0 */
};

/* The threshold of one series: the most specific rule whose three
 * patterns match (the most characters that are not wildcards; the newer
 * rule on a tie), else DLB_CHANGES_THRESHOLD. *rule: its index, or -1. */
double dlb_threshold_for(const struct dlb_threshold_rule *rules, size_t n,
                         const char *suite, const char *config,
                         const char *machine, long *rule);

/* Every change point of every series, in series order, each series
 * searched with `o` and a seed mixed from o->seed and the series' name
 * (so one series' answer does not depend on the others). */
dlb_status dlb_changes_find(const struct dlb_series_set *set, const struct dlb_cp_opts *o,
                            const struct dlb_threshold_rule *rules, size_t n_rules,
                            struct dlb_change **out, size_t *n_out,
                            struct dlb_error *err);

/* Change points that moved together. The range is the commits of the
 * last run before and the first run after the change; change points with
 * the same range are one group, across suites and machines. Where the
 * range names no commit change (the same commit on both sides, or
 * unknown commits: the machine or its software changed), the pair of runs
 * is the key instead. */
struct dlb_change_group {
    const char *good_commit, *bad_commit, *good_utc, *bad_utc; /* borrowed */
    size_t *members;            /* indices into the changes */
    size_t n;
    double worst_ratio;         /* the member furthest from 1 */
    long long beyond, slower_beyond;
    long long runs_after;       /* the most runs after the change of any member */
};

dlb_status dlb_changes_group(const struct dlb_series_set *set,
                             const struct dlb_change *ch, size_t n,
                             struct dlb_change_group **out, size_t *n_out,
                             struct dlb_error *err);
void dlb_change_groups_free(struct dlb_change_group *g, size_t n);

/* The members of a group as the alert's JSON (doc/history.md). */
char *dlb_change_group_members_json(const struct dlb_series_set *set,
                                    const struct dlb_change *ch,
                                    const struct dlb_change_group *g);

#endif
