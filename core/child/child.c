#include "child/child.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "child/child_controls.h"
#include "child/child_peak.h"
#include "plan/config_json.h"
#include "child/host.h"
#include "proc/launcher.h"
#include "stats/measure.h"
#include "peak/peak.h"
#include "child/child_profile.h"
#include "child/child_scenario.h"
#include "plan/session.h"
#include "results/record.h"
#include "child/sysmeter.h"
#include "child/workloads.h"
#include "util/cpu_quota.h"

/* Everything one configuration holds while it runs. */
struct child_run {
    struct dlb_session ses;
    const struct dlb_config *cfg;
    struct dlb_host_shared shared;
    struct dlb_host_priv *hosts;   /* per namespace; [0] is the core's */
    void **states;                 /* plugin states from init */
    unsigned n_inited;             /* namespaces 1..n_inited-1 were tried */
    const struct dlb_workload_hooks *wl_hooks;
    unsigned wl_abi_minor;         /* its plugin's: which hooks exist */
    void *wl_state, *wl;
    const struct dlb_host *wl_host;
    int wl_clock;                  /* measured on the workload's own clock */
    double wl_clock_last;          /* its reading after the last step */
    struct dlb_workload_ctx wl_ctx;
    /* The configuration's record, built here and written once at the end
     * (dlb_record_write); the JSON members it holds are owned below. */
    struct dlb_record rec;
    json_t *config_json, *controls_json;
    char doubtful[160];            /* rec.system.doubtful points here */
    struct dlb_peak peak;          /* this machine's roofline, when cached */
    const char *peak_file;         /* the run's roofline, or NULL */
    int seed_rep;                  /* > 0: from seed + seed_rep,
    quality only */
    int have_peak;
    int peak_restarted;            /* peak memory from the measurement on
                                    * (child_peak.h) */
    double gflops;                 /* the step's, when it counts FLOPs */
    const char *origin;
    int quick;
    /* dlbench export: the model written here as ONNX after the quality
     * run, with no speed measurement (NULL: a normal run). */
    const char *export_onnx;
    struct dlb_sysmeter sys[2];    /* at the start and the end of sampling */
    struct dlb_child_profile prof; /* profile = ops: the sampling's */
    int sys_read;                  /* how many of them were taken */
    json_t *scenario;              /* the record's "scenario", or NULL */
    char reason[512];
};

static enum dlb_rec_status status_for(dlb_status st)
{
    switch (st) {
    case DLB_OK: return DLB_REC_OK;
    case DLB_ERR_NOMEM: return DLB_REC_OOM;
    case DLB_ERR_UNSUPPORTED: return DLB_REC_SKIPPED;
    default: return DLB_REC_FAILED;
    }
}

static struct dlb_params params_of(struct child_run *r, unsigned ns)
{
    const struct dlb_ns *n = &r->ses.suite.ns[ns];
    return (struct dlb_params){n->defs, r->cfg->values[ns], n->n};
}

static int plugin_on(struct child_run *r, unsigned ns)
{
    return dlb_config_plugin_enabled(&r->ses.plan, r->cfg, ns);
}

static dlb_status apply_memory_limit(struct child_run *r)
{
    int64_t limit = r->cfg->core.memory_limit;
    if (limit <= 0)
        return DLB_OK;
    struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
    if (setrlimit(RLIMIT_AS, &rl) != 0) {
        snprintf(r->reason, sizeof r->reason,
                 "memory_limit %lld: setrlimit: %s",
                 (long long)limit, strerror(errno));
        return DLB_ERR_RUNTIME;
    }
    return DLB_OK;
}

