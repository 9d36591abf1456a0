#define _POSIX_C_SOURCE 200809L
#include "child/child_scenario.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "scenario/scenario.h"
#include "scenario/scenario_json.h"

/* The suite key's choices are the engine's scenarios, in one order. */
_Static_assert((int)DLB_SCEN_SINGLESTREAM == (int)DLB_SCENARIO_SINGLESTREAM &&
                   (int)DLB_SCEN_OFFLINE == (int)DLB_SCENARIO_OFFLINE &&
                   (int)DLB_SCEN_SERVER == (int)DLB_SCENARIO_SERVER &&
                   DLB_SCENARIO_COUNT == 4,
               "enum dlb_scenario and enum dlb_scen_kind differ");

/* The scenario's clock. On the monotonic clock an idle wait sleeps; on a
 * workload's simulated clock, which only its steps advance, the idle time
 * is added to an offset instead, so that arrivals keep their schedule. */
struct scen_clock {
    const struct dlb_child_scenario_sut *sut;
    double offset;
};

static double scen_now(void *ctx)
{
    struct scen_clock *c = ctx;
    return c->sut->now ? c->sut->now(c->sut->now_ctx) + c->offset : dlb_now();
}

static void scen_wait_until(void *ctx, double t)
{
    struct scen_clock *c = ctx;
    double now = scen_now(c);
    if (t <= now)
        return;
    if (c->sut->now) {
        c->offset += t - now;
        return;
    }
    /* absolute, on the clock dlb_now reads: a late wake-up shows in the
     * query's latency, which runs from its scheduled arrival */
    struct timespec ts = {(time_t)t, (long)((t - floor(t)) * 1e9)};
    if (ts.tv_nsec > 999999999L)
        ts.tv_nsec = 999999999L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* A step computes the whole batch: fewer queued samples are padded, as a
 * server that compiled its model for one batch size runs them. */
static dlb_status scen_serve(void *ctx, uint32_t n)
{
    struct scen_clock *c = ctx;
    (void)n;
    return c->sut->step(c->sut->step_ctx);
}

dlb_status dlb_child_scenario_check(const struct dlb_core_settings *set,
                                    char *why, size_t len)
{
    const char *name = dlb_scenario_names[set->scenario];
    if (set->scenario == DLB_SCENARIO_NONE)
        return DLB_OK;
    if (set->mode != DLB_MODE_INFER) {
        snprintf(why, len, "scenario = %s measures inference: this "
                 "configuration runs mode = %s (set mode = infer)", name,
                 dlb_mode_names[set->mode]);
        return DLB_ERR_UNSUPPORTED;
    }
    if (set->scenario == DLB_SCENARIO_SINGLESTREAM && set->batch != 1 &&
        !strcmp(set->workload, "cnn")) {
        snprintf(why, len, "scenario = singlestream issues one sample per "
                 "query: it needs batch = 1, not %lld (a [sweep] filter "
                 "\"skip = scenario=singlestream batch=%lld\" leaves it out)",
                 (long long)set->batch, (long long)set->batch);
        return DLB_ERR_UNSUPPORTED;
    }
    return DLB_OK;
}

dlb_status dlb_child_scenario_run(const struct dlb_core_settings *set,
                                  const struct dlb_child_scenario_sut *sut,
                                  json_t **out, char *why, size_t len)
{
    struct scen_clock clk = {sut, 0};
    double sps = sut->samples_per_step;
    *out = NULL;
    if (!(sps >= 1) || sps > UINT32_MAX || sps != floor(sps)) {
        snprintf(why, len, "scenario = %s: a step of %g samples is no batch "
                 "of whole samples", dlb_scenario_names[set->scenario], sps);
        return DLB_ERR_UNSUPPORTED;
    }
    if (set->scenario == DLB_SCENARIO_SINGLESTREAM && sps != 1) {
        snprintf(why, len, "scenario = singlestream issues one sample per "
                 "query: this workload's step computes %g", sps);
        return DLB_ERR_UNSUPPORTED;
    }
    struct dlb_scen_sut s = {scen_serve, scen_now, scen_wait_until, &clk,
                             (uint32_t)sps};
    struct dlb_scen_rules rules = {
        .min_queries = (uint64_t)set->scenario_min_queries,
        .min_duration_s = set->scenario_min_duration_s,
        .latency_bound_s = set->server_latency_bound_s,
        .target_qps = set->server_target_qps,
        .resolution = set->server_search_resolution,
        .max_probes = (unsigned)set->server_search_probes,
        .seed = sut->seed, .service_s = sut->step_s};
    struct dlb_scen_result res;
    dlb_status st = dlb_scen_run((enum dlb_scen_kind)set->scenario, &s,
                                 &rules, &res);
    if (st == DLB_OK) {
        *out = dlb_scen_result_json(&res, &rules, (uint32_t)sps,
                                    sut->now ? "workload" : "monotonic");
        if (!*out)
            st = DLB_ERR_NOMEM;
    }
    if (st != DLB_OK)
        snprintf(why, len, "scenario = %s: %s", dlb_scenario_names[set->scenario],
                 dlb_status_name(st));
    dlb_scen_result_free(&res);
    return st;
}
