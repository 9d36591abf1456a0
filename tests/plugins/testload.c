/* testload: a workload plugin for the harness's integration tests.
 *
 * Each step runs `work` iterations of a dependent floating-point chain, so
 * twice the work takes twice the time: the measurement tests rely on that.
 *
 * `clock` says what the step's time is. `real`: the time the chain took,
 * as the core's monotonic clock reads it, which depends on the machine and
 * on whatever else runs on it. `synthetic`: the step still runs its chain,
 * but the workload keeps its own clock (ABI 1.7 hook `now`), which each
 * step advances by TL_SYNTHETIC_S_PER_ITER per iteration of work, so the
 * core measures exactly work x 1 ns on any machine under any load: twice
 * the work is exactly twice the time, and the fastest configuration is
 * known. `noise` spreads those simulated times by up to +-noise (a
 * share), drawn from the configuration's seed, so that the statistics see
 * samples that differ and a rerun sees the same ones.
 *
 * `fault` makes the configuration misbehave in one chosen way, at setup or
 * on the 3rd step (`fault_at`), so the runner's handling of each outcome can
 * be tested:
 *
 *   none         runs normally                    -> ok
 *   segv         dereferences an invalid pointer  -> crashed (SIGSEGV)
 *   abort        abort()                          -> crashed (SIGABRT)
 *   hang         sleeps forever                   -> timeout
 *   exit         _exit(7), writing nothing        -> crashed, no record
 *   oom          h->alloc until NULL, NOMEM       -> oom
 *   fail         logs and returns RUNTIME         -> failed
 *   unsupported  probe refuses with a reason      -> skipped
 *   leak         every step mallocs 64 MiB and    -> oom (under memory_limit)
 *                never frees it; NOMEM when
 *                malloc says no
 *
 * `slow_after` doubles the work of every step from that many seconds
 * after setup on: a level shift in the middle of a measurement. The
 * seconds are the workload's clock's: under clock = synthetic the shift
 * comes at the same step on every machine.
 *
 * evaluate records "checksum" (count): the chain iterations completed, that
 * is steps run x work, so a test can tell the work was done.
 *
 * `accuracy` (> 0) makes evaluate score a fake training run too: an
 * accuracy drawn around that mean, as training noise makes it, from the
 * seed: `accuracy_shared_sd` points that every configuration trained from
 * the same seed shares (the initialisation and data order a setting keeps),
 * plus `accuracy_sd` points of its own (what a setting changes in the
 * random stream), on `test_images` images. The accuracy tests plant known
 * differences with it. */
#define _POSIX_C_SOURCE 200809L

#include <dlbench/plugin.h>

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    TL_WORK, TL_FAULT, TL_FAULT_AT, TL_SAMPLES, TL_SLOW_AFTER, TL_CLOCK,
    TL_NOISE, TL_ACC, TL_ACC_SD, TL_ACC_SHARED_SD, TL_TEST_IMAGES, TL_N_PARAMS
};

enum tl_fault {
    TL_NONE, TL_SEGV, TL_ABORT, TL_HANG, TL_EXIT, TL_OOM, TL_FAIL,
    TL_UNSUPPORTED, TL_LEAK
};

static const char *const tl_faults[] = {
    "none", "segv", "abort", "hang", "exit", "oom", "fail", "unsupported",
    "leak", NULL
};
static const char *const tl_fault_ats[] = { "setup", "step", NULL };
static const char *const tl_clocks[] = { "real", "synthetic", NULL };

/* The simulated cost of one iteration of the chain under clock =
 * synthetic: a round figure near what an iteration takes on current CPUs
 * (1-2 ns: a multiply and an add, each waiting for the one before), so
 * that a suite's time budgets mean about as much on either clock. */
#define TL_SYNTHETIC_S_PER_ITER 1e-9

/* The step on which fault_at=step fires: late enough that setup and the
 * first steps have succeeded, early enough for quick tests. */
#define TL_FAULT_STEP 3

