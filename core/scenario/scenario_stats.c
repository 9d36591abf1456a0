/* The scenario engine's figures: arrival schedules, percentiles and the
 * server run's verdict. Pure functions, no clock. */
#include "scenario/scenario.h"

#include <math.h>
#include <stdio.h>

#include "stats/stats.h"
#include "scenario/scenario_impl.h"

/* The schedule's own stream of the seed: the weights' and data's streams
 * of the same seed stay independent of it. */
#define SCHEDULE_STREAM 0x5ce7a210u

double dlb_scen_percentile(const double *sorted, size_t n, unsigned permille)
{
    /* rank = ceil(n * permille / 1000), in integers so that p99 of 100
     * values is the 99th, not the 100th by a rounding of 0.99 * 100 */
    size_t rank = ((size_t)n * permille + 999) / 1000;
    return sorted[rank ? rank - 1 : 0];
}

void dlb_scen_schedule_seed(struct dlb_rng *r, uint64_t seed)
{
    dlb_rng_seed_stream(r, seed, SCHEDULE_STREAM);
}

double dlb_scen_next_gap(struct dlb_rng *r, double qps)
{
    /* exponential by inversion; u in [0, 1) keeps log1p finite */
    return -log1p(-dlb_rng_double(r)) / qps;
}

void dlb_scen_arrivals(uint64_t seed, double qps, size_t n, double *out)
{
    struct dlb_rng r;
    double t = 0;
    dlb_scen_schedule_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        out[i] = t += dlb_scen_next_gap(&r, qps);
}

void dlb_scen_run_latencies(struct dlb_scen_run *run, double *lat, size_t n)
{
    if (!n) {
        run->p50_s = run->p90_s = run->p99_s = run->max_s = NAN;
        return;
    }
    dlb_sort_doubles(lat, n);
    run->p50_s = dlb_scen_percentile(lat, n, 500);
    run->p90_s = dlb_scen_percentile(lat, n, 900);
    run->p99_s = dlb_scen_percentile(lat, n, 990);
    run->max_s = lat[n - 1];
}

int dlb_scen_server_verdict(struct dlb_scen_run *run,
                            const struct dlb_scen_rules *rules)
{
    double bound_ms = rules->latency_bound_s * 1e3;
    run->valid = 0;
    if (run->stopped_early)
        snprintf(run->why, sizeof run->why, "p99 above the bound of %.4g ms: "
                 "more than 1%% of the %llu queries planned were over it after "
                 "%llu, so the run stopped there", bound_ms,
                 (unsigned long long)run->planned,
                 (unsigned long long)run->queries);
    else if (run->queries < rules->min_queries)
        snprintf(run->why, sizeof run->why, "%llu queries < the minimum %llu",
                 (unsigned long long)run->queries,
                 (unsigned long long)rules->min_queries);
    else if (run->duration_s < rules->min_duration_s)
        snprintf(run->why, sizeof run->why, "ran %.4g s < the minimum %.4g s",
                 run->duration_s, rules->min_duration_s);
    else if (!(run->p99_s <= rules->latency_bound_s))
        snprintf(run->why, sizeof run->why, "p99 %.4g ms > the bound %.4g ms",
                 run->p99_s * 1e3, bound_ms);
    else if (run->target_qps > run->capacity_qps)
        snprintf(run->why, sizeof run->why, "%.4g queries/s is above the "
                 "%.4g the measured serve time sustains: the queue grows "
                 "without end, which only a short run keeps within the bound",
                 run->target_qps, run->capacity_qps);
    else if (!(run->qps >= DLB_SCEN_KEPT_UP * run->scheduled_qps))
        snprintf(run->why, sizeof run->why, "completed %.4g queries/s, under "
                 "%.0f%% of the %.4g scheduled", run->qps,
                 100.0 * DLB_SCEN_KEPT_UP, run->scheduled_qps);
    else {
        run->valid = 1;
        snprintf(run->why, sizeof run->why, "p99 %.4g ms <= the bound %.4g ms",
                 run->p99_s * 1e3, bound_ms);
    }
    return run->valid;
}
