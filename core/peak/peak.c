/* The probe itself: runs the kernels of peak_kernels.c on a team of pinned
 * pthreads and turns the best of a few short trials into GFLOP/s and GB/s.
 * Best, not median: a peak is a ceiling, and on a shared machine the slower
 * trials are the ones someone else's work got into. */
#include "peak/peak_impl.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define DLB_PEAK_MAX_THREADS 1024
#define DLB_MIB (1024.0 * 1024.0)

enum team_op { OP_COMPUTE, OP_INIT, OP_TRIAD, OP_SUM };

struct team {
    int n, trials;
    enum team_op op;
    const struct dlb_peak_kernels *k;
    float (*compute)(long);     /* OP_COMPUTE's kernel */
    long iters;                 /* compute ops: rounds per thread per trial */
    double *a, *b, *c;          /* memory ops: the arrays, len each */
    size_t len;
    const int *cpus;            /* pin worker i to cpus[i % ncpu] */
    int ncpu;
    pthread_mutex_t gate_mu;    /* held back until every worker exists */
    pthread_cond_t gate_cv;
    int gate;                   /* 1 go, -1 abandon */
    pthread_barrier_t bar;
    double *t0, *t1;            /* [trial * n + worker] */
};

struct worker {
    struct team *t;
    int id, pinned;
    double sink;                /* keeps the kernels' results alive */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* This process's CPUs, so that workers land on cores we may use. */
static int affinity_cpus(int *cpus, int max)
{
    int n = 0;
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int i = 0; i < CPU_SETSIZE && n < max; i++)
            if (CPU_ISSET(i, &set))
                cpus[n++] = i;
#endif
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        for (n = 0; n < (c > 0 ? c : 1) && n < max; n++)
            cpus[n] = n;
    }
    return n;
}

int dlb_peak_resolve_threads(int threads)
{
    int cpus[DLB_PEAK_MAX_THREADS];
    return threads > 0 ? threads : affinity_cpus(cpus, DLB_PEAK_MAX_THREADS);
}

static int pin_self(int cpu)
{
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
#else
    (void)cpu;
    return 0;
#endif
}

/* Worker w's share of len elements, cut at multiples of 8 doubles (64
 * bytes) so that no cache line is written by two threads. */
static void slice(size_t len, int n, int w, size_t *lo, size_t *hi)
{
    size_t lines = len / 8;
    *lo = lines * (size_t)w / (size_t)n * 8;
    *hi = w == n - 1 ? len : lines * (size_t)(w + 1) / (size_t)n * 8;
}