static const struct dlb_param_def tl_params[TL_N_PARAMS] = {
    [TL_WORK] = {
        .name = "work", .type = DLB_PARAM_INT, .def = "200000",
        .flags = DLB_PARAM_HAS_MIN, .min = 1, .unit = "iterations",
        .help = "iterations of a dependent floating-point loop per step",
    },
    [TL_FAULT] = {
        .name = "fault", .type = DLB_PARAM_ENUM, .def = "none",
        .choices = tl_faults,
        .help = "how the configuration misbehaves",
    },
    [TL_FAULT_AT] = {
        .name = "fault_at", .type = DLB_PARAM_ENUM, .def = "step",
        .choices = tl_fault_ats,
        .help = "when the fault fires: at setup or on the 3rd step",
    },
    [TL_SAMPLES] = {
        .name = "samples_per_step", .type = DLB_PARAM_INT, .def = "1",
        .flags = DLB_PARAM_HAS_MIN, .min = 1, .unit = "samples",
        .help = "samples one step counts for in throughput",
    },
    [TL_SLOW_AFTER] = {
        .name = "slow_after", .type = DLB_PARAM_FLOAT, .def = "0",
        .flags = DLB_PARAM_HAS_MIN, .min = 0, .unit = "s",
        .help = "from this long after setup on, every step does twice the "
                "work, as when the machine slows down mid-run (0: never)",
    },
    [TL_CLOCK] = {
        .name = "clock", .type = DLB_PARAM_ENUM, .def = "real",
        .choices = tl_clocks,
        .help = "real: steps are timed by the machine's clock; synthetic: "
                "each step counts as work x 1 ns, whatever the machine "
                "and its load",
    },
    [TL_NOISE] = {
        .name = "noise", .type = DLB_PARAM_FLOAT, .def = "0",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 0, .max = 0.5,
        .unit = "fraction",
        .help = "clock = synthetic: each step's time is off by up to this "
                "share, drawn from the seed (0: every step alike)",
    },
    [TL_ACC] = {
        .name = "accuracy", .type = DLB_PARAM_FLOAT, .def = "0",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 0, .max = 100,
        .unit = "%", .help = "the mean of the fake accuracy evaluate scores "
                             "(0: none)",
    },
    [TL_ACC_SD] = {
        .name = "accuracy_sd", .type = DLB_PARAM_FLOAT, .def = "0",
        .flags = DLB_PARAM_HAS_MIN, .min = 0, .unit = "points",
        .help = "the configuration's own noise around it, drawn from the seed",
    },
    [TL_ACC_SHARED_SD] = {
        .name = "accuracy_shared_sd", .type = DLB_PARAM_FLOAT, .def = "0",
        .flags = DLB_PARAM_HAS_MIN, .min = 0, .unit = "points",
        .help = "noise every configuration of the same seed shares",
    },
    [TL_TEST_IMAGES] = {
        .name = "test_images", .type = DLB_PARAM_INT, .def = "10000",
        .flags = DLB_PARAM_HAS_MIN, .min = 1, .unit = "images",
        .help = "the test images the fake accuracy counts as scored on",
    },
};

struct tl_state {
    int64_t work;
    enum tl_fault fault;
    int at_setup;
    int64_t samples;
    double slow_after;
    int synthetic;
    double noise;
    double acc, acc_sd, acc_shared_sd;
    int64_t test_images;
};

struct tl_workload {
    const struct dlb_host *h;
    const struct tl_state *s;
    uint64_t steps;
    uint64_t iterations;
    uint64_t leaked;
    double t0;    /* setup, by the host's clock (clock = real) */
    double sim_s; /* the workload's own clock (clock = synthetic) */
    uint64_t rng; /* the noise's state */
};

/* Where the chain's result goes: a store the compiler must perform, so the
 * loop that feeds it cannot be removed. */
static volatile double tl_sink;
/* Read at run time, so the chain's factor cannot be folded. */
static volatile double tl_factor = 0.9999999;

/* x = x * a + b, each iteration waiting for the previous one: no
 * vectorisation or reassociation can shorten it (without -ffast-math), and
 * it converges to b / (1 - a), so it never reaches inf or subnormals. */
static void tl_spin(int64_t work)
{
    const double a = tl_factor, b = 1e-3;
    double x = 1.0;
    for (int64_t i = 0; i < work; i++)
        x = x * a + b;
    tl_sink = x;
}

/* splitmix64: a full-period sequence from any seed, zero included. */
static uint64_t tl_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* The simulated duration of a step of `work` iterations. */
static double tl_synthetic_s(struct tl_workload *w, int64_t work)
{
    double d = (double)work * TL_SYNTHETIC_S_PER_ITER;
    if (w->s->noise > 0) {
        double u = (double)(tl_next(&w->rng) >> 11) * 0x1p-53; /* [0, 1) */
        d *= 1 + w->s->noise * (2 * u - 1);
    }
    return d;
}

