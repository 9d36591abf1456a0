/* The server scenario: one run at a fixed rate, or the search for the
 * highest valid rate; and the dispatch over the scenarios. */
#include "scenario/scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const dlb_scen_kind_names[] = {"none", "singlestream", "offline",
                                           "server", NULL};

static void result_init(struct dlb_scen_result *out, enum dlb_scen_kind kind)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->figure = out->qps_lo = out->qps_hi = NAN;
}

/* Whether failed probe p shows the serve alone over the bound: its median
 * query took longer than the bound, and so does a step as measured before
 * the scenario. Every serve computes a whole batch (padded), so each
 * query waits at least one step: a lower rate cannot pass, only take
 * longer to say so (ResNet-50 at batch 8, 259 ms a step against 15 ms:
 * 7 minutes of halved rates). p's why says so. */
static int serve_over_bound(const struct dlb_scen_rules *rules,
                            struct dlb_scen_run *p)
{
    double bound = rules->latency_bound_s;
    if (p->valid || !(rules->service_s > bound) || !(p->p50_s > bound))
        return 0;
    snprintf(p->why, sizeof p->why, "p99 above the bound of %.4g ms at "
             "%.4g queries/s: a serve, one step of %.4g ms as measured "
             "before, takes longer than the bound, so no rate can meet it "
             "and the search stopped", bound * 1e3, p->target_qps,
             rules->service_s * 1e3);
    return 1;
}

/* Every probe runs the same seed: the schedules differ only in scale, so
 * on a system whose serve time does not vary the p99 grows with the rate
 * and the bracket closes on one crossing. */
static dlb_status search(const struct dlb_scen_sut *sut,
                         const struct dlb_scen_rules *rules,
                         struct dlb_scen_result *out)
{
    double r = rules->service_s > 0 ? 0.5 / rules->service_s : 1.0;
    size_t best = 0;
    out->searched = 1;
    while (out->n_probes < rules->max_probes) {
        struct dlb_scen_run *p = &out->probes[out->n_probes];
        dlb_status st = dlb_scen_server_run(sut, rules, r, p, NULL);
        if (st != DLB_OK)
            return st;
        if (p->valid && (isnan(out->qps_lo) || r > out->qps_lo)) {
            out->qps_lo = r;
            best = out->n_probes;
        } else if (!p->valid && (isnan(out->qps_hi) || r < out->qps_hi)) {
            out->qps_hi = r;
        }
        out->n_probes++;
        if (isnan(out->qps_lo) && serve_over_bound(rules, p))
            break;
        if (isnan(out->qps_hi))
            r *= 2; /* bracketing from below */
        else if (isnan(out->qps_lo))
            r /= 2; /* from above */
        else if (out->qps_hi - out->qps_lo <= rules->resolution * out->qps_lo) {
            out->converged = 1;
            break;
        } else
            r = 0.5 * (out->qps_lo + out->qps_hi);
    }
    if (isnan(out->qps_lo)) {
        /* nothing valid: the report shows the lowest rate tried */
        out->run = out->probes[out->n_probes - 1];
        return DLB_OK;
    }
    out->run = out->probes[best];
    out->figure = out->qps_lo;
    return DLB_OK;
}

dlb_status dlb_scen_server(const struct dlb_scen_sut *sut,
                           const struct dlb_scen_rules *rules,
                           struct dlb_scen_result *out)
{
    unsigned max = rules->target_qps > 0 ? 1 : rules->max_probes;
    result_init(out, DLB_SCEN_SERVER);
    if (!max)
        return DLB_ERR_INTERNAL;
    out->probes = calloc(max, sizeof *out->probes);
    if (!out->probes)
        return DLB_ERR_NOMEM;
    if (!(rules->target_qps > 0))
        return search(sut, rules, out);
    dlb_status st = dlb_scen_server_run(sut, rules, rules->target_qps,
                                        &out->probes[0], NULL);
    if (st != DLB_OK)
        return st;
    out->n_probes = 1;
    out->run = out->probes[0];
    if (out->run.valid)
        out->figure = out->qps_lo = rules->target_qps;
    else
        out->qps_hi = rules->target_qps;
    return DLB_OK;
}

dlb_status dlb_scen_run(enum dlb_scen_kind kind, const struct dlb_scen_sut *sut,
                        const struct dlb_scen_rules *rules,
                        struct dlb_scen_result *out)
{
    dlb_status st;
    result_init(out, kind);
    switch (kind) {
    case DLB_SCEN_SINGLESTREAM:
        st = dlb_scen_singlestream(sut, rules, &out->run);
        out->figure = out->run.p90_s;
        return st;
    case DLB_SCEN_OFFLINE:
        st = dlb_scen_offline(sut, rules, &out->run);
        out->figure = out->run.qps;
        return st;
    case DLB_SCEN_SERVER:
        return dlb_scen_server(sut, rules, out);
    default:
        return DLB_ERR_INTERNAL;
    }
}

void dlb_scen_result_free(struct dlb_scen_result *r)
{
    free(r->probes);
    r->probes = NULL;
    r->n_probes = 0;
}
