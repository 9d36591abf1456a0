/* Comparing configurations measured in several processes (suite key
 * `repetitions`). Their pooled samples are not independent (each process
 * runs in its own speed phase of the machine), so a U test on them, and
 * the interval it gives the ratio, would call a difference between two
 * phases significant. The unit of comparison is then the process: each
 * side's mean of ln(process median), which is the logarithm of the median
 * the run reports, and its spread, and Welch's t test and interval on
 * their difference. */
#include "compare/compare.h"

#include <math.h>
#include "results/repeat.h"
#include "stats/stats.h"

int dlb_compare_processes_of(const struct dlb_record *rec, double scale,
                             struct dlb_log_spread *out)
{
    double ss;
    size_t n = dlb_reps_log_medians(rec, scale, &out->mean, &ss);
    if (!n)
        return 0;
    out->count = (double)n;
    out->sd = sqrt(ss / (double)(n - 1));
    out->df = (double)(n - 1);
    /* The run's own estimate, pooled over the configurations measured
     * with the same budget, has far more degrees of freedom than one
     * configuration's few processes: it is the one its intervals use. */
    double sd = rec->stats.ci_processes.sd_log, df = rec->stats.ci_processes.df;
    if (sd >= 0 && df >= 1) { /* false when absent (NAN) */
        out->sd = sd;
        out->df = df;
    }
    return 1;
}

dlb_status dlb_ratio_from_processes(const struct dlb_log_spread *b,
                                    const struct dlb_log_spread *n,
                                    struct dlb_ratio *r)
{
    if (!(b->count >= 2 && n->count >= 2 && b->df >= 1 && n->df >= 1))
        return DLB_ERR_INPUT;
    double vb = b->sd * b->sd / b->count, vn = n->sd * n->sd / n->count;
    double v = vb + vn, d = n->mean - b->mean;
    r->ratio = exp(d);
    if (!(v > 0)) { /* every process alike on both sides */
        r->lo = r->hi = r->ratio;
        r->p = d == 0 ? 1.0 : 0.0;
        return DLB_OK;
    }
    /* Welch-Satterthwaite degrees of freedom */
    double df = v * v / (vb * vb / b->df + vn * vn / n->df);
    double h = dlb_student_t_975(df < 1 ? 1 : df) * sqrt(v);
    r->lo = exp(d - h);
    r->hi = exp(d + h);
    r->p = dlb_student_t_p(d / sqrt(v), df);
    return DLB_OK;
}