/* Take memory through the host until it says no, touching every byte so
 * the memory is really committed, then give it all back. */
static dlb_status tl_exhaust(const struct dlb_host *h)
{
    const size_t chunk = (size_t)64 << 20;
    void *head = NULL;
    uint64_t total = 0;
    for (;;) {
        unsigned char *p = h->alloc(h, chunk);
        if (!p)
            break;
        for (size_t i = 0; i < chunk; i += 4096)
            p[i] = (unsigned char)i;
        *(void **)(void *)p = head; /* chain the blocks through themselves */
        head = p;
        total += chunk;
    }
    h->log(h, DLB_LOG_ERROR, "fault=oom: allocation failed after %llu MiB",
           (unsigned long long)(total >> 20));
    while (head) {
        void *next = *(void **)head;
        h->free(h, head, chunk);
        head = next;
    }
    return DLB_ERR_NOMEM;
}

/* A leak as plugins have them: plain malloc behind the host's back, a
 * little more every step, touched so that it is really committed. */
static dlb_status tl_leak(const struct dlb_host *h, uint64_t *leaked)
{
    const size_t chunk = (size_t)64 << 20;
    unsigned char *p = malloc(chunk);
    if (!p) {
        h->log(h, DLB_LOG_ERROR, "fault=leak: malloc failed after leaking %llu MiB",
               (unsigned long long)(*leaked >> 20));
        return DLB_ERR_NOMEM;
    }
    for (size_t i = 0; i < chunk; i += 4096)
        p[i] = 1;
    *leaked += chunk;
    return DLB_OK;
}

static dlb_status tl_fire(const struct dlb_host *h, enum tl_fault f,
                          const char *where)
{
    switch (f) {
    case TL_SEGV: {
        /* Not NULL: UndefinedBehaviorSanitizer would report a null store
         * and exit, where a real crash dies of SIGSEGV. Page zero is
         * never mapped. */
        volatile int *volatile bad = (volatile int *)(uintptr_t)16;
        *bad = 1;
        raise(SIGSEGV);
        h->log(h, DLB_LOG_ERROR, "fault=segv: still alive after SIGSEGV");
        return DLB_ERR_INTERNAL;
    }
    case TL_ABORT:
        abort();
    case TL_HANG:
        for (;;)
            sleep(60);
    case TL_EXIT:
        _exit(7);
    case TL_OOM:
        return tl_exhaust(h);
    case TL_FAIL:
        h->log(h, DLB_LOG_ERROR, "fault=fail: failing at %s as asked", where);
        return DLB_ERR_RUNTIME;
    case TL_NONE:
    case TL_UNSUPPORTED:
    case TL_LEAK: /* every step, see tl_step */
        break;
    }
    return DLB_OK;
}

static dlb_status tl_probe(const struct dlb_host *h, const struct dlb_params *p,
                           char *reason, size_t reason_len)
{
    (void)h;
    if (!p || p->count < TL_N_PARAMS)
        return DLB_ERR_INTERNAL;
    if (p->values[TL_FAULT].i == TL_UNSUPPORTED) {
        snprintf(reason, reason_len,
                 "testload: fault=unsupported asks to be skipped");
        return DLB_ERR_UNSUPPORTED;
    }
    return DLB_OK;
}

static dlb_status tl_init(const struct dlb_host *h, const struct dlb_params *p,
                          void **state)
{
    (void)h;
    if (!p || p->count < TL_N_PARAMS)
        return DLB_ERR_INTERNAL;
    struct tl_state *s = calloc(1, sizeof *s);
    if (!s)
        return DLB_ERR_NOMEM;
    s->work = p->values[TL_WORK].i;
    s->fault = (enum tl_fault)p->values[TL_FAULT].i;
    s->at_setup = p->values[TL_FAULT_AT].i == 0;
    s->samples = p->values[TL_SAMPLES].i;
    s->slow_after = p->values[TL_SLOW_AFTER].f;
    s->synthetic = p->values[TL_CLOCK].i == 1;
    s->noise = p->values[TL_NOISE].f;
    s->acc = p->values[TL_ACC].f;
    s->acc_sd = p->values[TL_ACC_SD].f;
    s->acc_shared_sd = p->values[TL_ACC_SHARED_SD].f;
    s->test_images = p->values[TL_TEST_IMAGES].i;
    *state = s;
    return DLB_OK;
}

