/* The peak memory of a configuration's measurement, not of its process:
 * what the workload's set-up freed before the measurement (the reference
 * weights of an inference suite, trained in the first process that needs
 * them: 262 MiB for ResNet-20 at batch 1, where a process that found them
 * cached peaked at 84) is no part of its footprint. */
#ifndef DLB_CORE_CHILD_PEAK_H
#define DLB_CORE_CHILD_PEAK_H

/* Hand the allocator's free memory back to the system and restart the
 * kernel's high-water mark (VmHWM) at the process's resident size now.
 * Returns 1 when the mark was restarted, 0 where the kernel does not let
 * it be (no /proc/self/clear_refs): the peak is then the process's. */
int dlb_child_peak_restart(void);

/* The peak resident size in bytes since the restart (restarted = 1:
 * VmHWM), or over the whole process (getrusage's maximum). */
double dlb_child_peak_bytes(int restarted);

#endif
