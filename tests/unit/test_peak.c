/* Unit tests of the roofline probe (core/peak*.c): one full probe whose
 * units must be exactly those the CPU's flags promise, quick probes through
 * the AVX2 and C fallbacks, kernels that must compute the same values on
 * every ISA, the unit a precision runs on, and the cache: round trip of
 * every field, lookup by thread count, corrupt and old-format files.
 * Nothing here compares speeds: `make check` runs tests side by side on a
 * shared machine, where any ratio can be upset. tests/bench/peak.sh checks
 * the figures on a quiet one. */
#include "config.h"

#include "peak/peak_impl.h"

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#endif

static char dir[512];

static void quick_opts(struct dlb_peak_opts *o, enum dlb_peak_isa cap)
{
    dlb_peak_opts_default(o);
    o->isa_cap = cap;
    o->trial_s = 0.002;
    o->trials = 2;
    o->mem_bytes = (size_t)24 << 20;
}

static void print_peak(const char *what, const struct dlb_peak *p)
{
    printf("%s: %s, %d threads%s%s:", what, p->cpu_model, p->threads,
           p->pinned ? " pinned" : "", p->contended ? " contended" : "");
    for (int u = 0; u < DLB_PEAK_NUNITS; u++)
        printf(" %s %.1f (1 thread %.1f) [%s];", dlb_peak_units[u].key,
               dlb_peak_figure(p, (enum dlb_peak_unit)u, 0),
               dlb_peak_figure(p, (enum dlb_peak_unit)u, 1),
               dlb_peak_isa(p, (enum dlb_peak_unit)u));
    printf(" triad %.1f GB/s, read %.1f GB/s [%s, %.0f MiB]; probe %.2f s\n",
           p->triad_gbs, p->read_gbs, p->mem_isa, p->mem_mib, p->probe_s);
}

#if defined(DLB_HAVE_AMX) && defined(__linux__) && defined(__x86_64__)
#define DLB_TEST_AMX 1
#endif

/* The units the full probe must have measured: those whose flags the CPU
 * has, the build has kernels for and (AMX) the kernel grants. */
static void expected_units(int want[DLB_PEAK_NUNITS])
{
    int avx512 = check_cpu_flag("avx512f"), amx = 0;
#ifdef DLB_TEST_AMX
    /* the probe asked for the tile data already: asking again is harmless */
    amx = check_cpu_flag("amx_tile") && check_amx_granted();
#endif
    for (int u = 0; u < DLB_PEAK_NUNITS; u++)
        want[u] = 0;
    want[DLB_PEAK_FP32] = 1;
#ifdef DLB_HAVE_AVX512BF16
    want[DLB_PEAK_BF16] = avx512 && check_cpu_flag("avx512_bf16");
#endif
#ifdef DLB_HAVE_AVX512FP16
    want[DLB_PEAK_FP16] = avx512 && check_cpu_flag("avx512_fp16");
#endif
#ifdef DLB_HAVE_AVX512VNNI
    want[DLB_PEAK_VNNI] = avx512 && check_cpu_flag("avx512_vnni");
#endif
    want[DLB_PEAK_AMX_BF16] = amx && check_cpu_flag("amx_bf16");
    want[DLB_PEAK_AMX_INT8] = amx && check_cpu_flag("amx_int8");
    (void)avx512;
}

/* Facts that hold on any machine under any load: every unit is measured
 * exactly where `want` says, its figures positive and finite, its isa the
 * unit's own; an absent unit is 0 and "none". */
