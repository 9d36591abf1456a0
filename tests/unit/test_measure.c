/* Unit tests of core/stats/measure.c on a simulated clock: every time the loop
 * reads comes from the test, so each of its decisions (when the warm-up
 * ends, how many steps make a sample, when sampling stops) has one right
 * answer, worked out beside it, on any machine and under any load. Step
 * times are multiples of 2^-10 s where a sum must be exact. */
#include "stats/measure.h"

#include "check.h"

#include <stddef.h>

#define UNIT (1.0 / 1024)

/* The simulated machine: reading the clock costs read_s; a step costs
 * step_s, or alternately step_s and 2 x step_s when `alternate` is set
 * (a spread no interval of the median can narrow below a half). */
struct sim {
    double t;
    double read_s;
    double step_s;
    int alternate;
    size_t steps;
    size_t fail_at; /* the step (1-based) that fails; 0: none */
};

static double sim_now(void *ctx)
{
    struct sim *s = ctx;
    double t = s->t;
    s->t += s->read_s;
    return t;
}

static dlb_status sim_step(void *ctx)
{
    struct sim *s = ctx;
    s->steps++;
    if (s->steps == s->fail_at)
        return DLB_ERR_RUNTIME;
    s->t += s->alternate && s->steps % 2 == 0 ? 2 * s->step_s : s->step_s;
    return DLB_OK;
}

static struct dlb_measure_spec spec_of(struct sim *s)
{
    return (struct dlb_measure_spec){
        .warmup_min_s = 0.01, .warmup_max_s = 1, .min_samples = 20,
        .max_samples = 100000, .ci_target = 0.01, .time_cap_s = 10,
        .now = sim_now, .now_ctx = s,
    };
}

/* Reading the clock costs 25 ns and a step 1 us. The overhead is the cost
 * of a read pair's second read, 25 ns; a warm-up step reads t0, steps,
 * reads t1: 1.025 us. Steps per sample double from 1 while 25 ns > 0.1%
 * of (1.025 us x per), i.e. while per < 24.4: 32. A sample reads t0,
 * runs 32 steps, reads t1: (25 ns + 32 us) / 32 per step, and the
 * timer's share of it is 25 ns / 32.025 us = 0.078%, under 0.1%. */
static void test_steps_per_sample_cover_the_timer(void)
{
    struct sim s = {.read_s = 25e-9, .step_s = 1e-6};
    struct dlb_measure_spec spec = spec_of(&s);
    struct dlb_measure_result m;
    CHECK(dlb_measure_run(&spec, sim_step, &s, &m) == DLB_OK);
    CHECK_NEAR(m.timer_overhead_s, 25e-9, 1e-18);
    CHECK(m.steps_per_sample == 32);
    CHECK_NEAR(m.stats.median, (25e-9 + 32e-6) / 32, 1e-15);
    CHECK(m.timer_overhead_s < 0.001 * m.stats.median * m.steps_per_sample);
    dlb_measure_result_free(&m);

    /* The suite's steps_per_sample is a floor: 64 stays 64. */
    s = (struct sim){.read_s = 25e-9, .step_s = 1e-6};
    spec = spec_of(&s);
    spec.steps_per_sample = 64;
    CHECK(dlb_measure_run(&spec, sim_step, &s, &m) == DLB_OK);
    CHECK(m.steps_per_sample == 64);
    dlb_measure_result_free(&m);
}

/* A clock that costs nothing to read (a workload's own): overhead 0, one
 * step per sample, every sample the step time itself. Twenty equal
 * samples have an interval of zero width: converged at min_samples. */
static void test_free_clock(void)
{
    struct sim s = {.step_s = 4 * UNIT};
    struct dlb_measure_spec spec = spec_of(&s);
    struct dlb_measure_result m;
    CHECK(dlb_measure_run(&spec, sim_step, &s, &m) == DLB_OK);
    CHECK(m.timer_overhead_s == 0);
    CHECK(m.steps_per_sample == 1);
    CHECK(m.n == 20 && m.converged);
    CHECK(m.stats.median == 4 * UNIT && m.stats.min == m.stats.max);
    CHECK(m.measure_s == 20 * 4 * UNIT);
    dlb_measure_result_free(&m);
}

