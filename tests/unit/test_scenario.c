/* The inference scenarios' engine (core/scenario/) on a simulated clock:
 * Poisson arrivals, percentiles, the server's verdict, single-stream and
 * offline runs, the server's search against a planted capacity, batching,
 * and latency measured from the schedule (no coordinated omission). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "scenario/scenario.h"
#include "scenario/scenario_json.h"

/* A system under test on a simulated clock: each serve takes `service`
 * seconds (plus `stall` on serve number `stall_at`), or service_of(i)
 * when set; idling jumps the clock. */
struct fake {
    double t, service, stall;
    long serves, stall_at, waits;
    uint32_t max_n;
    double (*service_of)(long i);
};

static dlb_status fake_serve(void *ctx, uint32_t n)
{
    struct fake *f = ctx;
    f->t += f->service_of ? f->service_of(f->serves) : f->service;
    if (f->serves == f->stall_at)
        f->t += f->stall;
    f->serves++;
    if (n > f->max_n)
        f->max_n = n;
    return DLB_OK;
}

static double fake_now(void *ctx)
{
    return ((struct fake *)ctx)->t;
}

static void fake_wait(void *ctx, double t)
{
    struct fake *f = ctx;
    if (t > f->t)
        f->t = t;
    f->waits++;
}

static struct dlb_scen_sut sut_of(struct fake *f, uint32_t batch)
{
    return (struct dlb_scen_sut){fake_serve, fake_now, fake_wait, f, batch};
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_arrivals(void)
{
    enum { N = 200000 };
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    dlb_scen_arrivals(7, 250.0, N, a);
    /* mean gap 1/250 within 1% (its sd over N draws is 0.22%) */
    CHECK_NEAR(a[N - 1] / N, 1.0 / 250, 0.01 / 250);
    size_t above = 0;
    double prev = 0, ss = 0;
    for (size_t i = 0; i < N; i++) {
        double g = a[i] - prev;
        CHECK(g >= 0);
        above += g > 1.0 / 250;
        ss += (g - 1.0 / 250) * (g - 1.0 / 250);
        prev = a[i];
    }
    /* exponential: P(gap > mean) = 1/e, sd = mean */
    CHECK_NEAR((double)above / N, exp(-1.0), 0.005);
    CHECK_NEAR(sqrt(ss / N) * 250, 1.0, 0.02);
    /* the same seed at twice the rate: the same schedule, compressed */
    dlb_scen_arrivals(7, 500.0, N, b);
    int scaled = 1;
    for (size_t i = 0; i < N; i++)
        scaled &= fabs(b[i] * 2 - a[i]) <= 1e-12 * a[i];
    CHECK(scaled);
    dlb_scen_arrivals(8, 250.0, N, b);
    CHECK(b[0] != a[0] && b[N - 1] != a[N - 1]);
    free(a);
    free(b);
}

static void test_percentile(void)
{
    double v[1000];
    for (int i = 0; i < 100; i++)
        v[i] = i + 1;
    CHECK(dlb_scen_percentile(v, 100, 500) == 50);
    CHECK(dlb_scen_percentile(v, 100, 900) == 90);
    CHECK(dlb_scen_percentile(v, 100, 990) == 99);
    CHECK(dlb_scen_percentile(v, 10, 990) == 10);
    CHECK(dlb_scen_percentile(v, 10, 900) == 9);
    CHECK(dlb_scen_percentile(v, 1, 990) == 1);
    for (int i = 0; i < 1000; i++)
        v[i] = i + 1;
    CHECK(dlb_scen_percentile(v, 1000, 990) == 990);
    CHECK(dlb_scen_percentile(v, 1000, 999) == 999);
    /* a run's figures: sorted here, max the largest */
    double lat[5] = {5, 1, 4, 2, 3};
    struct dlb_scen_run r;
    dlb_scen_run_latencies(&r, lat, 5);
    CHECK(r.p50_s == 3 && r.p90_s == 5 && r.p99_s == 5 && r.max_s == 5);
}

static struct dlb_scen_run good_run(void)
{
    struct dlb_scen_run r;
    memset(&r, 0, sizeof r);
    r.queries = r.planned = 2000;
    r.duration_s = 2.0;
    r.scheduled_qps = 1000;
    r.qps = 1000;
    r.p99_s = 0.015;
    return r;
}

static void test_verdict(void)
{
    struct dlb_scen_rules rules = {.min_queries = 1024, .min_duration_s = 1,
                                   .latency_bound_s = 0.015};
    struct dlb_scen_run r = good_run();
    CHECK(dlb_scen_server_verdict(&r, &rules) == 1 && r.valid); /* at the bound */
    CHECK(strstr(r.why, "<= the bound") != NULL);
    r = good_run();
    r.p99_s = 0.0150001;
    CHECK(dlb_scen_server_verdict(&r, &rules) == 0 && strstr(r.why, "p99 15") != NULL);
    r = good_run();
    r.queries = 1000;
    CHECK(dlb_scen_server_verdict(&r, &rules) == 0 && strstr(r.why, "minimum 1024"));
    r = good_run();
    r.duration_s = 0.9;
    CHECK(dlb_scen_server_verdict(&r, &rules) == 0 && strstr(r.why, "minimum 1 s"));
    r = good_run();
    r.qps = 899;
    CHECK(dlb_scen_server_verdict(&r, &rules) == 0 && strstr(r.why, "completed"));
    r = good_run();
    r.qps = 900;
    CHECK(dlb_scen_server_verdict(&r, &rules) == 1);
    r = good_run();
    r.stopped_early = 1;
    CHECK(dlb_scen_server_verdict(&r, &rules) == 0 && strstr(r.why, "stopped"));
    r = good_run();
    r.p99_s = NAN;
    CHECK(dlb_scen_server_verdict(&r, &rules) == 0);
    /* above what the serve time sustains: invalid however short the run
     * kept the queue */
    r = good_run();
    r.target_qps = 1001;
    r.capacity_qps = 1000;
    CHECK(dlb_scen_server_verdict(&r, &rules) == 0 && strstr(r.why, "sustains"));
    r.target_qps = 1000;
    CHECK(dlb_scen_server_verdict(&r, &rules) == 1);
}

static double ten_steps(long i)
{
    return 1e-3 * (double)(i % 10 + 1);
}

static void test_singlestream(void)
{
    struct fake f = {.t = 5.0, .service = 0.002};
    struct dlb_scen_sut s = sut_of(&f, 1);
    struct dlb_scen_rules rules = {.min_queries = 100, .min_duration_s = 1.0};
    struct dlb_scen_run r;
    CHECK(dlb_scen_singlestream(&s, &rules, &r) == DLB_OK);
    /* 1 s at 2 ms a query, more than the minimum count */
    CHECK(r.queries >= 500 && r.queries <= 501);
    CHECK(r.duration_s >= 1.0);
    CHECK_NEAR(r.p90_s, 0.002, 1e-9);
    CHECK_NEAR(r.qps, 500, 1.0);
    CHECK(r.valid && f.waits == 0 && f.max_n == 1);
    /* the count rules when it is longer: p90 of 1..10 ms, 100 each */
    struct fake g = {.service_of = ten_steps};
    s = sut_of(&g, 1);
    rules = (struct dlb_scen_rules){.min_queries = 1000, .min_duration_s = 0};
    CHECK(dlb_scen_singlestream(&s, &rules, &r) == DLB_OK);
    CHECK(r.queries == 1000);
    CHECK_NEAR(r.p90_s, 0.009, 1e-9);
    CHECK_NEAR(r.p50_s, 0.005, 1e-9);
    CHECK_NEAR(r.max_s, 0.010, 1e-9);
}

static void test_offline(void)
{
    struct fake f = {.service = 0.004};
    struct dlb_scen_sut s = sut_of(&f, 8);
    struct dlb_scen_rules rules = {.min_queries = 100, .min_duration_s = 0.5,
                                   .service_s = 0.004};
    struct dlb_scen_run r;
    CHECK(dlb_scen_offline(&s, &rules, &r) == DLB_OK);
    /* 0.5 s at 0.5 ms a sample, 10% over, in whole batches of 8 */
    CHECK(r.queries == 1104 && r.queries % 8 == 0);
    CHECK(f.serves == 138 && f.max_n == 8 && f.waits == 0);
    CHECK_NEAR(r.qps, 2000, 1e-6);
    CHECK(r.valid && r.duration_s >= 0.5);
    /* every sample was issued at t0: the last ones waited the whole run */
    CHECK_NEAR(r.max_s, r.duration_s, 1e-12);
    /* a serve time measured ten times too short: run again, longer */
    struct fake g = {.service = 0.004};
    s = sut_of(&g, 8);
    rules.service_s = 0.0004;
    CHECK(dlb_scen_offline(&s, &rules, &r) == DLB_OK);
    CHECK(r.valid && r.duration_s >= 0.5);
    CHECK_NEAR(r.qps, 2000, 1e-6);
}

static void test_server_idle(void)
{
    /* 10 queries/s on a 1 us service: no queue, every latency 1 us */
    struct fake f = {.t = 100.0, .service = 1e-6};
    struct dlb_scen_sut s = sut_of(&f, 1);
    struct dlb_scen_rules rules = {.min_queries = 200, .min_duration_s = 0,
                                   .latency_bound_s = 0.015, .seed = 3};
    struct dlb_scen_run r;
    CHECK(dlb_scen_server_run(&s, &rules, 10.0, &r, NULL) == DLB_OK);
    CHECK(r.queries == 200 && r.planned == 200);
    CHECK_NEAR(r.p99_s, 1e-6, 1e-9);
    CHECK_NEAR(r.max_s, 1e-6, 1e-9);
    CHECK(f.waits == 200 && r.valid);
    /* the duration rule lengthens the schedule past the count */
    rules.min_duration_s = 60;
    CHECK(dlb_scen_server_run(&s, &rules, 10.0, &r, NULL) == DLB_OK);
    CHECK(r.planned > 200 && r.duration_s >= 60 && r.valid);
    CHECK_NEAR(r.scheduled_qps, 10, 2.0);
}

/* The reference for the search: the M/D/1 queue by Lindley's recursion
 * on the same schedule, written out here independently of the engine. */
static double md1_p99(uint64_t seed, double qps, size_t n, double d,
                      long stall_at, double stall, double *lat_out)
{
    double *a = malloc(n * sizeof *a), *lat = malloc(n * sizeof *lat);
    dlb_scen_arrivals(seed, qps, n, a);
    double done = 0;
    for (size_t i = 0; i < n; i++) {
        double start = a[i] > done ? a[i] : done;
        done = start + d + ((long)i == stall_at ? stall : 0);
        lat[i] = done - a[i];
    }
    if (lat_out)
        memcpy(lat_out, lat, n * sizeof *lat);
    qsort(lat, n, sizeof *lat, cmp);
    size_t rank = (n * 99 + 99) / 100; /* ceil(0.99 n) */
    double p = lat[rank - 1];
    free(a);
    free(lat);
    return p;
}

static void test_search_planted(void)
{
    const double d = 0.001, bound = 0.015;
    const size_t n = 2000;
    /* the planted capacity: the rate where this queue's p99 crosses the
     * bound, to 1e-9 */
    double lo = 1, hi = 1 / d;
    CHECK(md1_p99(11, lo, n, d, -1, 0, NULL) <= bound);
    CHECK(md1_p99(11, hi, n, d, -1, 0, NULL) > bound);
    for (int k = 0; k < 60; k++) {
        double mid = 0.5 * (lo + hi);
        *(md1_p99(11, mid, n, d, -1, 0, NULL) <= bound ? &lo : &hi) = mid;
    }
    double cap = lo;
    CHECK(cap > 0.5 / d && cap < 1 / d);

    struct fake f = {.t = 1.0, .service = d};
    struct dlb_scen_sut s = sut_of(&f, 1);
    struct dlb_scen_rules rules = {.min_queries = n, .min_duration_s = 0,
                                   .latency_bound_s = bound, .resolution = 0.01,
                                   .max_probes = 30, .seed = 11, .service_s = d};
    struct dlb_scen_result res;
    CHECK(dlb_scen_server(&s, &rules, &res) == DLB_OK);
    CHECK(res.searched && res.converged && res.n_probes <= 30);
    /* the bracket holds the planted capacity and is within the resolution */
    CHECK(res.qps_lo <= cap * (1 + 1e-9) && res.qps_hi >= cap * (1 - 1e-9));
    CHECK(res.qps_hi - res.qps_lo <= 0.01 * res.qps_lo);
    CHECK(res.figure == res.qps_lo && res.run.valid);
    CHECK(res.run.target_qps == res.qps_lo && res.run.queries == n);
    CHECK(res.run.p99_s <= bound);
    /* every probe's verdict agrees with the reference queue */
    int agree = 1;
    for (size_t i = 0; i < res.n_probes; i++) {
        const struct dlb_scen_run *p = &res.probes[i];
        agree &= p->valid ==
                 (md1_p99(11, p->target_qps, n, d, -1, 0, NULL) <= bound);
    }
    CHECK(agree);
    dlb_scen_result_free(&res);

    /* out of probes before the bracket closes: not converged, said so */
    rules.max_probes = 3;
    CHECK(dlb_scen_server(&s, &rules, &res) == DLB_OK);
    CHECK(res.n_probes == 3 && !res.converged);
    dlb_scen_result_free(&res);

    /* a bound below the service time: nothing is valid, and the first
     * probe says so, rather than halving the rate four times more */
    rules.max_probes = 5;
    rules.latency_bound_s = 0.5 * d;
    CHECK(dlb_scen_server(&s, &rules, &res) == DLB_OK);
    CHECK(isnan(res.figure) && !res.run.valid && isnan(res.qps_lo));
    CHECK(res.n_probes == 1 && !res.converged);
    CHECK(strstr(res.run.why, "no rate can meet it") != NULL);
    CHECK(strstr(res.run.why, "one step of 1 ms") != NULL);
    dlb_scen_result_free(&res);

    /* a serve slower now than the step measured before (within the
     * bound): no proof that a lower rate fails, so every probe runs */
    f.service = 4 * d;
    rules.latency_bound_s = 2 * d;
    CHECK(dlb_scen_server(&s, &rules, &res) == DLB_OK);
    CHECK(isnan(res.qps_lo) && res.n_probes == 5);
    CHECK(strstr(res.run.why, "no rate can meet it") == NULL);
    dlb_scen_result_free(&res);
}

static void test_search_batching(void)
{
    /* a serve of up to 4 queued queries costs what one does: the valid
     * rate goes past one-at-a-time capacity, batches never past 4 */
    struct fake f = {.service = 0.001};
    struct dlb_scen_sut s = sut_of(&f, 4);
    struct dlb_scen_rules rules = {.min_queries = 2000, .latency_bound_s = 0.015,
                                   .resolution = 0.02, .max_probes = 30,
                                   .seed = 5, .service_s = 0.001};
    struct dlb_scen_result res;
    CHECK(dlb_scen_server(&s, &rules, &res) == DLB_OK);
    CHECK(res.converged && res.figure > 1000 && res.figure < 4000);
    uint32_t most = 0;
    for (size_t i = 0; i < res.n_probes; i++)
        most = res.probes[i].max_batch > most ? res.probes[i].max_batch : most;
    CHECK(most == 4 && f.max_n == 4);
    /* runs this short keep a growing queue within 15 ms a while: the
     * capacity rule turns down every rate above 4 / serve time */
    int capped = 1;
    for (size_t i = 0; i < res.n_probes; i++)
        capped &= res.probes[i].target_qps <= 4000 || !res.probes[i].valid;
    CHECK(capped);
    dlb_scen_result_free(&res);
}

static void test_coordinated_omission(void)
{
    /* 100 queries/s on a 1 ms service; serve 100 stalls half a second.
     * The queries that arrive meanwhile wait: their latencies run from
     * their scheduled arrivals, as the reference queue's do. */
    enum { N = 1000 };
    struct fake f = {.t = 2.0, .service = 0.001, .stall_at = 100, .stall = 0.5};
    struct dlb_scen_sut s = sut_of(&f, 1);
    struct dlb_scen_rules rules = {.min_queries = N, .latency_bound_s = 1.0,
                                   .seed = 9};
    struct dlb_scen_run r;
    double *lat, ref[N];
    double p99 = md1_p99(9, 100.0, N, 0.001, 100, 0.5, ref);
    CHECK(dlb_scen_server_run(&s, &rules, 100.0, &r, &lat) == DLB_OK);
    CHECK(r.queries == N && lat);
    int same = 1, queued = 0;
    for (int i = 0; lat && i < N; i++) {
        same &= fabs(lat[i] - ref[i]) <= 1e-9;
        queued += lat[i] > 0.1;
    }
    CHECK(same);
    /* about 50 queries arrive in the stall: the tail shows it, where a
     * latency from when the server took the query would be 1 ms */
    CHECK(queued >= 30);
    CHECK(r.p99_s > 0.3 && fabs(r.p99_s - p99) <= 1e-9);
    CHECK(r.valid); /* within a bound of 1 s */
    free(lat);
    /* under MLPerf's 15 ms the run is invalid, and stops once it must be */
    struct fake g = {.t = 2.0, .service = 0.001, .stall_at = 100, .stall = 0.5};
    s = sut_of(&g, 1);
    rules.latency_bound_s = 0.015;
    CHECK(dlb_scen_server_run(&s, &rules, 100.0, &r, NULL) == DLB_OK);
    CHECK(!r.valid && r.stopped_early && r.queries < N && r.planned == N);
}

static void test_fixed_rate_and_json(void)
{
    struct fake f = {.service = 0.001};
    struct dlb_scen_sut s = sut_of(&f, 1);
    struct dlb_scen_rules rules = {.min_queries = 500, .latency_bound_s = 0.015,
                                   .target_qps = 200, .max_probes = 12,
                                   .resolution = 0.05, .seed = 1, .service_s = 0.001};
    struct dlb_scen_result res;
    CHECK(dlb_scen_run(DLB_SCEN_SERVER, &s, &rules, &res) == DLB_OK);
    CHECK(!res.searched && res.n_probes == 1 && res.figure == 200 && res.run.valid);
    json_t *j = dlb_scen_result_json(&res, &rules, 1, "workload");
    json_t *rec = json_pack("{s:o}", "scenario", j);
    struct dlb_scen_summary sum;
    CHECK(dlb_scen_summary_read(rec, &sum) == 0);
    CHECK(!strcmp(sum.name, "server") && !strcmp(sum.figure_name, "server_qps"));
    CHECK(sum.valid && sum.figure == 200 && sum.n_probes == 1 && !sum.searched);
    CHECK(sum.bound_s == 0.015 && sum.queries == 500 && sum.batch == 1);
    CHECK(sum.p90_s >= sum.p50_s && sum.p99_s >= sum.p90_s);
    char cell[100];
    dlb_scen_summary_cell(&sum, cell, sizeof cell);
    CHECK(!strcmp(cell, "server 200.0 queries/s"));
    json_decref(rec);
    dlb_scen_result_free(&res);

    CHECK(dlb_scen_run(DLB_SCEN_SINGLESTREAM, &s, &rules, &res) == DLB_OK);
    CHECK(res.figure == res.run.p90_s);
    j = dlb_scen_result_json(&res, &rules, 1, "monotonic");
    rec = json_pack("{s:o}", "scenario", j);
    CHECK(dlb_scen_summary_read(rec, &sum) == 0 && sum.n_probes == 0);
    CHECK(isnan(sum.bound_s) && !strcmp(sum.unit, "s"));
    dlb_scen_summary_cell(&sum, cell, sizeof cell);
    CHECK(!strcmp(cell, "singlestream p90 1.000 ms"));
    dlb_scen_num(cell, sizeof cell, 12403.2);
    CHECK(!strcmp(cell, "12403"));
    dlb_scen_num(cell, sizeof cell, 0.028681);
    CHECK(!strcmp(cell, "0.02868"));
    dlb_scen_num(cell, sizeof cell, NAN);
    CHECK(!strcmp(cell, "none"));
    json_decref(rec);
    dlb_scen_result_free(&res);
    /* a record without the member, or with a broken one */
    rec = json_pack("{s:{s:i}}", "scenario", "name", 3);
    CHECK(dlb_scen_summary_read(rec, &sum) == -1);
    json_decref(rec);
}

int main(void)
{
    test_arrivals();
    test_percentile();
    test_verdict();
    test_singlestream();
    test_offline();
    test_server_idle();
    test_search_planted();
    test_search_batching();
    test_coordinated_omission();
    test_fixed_rate_and_json();
    return check_exit();
}
