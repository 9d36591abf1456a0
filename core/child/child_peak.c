#include "child/child_peak.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

int dlb_child_peak_restart(void)
{
    /* freed pages the allocator keeps (malloc = steady keeps them all)
     * would stay resident, and the restarted mark would start at them */
    malloc_trim(0);
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return 0;
    /* 5: reset the peak resident set size (Linux 4.0) */
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static double hwm_bytes(void)
{
    char line[256];
    double kb = -1.0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1.0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0 && sscanf(line + 6, "%lf", &kb) == 1)
            break;
    fclose(f);
    return kb >= 0.0 ? kb * 1024.0 : -1.0;
}

double dlb_child_peak_bytes(int restarted)
{
    double b = restarted ? hwm_bytes() : -1.0;
    struct rusage ru;
    if (b < 0.0 && getrusage(RUSAGE_SELF, &ru) == 0)
        b = (double)ru.ru_maxrss * 1024.0;
    return b;
}