/* Equal steps settle as soon as there are two windows of five and the
 * minimum warm-up has passed: at 4/1024 s a step, warmup_min 0.01 s
 * needs 3 steps, the windows 10. With 1/1024 s a step and warmup_min
 * 24/1024 s, the time decides: 24 steps. */
static void test_warmup_settles(void)
{
    struct sim s = {.step_s = 4 * UNIT};
    struct dlb_measure_spec spec = spec_of(&s);
    struct dlb_measure_result m;
    CHECK(dlb_measure_run(&spec, sim_step, &s, &m) == DLB_OK);
    CHECK(m.settled && m.warmup_steps == 10);
    CHECK(m.warmup_s == 10 * 4 * UNIT);
    dlb_measure_result_free(&m);

    s = (struct sim){.step_s = UNIT};
    spec = spec_of(&s);
    spec.warmup_min_s = 24 * UNIT;
    CHECK(dlb_measure_run(&spec, sim_step, &s, &m) == DLB_OK);
    CHECK(m.settled && m.warmup_steps == 24);
    dlb_measure_result_free(&m);
}

/* Steps alternating 1 and 2 units never settle (the two windows' medians
 * are 1 and 2 units in turn) and never converge (the median's interval
 * spans both): warmup_max ends the warm-up at the first step past it, the
 * time cap the sampling at the first sample past it. */
static void test_caps_end_an_unsteady_run(void)
{
    struct sim s = {.step_s = UNIT, .alternate = 1};
    struct dlb_measure_spec spec = spec_of(&s);
    spec.warmup_max_s = 32 * UNIT;
    spec.time_cap_s = 128 * UNIT;
    struct dlb_measure_result m;
    CHECK(dlb_measure_run(&spec, sim_step, &s, &m) == DLB_OK);
    CHECK(!m.settled);
    CHECK(m.warmup_s >= 32 * UNIT && m.warmup_s < 34 * UNIT);
    CHECK(!m.converged);
    CHECK(m.measure_s >= 128 * UNIT && m.measure_s < 130 * UNIT);
    /* one step a sample, so the samples add up to the measuring time */
    double sum = 0;
    for (size_t i = 0; i < m.n; i++)
        sum += m.samples[i];
    CHECK(sum == m.measure_s);
    CHECK(m.stats.min == UNIT && m.stats.max == 2 * UNIT);
    dlb_measure_result_free(&m);

    /* max_samples ends it first when it comes first */
    s = (struct sim){.step_s = UNIT, .alternate = 1};
    spec = spec_of(&s);
    spec.max_samples = 7;
    CHECK(dlb_measure_run(&spec, sim_step, &s, &m) == DLB_OK);
    CHECK(m.n == 7 && !m.converged);
    dlb_measure_result_free(&m);
}

/* A failing step ends the measurement with its status; what was measured
 * before it is kept. */
static void test_step_failure(void)
{
    struct sim s = {.step_s = 4 * UNIT, .fail_at = 3};
    struct dlb_measure_spec spec = spec_of(&s);
    struct dlb_measure_result m;
    CHECK(dlb_measure_run(&spec, sim_step, &s, &m) == DLB_ERR_RUNTIME);
    CHECK(m.warmup_steps == 2 && m.n == 0);
    dlb_measure_result_free(&m);

    s = (struct sim){.step_s = 4 * UNIT, .fail_at = 15};
    spec = spec_of(&s);
    CHECK(dlb_measure_run(&spec, sim_step, &s, &m) == DLB_ERR_RUNTIME);
    CHECK(m.warmup_steps == 10 && m.n == 4);
    dlb_measure_result_free(&m);
}

int main(void)
{
    test_steps_per_sample_cover_the_timer();
    test_free_clock();
    test_warmup_settles();
    test_caps_end_an_unsteady_run();
    test_step_failure();
    return check_exit();
}
