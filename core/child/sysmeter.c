#include "child/sysmeter.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "stats/measure.h"

struct dlb_cpu_times dlb_cpu_times_parse(const char *text)
{
    struct dlb_cpu_times t = {0, 0, 0, 0, 0};
    /* user nice system idle iowait irq softirq steal (guest time is
     * already counted in user and nice) */
    unsigned long long v[8] = {0};
    const char *p = strstr(text, "cpu ");
    if (!p || (p != text && p[-1] != '\n'))
        return t;
    int n = sscanf(p + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
                   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    if (n < 4)
        return t;
    t.idle = v[3] + v[4];
    t.steal = v[7];
    t.busy = v[0] + v[1] + v[2] + v[5] + v[6];
    t.total = t.busy + t.idle + t.steal;
    t.ok = 1;
    return t;
}

static struct dlb_cpu_times read_proc_stat(void)
{
    char buf[512];
    struct dlb_cpu_times none = {0, 0, 0, 0, 0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return none;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return dlb_cpu_times_parse(buf);
}

void dlb_sysmeter_read(struct dlb_sysmeter *m)
{
    struct rusage ru;
    memset(m, 0, sizeof *m);
    m->stat = read_proc_stat();
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        m->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
        m->minflt = ru.ru_minflt;
        m->majflt = ru.ru_majflt;
        m->nvcsw = ru.ru_nvcsw;
        m->nivcsw = ru.ru_nivcsw;
    }
    m->wall = dlb_now();
}

void dlb_sysmeter_record(const struct dlb_sysmeter *a, const struct dlb_sysmeter *b,
                         double steps, struct dlb_rec_system *out,
                         char *why, size_t why_size)
{
    double wall = b->wall - a->wall;
    double per = steps > 0 ? 1.0 / steps : 0;
    double invol_s = wall > 0 ? (double)(b->nivcsw - a->nivcsw) / wall : 0;
    double steal_share = 0;
    out->steal_share = NAN;
    if (a->stat.ok && b->stat.ok && b->stat.total > a->stat.total) {
        steal_share = (double)(b->stat.steal - a->stat.steal) /
                      (double)(b->stat.total - a->stat.total);
        out->steal_share = steal_share;
    }
    out->minor_faults = (double)(b->minflt - a->minflt) * per;
    out->major_faults = (double)(b->majflt - a->majflt) * per;
    out->voluntary_switches = (double)(b->nvcsw - a->nvcsw) * per;
    out->involuntary_switches = (double)(b->nivcsw - a->nivcsw) * per;
    out->involuntary_per_s = invol_s;
    out->cpu_per_wall = wall > 0 ? (b->cpu - a->cpu) / wall : 0;
    out->wall_s = wall;
    why[0] = '\0';
    int steal_judged = a->stat.ok && b->stat.ok &&
                       b->stat.total - a->stat.total >= DLB_STEAL_MIN_TICKS;
    if (steal_judged && steal_share >= DLB_DOUBTFUL_STEAL)
        snprintf(why, why_size, "the hypervisor stole %.1f%% of the CPU time",
                 100 * steal_share);
    else if (invol_s >= DLB_DOUBTFUL_INVOL_PER_S)
        snprintf(why, why_size, "its threads were preempted %.0f times a second: "
                 "something else was running", invol_s);
    out->doubtful = why[0] ? why : NULL;
}