static void do_op(struct worker *w)
{
    struct team *t = w->t;
    size_t lo, hi;
    if (t->op == OP_COMPUTE) {
        w->sink += t->compute(t->iters);
        return;
    }
    slice(t->len, t->n, w->id, &lo, &hi);
    if (t->op == OP_INIT) {
        /* first touch by the worker that will use the pages */
        for (size_t i = lo; i < hi; i++) {
            t->a[i] = 0.0;
            t->b[i] = 1.0;
            t->c[i] = 2.0;
        }
    } else if (t->op == OP_TRIAD) {
        t->k->triad(t->a + lo, t->b + lo, t->c + lo, 3.0, hi - lo);
    } else {
        /* the three arrays are one allocation: read all of it */
        slice(3 * t->len, t->n, w->id, &lo, &hi);
        w->sink += t->k->sum(t->a + lo, hi - lo);
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct team *t = w->t;
    w->pinned = pin_self(t->cpus[w->id % t->ncpu]);
    pthread_mutex_lock(&t->gate_mu);
    while (t->gate == 0)
        pthread_cond_wait(&t->gate_cv, &t->gate_mu);
    int go = t->gate > 0;
    pthread_mutex_unlock(&t->gate_mu);
    if (!go)
        return NULL;
    for (int r = 0; r < t->trials; r++) {
        pthread_barrier_wait(&t->bar); /* start every trial together */
        t->t0[r * t->n + w->id] = now_s();
        do_op(w);
        t->t1[r * t->n + w->id] = now_s();
    }
    return NULL;
}

static void open_gate(struct team *t, int v)
{
    pthread_mutex_lock(&t->gate_mu);
    t->gate = v;
    pthread_cond_broadcast(&t->gate_cv);
    pthread_mutex_unlock(&t->gate_mu);
}

/* Run t->op on t->n workers for t->trials trials; *best is the shortest
 * trial after the first (a warm-up, unless trials is 1), *pinned whether
 * every worker got a core of its own. */
static dlb_status team_run(struct team *t, double *best, int *pinned,
                           double *sink, struct dlb_error *err)
{
    dlb_status st = DLB_OK;
    size_t nt = (size_t)t->n * (size_t)t->trials;
    *best = INFINITY;
    *pinned = 0;
    pthread_t *tid = calloc((size_t)t->n, sizeof *tid);
    struct worker *w = calloc((size_t)t->n, sizeof *w);
    t->t0 = calloc(nt, sizeof *t->t0);
    t->t1 = calloc(nt, sizeof *t->t1);
    if (!tid || !w || !t->t0 || !t->t1) {
        st = dlb_errorf(err, DLB_ERR_NOMEM, "peak probe: out of memory "
                        "for %d threads", t->n);
        goto out;
    }
    pthread_mutex_init(&t->gate_mu, NULL);
    pthread_cond_init(&t->gate_cv, NULL);
    pthread_barrier_init(&t->bar, NULL, (unsigned)t->n);
    t->gate = 0;
    int made = 0;
    for (; made < t->n; made++) {
        w[made] = (struct worker){.t = t, .id = made};
        int rc = pthread_create(&tid[made], NULL, worker_main, &w[made]);
        if (rc) {
            st = dlb_errorf(err, DLB_ERR_RUNTIME, "peak probe: cannot start "
                            "thread %d of %d: %s; try fewer threads", made + 1,
                            t->n, strerror(rc));
            break;
        }
    }
    open_gate(t, st == DLB_OK ? 1 : -1);
    *pinned = t->n <= t->ncpu;
    for (int i = 0; i < made; i++) {
        pthread_join(tid[i], NULL);
        *pinned &= w[i].pinned;
        *sink += w[i].sink;
    }
    pthread_barrier_destroy(&t->bar);
    pthread_cond_destroy(&t->gate_cv);
    pthread_mutex_destroy(&t->gate_mu);
    for (int r = t->trials > 1 ? 1 : 0; st == DLB_OK && r < t->trials; r++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < t->n; i++) {
            lo = fmin(lo, t->t0[r * t->n + i]);
            hi = fmax(hi, t->t1[r * t->n + i]);
        }
        *best = fmin(*best, hi - lo);
    }
out:
    free(tid);
    free(w);
    free(t->t0);
    free(t->t1);
    t->t0 = t->t1 = NULL;
    return st;
}

/* Rounds of fn that take about trial_s on one core, timed on the calling
 * thread: double until a run is long enough to time, then scale. */
static long calibrate(float (*fn)(long), double trial_s, double *sink)
{
    long iters = 256;
    for (;;) {
        double t0 = now_s();
        *sink += fn(iters);
        double dt = now_s() - t0;
        if (dt >= trial_s / 8 || iters >= (1L << 40)) {
            double want = (double)iters * trial_s / (dt > 0 ? dt : 1e-9);
            return want < 1 ? 1 : (long)want;
        }
        iters *= 2;
    }
}

/* Largest cache (the LLC) from sysfs; glibc's sysconf figure is wrong on
 * some virtual machines. 32 MiB when nothing says. */
static size_t llc_bytes(void)
{
    size_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], unit = 0;
        unsigned long v = 0;
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fscanf(f, "%lu%c", &v, &unit) >= 1) {
            size_t b = v * (unit == 'K' ? 1024UL : unit == 'M' ? 1UL << 20 : 1);
            best = b > best ? b : best;
        }
        fclose(f);
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (best == 0) {
        long s = sysconf(_SC_LEVEL3_CACHE_SIZE);
        best = s > 0 ? (size_t)s : 0;
    }
#endif
    return best ? best : (size_t)32 << 20;
}

void dlb_peak_opts_default(struct dlb_peak_opts *o)
{
    /* up to 12 compute figures (6 units, one thread and all) x 6 trials x
     * 20 ms, plus ~1 s for memory: about 3 s */
    *o = (struct dlb_peak_opts){.isa_cap = DLB_PEAK_ISA_AVX512,
                                .trial_s = 0.02, .trials = 5, .mem_bytes = 0};
}

static dlb_status compute_figure(const struct dlb_peak_opts *o,
                                 struct team *t, int n,
                                 const struct dlb_peak_compute *c,
                                 double *gflops, int *pinned, double *sink,
                                 struct dlb_error *err)
{
    double best;
    t->op = OP_COMPUTE;
    t->compute = c->run;
    t->n = n;
    t->trials = o->trials + 1;
    t->iters = calibrate(c->run, o->trial_s, sink);
    dlb_status st = team_run(t, &best, pinned, sink, err);
    if (st == DLB_OK)
        *gflops = (double)n * (double)t->iters * c->flop_per_iter / best / 1e9;
    return st;
}

