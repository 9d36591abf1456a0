/* glibc's malloc thresholds and the scope of unmeasured work
 * (malloc_policy.h). */
#include "util/malloc_policy.h"

#include <malloc.h>

/* Block size from which the scope mmaps: glibc's default threshold. */
#define ASIDE_MMAP_THRESHOLD (128 * 1024)
/* mmap'ed blocks allowed in the scope: glibc's default count. */
#define ASIDE_MMAP_MAX 65536

static struct {
    int set; /* the thresholds below are in force */
    int mmap_threshold, trim_threshold, mmap_max;
} fixed;

/* Setting either threshold turns glibc's adaptation off; they are set
 * together so that the pair is the one asked for. */
static int apply(int mmap_threshold, int trim_threshold, int mmap_max)
{
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 &&
           mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1 &&
           (mmap_max < 0 || mallopt(M_MMAP_MAX, mmap_max) == 1);
}

int dlb_malloc_thresholds_set(int mmap_threshold, int trim_threshold,
                              int mmap_max)
{
    fixed.set = 0;
    if (!apply(mmap_threshold, trim_threshold, mmap_max))
        return 0;
    fixed.set = 1;
    fixed.mmap_threshold = mmap_threshold;
    fixed.trim_threshold = trim_threshold;
    fixed.mmap_max = mmap_max;
    return 1;
}

int dlb_malloc_aside_begin(void)
{
    /* Only thresholds that keep large blocks in the heap leave holes;
     * glibc's own (adaptive) ones and `fresh` mmap them already. */
    if (!fixed.set || (fixed.mmap_max != 0 &&
                       fixed.mmap_threshold <= ASIDE_MMAP_THRESHOLD))
        return 0;
    return apply(ASIDE_MMAP_THRESHOLD, fixed.trim_threshold, ASIDE_MMAP_MAX);
}

void dlb_malloc_aside_end(int changed)
{
    if (changed && fixed.set)
        (void)apply(fixed.mmap_threshold, fixed.trim_threshold, fixed.mmap_max);
}