static dlb_status start_plugins(struct child_run *r)
{
    const struct dlb_suite *s = &r->ses.suite;
    /* accuracy_seeds' later processes train from the seeds after it */
    uint64_t seed = (uint64_t)r->cfg->core.seed + (uint64_t)r->seed_rep;
    int quick = r->quick;
    /* Where train_ops looks for model files: as the workload does. */
    r->shared.suite_paths[0] = r->origin;
    r->shared.suite_paths[1] = r->ses.suite.path;
    /* An export reproduces the configuration's quality run in full: a
     * plugin's work for quality figures alone (prune's fine-tuning) shapes
     * the weights written. */
    int measure_only = r->cfg->core.measure_only && !r->export_onnx;
    const char *backend = dlb_backend_kind_names[r->cfg->core.backend];
    dlb_host_setup(&r->hosts[0], &r->shared, "core", seed, quick);
    r->hosts[0].pub.backend_name = backend;
    r->hosts[0].pub.measure_only = measure_only;
    for (unsigned k = 1; k < s->n_ns; k++) {
        dlb_host_setup(&r->hosts[k], &r->shared, s->ns[k].name, seed, quick);
        r->hosts[k].pub.backend_name = backend;
        r->hosts[k].pub.measure_only = measure_only;
    }
    /* Probe all before initialising any, so a skipped configuration does
     * no work. */
    for (unsigned k = 1; k < s->n_ns; k++) {
        const struct dlb_plugin *p = s->ns[k].plugin;
        if (!plugin_on(r, k) || !p->probe)
            continue;
        struct dlb_params prm = params_of(r, k);
        char why[400] = "";
        dlb_status st = p->probe(&r->hosts[k].pub, &prm, why, sizeof why);
        if (st != DLB_OK) {
            /* Name the plugin unless its reason already does. */
            size_t nl = strlen(p->name);
            int named = !strncmp(why, p->name, nl) && why[nl] == ':';
            snprintf(r->reason, sizeof r->reason, "%s%s%s",
                     named ? "" : p->name,
                     named ? "" : ": ", why[0] ? why : dlb_status_name(st));
            return st;
        }
    }
    for (unsigned k = 1; k < s->n_ns; k++, r->n_inited = k) {
        const struct dlb_plugin *p = s->ns[k].plugin;
        if (!plugin_on(r, k) || !p->init)
            continue;
        struct dlb_params prm = params_of(r, k);
        dlb_status st = p->init(&r->hosts[k].pub, &prm, &r->states[k]);
        if (st != DLB_OK && r->shared.device_why[0]) {
            /* A pool that found no GPU for its arena: skipped, as the
             * backend itself would be. */
            r->n_inited = k;
            snprintf(r->reason, sizeof r->reason, "plugin %s: %s", p->name,
                     r->shared.device_why);
            return DLB_ERR_UNSUPPORTED;
        }
        if (st != DLB_OK) {
            r->n_inited = k;
            snprintf(r->reason, sizeof r->reason,
                     "plugin %s: init failed (%s)",
                     p->name, dlb_status_name(st));
            return st;
        }
        if (p->allocator && !r->shared.pool) {
            r->shared.pool = p->allocator;
            r->shared.pool_state = r->states[k];
            r->shared.pool_host = &r->hosts[k].pub;
        }
    }
    r->n_inited = s->n_ns;
    return DLB_OK;
}

/* The first enabled plugin that provides a hook point owns it. */
static void wire_hook_points(struct child_run *r)
{
    struct dlb_workload_ctx *w = &r->wl_ctx;
    const struct dlb_suite *s = &r->ses.suite;
    for (unsigned k = 1; k < s->n_ns; k++) {
        const struct dlb_plugin *p = s->ns[k].plugin;
        if (!plugin_on(r, k))
            continue;
        if (p->batch_source && !w->batch_source) {
            w->batch_source = p->batch_source;
            w->batch_source_state = r->states[k];
            w->batch_source_host = &r->hosts[k].pub;
        }
        if (p->precision && !w->precision) {
            w->precision = p->precision;
            w->precision_state = r->states[k];
            w->precision_abi_minor = p->abi_minor;
        }
        if (p->transform && !w->transform) {
            w->transform = p->transform;
            w->transform_state = r->states[k];
            w->transform_host = &r->hosts[k].pub;
        }
        if (p->executor && !w->executor) {
            w->executor = p->executor;
            w->executor_state = r->states[k];
            w->executor_host = &r->hosts[k].pub;
        }
    }
}