/* Every unit the kernels have, one thread then all; fp32 first, before the
 * wider units can lower the clock. */
static dlb_status compute_figures(const struct dlb_peak_opts *o,
                                  struct team *t, struct dlb_peak *p,
                                  double *sink, struct dlb_error *err)
{
    dlb_status st = DLB_OK;
    p->pinned = 1;
    for (int u = 0; u < DLB_PEAK_NUNITS && st == DLB_OK; u++) {
        const struct dlb_peak_compute *c = &t->k->unit[u];
        double one = 0, all = 0;
        int pin1 = 1, pinn = 1;
        if (c->run) {
            st = compute_figure(o, t, 1, c, &one, &pin1, sink, err);
            /* with one thread the two figures are the same run */
            all = one;
            if (st == DLB_OK && p->threads > 1)
                st = compute_figure(o, t, p->threads, c, &all, &pinn, sink,
                                    err);
        }
        dlb_peak_set(p, (enum dlb_peak_unit)u, all, one, c->isa);
        p->pinned = p->pinned && pin1 && pinn;
    }
    return st;
}

/* One block for the three arrays, so that the read-only sum can stream
 * over all of it. Halves the size while the allocation fails. Huge pages
 * were tried (MADV_HUGEPAGE): the same bandwidth here, but first touch took
 * three times as long, which the two-second budget cannot afford. */
static double *mem_alloc(size_t *bytes)
{
    const size_t align = 64;
    for (size_t want = *bytes; want >= ((size_t)6 << 20); want /= 2) {
        size_t sz = (want + align - 1) / align * align;
        void *m = aligned_alloc(align, sz);
        if (m) {
            *bytes = sz;
            return m;
        }
    }
    return NULL;
}

static dlb_status memory_figures(const struct dlb_peak_opts *o,
                                 struct team *t, struct dlb_peak *p,
                                 double *sink, struct dlb_error *err)
{
    size_t bytes = o->mem_bytes;
    if (bytes == 0) {
        /* each array 2 x the LLC, within 32..256 MiB: the triad then
         * streams through 6 x the LLC, so no pass finds the last one's data
         * in cache (STREAM's 4 x per array cost more page-fault time than
         * the budget allows, for the same figure) */
        size_t per = 2 * llc_bytes();
        per = per < ((size_t)32 << 20) ? (size_t)32 << 20 : per;
        per = per > ((size_t)256 << 20) ? (size_t)256 << 20 : per;
        bytes = 3 * per;
    }
    double *mem = mem_alloc(&bytes);
    if (!mem)
        return dlb_errorf(err, DLB_ERR_NOMEM, "peak probe: cannot allocate "
                          "%.0f MiB for the bandwidth arrays",
                          (double)bytes / DLB_MIB);
    t->len = bytes / sizeof(double) / 3 / 8 * 8;
    t->a = mem;
    t->b = mem + t->len;
    t->c = mem + 2 * t->len;
    p->mem_mib = 3.0 * (double)t->len * sizeof(double) / DLB_MIB;
    t->n = p->threads;
    double best, scratch;
    int pinned = 1;
    t->op = OP_INIT;
    t->trials = 1;
    dlb_status st = team_run(t, &scratch, &pinned, sink, err);
    if (st == DLB_OK) {
        t->op = OP_TRIAD;
        t->trials = o->trials + 1;
        st = team_run(t, &best, &pinned, sink, err);
        p->triad_gbs = 3.0 * (double)t->len * sizeof(double) / best / 1e9;
        *sink += t->a[t->len / 2]; /* the triad's output is used */
    }
    if (st == DLB_OK) {
        t->op = OP_SUM;
        st = team_run(t, &best, &pinned, sink, err);
        p->read_gbs = 3.0 * (double)t->len * sizeof(double) / best / 1e9;
    }
    p->pinned = p->pinned && pinned;
    free(mem);
    return st;
}

void dlb_peak_cpu_model(char *buf, size_t size)
{
    buf[0] = 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned r[12];
    if ((unsigned)__get_cpuid_max(0x80000000, NULL) >= 0x80000004u) {
        for (unsigned i = 0; i < 3; i++)
            __get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1],
                        &r[4 * i + 2], &r[4 * i + 3]);
        char s[49];
        memcpy(s, r, 48);
        s[48] = 0;
        const char *b = s;
        while (*b == ' ')
            b++;
        snprintf(buf, size, "%s", b);
    }
