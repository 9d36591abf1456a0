/* One run of each scenario against a system under test (scenario.h). */
#include "scenario/scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario_impl.h"

/* Offline sizes its run from the measured serve time with this margin, so
 * that a run lasts the minimum duration at the first try. */
#define OFFLINE_MARGIN 1.1
#define OFFLINE_TRIES 3

static void run_init(struct dlb_scen_run *r)
{
    memset(r, 0, sizeof *r);
    r->target_qps = r->scheduled_qps = NAN;
    r->p50_s = r->p90_s = r->p99_s = r->max_s = NAN;
    r->capacity_qps = NAN;
}

/* Room for one more double in *v (of *cap). */
static int grow(double **v, size_t *cap, size_t n)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 1024;
    double *p = realloc(*v, nc * sizeof *p);
    if (!p)
        return -1;
    *v = p;
    *cap = nc;
    return 0;
}

dlb_status dlb_scen_singlestream(const struct dlb_scen_sut *sut,
                                 const struct dlb_scen_rules *rules,
                                 struct dlb_scen_run *out)
{
    double *lat = NULL;
    size_t cap = 0, n = 0;
    dlb_status st = DLB_OK;
    run_init(out);
    double t0 = sut->now(sut->ctx), c = t0;
    while ((n < rules->min_queries || c - t0 < rules->min_duration_s) &&
           n < DLB_SCEN_MAX_QUERIES) {
        if (grow(&lat, &cap, n)) {
            st = DLB_ERR_NOMEM;
            break;
        }
        /* the next query is issued when the previous one has completed */
        double t = sut->now(sut->ctx);
        if ((st = sut->serve(sut->ctx, 1)) != DLB_OK)
            break;
        c = sut->now(sut->ctx);
        lat[n++] = c - t;
    }
    out->queries = out->planned = n;
    out->duration_s = c - t0;
    out->qps = out->duration_s > 0 ? (double)n / out->duration_s : NAN;
    out->max_batch = 1;
    dlb_scen_run_latencies(out, lat, n);
    free(lat);
    out->valid = st == DLB_OK;
    snprintf(out->why, sizeof out->why, "%llu queries of one sample in %.4g s, "
             "each issued when the previous one completed",
             (unsigned long long)n, out->duration_s);
    return st;
}

/* Every one of n samples issued at t0, served `batch` at a time; each
 * sample's latency is its batch's completion. */
static dlb_status offline_once(const struct dlb_scen_sut *sut, size_t n,
                               double *lat, struct dlb_scen_run *out)
{
    uint32_t b = sut->batch ? sut->batch : 1;
    double t0 = sut->now(sut->ctx), c = t0;
    size_t done = 0;
    while (done < n) {
        uint32_t k = n - done < b ? (uint32_t)(n - done) : b;
        dlb_status st = sut->serve(sut->ctx, k);
        if (st != DLB_OK)
            return st;
        c = sut->now(sut->ctx);
        for (uint32_t q = 0; q < k; q++)
            lat[done + q] = c - t0;
        done += k;
    }
    out->queries = out->planned = n;
    out->duration_s = c - t0;
    out->max_batch = n < b ? (uint32_t)n : b;
    return DLB_OK;
}

static size_t offline_size(const struct dlb_scen_rules *rules, uint32_t b,
                           double seconds_per_sample)
{
    double want = rules->min_duration_s > 0 && seconds_per_sample > 0
                      ? ceil(rules->min_duration_s / seconds_per_sample *
                             OFFLINE_MARGIN)
                      : 0;
    if (want < (double)rules->min_queries)
        want = (double)rules->min_queries;
    if (want > DLB_SCEN_MAX_QUERIES)
        want = DLB_SCEN_MAX_QUERIES;
    size_t n = (size_t)want;
    return (n + b - 1) / b * b; /* whole batches: none runs padded */
}