static dlb_status find_workload(struct child_run *r)
{
    const char *name = r->cfg->core.workload;
    r->wl_hooks = dlb_builtin_workload(name);
    if (r->wl_hooks) {
        r->wl_ctx.plan = &r->ses.plan;
        r->wl_ctx.config = r->cfg;
        r->wl_ctx.host = &r->hosts[0].pub;
        r->wl_ctx.suite_origin = r->origin;
        r->wl_ctx.reason = r->reason;
        r->wl_ctx.reason_len = sizeof r->reason;
        r->wl_ctx.export_onnx = r->export_onnx;
        wire_hook_points(r);
        r->wl_abi_minor = DLB_PLUGIN_ABI_MINOR;
        r->wl_state = &r->wl_ctx;
        r->wl_host = &r->hosts[0].pub;
        return DLB_OK;
    }
    unsigned ns = dlb_session_plugin_ns(&r->ses, name);
    if (r->export_onnx) {
        snprintf(r->reason, sizeof r->reason, "workload '%s' has no model "
                 "dlbench can export as ONNX (only the built-in cnn workload "
                 "has)", name);
        return DLB_ERR_UNSUPPORTED;
    }
    if (!ns || !r->ses.suite.ns[ns].plugin->workload) {
        snprintf(r->reason, sizeof r->reason,
                 "workload '%s' is neither built in nor provided by a plugin "
                 "active in the suite (add a [%s] section)", name, name);
        return DLB_ERR_INPUT;
    }
    if (!plugin_on(r, ns)) {
        snprintf(r->reason, sizeof r->reason, "workload plugin %s is disabled",
                 name);
        return DLB_ERR_INPUT;
    }
    r->wl_hooks = r->ses.suite.ns[ns].plugin->workload;
    r->wl_abi_minor = r->ses.suite.ns[ns].plugin->abi_minor;
    r->wl_state = r->states[ns];
    r->wl_host = &r->hosts[ns].pub;
    r->hosts[ns].workload = 1;
    return DLB_OK;
}

/* The allocator's step_end runs inside the timed step: what a pool does
 * between steps (releasing memory, say) is part of what it costs. */
static dlb_status step_fn(void *ctx)
{
    struct child_run *r = ctx;
    dlb_status st = r->wl_hooks->step(r->wl);
    const struct dlb_host_shared *sh = &r->shared;
    if (st == DLB_OK && sh->pool && sh->pool->step_end)
        sh->pool->step_end(sh->pool_state, sh->pool_host);
    if (st == DLB_OK && r->wl_clock) {
        /* A clock that stands still would keep the warm-up waiting for
         * time to pass until the configuration's timeout. */
        double t = r->wl_hooks->now(r->wl);
        if (!(t > r->wl_clock_last) || !isfinite(t)) {
            snprintf(r->reason, sizeof r->reason, "workload %s: its clock "
                     "read %g s after a step, %g s before it: a workload "
                     "that keeps its own clock (hook now) must advance it "
                     "by each step's simulated duration",
                     r->cfg->core.workload, t, r->wl_clock_last);
            return DLB_ERR_INTERNAL;
        }
        r->wl_clock_last = t;
    }
    return st;
}

/* The precision the convolutions compute in: int8 where quant rewrote
 * them, else the precision policy's (amp), fp32 without one. */
static const char *compute_precision(const struct child_run *r)
{
    const struct dlb_precision_hooks *p = r->wl_ctx.precision;
    if (r->shared.int8_rewritten || !p || !p->compute_type)
        return r->shared.int8_rewritten ? "int8" : "fp32";
    switch (p->compute_type(r->wl_ctx.precision_state, DLB_LAYER_CONV)) {
    case DLB_BF16: return "bf16";
    case DLB_F16: return "fp16";
    default: return "fp32";
    }
}

static double workload_now(void *ctx)
{
    struct child_run *r = ctx;
    return r->wl_hooks->now(r->wl);
}

/* Whether the workload keeps its own clock for this run (hook now,
 * >= 0 after setup): then the measurement reads that one. */
static void choose_clock(struct child_run *r, struct dlb_measure_spec *spec)
{
    if (!r->wl_hooks->now)
        return;
    double t = r->wl_hooks->now(r->wl);
    if (!(t >= 0) || !isfinite(t))
        return;
    r->wl_clock = 1;
    r->wl_clock_last = t;
    spec->now = workload_now;
    spec->now_ctx = r;
}