static void tl_fini(void *state)
{
    free(state);
}

static dlb_status tl_setup(void *state, const struct dlb_host *h,
                           struct dlb_workload_info *info, void **wl)
{
    const struct tl_state *s = state;
    if (s->at_setup) {
        dlb_status st = tl_fire(h, s->fault, "setup");
        if (st != DLB_OK)
            return st;
    }
    struct tl_workload *w = calloc(1, sizeof *w);
    if (!w)
        return DLB_ERR_NOMEM;
    w->h = h;
    w->s = s;
    w->t0 = s->slow_after > 0 && !s->synthetic ? h->now(h) : 0;
    w->rng = h->seed;
    info->samples_per_step = (double)s->samples;
    info->flops_per_step = 2.0 * (double)s->work; /* a multiply and an add */
    *wl = w;
    return DLB_OK;
}

static dlb_status tl_step(void *wl)
{
    struct tl_workload *w = wl;
    w->steps++;
    if (!w->s->at_setup && w->steps == TL_FAULT_STEP) {
        dlb_status st = tl_fire(w->h, w->s->fault, "step 3");
        if (st != DLB_OK)
            return st;
    }
    if (w->s->fault == TL_LEAK) {
        dlb_status st = tl_leak(w->h, &w->leaked);
        if (st != DLB_OK)
            return st;
    }
    int64_t work = w->s->work;
    if (w->s->slow_after > 0) {
        double since_setup = w->s->synthetic ? w->sim_s : w->h->now(w->h) - w->t0;
        if (since_setup >= w->s->slow_after)
            work *= 2;
    }
    tl_spin(work);
    w->iterations += (uint64_t)work;
    if (w->s->synthetic)
        w->sim_s += tl_synthetic_s(w, work);
    return DLB_OK;
}

/* clock = synthetic: the seconds simulated since setup; clock = real:
 * none of its own (negative), so the core times steps itself. */
static double tl_now(void *wl)
{
    const struct tl_workload *w = wl;
    return w->s->synthetic ? w->sim_s : -1;
}

/* A standard normal draw from `state` (Box-Muller). */
static double tl_normal(uint64_t *state)
{
    double u1 = ((double)(tl_next(state) >> 11) + 1) * 0x1p-53; /* (0, 1] */
    double u2 = (double)(tl_next(state) >> 11) * 0x1p-53;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* The fake training run's accuracy: the mean, the seed's shared draw and
 * this configuration's own (its settings hashed with the seed). */
static dlb_status tl_accuracy(const struct tl_workload *w)
{
    const struct tl_state *s = w->s;
    uint64_t shared = w->h->seed ^ 0x5eedu, own = w->h->seed;
    uint64_t bits;
    memcpy(&bits, &s->acc, sizeof bits);
    own ^= tl_next(&(uint64_t){bits ^ (uint64_t)s->work * 31 ^
                               (uint64_t)s->samples * 131});
    double a = s->acc + s->acc_shared_sd * tl_normal(&shared) +
               s->acc_sd * tl_normal(&own);
    a = a < 0 ? 0 : a > 100 ? 100 : a;
    dlb_status st = w->h->metric(w->h, "accuracy", "%", a);
    if (st == DLB_OK)
        st = w->h->metric(w->h, "test_images", "images", (double)s->test_images);
    return st;
}

static dlb_status tl_evaluate(void *wl)
{
    struct tl_workload *w = wl;
    dlb_status st = w->h->metric(w->h, "checksum", "count", (double)w->iterations);
    if (st == DLB_OK && w->s->acc > 0)
        st = tl_accuracy(w);
    return st;
}

static void tl_teardown(void *wl)
{
    free(wl);
}

static const struct dlb_workload_hooks tl_workload = {
    .setup = tl_setup,
    .step = tl_step,
    .evaluate = tl_evaluate,
    .teardown = tl_teardown,
    .now = tl_now,
};

static const struct dlb_plugin testload_plugin = {
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),
    .name = "testload",
    .version = "1.1",
    .summary = "test workload: timed busy loop with injectable faults",
    .params = tl_params,
    .n_params = TL_N_PARAMS,
    .probe = tl_probe,
    .init = tl_init,
    .fini = tl_fini,
    .workload = &tl_workload,
};

DLB_PLUGIN_DEFINE(testload_plugin)
