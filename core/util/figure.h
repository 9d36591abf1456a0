/* A figure as the console's tables print it: about four significant
 * digits, never an exponent, so that a column reads at a glance
 * (31496, 114.7, 2.188, 0.01877). */
#ifndef DLB_CORE_UTIL_FIGURE_H
#define DLB_CORE_UTIL_FIGURE_H

#include <stddef.h>

/* x into buf (len bytes): 0 decimals from 1000 up, then 1, 2 and 3 down
 * to 1, and below 1 four significant digits (at most 9 decimals). */
void dlb_figure_text(char *buf, size_t len, double x);

/* x, or 0 where it prints as zero at `decimals` places: printf writes
 * -0.001 (or the -0.0 of a negated equal pair) as "-0.00", a sign the
 * figure does not have ("accuracy drop -0.00 points"). */
double dlb_figure_unsigned_zero(double x, int decimals);

#endif