static void record_measurement(struct child_run *r,
                               const struct dlb_measure_result *m,
                               const struct dlb_workload_info *info)
{
    struct dlb_record *rec = &r->rec;
    free(rec->samples);
    rec->samples = malloc(m->n * sizeof *rec->samples);
    if (rec->samples) {
        memcpy(rec->samples, m->samples, m->n * sizeof *rec->samples);
        rec->n_samples = m->n;
        rec->has_samples = 1;
    }
    dlb_rec_stats_set(&rec->stats, &m->stats);
    double sps = info->samples_per_step;
    /* Throughput is samples per second of step time: its interval is the
     * step time's interval inverted. */
    if (m->stats.median > 0) {
        rec->throughput.median = sps / m->stats.median;
        rec->throughput.ci_lo = sps / m->stats.ci_hi;
        rec->throughput.ci_hi = sps / m->stats.ci_lo;
    }
    struct dlb_rec_measure *rm = &rec->measure;
    rec->has_measure = 1;
    rm->clock = r->wl_clock ? "workload" : "monotonic";
    rm->converged = !!m->converged;
    rm->settled = !!m->settled;
    rm->warmup_steps = (double)m->warmup_steps;
    rm->warmup_s = m->warmup_s;
    rm->measure_s = m->measure_s;
    rm->steps_per_sample = (double)m->steps_per_sample;
    rm->samples_per_step = sps;
    rm->flops_per_step = info->flops_per_step;
    rm->timer_overhead_s = m->timer_overhead_s;
    if (info->flops_per_step > 0 && m->stats.median > 0) {
        double gflops = info->flops_per_step / m->stats.median * 1e-9;
        r->hosts[0].pub.metric(&r->hosts[0].pub, "gflops", "GFLOP/s", gflops);
        r->gflops = gflops; /* its shares of peak: record_shares */
        rm->fewer_flops = r->prof.fewer_flops; /* gflops are effective */
        if (r->have_peak)
            rm->peak_measured_at = (double)r->peak.measured_at;
    }
}

/* How many workers share a step: a plugin's figure in unit "workers" (dp's
 * replicas x ranks, mp's stages); 1 when none says. */
static int workers_of(const struct child_run *r)
{
    const char *key;
    json_t *m;
    json_object_foreach(r->shared.metrics, key, m) {
        const char *unit = json_string_value(json_object_get(m, "unit"));
        double v = json_number_value(json_object_get(m, "value"));
        if (unit && !strcmp(unit, "workers") && v >= 1)
            return (int)v;
    }
    return 1;
}

/* Shares of peak, once the plugins have said how many workers ran: the
 * roofline of the threads the step kept busy (threads per worker times
 * workers, at most the machine's CPUs), so that two replicas
 * of one thread each are held to two cores' peak, not one's. */
static void record_shares(struct child_run *r)
{
    if (!(r->gflops > 0) || !r->have_peak)
        return;
    /* The machine's CPUs under the quota: this process may be pinned to
     * fewer by now (controls pin a one-thread configuration). */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int allowed = dlb_cpu_quota_threads(online > 0 ? (int)online : 1);
    int per = r->cfg->core.threads > 0 ? (int)r->cfg->core.threads : allowed;
    long busy = (long)per * workers_of(r);
    if (allowed > 0 && busy > allowed)
        busy = allowed;
    struct dlb_peak pk;
    dlb_peak_for_threads(&r->peak, (int)busy, &pk);
    const struct dlb_host *h = &r->hosts[0].pub;
    if (pk.fp32_gflops > 0)
        h->metric(h, "peak_fp32_share", "%", 100.0 * r->gflops / pk.fp32_gflops);
    /* The share of the unit the convolutions ran on: bf16 on a CPU
     * with AMX is measured against AMX's peak, not the FMA units'. */
    const char *unit = "none";
    double v = dlb_peak_unit_gflops(&pk, compute_precision(r), &unit);
    if (v > 0) {
        h->metric(h, "peak_share", "%", 100.0 * r->gflops / v);
        h->metric(h, "peak_threads", "threads", pk.threads);
        /* The unit's name is the ISA string inside the peak it was read
         * from: name it from r->peak, which outlives this frame; pk does
         * not, and the record is written after we return. */
        dlb_peak_unit_gflops(&r->peak, compute_precision(r), &unit);
        r->rec.measure.peak_unit = unit;
    }
}

