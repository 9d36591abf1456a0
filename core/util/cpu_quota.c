#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sched_getaffinity, CPU_COUNT */
#endif
#include "util/cpu_quota.h"

#include <math.h>
#include <sched.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

/* The cgroup this process is in, for v2's unified hierarchy: the path of
 * the line "0::/PATH" of the process's cgroup file, or "" (the root). */
static void v2_path(const char *proc_cgroup, char *out, size_t len)
{
    char line[400];
    FILE *f = fopen(proc_cgroup, "r");
    out[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            const char *cg = strcmp(line + 3, "/") ? line + 3 : "";
            if (strlen(cg) < len)
                memcpy(out, cg, strlen(cg) + 1);
            break;
        }
    fclose(f);
}

static int read_two(const char *path, char *a, size_t alen, double *b)
{
    char fmt[32];
    FILE *f = fopen(path, "r");
    int n;
    if (!f)
        return 0;
    snprintf(fmt, sizeof fmt, "%%%zus %%lf", alen - 1);
    n = fscanf(f, fmt, a, b);
    fclose(f);
    return n;
}

static double read_one(const char *path)
{
    double v = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    if (fscanf(f, "%lf", &v) != 1)
        v = 0;
    fclose(f);
    return v;
}

double dlb_cpu_quota_at(const char *root, const char *proc_cgroup)
{
    char cg[400], path[1024], quota[32];
    double period = 0;
    /* v2: "max 100000" (none) or "150000 100000". The process's own
     * cgroup inside a container is usually mounted as the root. */
    v2_path(proc_cgroup, cg, sizeof cg);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s%s/cpu.max", root, i ? "" : cg);
        if (read_two(path, quota, sizeof quota, &period) == 2) {
            double q = 0;
            if (strcmp(quota, "max") == 0 || sscanf(quota, "%lf", &q) != 1 ||
                q <= 0 || period <= 0)
                return 0;
            return q / period;
        }
    }
    /* v1: cfs_quota_us is -1 without a limit. */
    snprintf(path, sizeof path, "%s/cpu/cpu.cfs_quota_us", root);
    double q = read_one(path);
    snprintf(path, sizeof path, "%s/cpu/cpu.cfs_period_us", root);
    period = read_one(path);
    return q > 0 && period > 0 ? q / period : 0;
}

double dlb_cpu_quota(void)
{
    return dlb_cpu_quota_at("/sys/fs/cgroup", "/proc/self/cgroup");
}

int dlb_cpu_quota_threads(int allowed)
{
    double q = dlb_cpu_quota();
    int n = allowed > 0 ? allowed : 1;
    if (q > 0 && ceil(q) < n)
        n = (int)ceil(q);
    return n > 0 ? n : 1;
}

int dlb_allowed_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int dlb_threads_oversubscribe(long threads)
{
    return threads > dlb_allowed_cpu_count();
}
