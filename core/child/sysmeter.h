/* What the system did to a measurement, counted over its sampling phase:
 * page faults and context switches (getrusage, all of the process's
 * threads), the machine's steal time (/proc/stat), and CPU time against
 * wall time. They are not removed by anything dlbench controls; they are
 * recorded so that a figure measured while the hypervisor took the CPUs
 * away, or while another process kept preempting this one, says so. */
#ifndef DLB_CORE_SYSMETER_H
#define DLB_CORE_SYSMETER_H

#include <stddef.h>
#include "results/record.h"

/* A configuration whose measurement lost this share of the machine's CPU
 * time to steal, or whose threads were preempted this often, is marked
 * doubtful: its figure reflects the neighbours as much as the code. A
 * quiet 2-core VM here shows steal under 1% and a few involuntary
 * switches a second; a competing busy process on one core gives hundreds. */
#define DLB_DOUBTFUL_STEAL 0.05
/* Steal is judged over at least this many ticks of all CPUs' time (half
 * a second of two CPUs at 100 Hz): over a few ticks one stolen tick reads
 * as a third of the time, or all of it. */
#define DLB_STEAL_MIN_TICKS 100
#define DLB_DOUBTFUL_INVOL_PER_S 100.0

struct dlb_cpu_times {
    unsigned long long busy, idle, steal, total; /* jiffies, all CPUs */
    int ok;
};

struct dlb_sysmeter {
    double wall, cpu;                 /* seconds */
    long minflt, majflt, nvcsw, nivcsw;
    struct dlb_cpu_times stat;
};

/* Parse the aggregate "cpu " line of /proc/stat's text. */
struct dlb_cpu_times dlb_cpu_times_parse(const char *text);

/* Snapshot now. */
void dlb_sysmeter_read(struct dlb_sysmeter *m);

/* The figures between two snapshots, per step for counts (`steps` steps
 * ran between them), for the record's "system" member: minor_faults,
 * major_faults, voluntary_switches, involuntary_switches (per step),
 * involuntary_per_s, steal_share (of all CPUs' time; NAN, written null,
 * when /proc/stat could not be read), cpu_per_wall (CPU seconds per wall
 * second: about the busy thread count), and `doubtful`, the reason (in
 * `why`), when steal or preemption passed the limits above. */
void dlb_sysmeter_record(const struct dlb_sysmeter *a, const struct dlb_sysmeter *b,
                         double steps, struct dlb_rec_system *out,
                         char *why, size_t why_size);

#endif