/* Counters around the sampling phase alone: the warm-up's first-touch
 * page faults and the evaluation after it are not the step's. */
static void on_sampling(void *ctx, int end)
{
    struct child_run *r = ctx;
    dlb_sysmeter_read(&r->sys[end ? 1 : 0]);
    r->sys_read = end ? 2 : 1;
    if (end)
        dlb_child_profile_end(r->shared.backend, &r->prof);
    else
        dlb_child_profile_begin(r->shared.backend);
}

/* Warm up, then sample whole steps (stats/measure.h), recording the
 * figures and what the system did meanwhile. */
static dlb_status sample_steps(struct child_run *r,
                               const struct dlb_workload_info *info)
{
    dlb_status st;
    struct dlb_measure_spec spec = {
        .warmup_min_s = r->cfg->core.warmup_s,
        .warmup_max_s = r->cfg->core.warmup_max_s,
        .min_samples = (size_t)r->cfg->core.min_samples,
        .max_samples = (size_t)r->cfg->core.max_samples,
        .ci_target = r->cfg->core.ci_target,
        .time_cap_s = r->cfg->core.time_cap_s,
        .steps_per_sample = (unsigned)r->cfg->core.steps_per_sample,
        /* Ranks of one configuration take the same steps (join_world). */
        .agree = r->shared.agree,
        .agree_ctx = r->shared.agree_ctx,
        .sampling = on_sampling,
    };
    choose_clock(r, &spec);
    struct dlb_measure_result m;
    st = dlb_measure_run(&spec, step_fn, r, &m);
    if (m.n > 0)
        record_measurement(r, &m, info);
    if (m.n > 0 && r->sys_read == 2) {
        dlb_sysmeter_record(&r->sys[0], &r->sys[1],
                            (double)m.n * m.steps_per_sample,
                            &r->rec.system, r->doubtful, sizeof r->doubtful);
        r->rec.has_system = 1;
    }
    dlb_measure_result_free(&m);
    if (st != DLB_OK) {
        if (!r->reason[0])
            snprintf(r->reason, sizeof r->reason, "workload step: %s",
                     dlb_status_name(st));
        return st;
    }
    return DLB_OK;
}

/* After the step measurement, warmed up: the suite's inference scenario,
 * on the measurement's clock, the step as the system under test. */
static dlb_status run_scenario(struct child_run *r,
                               const struct dlb_workload_info *info)
{
    char why[512] = "";
    if (r->cfg->core.scenario == DLB_SCENARIO_NONE)
        return DLB_OK;
    struct dlb_child_scenario_sut sut = {
        step_fn, r, info->samples_per_step, r->rec.stats.median,
        r->wl_clock ? workload_now : NULL, r, r->hosts[0].pub.seed};
    dlb_status st = dlb_child_scenario_run(&r->cfg->core, &sut, &r->scenario,
                                           why, sizeof why);
    if (st != DLB_OK && !r->reason[0])
        snprintf(r->reason, sizeof r->reason, "%s", why);
    return st;
}

