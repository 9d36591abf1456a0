#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sched_getaffinity, CPU_COUNT */
#endif
#include "child/child_controls.h"
#include "util/cpu_quota.h"
#include "util/malloc_policy.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* glibc refuses an mmap threshold above HEAP_MAX_SIZE / 2, 32 MiB on
 * 64-bit systems (mallopt returns 0 and nothing changes). */
#define STEADY_MMAP_THRESHOLD (32 * 1024 * 1024)
#define STEADY_TRIM_THRESHOLD 0x7fffffff /* mallopt takes an int */
#define FRESH_MMAP_THRESHOLD (128 * 1024)
#define FRESH_TRIM_THRESHOLD (128 * 1024)

json_t *dlb_child_controls_apply(const char *malloc_policy, long threads,
                                 dlb_status *st, struct dlb_error *err)
{
    json_t *mal;
    *st = DLB_OK;
    if (!strcmp(malloc_policy, "steady") || !strcmp(malloc_policy, "fresh")) {
        int steady = malloc_policy[0] == 's';
        int mm = steady ? STEADY_MMAP_THRESHOLD : FRESH_MMAP_THRESHOLD;
        int trim = steady ? STEADY_TRIM_THRESHOLD : FRESH_TRIM_THRESHOLD;
        /* fresh keeps glibc's mmap count (-1: not set). mmap_max 0
         * turns mmap off for the main heap altogether: a block above the
         * largest threshold glibc accepts (32 MiB) then comes from the
         * heap too, and its pages stay mapped for the next step instead
         * of being faulted in afresh. */
        int mmap_max = steady ? 0 : -1;
        /* An allocator other than glibc's (a sanitizer's, or one put in
         * with LD_PRELOAD) refuses: the run goes on, and says so. */
        if (!dlb_malloc_thresholds_set(mm, trim, mmap_max)) {
            const char *why = "mallopt refused the thresholds: the allocator "
                              "is not glibc's (a sanitizer's, or one preloaded)";
            fprintf(stderr, "dlbench: warning: malloc = %s not in force: %s\n",
                    malloc_policy, why);
            mal = json_pack("{s:s,s:b,s:s}", "policy", malloc_policy, "applied", 0,
                            "why", why);
        } else
            mal = json_pack("{s:s,s:b,s:I,s:I,s:b}", "policy", malloc_policy,
                            "applied", 1, "mmap_threshold", (json_int_t)mm,
                            "trim_threshold", (json_int_t)trim,
                            "large_blocks_mmapped", !steady);
    } else if (!strcmp(malloc_policy, "glibc")) {
        mal = json_pack("{s:s,s:b,s:s}", "policy", "glibc", "applied", 1,
                        "thresholds", "adaptive");
    } else {
        *st = dlb_errorf(err, DLB_ERR_INPUT, "malloc = %s: not a policy (steady, "
                         "fresh or glibc)", malloc_policy);
        return NULL;
    }
    int allowed = dlb_allowed_cpu_count();
    const char *wait = getenv("OMP_WAIT_POLICY");
    /* The cpu backend pins one thread per allowed CPU unless the user
     * chose a binding of their own (cpu_backend.c). */
    int user_bind = getenv("OMP_PROC_BIND") || getenv("GOMP_CPU_AFFINITY") ||
                    getenv("OMP_PLACES");
    return json_pack("{s:o,s:I,s:i,s:b,s:s,s:s}", "malloc", mal,
                     "threads", (json_int_t)(threads > 0 ? threads : allowed),
                     "allowed_cpus", allowed,
                     "oversubscribed", threads > allowed,
                     "omp_wait_policy", wait && wait[0] ? wait : "default",
                     "pinning", user_bind ? "the user's (OMP_PROC_BIND, "
                                            "OMP_PLACES or GOMP_CPU_AFFINITY)"
                                          : "one thread per allowed CPU");
}
