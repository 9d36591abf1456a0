/* The roofline probe behind `dlbench info --peak`: the machine's fp32 FMA
 * peak, the peaks of the units that run bf16, fp16 and int8 kernels (AVX-512
 * dot products and FMAs, AMX tiles), each where the CPU and the OS have it,
 * and memory bandwidth, measured in about three seconds and cached per CPU
 * model and thread count, so that results can be put beside what the
 * hardware can do. */
#ifndef DLB_CORE_PEAK_H
#define DLB_CORE_PEAK_H

#include <jansson.h>

#include "util/error.h"

/* Bump when the probe changes what it measures: older cache entries are then
 * ignored (re-measured) rather than mixed with new figures. */
#define DLB_PEAK_PROBE_VERSION 2

struct dlb_peak {
    char cpu_model[128];   /* cpuid brand string, else /proc/cpuinfo */
    int threads;           /* threads of the "all threads" figures */
    /* fp32 FMA throughput, GFLOP/s (an FMA counts as 2 FLOP) */
    double fp32_gflops;    /* all threads */
    double fp32_gflops_1t; /* one thread */
    char fp32_isa[16];     /* "avx512", "avx2" or "c" */
    /* bf16 dot products (vdpbf16ps: 2 FLOP per bf16 pair), GFLOP/s; 0 and
     * isa "none" when the CPU or the build has no AVX512_BF16 */
    double bf16_gflops;
    double bf16_gflops_1t;
    char bf16_isa[16];     /* "avx512_bf16" or "none" */
    /* Each unit below is 0 with isa "none" where the CPU, the OS or the
     * build lacks it, like bf16. fp16 FMAs (vfmadd...ph), GFLOP/s */
    double fp16_gflops;
    double fp16_gflops_1t;
    char fp16_isa[16];     /* "avx512_fp16" or "none" */
    /* int8 dot products (vpdpbusd: u8 x s8 into s32), GOP/s: a
     * multiply-add counts as 2 operations */
    double vnni_gops;
    double vnni_gops_1t;
    char vnni_isa[16];     /* "avx512_vnni" or "none" */
    /* AMX tile dot products, tdpbf16ps (GFLOP/s) and tdpbssd (GOP/s): one
     * instruction is 16 x 16 x 32 bf16 or 16 x 16 x 64 int8 multiply-adds.
     * Also "none" when the kernel does not grant this process the tile
     * state (arch_prctl ARCH_REQ_XCOMP_PERM). */
    double amx_bf16_gflops;
    double amx_bf16_gflops_1t;
    char amx_bf16_isa[16]; /* "amx_bf16" or "none" */
    double amx_int8_gops;
    double amx_int8_gops_1t;
    char amx_int8_isa[16]; /* "amx_int8" or "none" */
    /* memory bandwidth over all threads, GB/s (1e9 bytes). The triad
     * a = b + s*c counts 24 bytes per element as STREAM does (the
     * write-allocate read of a is not counted); the sum reads 8 bytes. */
    double triad_gbs;
    double read_gbs;
    char mem_isa[16];      /* "avx512", "avx2" or "c" */
    double mem_mib;        /* size of the three arrays together, MiB */
    int pinned;            /* 1 when every worker was pinned to its own core */
    int contended;         /* 1 when all threads gave under 70% of linear
                              scaling from one: someone else was busy, and
                              dlb_peak_get does not cache such figures */
    double probe_s;        /* wall time the probe took */
    long long measured_at; /* Unix time of the measurement */
    int from_cache;        /* set by dlb_peak_get/dlb_peak_load, not saved */
};

/* The CPU's model string into buf (never empty: "unknown" at worst). */
void dlb_peak_cpu_model(char *buf, size_t size);

/* Measure with `threads` worker threads (<= 0: one per CPU this process may
 * run on), each pinned to its core. Takes about three seconds. */
dlb_status dlb_peak_measure(int threads, struct dlb_peak *out,
                            struct dlb_error *err);

/* The cache file: $DLBENCH_CACHE_DIR/peak.json, else
 * $XDG_CACHE_HOME/dlbench/peak.json, else ~/.cache/dlbench/peak.json. */
dlb_status dlb_peak_cache_path(char *buf, size_t size, struct dlb_error *err);

/* Look up this CPU's entry for `threads` (<= 0: as dlb_peak_measure) in the
 * cache file `path` (NULL: dlb_peak_cache_path). *found is 0 when the file
 * or the entry does not exist (DLB_OK). A file that is not a valid cache
 * gives DLB_ERR_INPUT, an unreadable one DLB_ERR_IO. */
dlb_status dlb_peak_load(const char *path, int threads, struct dlb_peak *out,
                         int *found, struct dlb_error *err);

/* Add or replace p's entry in the cache file (NULL: the default path),
 * keeping other entries; a corrupt file is replaced. Creates the directory
 * and writes through a temporary file and rename, so that readers never see
 * half a file. */
dlb_status dlb_peak_save(const char *path, const struct dlb_peak *p,
                         struct dlb_error *err);

