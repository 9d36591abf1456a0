#include "stats/measure.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Warm-up is settled when the median of the last WINDOW steps is within
 * SETTLE_TOL of the median of the WINDOW before them. */
#define WINDOW 5
#define SETTLE_TOL 0.05
/* The timer's own cost must stay under this share of a sample. */
#define MAX_TIMER_SHARE 0.001

double dlb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double monotonic(void *ctx)
{
    (void)ctx;
    return dlb_now();
}

static dlb_clock_fn clock_of(const struct dlb_measure_spec *spec)
{
    return spec->now ? spec->now : monotonic;
}

double dlb_timer_overhead(dlb_clock_fn now, void *ctx)
{
    enum { N = 201 };
    double d[N];
    if (!now)
        now = monotonic;
    for (int i = 0; i < N; i++) {
        double a = now(ctx);
        double b = now(ctx);
        d[i] = b - a;
    }
    dlb_sort_doubles(d, N);
    return d[N / 2];
}

static double median_of(const double *v, size_t n)
{
    double tmp[WINDOW];
    memcpy(tmp, v, n * sizeof *tmp);
    dlb_sort_doubles(tmp, n);
    return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

static dlb_status warm_up(const struct dlb_measure_spec *spec, dlb_step_fn step,
                          void *ctx, struct dlb_measure_result *out,
                          double *last_step_s)
{
    dlb_clock_fn now = clock_of(spec);
    double ring[2 * WINDOW];
    size_t k = 0;
    double start = now(spec->now_ctx);
    for (;;) {
        double t0 = now(spec->now_ctx);
        dlb_status st = step(ctx);
        double t1 = now(spec->now_ctx);
        if (st != DLB_OK)
            return st;
        ring[k % (2 * WINDOW)] = t1 - t0;
        *last_step_s = t1 - t0;
        k++;
        out->warmup_steps = k;
        out->warmup_s = t1 - start;
        int done = 0; /* 1: settled, 2: out of warm-up time */
        if (k >= 2 * WINDOW && out->warmup_s >= spec->warmup_min_s) {
            double older[WINDOW], newer[WINDOW];
            for (size_t i = 0; i < WINDOW; i++) {
                older[i] = ring[(k + i) % (2 * WINDOW)];
                newer[i] = ring[(k + WINDOW + i) % (2 * WINDOW)];
            }
            double mo = median_of(older, WINDOW), mn = median_of(newer, WINDOW);
            if (mo > 0 && mn <= mo * (1 + SETTLE_TOL) && mn >= mo * (1 - SETTLE_TOL))
                done = 1;
        }
        if (!done && out->warmup_s >= spec->warmup_max_s)
            done = 2;
        if (spec->agree)
            done = (int)spec->agree(spec->agree_ctx, done);
        if (done) {
            out->settled = done == 1;
            return DLB_OK;
        }
    }
}

/* Checking convergence sorts all samples, so do it when the count has grown
 * by ~5% rather than after every sample. */
static int should_check(size_t n, size_t last_checked)
{
    return n - last_checked >= 1 + last_checked / 20;
}

dlb_status dlb_measure_run(const struct dlb_measure_spec *spec, dlb_step_fn step,
                           void *ctx, struct dlb_measure_result *out)
{
    memset(out, 0, sizeof *out);
    dlb_clock_fn now = clock_of(spec);
    out->timer_overhead_s = dlb_timer_overhead(now, spec->now_ctx);

    double last_step = 0;
    dlb_status st = warm_up(spec, step, ctx, out, &last_step);
    if (st != DLB_OK)
        return st;

    unsigned per = spec->steps_per_sample ? spec->steps_per_sample : 1;
    while (last_step > 0 && out->timer_overhead_s > MAX_TIMER_SHARE * last_step * per)
        per *= 2;
    if (spec->agree)
        per = (unsigned)spec->agree(spec->agree_ctx, per);
    out->steps_per_sample = per;

    size_t cap = spec->max_samples > 0 ? spec->max_samples : 1;
    size_t alloc = cap < 1024 ? cap : 1024;
    out->samples = malloc(alloc * sizeof *out->samples);
    if (!out->samples)
        return DLB_ERR_NOMEM;

    if (spec->sampling)
        spec->sampling(ctx, 0);
    double start = now(spec->now_ctx);
    size_t last_checked = 0;
    for (;;) {
        double t0 = now(spec->now_ctx);
        for (unsigned s = 0; s < per; s++) {
            st = step(ctx);
            if (st != DLB_OK)
                break;
        }
        double t1 = now(spec->now_ctx);
        if (st != DLB_OK)
            break;
        if (out->n == alloc) {
            size_t na = alloc * 2 < cap ? alloc * 2 : cap;
            double *p = realloc(out->samples, na * sizeof *p);
            if (!p) {
                st = DLB_ERR_NOMEM;
                break;
            }
            out->samples = p;
            alloc = na;
        }
        out->samples[out->n++] = (t1 - t0) / per;
        out->measure_s = t1 - start;

        int stop = 0; /* 1: converged, 2: out of samples or time */
        if (out->n >= spec->min_samples && should_check(out->n, last_checked)) {
            last_checked = out->n;
            if (dlb_stats_compute(out->samples, out->n, &out->stats) == DLB_OK &&
                out->stats.ci_exact && out->stats.ci_rel_halfwidth <= spec->ci_target)
                stop = 1;
        }
        if (!stop && (out->n >= cap || (out->measure_s >= spec->time_cap_s && out->n >= 2)))
            stop = 2;
        if (spec->agree)
            stop = (int)spec->agree(spec->agree_ctx, stop);
        if (stop) {
            out->converged = stop == 1;
            break;
        }
    }
    if (spec->sampling)
        spec->sampling(ctx, 1);
    if (out->n > 0) {
        dlb_status s2 = dlb_stats_compute(out->samples, out->n, &out->stats);
        if (st == DLB_OK)
            st = s2;
    }
    return st;
}

void dlb_measure_result_free(struct dlb_measure_result *r)
{
    free(r->samples);
    r->samples = NULL;
    r->n = 0;
}