static dlb_status measure(struct child_run *r)
{
    struct dlb_workload_info info = {1.0, 0.0};
    /* The roofline the parent chose for the whole run (DIR/peak.json,
     * run_roofline.h), else the cached probe; looked up before the
     * workload starts, since a backend may pin this thread and change how
     * many cores it sees. */
    struct dlb_error warn, perr;
    if (r->peak_file) {
        json_error_t jerr;
        json_t *j = json_load_file(r->peak_file, 0, &jerr);
        r->have_peak = j && dlb_peak_choice_figures(j, &r->peak,
                                                    &perr) == DLB_OK;
        if (!r->have_peak)
            fprintf(stderr, "dlbench: warning: %s: %s: no shares of peak\n",
                    r->peak_file, j ? perr.msg : jerr.text);
        json_decref(j);
    } else
        r->have_peak = dlb_peak_get((int)r->cfg->core.threads, 0, &r->peak,
                                    &warn, &perr) == DLB_OK;
    dlb_status st = dlb_child_scenario_check(&r->cfg->core, r->reason,
                                             sizeof r->reason);
    if (st != DLB_OK)
        return st;
    st = r->wl_hooks->setup(r->wl_state, r->wl_host, &info, &r->wl);
    if (st != DLB_OK) {
        if (!r->reason[0])
            snprintf(r->reason, sizeof r->reason, "workload setup: %s",
                     dlb_status_name(st));
        return st;
    }
    r->peak_restarted = dlb_child_peak_restart();
    /* accuracy_seeds: a process of another seed trains and scores only;
     * the configuration's speed is the first process's. An export needs
     * the weights alone, which the quality run makes from the seed
     * whatever the measured steps did. */
    int speed = !r->seed_rep && !r->export_onnx;
    if (speed && (st = sample_steps(r, &info)) != DLB_OK)
        return st;
    if (speed && (st = run_scenario(r, &info)) != DLB_OK)
        return st;
    if (r->wl_hooks->evaluate && (st = r->wl_hooks->evaluate(r->wl)) != DLB_OK) {
        if (!r->reason[0])
            snprintf(r->reason, sizeof r->reason, "workload evaluate: %s",
                     dlb_status_name(st));
        return st;
    }
    return DLB_OK;
}

/* The peak before the plugins' figures: a plugin may measure something
 * of its own there, after the measurement (the data loader alone), and
 * that is no part of the configuration's footprint. */
static void collect_figures(struct child_run *r)
{
    const struct dlb_suite *s = &r->ses.suite;
    if (!r->hosts[0].pub.metric)
        return; /* stopped before the hosts were set up: nothing ran */
    double peak = dlb_child_peak_bytes(r->peak_restarted);
    if (peak >= 0.0)
        r->hosts[0].pub.metric(&r->hosts[0].pub, "peak_rss", "bytes", peak);
    for (unsigned k = 1; k < r->n_inited && k < s->n_ns; k++) {
        const struct dlb_plugin *p = s->ns[k].plugin;
        if (plugin_on(r, k) && p->metrics)
            p->metrics(r->states[k], &r->hosts[k].pub);
    }
    record_shares(r);
}

static void stop_all(struct child_run *r)
{
    if (r->wl_hooks && r->wl)
        r->wl_hooks->teardown(r->wl);
    const struct dlb_suite *s = &r->ses.suite;
    for (unsigned k = r->n_inited; k-- > 1;) {
        const struct dlb_plugin *p = k < s->n_ns ? s->ns[k].plugin : NULL;
        if (p && plugin_on(r, k) && p->fini && r->states[k])
            p->fini(r->states[k]);
    }
}

/* Before anything that allocates for the measurement: the allocator's
 * policy must hold from the first block the workload takes. */
static dlb_status apply_controls(struct child_run *r)
{
    struct dlb_error err = {""};
    dlb_status st;
    const struct dlb_core_settings *set = &r->cfg->core;
    json_t *c = dlb_child_controls_apply(dlb_malloc_policy_names[set->malloc_policy],
                                         (long)set->threads, &st, &err);
    if (!c) {
        snprintf(r->reason, sizeof r->reason, "%s",
                 st != DLB_OK ? err.msg : "out of memory");
        return st != DLB_OK ? st : DLB_ERR_NOMEM;
    }
    r->controls_json = c;
    r->rec.controls = c;
    return DLB_OK;
}

static dlb_status run_config(struct child_run *r)
{
    dlb_status st = apply_controls(r);
    if (st == DLB_OK)
        st = apply_memory_limit(r);
    if (st == DLB_OK)
        st = start_plugins(r);
    if (st == DLB_OK)
        st = find_workload(r);
    if (st == DLB_OK)
        st = measure(r);
    collect_figures(r);
    stop_all(r);
    return st;
}