static void check_units(const struct dlb_peak *p, const int want[])
{
    for (int u = 0; u < DLB_PEAK_NUNITS; u++) {
        enum dlb_peak_unit e = (enum dlb_peak_unit)u;
        double all = dlb_peak_figure(p, e, 0), one = dlb_peak_figure(p, e, 1);
        const char *isa = dlb_peak_isa(p, e);
        if (strcmp(isa, "none") == 0 ? want[u] : !want[u])
            fprintf(stderr, "unit %s: isa %s, expected %s\n",
                    dlb_peak_units[u].key, isa,
                    want[u] ? "measured" : "none");
        if (want[u]) {
            CHECK(strcmp(isa, "none") != 0);
            CHECK(isfinite(all) && all > 0 && isfinite(one) && one > 0);
            CHECK(!dlb_peak_units[u].isa
                  || strcmp(isa, dlb_peak_units[u].isa) == 0);
        } else {
            CHECK(strcmp(isa, "none") == 0 && all == 0 && one == 0);
        }
    }
}

static void check_plausible(const struct dlb_peak *p)
{
    CHECK(p->threads >= 1);
    CHECK(!strcmp(p->fp32_isa, "avx512") || !strcmp(p->fp32_isa, "avx2")
          || !strcmp(p->fp32_isa, "c"));
    CHECK(isfinite(p->triad_gbs) && p->triad_gbs > 0);
    CHECK(isfinite(p->read_gbs) && p->read_gbs > 0);
    CHECK(p->mem_mib > 0 && p->probe_s > 0);
    CHECK(p->measured_at > 0 && p->cpu_model[0]);
}

static void test_full_probe(struct dlb_peak *p)
{
    struct dlb_error err = {""};
    int want[DLB_PEAK_NUNITS];
    dlb_status st = dlb_peak_measure(0, p, &err);
    if (st != DLB_OK)
        fprintf(stderr, "dlb_peak_measure: %s\n", err.msg);
    CHECK(st == DLB_OK);
    CHECK(p->threads == dlb_peak_resolve_threads(0));
    check_plausible(p);
    expected_units(want);
    check_units(p, want);
    print_peak("peak", p);
}

/* Below AVX-512 only the fp32 unit is probed. */
static void test_fallbacks(void)
{
    struct dlb_peak_kernels k;
    enum dlb_peak_isa caps[] = {DLB_PEAK_ISA_C, DLB_PEAK_ISA_AVX2};
    int only_fp32[DLB_PEAK_NUNITS] = {[DLB_PEAK_FP32] = 1};
    for (size_t i = 0; i < 2; i++) {
        struct dlb_peak_opts o;
        struct dlb_peak p;
        struct dlb_error err = {""};
        quick_opts(&o, caps[i]);
        dlb_peak_kernels_select(caps[i], &k);
        CHECK(dlb_peak_measure_opts(2, &o, &p, &err) == DLB_OK);
        check_plausible(&p);
        check_units(&p, only_fp32);
        CHECK(strcmp(p.fp32_isa, k.name) == 0);
        CHECK(caps[i] != DLB_PEAK_ISA_C || strcmp(p.fp32_isa, "c") == 0);
        print_peak("quick", &p);
    }
    struct dlb_error err = {""};
    struct dlb_peak p;
    struct dlb_peak_opts o;
    quick_opts(&o, DLB_PEAK_ISA_C);
    o.trials = 0;
    CHECK(dlb_peak_measure_opts(1, &o, &p, &err) == DLB_ERR_INTERNAL);
    CHECK(dlb_peak_measure(5000, &p, &err) == DLB_ERR_INPUT);
}

/* What 1000 rounds of each unit's kernel return: exact, as every partial
 * sum is a small integer (fp32 and bf16 converge to values that are not). */
static double kernel_value(enum dlb_peak_unit u)
{
    switch (u) {
    case DLB_PEAK_FP16: return 16 * 32;          /* each lane converges to 1 */
    case DLB_PEAK_VNNI:                          /* lanes start at k, +4 a round */
        return 16 * 16 * 4 * 1000 + 16 * (15 * 16 / 2);
    case DLB_PEAK_AMX_BF16: return 6 * 256 * 8000.0;  /* 32 x 0.5 x 0.5 */
    case DLB_PEAK_AMX_INT8: return 6 * 256 * 64000.0; /* 64 x 1 x 1 */
    default: return -1;
    }
}

