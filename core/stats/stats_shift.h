/* A level shift within one process: the second half of its step times (in
 * the order taken) against the first. On a shared VM the machine's speed
 * changes in phases of seconds that steal time does not show (measured on
 * 2 cores: one LeNet configuration at 8.6k, then 13.3k samples/s within
 * one run, at 1-2% steal): a figure from one phase does not compare with
 * one from another, whatever their confidence intervals say. */
#ifndef DLB_CORE_STATS_SHIFT_H
#define DLB_CORE_STATS_SHIFT_H

#include <stddef.h>

/* A shift between the halves beyond this (and significant at
 * DLB_LEVEL_SHIFT_P, with DLB_LEVEL_SHIFT_MIN_HALF samples a half at
 * least) counts: 20% is well above what a settled run drifts here. */
#define DLB_LEVEL_SHIFT_REL 0.2
#define DLB_LEVEL_SHIFT_P 1e-3
#define DLB_LEVEL_SHIFT_MIN_HALF 10

struct dlb_level_shift {
    double first_median, second_median; /* seconds */
    double p;                           /* Mann-Whitney U, two-sided */
};

/* 1 when the n samples shift from their first half to their second by
 * more than DLB_LEVEL_SHIFT_REL, significantly; *out then says how. 0
 * when they do not, or are too few to tell. */
int dlb_level_shift(const double *samples, size_t n, struct dlb_level_shift *out);

#endif