static int write_record(int fd, json_t *rec)
{
    char *text = json_dumps(rec, JSON_COMPACT);
    if (!text)
        return -1;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            free(text);
            return -1;
        }
        off += (size_t)w;
    }
    free(text);
    return 0;
}

int dlb_child_main(const struct dlb_options *o)
{
    struct child_run r;
    struct dlb_error err = {""};
    memset(&r, 0, sizeof r);
    if ((o->record_fd < 0 && !o->record_file) || o->config_index < 0 || !o->suite) {
        fprintf(stderr, "dlbench: __child is internal to dlbench\n");
        return 2;
    }
    dlb_status st = dlb_session_open(&r.ses, o, o->suite, &err);
    if (st != DLB_OK) {
        fprintf(stderr, "dlbench: %s\n", err.msg);
        dlb_session_close(&r.ses);
        return 2;
    }
    for (size_t i = 0; i < r.ses.plan.n; i++)
        if (r.ses.plan.configs[i].index == (size_t)o->config_index)
            r.cfg = &r.ses.plan.configs[i];
    if (!r.cfg) {
        fprintf(stderr, "dlbench: no configuration %ld in the plan\n",
                o->config_index);
        dlb_session_close(&r.ses);
        return 2;
    }
    r.shared.metrics = json_object();
    r.shared.verbose = o->verbose;
    r.hosts = calloc(r.ses.suite.n_ns, sizeof *r.hosts);
    r.states = calloc(r.ses.suite.n_ns, sizeof *r.states);
    dlb_record_init(&r.rec);
    r.config_json = dlb_config_to_json(&r.ses.plan, r.cfg);
    if (!r.hosts || !r.states || !r.config_json || !r.shared.metrics) {
        fprintf(stderr, "dlbench: out of memory\n");
        return 3;
    }
    r.quick = o->quick;
    r.origin = o->origin;
    r.peak_file = o->peak_file;
    r.seed_rep = o->seed_rep;
    r.export_onnx = o->export_onnx;
    r.rec.index = (long long)r.cfg->index;
    r.rec.id = r.cfg->id;
    r.rec.config = r.config_json;

    st = run_config(&r);
    r.rec.status = status_for(st);
    if (st != DLB_OK)
        r.rec.reason = r.reason[0] ? r.reason : dlb_status_name(st);
    /* what plugins reported, in the order they did */
    if (dlb_record_set_metrics_json(&r.rec, r.shared.metrics, &err) != DLB_OK)
        fprintf(stderr, "dlbench: %s\n", err.msg);
    r.rec.world = r.shared.world;
    r.rec.device = r.shared.device;
    r.rec.dataset = r.wl_ctx.dataset;
    json_t *rec = dlb_record_write(&r.rec);
    /* profile = ops: per measured step, of the median step time */
    json_t *prof = rec ? dlb_child_profile_json(
                             &r.prof,
                             r.rec.n_samples * r.rec.measure.steps_per_sample,
                             r.rec.stats.median)
                       : NULL;
    if (prof)
        json_object_set_new(rec, "profile", prof);
    if (rec && r.scenario)
        json_object_set(rec, "scenario", r.scenario);
    if (rec && r.wl_ctx.test_correct)
        json_object_set(rec, "test_correct", r.wl_ctx.test_correct);
    json_decref(r.scenario);
    dlb_child_profile_free(&r.prof);
    /* Under a launcher only rank 0 reports, into the record file. */
    int rank = r.shared.world ? r.shared.rank : dlb_launch_env_rank();
    int rc = !rec ? 1
             : (o->record_file ? dlb_record_file_write(o->record_file, rank,
                                                       rec)
                               : write_record(o->record_fd, rec)) == 0 ? 0 : 1;
    json_decref(rec);
    dlb_record_free(&r.rec);
    json_decref(r.config_json);
    json_decref(r.controls_json);
    json_decref(r.shared.world);
    json_decref(r.shared.device);
    json_decref(r.wl_ctx.dataset);
    json_decref(r.wl_ctx.test_correct);

    json_decref(r.shared.metrics);
    free(r.hosts);
    free(r.states);
    dlb_session_close(&r.ses);
    return rc;
}