dlb_status dlb_scen_offline(const struct dlb_scen_sut *sut,
                            const struct dlb_scen_rules *rules,
                            struct dlb_scen_run *out)
{
    uint32_t b = sut->batch ? sut->batch : 1;
    double per_sample = rules->service_s / b;
    dlb_status st = DLB_OK;
    run_init(out);
    size_t n = offline_size(rules, b, per_sample);
    double *lat = NULL;
    /* A run shorter than the minimum (the serve time measured before was
     * off) is run again, larger, from what this one took. */
    for (int tries = 0; tries < OFFLINE_TRIES; tries++) {
        free(lat);
        if (!(lat = malloc(n * sizeof *lat)))
            return DLB_ERR_NOMEM;
        if ((st = offline_once(sut, n, lat, out)) != DLB_OK ||
            out->duration_s >= rules->min_duration_s || n >= DLB_SCEN_MAX_QUERIES)
            break;
        n = offline_size(rules, b, out->duration_s / (double)n);
    }
    out->qps = out->duration_s > 0 ? (double)out->queries / out->duration_s : NAN;
    dlb_scen_run_latencies(out, lat, st == DLB_OK ? out->queries : 0);
    free(lat);
    out->valid = st == DLB_OK && out->duration_s >= rules->min_duration_s;
    if (out->valid)
        snprintf(out->why, sizeof out->why, "%llu samples issued at once, "
                 "served in batches of up to %u in %.4g s",
                 (unsigned long long)out->queries, b, out->duration_s);
    else
        snprintf(out->why, sizeof out->why, "ran %.4g s < the minimum %.4g s "
                 "after %d tries", out->duration_s, rules->min_duration_s,
                 OFFLINE_TRIES);
    return st;
}

/* The schedule of a server run: arrivals until both minimums are met. */
static dlb_status schedule(const struct dlb_scen_rules *rules, double qps,
                           double **a, size_t *n)
{
    struct dlb_rng r;
    size_t cap = 0;
    double t = 0;
    *a = NULL;
    *n = 0;
    dlb_scen_schedule_seed(&r, rules->seed);
    while ((*n < rules->min_queries || t < rules->min_duration_s) &&
           *n < DLB_SCEN_MAX_QUERIES) {
        if (grow(a, &cap, *n))
            return DLB_ERR_NOMEM;
        (*a)[(*n)++] = t += dlb_scen_next_gap(&r, qps);
    }
    return DLB_OK;
}

dlb_status dlb_scen_server_run(const struct dlb_scen_sut *sut,
                               const struct dlb_scen_rules *rules, double qps,
                               struct dlb_scen_run *out, double **lat_out)
{
    double *a, *lat = NULL;
    size_t n, i = 0, over = 0;
    uint32_t b = sut->batch ? sut->batch : 1;
    run_init(out);
    out->target_qps = qps;
    if (rules->service_s > 0)
        out->capacity_qps = b / rules->service_s;
    if (lat_out)
        *lat_out = NULL;
    dlb_status st = schedule(rules, qps, &a, &n);
    if (st == DLB_OK && !(lat = malloc((n ? n : 1) * sizeof *lat)))
        st = DLB_ERR_NOMEM;
    if (st != DLB_OK) {
        free(a);
        return st;
    }
    /* p99 (nearest rank) exceeds the bound once more than n - rank of
     * the latencies do, whatever the rest will be */
    size_t allowed = n - ((size_t)n * 990 + 999) / 1000;
    double t0 = sut->now(sut->ctx), c = t0;
    while (i < n) {
        double t = sut->now(sut->ctx);
        if (t0 + a[i] > t) { /* nothing queued: idle until the next arrival */
            sut->wait_until(sut->ctx, t0 + a[i]);
            t = sut->now(sut->ctx);
        }
        /* FIFO: the oldest query, and those queued behind it, up to batch */
        uint32_t k = 1;
        while (k < b && i + k < n && t0 + a[i + k] <= t)
            k++;
        if ((st = sut->serve(sut->ctx, k)) != DLB_OK)
            break;
        c = sut->now(sut->ctx);
        if (k > out->max_batch)
            out->max_batch = k;
        /* from the scheduled arrival, not from when the query was taken */
        for (uint32_t q = 0; q < k; q++, i++)
            over += (lat[i] = c - (t0 + a[i])) > rules->latency_bound_s;
        if (over > allowed) {
            out->stopped_early = 1;
            break;
        }
    }
    out->queries = i;
    out->planned = n;
    out->duration_s = c - t0;
    out->scheduled_qps = n ? (double)n / a[n - 1] : NAN;
    out->qps = out->duration_s > 0 ? (double)i / out->duration_s : NAN;
    free(a);
    if (lat_out && st == DLB_OK) {
        double *copy = malloc((i ? i : 1) * sizeof *copy);
        if (copy)
            memcpy(copy, lat, i * sizeof *copy);
        *lat_out = copy;
    }
    dlb_scen_run_latencies(out, lat, i);
    free(lat);
    if (st == DLB_OK)
        dlb_scen_server_verdict(out, rules);
    return st;
}
