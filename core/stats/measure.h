/* The measurement loop: warm up until the step time settles, then take
 * samples of whole steps until the 95% confidence interval of the median is
 * within the target or the time cap is reached. */
#ifndef DLB_CORE_MEASURE_H
#define DLB_CORE_MEASURE_H

#include <stddef.h>
#include <stdint.h>
#include <dlbench/status.h>
#include "stats/stats.h"

/* A clock: seconds, never decreasing. */
typedef double (*dlb_clock_fn)(void *ctx);

struct dlb_measure_spec {
    double warmup_min_s;      /* warm up at least this long */
    double warmup_max_s;      /* give up waiting for the time to settle */
    size_t min_samples, max_samples;
    double ci_target;         /* relative half-width of the median's CI */
    double time_cap_s;        /* stop sampling here even if not converged */
    unsigned steps_per_sample;/* at least this many steps per sample */
    /* Processes that measure together (MPI ranks) must run the same steps:
     * each decision (warm-up over, steps per sample, stop) is passed
     * through agree, which returns rank 0's on every rank. NULL: alone. */
    int64_t (*agree)(void *ctx, int64_t value);
    void *agree_ctx;
    /* Called with `ctx` (the step's) when sampling starts (0) and when it
     * ends (1), warm-up excluded; may be NULL. */
    void (*sampling)(void *ctx, int end);
    /* The clock every time is read from; NULL: dlb_now. A workload that
     * simulates its step times passes its own, so that warm-up, samples
     * and the time cap all follow it. */
    dlb_clock_fn now;
    void *now_ctx;
};

struct dlb_measure_result {
    double *samples;          /* seconds per step, one per sample (malloc'ed) */
    size_t n;
    struct dlb_stats stats;
    int converged;            /* CI target met before the cap */
    int settled;              /* warm-up saw the step time settle */
    size_t warmup_steps;
    double warmup_s, measure_s;
    unsigned steps_per_sample;/* effective: raised to keep timer overhead < 0.1% */
    double timer_overhead_s;  /* median cost of one clock read pair, on
                               * the measurement's clock */
};

/* One step of the workload; returns non-OK to abort the measurement. */
typedef dlb_status (*dlb_step_fn)(void *ctx);

/* Monotonic clock in seconds. */
double dlb_now(void);

/* Median cost of reading a clock twice, measured now: `now` (NULL:
 * dlb_now) with its context. */
double dlb_timer_overhead(dlb_clock_fn now, void *ctx);

/* Run the loop. On a step failure the status is returned and `out` holds
 * what was measured so far. */
dlb_status dlb_measure_run(const struct dlb_measure_spec *spec, dlb_step_fn step,
                           void *ctx, struct dlb_measure_result *out);
void dlb_measure_result_free(struct dlb_measure_result *r);

#endif
