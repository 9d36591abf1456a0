/* Inside the roofline probe: the ISA-specific kernels, chosen at run time so
 * that the build needs no -march flags, and the probe's knobs, which the
 * unit test turns down to exercise the fallbacks quickly. */
#ifndef DLB_CORE_PEAK_IMPL_H
#define DLB_CORE_PEAK_IMPL_H

#include <stddef.h>

#include "peak/peak.h"

enum dlb_peak_isa { DLB_PEAK_ISA_C, DLB_PEAK_ISA_AVX2, DLB_PEAK_ISA_AVX512 };

/* The compute units, in the order the probe measures them. */
enum dlb_peak_unit {
    DLB_PEAK_FP32, DLB_PEAK_BF16, DLB_PEAK_FP16, DLB_PEAK_VNNI,
    DLB_PEAK_AMX_BF16, DLB_PEAK_AMX_INT8, DLB_PEAK_NUNITS
};

struct dlb_peak_unit_desc {
    const char *key;   /* member of dlb_peak_to_json: "fp32", "amx_bf16" */
    const char *isa;   /* the isa it reports when present; NULL for fp32,
                          whose isa is the kernels' name */
    const char *all, *one;   /* its figures' JSON names: "gflops",
                                "gflops_1t" or "gops", "gops_1t" */
};

extern const struct dlb_peak_unit_desc dlb_peak_units[DLB_PEAK_NUNITS];

/* Unit u's figures in p, as dlb_peak's fields by number, so that the probe,
 * the JSON and the tests go through all units in one loop. */
double dlb_peak_figure(const struct dlb_peak *p, enum dlb_peak_unit u,
                       int one_thread);
const char *dlb_peak_isa(const struct dlb_peak *p, enum dlb_peak_unit u);
void dlb_peak_set(struct dlb_peak *p, enum dlb_peak_unit u, double all,
                  double one, const char *isa);

/* One compute unit's kernel: `iters` rounds of independent chains (FMA
 * registers or accumulator tiles); the result depends on all of them so
 * that the compiler cannot drop any. */
struct dlb_peak_compute {
    float (*run)(long iters);    /* NULL where the CPU, OS or build lacks it */
    double flop_per_iter;
    const char *isa;             /* "none" where run is NULL */
};

struct dlb_peak_kernels {
    enum dlb_peak_isa isa;
    const char *name;            /* "avx512", "avx2", "c" */
    struct dlb_peak_compute unit[DLB_PEAK_NUNITS]; /* [DLB_PEAK_FP32] is
                                                      always there */
    void (*triad)(double *a, const double *b, const double *c, double s,
                  size_t n);     /* a = b + s*c */
    double (*sum)(const double *a, size_t n);
};

/* The best kernels this CPU and OS can run, but none above `cap`; the units
 * beyond fp32 (AVX-512 and AMX) only with cap DLB_PEAK_ISA_AVX512. Asks the
 * kernel for the AMX tile state where the CPU has AMX. */
void dlb_peak_kernels_select(enum dlb_peak_isa cap, struct dlb_peak_kernels *k);

/* The AMX units into k where the CPU has them and the kernel grants this
 * process the tile state; left as they are otherwise (core/peak/peak_amx.c). */
void dlb_peak_amx_select(struct dlb_peak_kernels *k);

struct dlb_peak_opts {
    enum dlb_peak_isa isa_cap;
    double trial_s;   /* length of one timed compute trial */
    int trials;       /* timed trials per figure (the best is kept), after
                         one untimed warm-up */
    size_t mem_bytes; /* the three arrays together; 0: 6 x the LLC */
};

void dlb_peak_opts_default(struct dlb_peak_opts *o);

/* Worker count for `threads` (<= 0: CPUs in this process's affinity). */
int dlb_peak_resolve_threads(int threads);

dlb_status dlb_peak_measure_opts(int threads, const struct dlb_peak_opts *o,
                                 struct dlb_peak *out, struct dlb_error *err);

/* dlb_peak_get with the probe's knobs (NULL: the defaults) and the cache
 * file (NULL: dlb_peak_cache_path). */
dlb_status dlb_peak_get_opts(int threads, int allow_measure,
                             const struct dlb_peak_opts *o, const char *path,
                             struct dlb_peak *out, struct dlb_error *warn,
                             struct dlb_error *err);

/* Measure with the knobs o (NULL: the defaults) and save into the cache
 * file path (NULL: the default), unless the figures look contended. */
dlb_status dlb_peak_measure_save(int threads, const struct dlb_peak_opts *o,
                                 const char *path, struct dlb_peak *out,
                                 struct dlb_error *warn, struct dlb_error *err);

/* dlb_peak_for_run with its probes and clock given: the unit test plants
 * figures and ages instead of timing the machine. */
struct dlb_peak_probes {
    dlb_status (*quick)(int threads, double *gflops, struct dlb_error *err);
    dlb_status (*full)(int threads, struct dlb_peak *out, struct dlb_error *err);
    long long (*now)(void);   /* Unix time */
};

dlb_status dlb_peak_for_run_with(int threads, const struct dlb_peak_policy *pol,
                                 const char *path,
                                 const struct dlb_peak_probes *probes,
                                 struct dlb_peak_choice *out,
                                 struct dlb_error *warn, struct dlb_error *err);

/* Add msg to warn->msg, "; "-separated after what is there. */
void dlb_peak_warn_add(struct dlb_error *warn, const char *what,
                       const char *msg);

#endif
