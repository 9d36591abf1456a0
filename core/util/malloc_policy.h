/* glibc malloc's thresholds, as the measured process fixes them
 * (child_controls.h, the suite key `malloc`), and a scope for work done
 * in that process that is not measured and frees what it allocated: the
 * reference training of an inference configuration's weights where it
 * cannot run in a process of its own (apart.h; ref_weights.h), and a
 * distillation teacher's.
 *
 * Under `malloc = steady` every block comes from the heap and the heap
 * is never trimmed. A training's activations and gradients, freed, then
 * left the heap in holes that the measured model's first blocks split:
 * the measurement's blocks no longer fit there and went above them, so
 * the process that trained the weights peaked higher than one that found
 * them cached (ResNet-20 and MobileNetV2 at 32x32, Zen 4: 157.7 against
 * 131.7 MiB, all of it heap). Inside the scope the heap does not grow
 * for a block of 128 KiB or more: what its free memory cannot serve is
 * mmap'ed and unmapped when freed, so the training leaves no holes:
 * 127.5-133.6 against 131.7 MiB. The cost: every training step faults
 * those blocks in afresh, 2.3x the training's time there (10.8-11.2
 * against 4.7-4.8 s for amp-infer's --quick ResNet-20), once per cached
 * set of weights. Mapping only blocks of 4 MiB or more kept the time
 * (4.6 s) and the holes (154.7 MiB); mapping the measured model's setup
 * instead of the training changed nothing (157.8). */
#ifndef DLB_UTIL_MALLOC_POLICY_H
#define DLB_UTIL_MALLOC_POLICY_H

/* Set the mmap threshold, the trim threshold and the mmap count (-1:
 * glibc's) together, and remember them for dlb_malloc_aside_end. 1 when
 * glibc took all of them; 0 when the allocator refused (not glibc's: a
 * sanitizer's, or one preloaded), nothing remembered. */
int dlb_malloc_thresholds_set(int mmap_threshold, int trim_threshold,
                              int mmap_max);

/* Until dlb_malloc_aside_end: blocks of 128 KiB and more that the heap's
 * free memory cannot serve mmap'ed rather than grown into the heap, where
 * the process had fixed thresholds that keep them there. Returns
 * whether it changed anything, which dlb_malloc_aside_end takes. */
int dlb_malloc_aside_begin(void);
/* The thresholds of dlb_malloc_thresholds_set again; blocks mmap'ed
 * inside the scope stay so until freed. */
void dlb_malloc_aside_end(int changed);

#endif
