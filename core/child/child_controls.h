/* What a configuration's process fixes before any measured code runs, so
 * that its figure does not depend on which process measured it, and the
 * record of what was fixed (the record's "controls").
 *
 * The allocator: glibc adapts its mmap threshold to the blocks freed
 * before (up to 32 MiB), and trims the heap top above twice that. Which
 * of a step's activations come from fresh mmap'ed pages, and whether the
 * heap gives its pages back after each step, so depended on what the
 * process happened to free first: six processes of one LeNet
 * configuration fell into modes 10.6 and 16.5-18.3 ms a step, the slow
 * ones page-faulting every step. The suite key `malloc` picks a fixed
 * policy instead:
 *   steady  every block comes from the heap (mmap threshold 32 MiB,
 *           glibc's largest, and no mmap at all for the main heap), and
 *           the heap is never trimmed (2 GiB): a step reuses the pages
 *           of the step before, as a warmed-up eager framework's system
 *           allocator does. With the threshold alone, a block above
 *           32 MiB (vgg-small's bf16 conv1 activation at batch 1024,
 *           49 MiB) was mmap'ed and faulted in afresh every step:
 *           12,545 minor faults a step;
 *   fresh   every block of 128 KiB or more is mmap'ed anew and unmapped
 *           when freed: every step faults its activations in;
 *   glibc   glibc's own adaptive thresholds (what ran before).
 * Both fixed policies keep a fresh allocation per step (the baseline the
 * mempool plugin is compared with), only not a coin toss. */
#ifndef DLB_CORE_CHILD_CONTROLS_H
#define DLB_CORE_CHILD_CONTROLS_H

#include <jansson.h>
#include "util/error.h"

/* Apply the allocator policy `malloc_policy` ("steady", "fresh" or
 * "glibc") and return the record of the controls in force: the policy and
 * its thresholds, the threads asked for (`threads`, 0 = as many as
 * allowed CPUs) against the CPUs this process may run on, the OpenMP wait
 * policy and whether the backend pins its threads. An allocator that is
 * not glibc's refuses the thresholds: the record says so ("applied":
 * false, "why"), a warning on standard error too, and the run goes on. NULL without memory; an unknown
 * policy is DLB_ERR_INPUT in *st. */
json_t *dlb_child_controls_apply(const char *malloc_policy, long threads,
                                 dlb_status *st, struct dlb_error *err);

#endif
