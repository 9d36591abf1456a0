/* The CPU time a cgroup lets this process use (docker --cpus, a
 * Kubernetes CPU limit, systemd's CPUQuota), as a number of CPUs. */
#ifndef DLB_CPU_QUOTA_H
#define DLB_CPU_QUOTA_H

/* The quota in CPUs (1.5 for 150 ms per 100 ms period), or 0 when there
 * is none or it cannot be read: cgroup v2's cpu.max, else v1's
 * cpu.cfs_quota_us over cpu.cfs_period_us. */
double dlb_cpu_quota(void);

/* The same, read under `root` (for /sys/fs/cgroup) with the process's
 * cgroup file `proc_cgroup` (for /proc/self/cgroup): for tests. */
double dlb_cpu_quota_at(const char *root, const char *proc_cgroup);

/* Threads worth running on `allowed` CPUs under the quota: the quota
 * rounded up, never more than allowed, at least 1. More threads than
 * the CPU time behind them wait for each other at every barrier: LeNet's
 * step with 16 threads on 2 CPUs took 322 ms against 3.1 ms with 2. */
int dlb_cpu_quota_threads(int allowed);

/* The CPUs this process may run on (its affinity mask), at least 1. */
int dlb_allowed_cpu_count(void);

/* Whether `threads` (0 = one per allowed CPU) busy threads would share
 * CPUs: more of them than the process may run on. */
int dlb_threads_oversubscribe(long threads);

#endif