/* The values are exact in binary, so FMA and separate multiply-add agree to
 * the bit; n = 37 leaves a tail after every vector width. */
static void test_kernels_agree(void)
{
    enum { N = 37 };
    double a[N], b[N], c[N];
    int want[DLB_PEAK_NUNITS];
    expected_units(want);
    for (int isa = DLB_PEAK_ISA_C; isa <= DLB_PEAK_ISA_AVX512; isa++) {
        struct dlb_peak_kernels k;
        dlb_peak_kernels_select((enum dlb_peak_isa)isa, &k);
        for (int i = 0; i < N; i++) {
            a[i] = -1;
            b[i] = i;
            c[i] = 0.5 * i;
        }
        k.triad(a, b, c, 3.0, N);
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= a[i] == 2.5 * i;
        CHECK(ok);
        CHECK(k.sum(b, N) == 666.0);  /* 0 + 1 + ... + 36 = 36*37/2 */
        CHECK(k.sum(b, 3) == 3.0);    /* shorter than any vector */
        CHECK(k.unit[DLB_PEAK_FP32].run != NULL);
        CHECK(strcmp(k.unit[DLB_PEAK_FP32].isa, k.name) == 0);
        for (int u = 0; u < DLB_PEAK_NUNITS; u++) {
            const struct dlb_peak_compute *cu = &k.unit[u];
            int on = isa == DLB_PEAK_ISA_AVX512 ? want[u]
                                                : u == DLB_PEAK_FP32;
            if (!on) {
                CHECK(cu->run == NULL && strcmp(cu->isa, "none") == 0);
                continue;
            }
            CHECK(cu->run != NULL && cu->flop_per_iter > 0);
            if (!cu->run)
                continue;
            double v = cu->run(1000), exact = kernel_value((enum dlb_peak_unit)u);
            CHECK(isfinite(v) && v > 0);
            if (exact > 0 && v != exact)
                fprintf(stderr, "%s kernel: %.17g, expected %.17g\n",
                        dlb_peak_units[u].key, v, exact);
            CHECK(exact < 0 || v == exact);
        }
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int peak_equal(const struct dlb_peak *x, const struct dlb_peak *y)
{
    int eq = !strcmp(x->cpu_model, y->cpu_model) && x->threads == y->threads
             && x->triad_gbs == y->triad_gbs && x->read_gbs == y->read_gbs
             && !strcmp(x->mem_isa, y->mem_isa) && x->mem_mib == y->mem_mib
             && x->pinned == y->pinned && x->contended == y->contended
             && x->measured_at == y->measured_at;
    for (int u = 0; u < DLB_PEAK_NUNITS; u++) {
        enum dlb_peak_unit e = (enum dlb_peak_unit)u;
        eq = eq && dlb_peak_figure(x, e, 0) == dlb_peak_figure(y, e, 0)
             && dlb_peak_figure(x, e, 1) == dlb_peak_figure(y, e, 1)
             && !strcmp(dlb_peak_isa(x, e), dlb_peak_isa(y, e));
    }
    return eq;
}

/* Figures for every unit, whatever this CPU has, none of them short in
 * binary: what the cache must carry to the last bit. */
static struct dlb_peak synthetic_peak(const char *model, int threads)
{
    struct dlb_peak p = {.threads = threads, .pinned = 1, .contended = 0,
                         .triad_gbs = 21.0 / 3, .read_gbs = 1e9 / 7,
                         .mem_mib = 768, .probe_s = 2.5,
                         .measured_at = 1767225600};
    snprintf(p.cpu_model, sizeof p.cpu_model, "%s", model);
    snprintf(p.mem_isa, sizeof p.mem_isa, "avx512");
    for (int u = 0; u < DLB_PEAK_NUNITS; u++) {
        const char *isa = dlb_peak_units[u].isa;
        dlb_peak_set(&p, (enum dlb_peak_unit)u, 100.0 * (u + 1) / 3,
                     50.0 * (u + 1) / 7, isa ? isa : "avx512");
    }
    return p;
}

static void test_cache_path(void)
{
    char buf[4096];
    struct dlb_error err;
    setenv("DLBENCH_CACHE_DIR", "/x/c", 1);
    setenv("XDG_CACHE_HOME", "/x/xdg", 1);
    setenv("HOME", "/x/home", 1);
    CHECK(dlb_peak_cache_path(buf, sizeof buf, &err) == DLB_OK);
    CHECK(strcmp(buf, "/x/c/peak.json") == 0);
    setenv("DLBENCH_CACHE_DIR", "", 1);
    CHECK(dlb_peak_cache_path(buf, sizeof buf, &err) == DLB_OK);
    CHECK(strcmp(buf, "/x/xdg/dlbench/peak.json") == 0);
    unsetenv("XDG_CACHE_HOME");
    CHECK(dlb_peak_cache_path(buf, sizeof buf, &err) == DLB_OK);
    CHECK(strcmp(buf, "/x/home/.cache/dlbench/peak.json") == 0);
    unsetenv("HOME");
    CHECK(dlb_peak_cache_path(buf, sizeof buf, &err) == DLB_ERR_INPUT);
    CHECK(dlb_peak_cache_path(buf, 8, &err) == DLB_ERR_INPUT);
}

static void test_cache_roundtrip(const struct dlb_peak *p)
{
    char path[600];
    struct dlb_error err = {""}, warn;
    struct dlb_peak q, one = *p;
    int found = -1;
    /* a directory that does not exist yet: save creates it */
    snprintf(path, sizeof path, "%s/sub", dir);
    setenv("DLBENCH_CACHE_DIR", path, 1);
    CHECK(dlb_peak_load(NULL, p->threads, &q, &found, &err) == DLB_OK);
    CHECK(found == 0);
    CHECK(dlb_peak_save(NULL, p, &err) == DLB_OK);
    one.threads = p->threads + 1;
    one.fp32_gflops = 1.5;
    for (int u = DLB_PEAK_FP32 + 1; u < DLB_PEAK_NUNITS; u++)
        dlb_peak_set(&one, (enum dlb_peak_unit)u, 0, 0, "none");
    one.contended = !p->contended;
    CHECK(dlb_peak_save(NULL, &one, &err) == DLB_OK); /* kept beside p */
    CHECK(dlb_peak_load(NULL, p->threads, &q, &found, &err) == DLB_OK);
    CHECK(found == 1 && q.from_cache == 1 && peak_equal(&q, p));
    CHECK(dlb_peak_load(NULL, one.threads, &q, &found, &err) == DLB_OK);
    CHECK(found == 1 && peak_equal(&q, &one));
    CHECK(dlb_peak_load(NULL, p->threads + 2, &q, &found, &err) == DLB_OK);
    CHECK(found == 0);
    /* get: cached figures, no probe; a missing entry without measuring */
    CHECK(dlb_peak_get(p->threads, 0, &q, &warn, &err) == DLB_OK);
    CHECK(q.from_cache && peak_equal(&q, p) && warn.msg[0] == 0);
    CHECK(dlb_peak_get(p->threads + 2, 0, &q, &warn, &err)
          == DLB_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "dlbench info --peak") != NULL);

    /* every unit's figures and isa, present on this CPU or not */
    struct dlb_peak all = synthetic_peak(p->cpu_model, p->threads + 3);
    CHECK(dlb_peak_save(NULL, &all, &err) == DLB_OK);
    CHECK(dlb_peak_load(NULL, all.threads, &q, &found, &err) == DLB_OK);
    CHECK(found == 1 && peak_equal(&q, &all));
    CHECK(dlb_peak_load(NULL, p->threads, &q, &found, &err) == DLB_OK);
    CHECK(found == 1 && peak_equal(&q, p));

    json_t *j = dlb_peak_to_json(&one);
    for (int u = DLB_PEAK_FP32 + 1; u < DLB_PEAK_NUNITS; u++)
        CHECK(j && json_is_null(json_object_get(j, dlb_peak_units[u].key)));
    CHECK(json_real_value(json_object_get(json_object_get(j, "fp32"),
                                          "gflops")) == 1.5);
    json_decref(j);
    /* int8 units count operations, the others FLOPs */
    j = dlb_peak_to_json(&all);
    json_t *amx = json_object_get(j, "amx_int8");
    CHECK(json_real_value(json_object_get(amx, "gops")) == all.amx_int8_gops);
    CHECK(json_object_get(amx, "gflops") == NULL);
    CHECK(!strcmp(json_string_value(json_object_get(amx, "isa")), "amx_int8"));
    CHECK(json_real_value(json_object_get(json_object_get(j, "amx_bf16"),
                                          "gflops_1t"))
          == all.amx_bf16_gflops_1t);
    CHECK(json_real_value(json_object_get(json_object_get(j, "vnni"),
                                          "gops")) == all.vnni_gops);
    CHECK(json_real_value(json_object_get(json_object_get(j, "fp16"),
                                          "gflops")) == all.fp16_gflops);
    json_decref(j);
    snprintf(path, sizeof path, "%s/sub/peak.json", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
}

static void test_corrupt(const struct dlb_peak *p)
{
    char path[600], text[512], model[128];
    struct dlb_error err, warn;
    struct dlb_peak q;
    int found;
    dlb_peak_cpu_model(model, sizeof model);
    snprintf(path, sizeof path, "%s/peak.json", dir);
    setenv("DLBENCH_CACHE_DIR", dir, 1);
    /* formats taking the probe version, the model and the thread count */
    const char *bad[] = {
        "", "{not json", "[1, 2]", "{\"probe_version\": %d}",
        "{\"probe_version\": %d, \"entries\": {\"%s\": 7}}",
        ("{\"probe_version\": %d, \"entries\": {\"%s\": {\"%d\": "
         "{\"fp32\": \"fast\"}}}}"),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, bad[i], DLB_PEAK_PROBE_VERSION, model,
                 p->threads);
        write_file(path, text);
        err.msg[0] = 0;
        CHECK(dlb_peak_load(NULL, p->threads, &q, &found, &err)
              == DLB_ERR_INPUT);
        CHECK(found == 0 && strstr(err.msg, path) != NULL);
        CHECK(dlb_peak_get(p->threads, 0, &q, &warn, &err)
              == DLB_ERR_UNSUPPORTED);
        CHECK(strstr(warn.msg, "ignoring peak cache") != NULL);
    }
    /* another probe version: not an error, just nothing cached */
    write_file(path, "{\"probe_version\": 99, \"entries\": {}}");
    CHECK(dlb_peak_load(NULL, p->threads, &q, &found, &err) == DLB_OK);
    CHECK(found == 0);
    /* a corrupt file is re-measured (quickly here) and replaced */
    write_file(path, "{not json");
    struct dlb_peak_opts o;
    quick_opts(&o, DLB_PEAK_ISA_AVX512);
    CHECK(dlb_peak_get_opts(1, 1, &o, NULL, &q, &warn, &err) == DLB_OK);
    CHECK(!q.from_cache && q.threads == 1 && warn.msg[0]);
    CHECK(dlb_peak_load(NULL, 1, &q, &found, &err) == DLB_OK && found == 1);
    remove(path);
}

/* A cache written by the probe before it knew fp16, VNNI and AMX: a file of
 * probe version 1 is not read, so its figures are measured again and the
 * file replaced; and an entry of the old shape under the current version
 * is refused rather than read with those units missing. */
static void test_old_cache(const struct dlb_peak *p)
{
    char path[600], model[128];
    struct dlb_error err = {""}, warn;
    struct dlb_peak q;
    int found = -1;
    dlb_peak_cpu_model(model, sizeof model);
    snprintf(path, sizeof path, "%s/peak.json", dir);
    setenv("DLBENCH_CACHE_DIR", dir, 1);
    CHECK(DLB_PEAK_PROBE_VERSION > 1);
    json_t *entry = json_pack(
        "{s:s, s:i, s:{s:f, s:f, s:s}, s:n, s:{s:f, s:f, s:s, s:f}, s:b, "
        "s:b, s:f, s:I, s:i}", "cpu_model", model, "threads", 1,
        "fp32", "gflops", 175.0, "gflops_1t", 175.0, "isa", "avx512",
        "bf16", "memory", "triad_gbs", 15.0, "read_gbs", 15.6, "isa",
        "avx512", "mib", 768.0, "pinned", 1, "contended", 0, "probe_s", 1.8,
        "measured_at", (json_int_t)1767225600, "probe_version", 1);
    json_t *root = json_pack("{s:i, s:{s:{s:O}}}", "probe_version", 1,
                             "entries", model, "1", entry);
    CHECK(root && json_dump_file(root, path, 0) == 0);
    CHECK(dlb_peak_load(NULL, 1, &q, &found, &err) == DLB_OK);
    CHECK(found == 0);
    CHECK(dlb_peak_get(1, 0, &q, &warn, &err) == DLB_ERR_UNSUPPORTED);
    struct dlb_peak_opts o;
    quick_opts(&o, DLB_PEAK_ISA_AVX512);
    CHECK(dlb_peak_get_opts(1, 1, &o, NULL, &q, &warn, &err) == DLB_OK);
    CHECK(!q.from_cache);
    /* saved unless the quick probe looked contended */
    if (!q.contended) {
        json_t *now = json_load_file(path, 0, NULL);
        CHECK(json_integer_value(json_object_get(now, "probe_version"))
              == DLB_PEAK_PROBE_VERSION);
        json_decref(now);
        CHECK(dlb_peak_load(NULL, 1, &q, &found, &err) == DLB_OK);
        CHECK(found == 1 && q.from_cache);
    }
    /* the old entry under the current version: missing units, refused */
    json_object_set_new(root, "probe_version",
                        json_integer(DLB_PEAK_PROBE_VERSION));
    CHECK(json_dump_file(root, path, 0) == 0);
    CHECK(dlb_peak_load(NULL, 1, &q, &found, &err) == DLB_ERR_INPUT);
    CHECK(found == 0 && strstr(err.msg, "fp16") != NULL);
    /* and one unit short of a current entry */
    json_t *cur = dlb_peak_to_json(p);
    json_object_del(cur, "amx_int8");
    CHECK(dlb_peak_from_json(cur, &q, &err) == DLB_ERR_INPUT);
    CHECK(strstr(err.msg, "amx_int8") != NULL);
    json_decref(cur);
    json_decref(entry);
    json_decref(root);
    remove(path);
}

/* The roofline of more busy threads than the probe ran: one thread's
 * figure times the count for every unit; memory as measured; the same
 * figures for the probe's own count. */
static void test_for_threads(void)
{
    struct dlb_peak p = synthetic_peak("test CPU", 1), q;
    dlb_peak_set(&p, DLB_PEAK_AMX_INT8, 0, 0, "none");
    dlb_peak_for_threads(&p, 1, &q);
    CHECK(memcmp(&p, &q, sizeof p) == 0);
    dlb_peak_for_threads(&p, 0, &q);
    CHECK(memcmp(&p, &q, sizeof p) == 0);
    dlb_peak_for_threads(&p, 4, &q);
    CHECK(q.threads == 4);
    for (int u = 0; u < DLB_PEAK_NUNITS; u++) {
        enum dlb_peak_unit k = (enum dlb_peak_unit)u;
        CHECK(dlb_peak_figure(&q, k, 1) == dlb_peak_figure(&p, k, 1));
        CHECK(dlb_peak_figure(&q, k, 0) == 4 * dlb_peak_figure(&p, k, 1));
        CHECK(!strcmp(dlb_peak_isa(&q, k), dlb_peak_isa(&p, k)));
    }
    CHECK(q.triad_gbs == p.triad_gbs && q.read_gbs == p.read_gbs);
    const char *unit = NULL;
    CHECK(dlb_peak_unit_gflops(&q, "fp32", &unit) == 4 * p.fp32_gflops_1t);
    CHECK(dlb_peak_unit_gflops(&q, "int8", &unit) == 4 * p.vnni_gops_1t);
    CHECK(unit && !strcmp(unit, "avx512_vnni"));
}

/* The unit a precision's kernels run on, for figures made up to have every
 * unit, then without AMX, then without the AVX-512 extensions. */
static void test_unit_gflops(void)
{
    struct dlb_peak p = synthetic_peak("test CPU", 2);
    const char *unit = NULL;
    CHECK(dlb_peak_unit_gflops(&p, "fp32", &unit) == p.fp32_gflops);
    CHECK(unit && !strcmp(unit, "avx512"));
    CHECK(dlb_peak_unit_gflops(&p, "bf16", &unit) == p.amx_bf16_gflops);
    CHECK(unit && !strcmp(unit, "amx_bf16"));
    CHECK(dlb_peak_unit_gflops(&p, "int8", &unit) == p.amx_int8_gops);
    CHECK(unit && !strcmp(unit, "amx_int8"));
    CHECK(dlb_peak_unit_gflops(&p, "fp16", &unit) == p.fp16_gflops);
    CHECK(unit && !strcmp(unit, "avx512_fp16"));
    CHECK(dlb_peak_unit_gflops(&p, "fp16", NULL) == p.fp16_gflops);

    /* Zen 4: AVX512_BF16 and VNNI, no AMX, no AVX512_FP16 */
    dlb_peak_set(&p, DLB_PEAK_AMX_BF16, 0, 0, "none");
    dlb_peak_set(&p, DLB_PEAK_AMX_INT8, 0, 0, "none");
    dlb_peak_set(&p, DLB_PEAK_FP16, 0, 0, "none");
    CHECK(dlb_peak_unit_gflops(&p, "bf16", &unit) == p.bf16_gflops);
    CHECK(unit && !strcmp(unit, "avx512_bf16"));
    CHECK(dlb_peak_unit_gflops(&p, "int8", &unit) == p.vnni_gops);
    CHECK(unit && !strcmp(unit, "avx512_vnni"));
    CHECK(dlb_peak_unit_gflops(&p, "fp16", &unit) == 0);
    CHECK(unit && !strcmp(unit, "none"));

    /* AVX2 only: fp32 alone */
    dlb_peak_set(&p, DLB_PEAK_BF16, 0, 0, "none");
    dlb_peak_set(&p, DLB_PEAK_VNNI, 0, 0, "none");
    dlb_peak_set(&p, DLB_PEAK_FP32, 200, 100, "avx2");
    CHECK(dlb_peak_unit_gflops(&p, "fp32", &unit) == 200);
    CHECK(unit && !strcmp(unit, "avx2"));
    const char *none[] = {"bf16", "int8", "fp16", "fp64", "", NULL};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        unit = NULL;
        CHECK(dlb_peak_unit_gflops(&p, none[i], &unit) == 0);
        CHECK(unit && !strcmp(unit, "none"));
    }
    CHECK(dlb_peak_unit_gflops(NULL, "fp32", &unit) == 0);
}

int main(void)
{
    struct dlb_peak p;
    check_temp_template(dir, sizeof dir, "dlb_peak_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_kernels_agree();
    test_full_probe(&p);
    test_fallbacks();
    test_cache_path();
    test_cache_roundtrip(&p);
    test_corrupt(&p);
    test_old_cache(&p);
    test_unit_gflops();
    test_for_threads();
    rmdir(dir);
    return check_exit();
}
