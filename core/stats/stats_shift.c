#include "stats/stats_shift.h"

#include <math.h>

#include "stats/stats.h"

int dlb_level_shift(const double *v, size_t n, struct dlb_level_shift *out)
{
    size_t h = n / 2;
    if (h < DLB_LEVEL_SHIFT_MIN_HALF)
        return 0;
    struct dlb_stats a, b;
    if (dlb_stats_compute(v, h, &a) != DLB_OK ||
        dlb_stats_compute(v + n - h, h, &b) != DLB_OK || !(a.median > 0) ||
        !(fabs(b.median / a.median - 1) > DLB_LEVEL_SHIFT_REL))
        return 0;
    double p = dlb_mann_whitney_p(v, h, v + n - h, h, NULL);
    if (!(p < DLB_LEVEL_SHIFT_P))
        return 0;
    out->first_median = a.median;
    out->second_median = b.median;
    out->p = p;
    return 1;
}
