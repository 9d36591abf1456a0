/* Inside the roofline probe: the ISA-specific kernels, chosen at run time so
 * that the build needs no -march flags, and the probe's knobs, which the
 * unit test turns down to exercise the fallbacks quickly. */
#ifndef DLB_CORE_PEAK_IMPL_H
#define DLB_CORE_PEAK_IMPL_H

#include <stddef.h>

#include "peak.h"

enum dlb_peak_isa { DLB_PEAK_ISA_C, DLB_PEAK_ISA_AVX2, DLB_PEAK_ISA_AVX512 };

struct dlb_peak_kernels {
    enum dlb_peak_isa isa;
    const char *name;            /* "avx512", "avx2", "c" */
    /* `iters` rounds of independent FMA chains; the result depends on all
     * of them so that the compiler cannot drop any */
    float (*fp32)(long iters);
    double fp32_flop_per_iter;
    float (*bf16)(long iters);   /* NULL without AVX512_BF16 */
    double bf16_flop_per_iter;
    const char *bf16_name;       /* "avx512_bf16" or "none" */
    void (*triad)(double *a, const double *b, const double *c, double s,
                  size_t n);     /* a = b + s*c */
    double (*sum)(const double *a, size_t n);
};

/* The best kernels this CPU and OS can run, but none above `cap`. */
void dlb_peak_kernels_select(enum dlb_peak_isa cap, struct dlb_peak_kernels *k);

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

#endif