#endif
    if (!buf[0]) {
        /* other architectures: the kernel's description, first "model name"
         * (x86, some arm) or "Processor"/"cpu model" line */
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[256];
        while (f && fgets(line, sizeof line, f)) {
            char *c = strchr(line, ':');
            if (c && (!strncmp(line, "model name", 10)
                      || !strncmp(line, "Processor", 9)
                      || !strncmp(line, "cpu model", 9))) {
                c += 1 + strspn(c + 1, " \t");
                snprintf(buf, size, "%s", c);
                break;
            }
        }
        if (f)
            fclose(f);
    }
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == ' ' || buf[n - 1] == '\n'))
        buf[--n] = 0;
    if (!n)
        snprintf(buf, size, "unknown");
}

dlb_status dlb_peak_measure_opts(int threads, const struct dlb_peak_opts *o,
                                 struct dlb_peak *out, struct dlb_error *err)
{
    int cpus[DLB_PEAK_MAX_THREADS];
    if (threads > DLB_PEAK_MAX_THREADS)
        return dlb_errorf(err, DLB_ERR_INPUT, "peak probe: %d threads is "
                          "more than the %d supported", threads,
                          DLB_PEAK_MAX_THREADS);
    if (o->trials < 1 || !(o->trial_s > 0))
        return dlb_errorf(err, DLB_ERR_INTERNAL, "peak probe: trials %d, "
                          "trial_s %g", o->trials, o->trial_s);
    double start = now_s(), sink = 0;
    struct dlb_peak_kernels k;
    dlb_peak_kernels_select(o->isa_cap, &k);
    struct dlb_peak p = {0};
    dlb_peak_cpu_model(p.cpu_model, sizeof p.cpu_model);
    struct team t = {.k = &k, .cpus = cpus};
    t.ncpu = affinity_cpus(cpus, DLB_PEAK_MAX_THREADS);
    p.threads = threads > 0 ? threads : t.ncpu;
    snprintf(p.mem_isa, sizeof p.mem_isa, "%s", k.name);
    dlb_status st = compute_figures(o, &t, &p, &sink, err);
    if (st == DLB_OK)
        st = memory_figures(o, &t, &p, &sink, err);
    if (st != DLB_OK)
        return st;
    if (!isfinite(sink)) /* never expected; also keeps sink observable */
        return dlb_errorf(err, DLB_ERR_INTERNAL, "peak probe: kernels "
                          "produced %g", sink);
    /* FMA throughput scales linearly over cores that are ours alone */
    int cores = p.threads < t.ncpu ? p.threads : t.ncpu;
    p.contended = p.fp32_gflops < 0.7 * cores * p.fp32_gflops_1t;
    p.probe_s = now_s() - start;
    p.measured_at = (long long)time(NULL);
    *out = p;
    return DLB_OK;
}

dlb_status dlb_peak_quick_fp32(int threads, double *gflops,
                               struct dlb_error *err)
{
    int cpus[DLB_PEAK_MAX_THREADS];
    struct dlb_peak_opts o;
    dlb_peak_opts_default(&o);
    if (threads > DLB_PEAK_MAX_THREADS)
        return dlb_errorf(err, DLB_ERR_INPUT, "peak check: %d threads is "
                          "more than the %d supported", threads,
                          DLB_PEAK_MAX_THREADS);
    double sink = 0;
    int pinned = 1;
    struct dlb_peak_kernels k;
    dlb_peak_kernels_select(o.isa_cap, &k);
    struct team t = {.k = &k, .cpus = cpus};
    t.ncpu = affinity_cpus(cpus, DLB_PEAK_MAX_THREADS);
    int n = threads > 0 ? threads : t.ncpu;
    dlb_status st = compute_figure(&o, &t, n, &k.unit[DLB_PEAK_FP32], gflops,
                                   &pinned, &sink, err);
    if (st == DLB_OK && !isfinite(sink))
        return dlb_errorf(err, DLB_ERR_INTERNAL, "peak check: kernels "
                          "produced %g", sink);
    return st;
}

dlb_status dlb_peak_measure(int threads, struct dlb_peak *out,
                            struct dlb_error *err)
{
    struct dlb_peak_opts o;
    dlb_peak_opts_default(&o);
    return dlb_peak_measure_opts(threads, &o, out, err);
}