/* The cached figures for this CPU and `threads`, or, when none are cached
 * and allow_measure is set, measure and cache them. Problems that do not
 * stop it (a corrupt cache file, a cache that cannot be written) are put in
 * warn->msg ("" when none); a missing entry with allow_measure 0 gives
 * DLB_ERR_UNSUPPORTED. warn may be NULL. */
dlb_status dlb_peak_get(int threads, int allow_measure, struct dlb_peak *out,
                        struct dlb_error *warn, struct dlb_error *err);

/* The fp32 FMA figure of all `threads` alone (<= 0: as dlb_peak_measure),
 * in about a tenth of a second: the check that tells whether the machine's
 * speed has moved since a cached probe. */
dlb_status dlb_peak_quick_fp32(int threads, double *gflops,
                               struct dlb_error *err);

/* Measure now and cache the figures unless they look contended (said in
 * warn->msg, "" otherwise): `dlbench info --peak`. */
dlb_status dlb_peak_probe(int threads, struct dlb_peak *out,
                          struct dlb_error *warn, struct dlb_error *err);

/* When a run's roofline is probed again rather than taken from the cache.
 * The machine's speed moves with the hour (the same VM read 368 GFLOP/s
 * fp32 one afternoon and 453 another), so a share of peak holds only
 * against a probe of the same sitting. */
struct dlb_peak_policy {
    double max_age_s;  /* a cached probe older than this is probed again */
    double tolerance;  /* ... and one whose fp32 figure a quick check finds
                          moved by more than this share */
};

/* The roofline a run measures against, and how it was chosen. */
struct dlb_peak_choice {
    struct dlb_peak peak;
    double age_s;         /* the probe's age when the run started */
    double check_gflops;  /* the quick check's fp32 figure; 0: none ran */
    int probed;           /* 1: measured for this run */
    char why[400];        /* how, in words, for the context and the log */
};

/* The cached probe for this CPU and `threads` if it is younger than the
 * policy's age and a quick check agrees with its fp32 figure within the
 * tolerance; else a fresh probe, cached unless contended. A contended
 * fresh probe does not replace a cached one: the cached figures are kept
 * and the choice says so. path NULL: the default cache. */
dlb_status dlb_peak_for_run(int threads, const struct dlb_peak_policy *pol,
                            const char *path, struct dlb_peak_choice *out,
                            struct dlb_error *warn, struct dlb_error *err);

/* The choice as a run records it (the context's "peak" and DIR/peak.json):
 * {"figures": dlb_peak_to_json, "measured_utc", "age_s", "source":
 * "cache" or "probe", "check_gflops" (null: none ran), "why"}. NULL when
 * out of memory. */
json_t *dlb_peak_choice_json(const struct dlb_peak_choice *c);

/* The figures of a dlb_peak_choice_json object, as a configuration's
 * process reads them from DIR/peak.json. */
dlb_status dlb_peak_choice_figures(const json_t *j, struct dlb_peak *p,
                                   struct dlb_error *err);

/* The all-threads peak of the unit that `precision`'s kernels run on, in
 * GFLOP/s (GOP/s for int8), with *unit (when unit is not NULL) naming it:
 *   "fp32": the FMA figure, unit fp32_isa ("avx512", "avx2", "c");
 *   "bf16": AMX where measured, else AVX512_BF16 ("amx_bf16", "avx512_bf16");
 *   "fp16": AVX512_FP16 ("avx512_fp16");
 *   "int8": AMX where measured, else VNNI ("amx_int8", "avx512_vnni").
 * 0 with *unit "none" when no unit for it was measured or the precision is
 * none of these. *unit points into *p or to a string constant. */
/* The roofline of `threads` busy threads: *p itself when it was measured
 * with that many (or threads <= 0), else every compute unit's one-thread
 * figure times `threads`, out->threads set to it; memory bandwidth as
 * measured. For a configuration whose step runs on more threads than the
 * run's roofline counts (two data-parallel replicas of one thread each),
 * so that its share of peak is of the cores it kept busy. */
void dlb_peak_for_threads(const struct dlb_peak *p, int threads,
                          struct dlb_peak *out);

double dlb_peak_unit_gflops(const struct dlb_peak *p, const char *precision,
                            const char **unit);

/* A new JSON object with p's figures (NULL when out of memory):
 * {"cpu_model", "threads", "fp32": {"gflops", "gflops_1t", "isa"},
 *  "bf16": {...} or null, "fp16": {...} or null, "amx_bf16": {...} or null,
 *  "vnni": {"gops", "gops_1t", "isa"} or null, "amx_int8": {...} or null,
 *  "memory": {"triad_gbs", "read_gbs", "isa", "mib"}, "pinned",
 *  "contended", "probe_s", "measured_at", "probe_version"} */
json_t *dlb_peak_to_json(const struct dlb_peak *p);

/* Fill *p from a dlb_peak_to_json object, checking every field. */
dlb_status dlb_peak_from_json(const json_t *j, struct dlb_peak *p,
                              struct dlb_error *err);

#endif
