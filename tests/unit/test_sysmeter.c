/* Unit tests of core/child/sysmeter.c: when a measurement is doubtful.
 * Steal over a window of a few ticks says nothing: a 10 ms measurement on
 * the synthetic clock read "the hypervisor stole 100.0% of the CPU time"
 * from one stolen tick of one. Snapshots are made up: nothing is timed. */
#include "child/sysmeter.h"

#include "check.h"

#include <string.h>

static struct dlb_sysmeter at(double wall, long nivcsw, unsigned long long total,
                              unsigned long long steal)
{
    struct dlb_sysmeter m;
    memset(&m, 0, sizeof m);
    m.wall = wall;
    m.nivcsw = nivcsw;
    m.stat = (struct dlb_cpu_times){total - steal, 0, steal, total, 1};
    return m;
}

int main(void)
{
    struct dlb_rec_system sys;
    char why[200];

    /* one tick of one, stolen: too short a window to judge */
    struct dlb_sysmeter a = at(10.0, 0, 1000, 10), b = at(10.01, 0, 1001, 11);
    dlb_sysmeter_record(&a, &b, 10, &sys, why, sizeof why);
    CHECK(sys.steal_share == 1.0);
    CHECK(sys.doubtful == NULL && why[0] == '\0');

    /* 20 of 200 ticks stolen: doubtful, and says how much */
    b = at(11.0, 0, 1200, 30);
    dlb_sysmeter_record(&a, &b, 100, &sys, why, sizeof why);
    CHECK(sys.doubtful != NULL && strstr(why, "stole 10.0%") != NULL);

    /* 3 of 200: not doubtful */
    b = at(11.0, 0, 1200, 13);
    dlb_sysmeter_record(&a, &b, 100, &sys, why, sizeof why);
    CHECK(sys.doubtful == NULL);

    /* preempted 150 times in a second: doubtful, whatever the window */
    b = at(11.0, 150, 1010, 10);
    dlb_sysmeter_record(&a, &b, 100, &sys, why, sizeof why);
    CHECK(sys.doubtful != NULL && strstr(why, "preempted 150 times a second") != NULL);
    CHECK(sys.involuntary_switches == 1.5);

    /* the aggregate line of /proc/stat */
    struct dlb_cpu_times t = dlb_cpu_times_parse(
        "cpu  142610 57 34322 165857 1187 0 482 6213 0 0\ncpu0 1 2 3 4\n");
    CHECK(t.ok && t.steal == 6213 && t.idle == 165857 + 1187);
    CHECK(t.total == 142610 + 57 + 34322 + 482 + 165857 + 1187 + 6213);
    CHECK(!dlb_cpu_times_parse("cpu0 1 2 3 4\n").ok);
    return check_exit();
}
