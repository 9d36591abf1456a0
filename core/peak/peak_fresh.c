/* Which roofline a run measures against: the cached probe while it is young
 * and the machine still runs at its speed, a fresh one otherwise. The same
 * VM's fp32 peak read 368 GFLOP/s one afternoon and 453 another, and a
 * cache kept per CPU model would have put vgg-small's step at 70% of the
 * one when a probe of the same sitting put it at 54%. A quick check of the
 * fp32 figure (about a tenth of a second) catches a machine whose speed
 * has moved; the age catches the units the check does not time. */
#include "peak/peak_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static long long unix_now(void)
{
    return (long long)time(NULL);
}

static dlb_status full_probe(int threads, struct dlb_peak *out,
                             struct dlb_error *err)
{
    return dlb_peak_measure(threads, out, err);
}

/* "3.2 h", "12 min", "40 s": an age a reader takes in at once. */
static void age_text(double s, char *buf, size_t len)
{
    if (s >= 5400)
        snprintf(buf, len, "%.1f h", s / 3600);
    else if (s >= 90)
        snprintf(buf, len, "%.0f min", s / 60);
    else
        snprintf(buf, len, "%.0f s", s);
}

/* Probe now, cache unless contended; keep `cached` (when there is one)
 * over a contended probe, which measured the neighbours as much as the
 * machine. */
static dlb_status reprobe(int threads, const char *path,
                          const struct dlb_peak_probes *pr,
                          const struct dlb_peak *cached, double cached_age,
                          const char *reason, struct dlb_peak_choice *out,
                          struct dlb_error *warn, struct dlb_error *err)
{
    struct dlb_peak fresh;
    struct dlb_error e = {""};
    dlb_status st = pr->full(threads, &fresh, err);
    if (st != DLB_OK)
        return st;
    if (fresh.contended && cached) {
        out->peak = *cached;
        out->age_s = cached_age;
        out->probed = 0;
        snprintf(out->why, sizeof out->why, "%s; the new probe looked contended "
                 "(%d threads gave %.0f GFLOP/s fp32 against %.0f for one): the "
                 "cached figures are kept", reason, fresh.threads,
                 fresh.fp32_gflops, fresh.fp32_gflops_1t);
        dlb_peak_warn_add(warn, "roofline: ", out->why);
        return DLB_OK;
    }
    out->peak = fresh;
    out->age_s = 0;
    out->probed = 1;
    snprintf(out->why, sizeof out->why, "probed for this run: %s", reason);
    if (fresh.contended) {
        snprintf(e.msg, sizeof e.msg, "%d threads gave %.1f GFLOP/s against "
                 "%.1f for one; measure again when the machine is idle",
                 fresh.threads, fresh.fp32_gflops, fresh.fp32_gflops_1t);
        dlb_peak_warn_add(warn, "peak figures look contended, not cached: ",
                          e.msg);
    } else if (path && dlb_peak_save(path, &fresh, &e) != DLB_OK) {
        dlb_peak_warn_add(warn, "peak figures not cached: ", e.msg);
    }
    return DLB_OK;
}

dlb_status dlb_peak_for_run_with(int threads, const struct dlb_peak_policy *pol,
                                 const char *path,
                                 const struct dlb_peak_probes *pr,
                                 struct dlb_peak_choice *out,
                                 struct dlb_error *warn, struct dlb_error *err)
{
    char def[4096], age[32], reason[300];
    struct dlb_error e = {""};
    struct dlb_peak cached;
    int found = 0;
    memset(out, 0, sizeof *out);
    if (warn)
        warn->msg[0] = 0;
    if (!path) {
        if (dlb_peak_cache_path(def, sizeof def, &e) == DLB_OK)
            path = def;
        else
            dlb_peak_warn_add(warn, "peak figures not cached: ", e.msg);
    }
    if (path && dlb_peak_load(path, threads, &cached, &found, &e) != DLB_OK) {
        dlb_peak_warn_add(warn, "ignoring peak cache: ", e.msg);
        found = 0;
    }
    if (!found)
        return reprobe(threads, path, pr, NULL, 0, "no cached probe for this "
                       "CPU and thread count", out, warn, err);
    double cached_age = (double)(pr->now() - cached.measured_at);
    if (cached_age < 0)
        cached_age = 0; /* a clock set back: the entry is as good as new */
    age_text(cached_age, age, sizeof age);
    if (cached_age > pol->max_age_s) {
        char limit[32];
        age_text(pol->max_age_s, limit, sizeof limit);
        snprintf(reason, sizeof reason, "the cached probe was %s old (over "
                 "peak_max_age, %s)", age, limit);
        return reprobe(threads, path, pr, NULL, 0, reason, out, warn, err);
    }
    double now_fp32 = 0;
    dlb_status st = pr->quick(threads, &now_fp32, err);
    if (st != DLB_OK)
        return st;
    double moved = now_fp32 / cached.fp32_gflops - 1;
    if (!(fabs(moved) <= pol->tolerance)) {
        snprintf(reason, sizeof reason, "a quick check read %.0f GFLOP/s fp32 "
                 "against the cached probe's %.0f (%+.0f%%, over "
                 "peak_tolerance %.0f%%; that probe was %s old)", now_fp32,
                 cached.fp32_gflops, 100 * moved, 100 * pol->tolerance, age);
        st = reprobe(threads, path, pr, &cached, cached_age, reason, out, warn,
                     err);
        out->check_gflops = now_fp32;
        return st;
    }
    out->peak = cached;
    out->age_s = cached_age;
    out->check_gflops = now_fp32;
    snprintf(out->why, sizeof out->why, "the cached probe, %s old: a quick "
             "check read %.0f GFLOP/s fp32 against its %.0f (%+.0f%%, within "
             "peak_tolerance %.0f%%)", age, now_fp32, cached.fp32_gflops,
             100 * moved, 100 * pol->tolerance);
    return DLB_OK;
}

dlb_status dlb_peak_for_run(int threads, const struct dlb_peak_policy *pol,
                            const char *path, struct dlb_peak_choice *out,
                            struct dlb_error *warn, struct dlb_error *err)
{
    const struct dlb_peak_probes pr = {dlb_peak_quick_fp32, full_probe,
                                       unix_now};
    return dlb_peak_for_run_with(threads, pol, path, &pr, out, warn, err);
}

json_t *dlb_peak_choice_json(const struct dlb_peak_choice *c)
{
    char utc[32] = "unknown";
    time_t t = (time_t)c->peak.measured_at;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *fig = dlb_peak_to_json(&c->peak);
    if (!fig)
        return NULL;
    return json_pack("{s:o, s:s, s:f, s:s, s:o, s:s}", "figures", fig,
                     "measured_utc", utc, "age_s", c->age_s,
                     "source", c->probed ? "probe" : "cache",
                     "check_gflops", c->check_gflops > 0
                                         ? json_real(c->check_gflops)
                                         : json_null(),
                     "why", c->why);
}

dlb_status dlb_peak_choice_figures(const json_t *j, struct dlb_peak *p,
                                   struct dlb_error *err)
{
    return dlb_peak_from_json(json_object_get(j, "figures"), p, err);
}
