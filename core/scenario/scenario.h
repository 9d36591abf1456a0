/* MLPerf-style inference scenarios (LoadGen's semantics, short runs):
 *
 *   singlestream  one sample per query, the next query issued when the
 *                 previous one completes; the figure is the 90th
 *                 percentile latency.
 *   offline       every sample issued at once at t0, served in batches;
 *                 the figure is samples/s from t0 to the last completion.
 *   server        queries arrive at Poisson times from a seeded generator
 *                 at a target rate, wait FIFO and are served up to `batch`
 *                 at a time; each latency runs from the query's *scheduled*
 *                 arrival to its completion, so time spent queued behind a
 *                 slow query counts (no coordinated omission). A run is
 *                 valid when its p99 latency is within the bound; the
 *                 figure is the highest valid rate a search finds.
 *
 * The engine knows nothing of models or processes: it drives a system
 * under test through three callbacks, so that the unit tests run it on a
 * simulated clock and the child on the monotonic one (child_scenario.c). */
#ifndef DLB_CORE_SCENARIO_H
#define DLB_CORE_SCENARIO_H

#include <stddef.h>
#include <stdint.h>
#include <dlbench/status.h>

/* The scenarios, in the order of the suite key's choices (the child
 * checks that they agree). */
enum dlb_scen_kind {
    DLB_SCEN_NONE, DLB_SCEN_SINGLESTREAM, DLB_SCEN_OFFLINE, DLB_SCEN_SERVER
};
/* "none", "singlestream", "offline", "server" */
extern const char *const dlb_scen_kind_names[];

/* The system under test and the clock the scenario runs on. */
struct dlb_scen_sut {
    /* Serve one batch of n queued samples (1 <= n <= batch); returns when
     * its results are there. */
    dlb_status (*serve)(void *ctx, uint32_t n);
    /* Seconds, never decreasing. */
    double (*now)(void *ctx);
    /* Be idle until now() >= t (nothing is queued until then). */
    void (*wait_until)(void *ctx, double t);
    void *ctx;
    uint32_t batch; /* the most samples one serve takes */
};

/* What a run must do, from the suite's scenario keys. */
struct dlb_scen_rules {
    uint64_t min_queries;    /* each run issues at least this many */
    double min_duration_s;   /* ... and lasts at least this long */
    double latency_bound_s;  /* server: the bound on p99 */
    double target_qps;       /* server: > 0 runs this rate only */
    double resolution;       /* server search: relative bracket width */
    unsigned max_probes;     /* server search: runs at most */
    uint64_t seed;           /* the arrival schedule's */
    double service_s;        /* a serve's time as measured before (> 0):
                              * sizes offline runs, starts the search */
};

/* The share of a server run's scheduled rate its completions must reach
 * for the run to count as having kept up. */
#define DLB_SCEN_KEPT_UP 0.9
/* The largest run the engine makes, whatever the rules say. */
#define DLB_SCEN_MAX_QUERIES 50000000u

/* One run of a scenario: a single-stream or offline run, or one probe of
 * the server search. Latencies in seconds. */
struct dlb_scen_run {
    double target_qps;       /* server: the rate asked for; else NAN */
    double scheduled_qps;    /* server: queries / last scheduled arrival */
    uint64_t queries;        /* issued and completed */
    uint64_t planned;        /* the run's size; > queries when it stopped early */
    double duration_s;       /* first issue (t0) to last completion */
    double qps;              /* completed queries (offline: samples) per s */
    double p50_s, p90_s, p99_s, max_s;
    uint32_t max_batch;      /* the most samples one serve took */
    double capacity_qps;     /* server: batch / service_s, the most any
                              * run can sustain; NAN when not known */
    int valid;
    int stopped_early;       /* server: p99 above the bound already certain */
    char why[240];           /* valid or not, in words */
};

/* A scenario's answer: its reported run, and for a server search every
 * probe in the order it ran. */
struct dlb_scen_result {
    enum dlb_scen_kind kind;
    struct dlb_scen_run run;
    double figure;           /* p90 s, samples/s, or the valid rate q/s */
    struct dlb_scen_run *probes; /* malloc'ed, n_probes of them */
    size_t n_probes;
    int searched;            /* server: the rate was searched for */
    int converged;           /* the bracket reached the resolution */
    double qps_lo, qps_hi;   /* highest valid, lowest invalid (NAN: none) */
};

/* Latency percentile by nearest rank, as LoadGen takes it: the smallest
 * value at or below which `permille` / 1000 of the n values lie.
 * `sorted` ascending, n >= 1. */
double dlb_scen_percentile(const double *sorted, size_t n, unsigned permille);

/* Arrival times of n queries of a Poisson process of rate qps starting at
 * 0 (the first query arrives after one inter-arrival time), from `seed`.
 * The same seed gives the same exponential draws at every rate, scaled by
 * 1/qps: a faster probe sees the same schedule compressed. */
void dlb_scen_arrivals(uint64_t seed, double qps, size_t n, double *out);

/* Fill a run's percentiles from its n latencies (sorted here). */
void dlb_scen_run_latencies(struct dlb_scen_run *run, double *lat, size_t n);

/* Whether a finished server run is valid, with the reason in run->why:
 * p99 within the bound, the minimum queries and duration met, the
 * completions kept up with the schedule (DLB_SCEN_KEPT_UP), and the rate
 * within the capacity the measured serve time allows: above it the queue
 * grows without end, which a run much shorter than MLPerf's can hide
 * within the bound. */
int dlb_scen_server_verdict(struct dlb_scen_run *run,
                            const struct dlb_scen_rules *rules);

/* The runs. `lat_out` (may be NULL) receives the per-query latencies in
 * issue order (malloc'ed; free it). A serve that fails ends the run with
 * its status. */
dlb_status dlb_scen_singlestream(const struct dlb_scen_sut *sut,
                                 const struct dlb_scen_rules *rules,
                                 struct dlb_scen_run *out);
dlb_status dlb_scen_offline(const struct dlb_scen_sut *sut,
                            const struct dlb_scen_rules *rules,
                            struct dlb_scen_run *out);
dlb_status dlb_scen_server_run(const struct dlb_scen_sut *sut,
                               const struct dlb_scen_rules *rules, double qps,
                               struct dlb_scen_run *out, double **lat_out);

/* The server scenario: one run at rules->target_qps, or the search for
 * the highest valid rate: from half the rate one serve a query at a time
 * sustains, double (or halve) until a valid and an invalid rate bracket
 * the answer, then bisect until the bracket is within rules->resolution of
 * the valid rate, at most rules->max_probes runs in all. It stops at the
 * first probe where the serve alone is over the bound (its median query
 * and the measured step both longer than it): no rate can pass. */
dlb_status dlb_scen_server(const struct dlb_scen_sut *sut,
                           const struct dlb_scen_rules *rules,
                           struct dlb_scen_result *out);

/* Run scenario `kind` (not NONE) into `out`; free with dlb_scen_result_free. */
dlb_status dlb_scen_run(enum dlb_scen_kind kind, const struct dlb_scen_sut *sut,
                        const struct dlb_scen_rules *rules,
                        struct dlb_scen_result *out);
void dlb_scen_result_free(struct dlb_scen_result *r);

#endif
