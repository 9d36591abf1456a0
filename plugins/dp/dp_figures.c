/* The dp plugin's figures, and the helpers the engines share.
 *
 * Definitions (per training step, on rank 0 / worker 0):
 *   allreduce_s   one all-reduce of every gradient bucket: measured on its
 *                 own after the run for MPI and NCCL (as nccl-tests does),
 *                 the time spent summing in shared memory for threads
 *   exposed_s     from the end of the last worker's backward until every
 *                 gradient is reduced: the communication the step waits
 *                 for, without the wait for slower workers (imbalance_s),
 *                 which is reported apart; ranks on different hosts do not
 *                 share a clock, so there it includes the imbalance
 *   hidden_share  100 x (1 - exposed_s / allreduce_s), within [0, 100]:
 *                 the share of the all-reduce that overlap hid behind
 *                 backward
 *   reduced_in_backward  the share of the gradient bytes whose all-reduce
 *                 had finished when backward ended (overlap on): unlike
 *                 hidden_share, it does not depend on how promptly a busy
 *                 machine schedules the ranks after backward
 *   algbw, busbw  bytes / allreduce_s, and busbw = algbw x 2(n-1)/n for n
 *                 workers: nccl-tests' bus bandwidth of an all-reduce
 *   workers       replicas x ranks: the "x N" of the scaling efficiency,
 *                 throughput(N) / (N x throughput(1)), which the report
 *                 derives against the suite's one-worker baseline */
#define _POSIX_C_SOURCE 200809L /* barriers, clock_gettime, setenv */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dp.h"

double dp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void dp_shard(uint32_t n, int w, int workers, uint32_t *lo, uint32_t *hi)
{
    *lo = (uint32_t)((uint64_t)n * (uint64_t)w / (uint64_t)workers);
    *hi = (uint32_t)((uint64_t)n * (uint64_t)(w + 1) / (uint64_t)workers);
}

float dp_shard_scale(const struct dp_settings *s, uint32_t part, uint32_t n)
{
    return s->average ? (float)((double)part / (double)n) : 1.0f;
}

dlb_status dp_figures_report(const struct dlb_host *h,
                             const struct dp_settings *s,
                             const struct dp_figures *f, struct dlb_model *m)
{
    const struct dlb_model_api *api = h->model_api;
    double steps = f->steps ? (double)f->steps : 1.0;
    double comm = f->calibrated ? f->comm_calib_s : f->comm_s / steps;
    double exposed = f->exposed_s / steps;
    float lr = 0, momentum = 0;
    int n = f->workers;
    dlb_status st;
    if (m && api->optimizer(h, m, &lr, &momentum) == DLB_OK) {
        /* The model keeps it in fp32: state it as the suite wrote it. */
        char text[32];
        snprintf(text, sizeof text, "%.7g", (double)lr);
        h->metric(h, "lr", "", strtod(text, NULL));
    }
    if ((st = h->metric(h, "workers", "workers", n)) ||
        (st = h->metric(h, "world_size", "ranks",
                        s->engine == DP_THREADS ? 1 : s->ranks)) ||
        (st = h->metric(h, "grad_bytes", "bytes", (double)f->grad_bytes)) ||
        (st = h->metric(h, "buckets", "count", f->buckets)))
        return st;
    if (!f->steps)
        return DLB_OK;
    h->metric(h, "backward_s", "s", f->backward_s / steps);
    h->metric(h, "dp_step_s", "s", f->step_s / steps);
    h->metric(h, "exposed_s", "s", exposed);
    h->metric(h, "imbalance_s", "s", f->imbalance_s / steps);
    if (s->overlap && n > 1 && f->grad_bytes)
        h->metric(h, "reduced_in_backward", "%", 100.0 * f->done_in_bwd_bytes /
                  steps / (double)f->grad_bytes);
    h->metric(h, "train_loss_last", "", f->last_loss);
    if (n > 1 && comm > 0) {
        double algbw = (double)f->grad_bytes / comm * 1e-9;
        double hidden = 100.0 * (1.0 - exposed / comm);
        h->metric(h, "allreduce_s", "s", comm);
        if (f->calibrated)
            h->metric(h, "allreduce_in_step_s", "s", f->comm_s / steps);
        h->metric(h, "algbw", "GB/s", algbw);
        h->metric(h, "busbw", "GB/s", algbw * 2.0 * (n - 1) / n);
        h->metric(h, "hidden_share", "%",
                  hidden < 0 ? 0 : hidden > 100 ? 100 : hidden);
    }
    if (f->weights_checked) {
        h->metric(h, "weights_identical", "", f->weights_identical);
        h->metric(h, "weights_max_diff", "", f->weights_max_diff);
    }
    return DLB_OK;
}
