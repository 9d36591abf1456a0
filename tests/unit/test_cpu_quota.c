/* The cgroup CPU quota (core/util/cpu_quota.c) read from crafted cgroup trees:
 * v2 in the process's own cgroup and at the root, "max" for none, v1's
 * cfs files, nothing at all; and the thread count it allows. */
#include "util/cpu_quota.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[512];

static void put(const char *rel, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void sub(const char *rel)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    CHECK(mkdir(path, 0700) == 0);
}

static double quota(void)
{
    char proc[600];
    snprintf(proc, sizeof proc, "%s/proc-cgroup", root);
    return dlb_cpu_quota_at(root, proc);
}

int main(void)
{
    check_temp_template(root, sizeof root, "dlb-quota-XXXXXX");
    CHECK(mkdtemp(root) != NULL);

    /* nothing to read: no quota */
    CHECK(quota() == 0.0);

    /* v1: -1 is none; 150 ms per 100 ms is 1.5 CPUs */
    sub("cpu");
    put("cpu/cpu.cfs_quota_us", "-1\n");
    put("cpu/cpu.cfs_period_us", "100000\n");
    CHECK(quota() == 0.0);
    put("cpu/cpu.cfs_quota_us", "150000\n");
    CHECK_NEAR(quota(), 1.5, 1e-12);

    /* v2 at the root wins over v1; "max" is none */
    put("cpu.max", "max 100000\n");
    CHECK(quota() == 0.0);
    put("cpu.max", "200000 100000\n");
    CHECK_NEAR(quota(), 2.0, 1e-12);

    /* v2 in the process's own cgroup wins over the root */
    put("proc-cgroup", "0::/job/one\n");
    sub("job");
    sub("job/one");
    put("job/one/cpu.max", "50000 100000\n");
    CHECK_NEAR(quota(), 0.5, 1e-12);
    /* an unreadable own file: the root's */
    put("job/one/cpu.max", "garbage\n");
    CHECK_NEAR(quota(), 2.0, 1e-12);

    /* threads: the quota rounded up, within [1, allowed] */
    CHECK(dlb_cpu_quota_threads(0) >= 1);
    CHECK(dlb_cpu_quota_threads(3) >= 1 && dlb_cpu_quota_threads(3) <= 3);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
    return check_exit();
}
