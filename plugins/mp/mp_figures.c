/* The mp plugin's figures.
 *
 * Definitions (per training step, on rank 0 / the calling thread):
 *   bubble_share   100 x idle / (stages x pipeline time): the share of
 *                  the stages' time spent waiting for a neighbour, where
 *                  the pipeline time runs from the step's start to the
 *                  last stage's update, and a stage is busy in its
 *                  forward, backward and update calls
 *   bubble_ideal   100 x (S - 1) / (M + S - 1): GPipe's bubble for equal
 *                  stages and free hand-offs, the floor to compare with
 *   act_peak_sN    bytes stage N held at most for backward (activations,
 *                  pooling indices, batch-norm statistics of the
 *                  micro-batches in flight): all M under GPipe, at most
 *                  S - N under 1F1B
 *   sent_bytes     activations forward plus their gradients back, over
 *                  every cut
 *   handback_s     stages' layers written back into the model the harness
 *                  evaluates: part of the step's time, not of the
 *                  pipeline's */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <time.h>

#include "mp.h"

double mp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

dlb_status mp_figures_report(const struct dlb_host *h,
                             const struct mp_settings *s,
                             const struct mp_figures *f)
{
    double steps = f->steps ? (double)f->steps : 1.0;
    int S = f->stages, M = f->micro;
    dlb_status st;
    /* Workers that share the step, as dp says it: the core holds the
     * shares of peak to their cores and the selection reports the
     * pipeline's scaling efficiency. */
    if ((st = h->metric(h, "stages", "stages", S)) ||
        (st = h->metric(h, "workers", "workers", S)) ||
        (st = h->metric(h, "micro_batches", "count", M)) ||
        (st = h->metric(h, "schedule_1f1b", "", s->schedule == MP_1F1B)))
        return st;
    if (S > 0 && M > 0)
        h->metric(h, "bubble_ideal", "%", 100.0 * (S - 1) / (double)(M + S - 1));
    for (int r = 0; r < S && r < MP_MAX_STAGES; r++) {
        char name[32];
        snprintf(name, sizeof name, "first_layer_s%d", r);
        h->metric(h, name, "layer", f->first[r]);
    }
    if (!f->steps)
        return DLB_OK;
    double busy = 0;
    uint64_t peak = 0;
    for (int r = 0; r < S && r < MP_MAX_STAGES; r++) {
        char name[32];
        busy += f->busy_s[r];
        snprintf(name, sizeof name, "act_peak_s%d", r);
        h->metric(h, name, "bytes", (double)f->saved_peak[r]);
        snprintf(name, sizeof name, "busy_s%d", r);
        h->metric(h, name, "s", f->busy_s[r] / steps);
        peak = f->saved_peak[r] > peak ? f->saved_peak[r] : peak;
    }
    h->metric(h, "act_peak_max", "bytes", (double)peak);
    if (f->pipe_s > 0 && S > 0) {
        double share = 100.0 * (1.0 - busy / (S * f->pipe_s));
        h->metric(h, "bubble_share", "%", share < 0 ? 0 : share);
    }
    h->metric(h, "pipeline_s", "s", f->pipe_s / steps);
    h->metric(h, "mp_step_s", "s", f->step_s / steps);
    h->metric(h, "handback_s", "s", f->handback_s / steps);
    h->metric(h, "sent_bytes", "bytes", (double)f->sent_bytes);
    h->metric(h, "train_loss_last", "", f->last_loss);
    return DLB_OK;
}
