/* Unit tests of the roofline probe (core/peak*.c): one full probe whose
 * figures must be plausible, quick probes through the AVX2 and C fallbacks,
 * kernels that must compute the same values on every ISA, and the cache:
 * round trip, lookup by thread count, corrupt files. */
#include "peak_impl.h"

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

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
    printf("%s: %s, %d threads%s%s: fp32 %.1f GFLOP/s (1 thread %.1f) [%s]; "
           "bf16 %.1f (1 thread %.1f) [%s]; triad %.1f GB/s, read %.1f GB/s "
           "[%s, %.0f MiB]; probe %.2f s\n", what, p->cpu_model, p->threads,
           p->pinned ? " pinned" : "", p->contended ? " contended" : "",
           p->fp32_gflops, p->fp32_gflops_1t,
           p->fp32_isa, p->bf16_gflops, p->bf16_gflops_1t, p->bf16_isa,
           p->triad_gbs, p->read_gbs, p->mem_isa, p->mem_mib, p->probe_s);
}

/* The kernels' relative speed says something only when they are compiled
 * as shipped: sanitizer instrumentation and -O0 slow the two loops very
 * differently. */
static int ratio_meaningful(void)
{
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
    return 1;
#else
    return 0;
#endif
}

static void check_plausible(const struct dlb_peak *p)
{
    CHECK(p->threads >= 1);
    CHECK(p->fp32_gflops > 1 && p->fp32_gflops < 10000);
    CHECK(p->fp32_gflops_1t > 1 && p->fp32_gflops_1t < 10000);
    if (strcmp(p->bf16_isa, "none") != 0) {
        /* The bf16 > fp32 ratio is only meaningful on a quiet machine:
         * under contention (make -j check, a shared CI host) one figure can
         * be slowed and not the other, and the probe says so. */
        if (p->contended || !ratio_meaningful())
            fprintf(stderr, "contended probe or instrumented build: bf16/fp32 "
                            "ratio not checked\n");
        else
            CHECK(p->bf16_gflops >= 1.2 * p->fp32_gflops
                  || p->bf16_gflops_1t >= 1.2 * p->fp32_gflops_1t);
        CHECK(p->bf16_gflops > 0 && p->bf16_gflops_1t > 0);
    } else {
        CHECK(p->bf16_gflops == 0 && p->bf16_gflops_1t == 0);
    }
    CHECK(p->triad_gbs > 0.5 && p->triad_gbs < 2000);
    CHECK(p->read_gbs > 0.5 && p->read_gbs < 2000);
    CHECK(p->measured_at > 0 && p->cpu_model[0]);
}

static void test_full_probe(struct dlb_peak *p)
{
    struct dlb_error err = {""};
    dlb_status st = dlb_peak_measure(0, p, &err);
    if (st != DLB_OK)
        fprintf(stderr, "dlb_peak_measure: %s\n", err.msg);
    CHECK(st == DLB_OK);
    CHECK(p->threads == dlb_peak_resolve_threads(0));
    check_plausible(p);
    /* two seconds is the budget; leave room for a busy shared machine */
    CHECK(p->probe_s > 0 && p->probe_s < 3.0);
    print_peak("peak", p);
}

static void test_fallbacks(void)
{
    struct dlb_peak_kernels k;
    enum dlb_peak_isa caps[] = {DLB_PEAK_ISA_C, DLB_PEAK_ISA_AVX2};
    for (size_t i = 0; i < 2; i++) {
        struct dlb_peak_opts o;
        struct dlb_peak p;
        struct dlb_error err = {""};
        quick_opts(&o, caps[i]);
        dlb_peak_kernels_select(caps[i], &k);
        CHECK(dlb_peak_measure_opts(2, &o, &p, &err) == DLB_OK);
        CHECK(p.fp32_gflops > 0 && p.triad_gbs > 0 && p.read_gbs > 0);
        CHECK(strcmp(p.fp32_isa, k.name) == 0);
        CHECK(strcmp(p.bf16_isa, "none") == 0 && p.bf16_gflops == 0);
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

/* The values are exact in binary, so FMA and separate multiply-add agree to
 * the bit; n = 37 leaves a tail after every vector width. */
static void test_kernels_agree(void)
{
    enum { N = 37 };
    double a[N], b[N], c[N];
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
        float f = k.fp32(1000);
        CHECK(isfinite(f) && f > 0);
        if (k.bf16) {
            f = k.bf16(1000);
            CHECK(isfinite(f) && f > 0);
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
    return !strcmp(x->cpu_model, y->cpu_model) && x->threads == y->threads
           && x->fp32_gflops == y->fp32_gflops
           && x->fp32_gflops_1t == y->fp32_gflops_1t
           && !strcmp(x->fp32_isa, y->fp32_isa)
           && x->bf16_gflops == y->bf16_gflops
           && x->bf16_gflops_1t == y->bf16_gflops_1t
           && !strcmp(x->bf16_isa, y->bf16_isa)
           && x->triad_gbs == y->triad_gbs && x->read_gbs == y->read_gbs
           && !strcmp(x->mem_isa, y->mem_isa) && x->mem_mib == y->mem_mib
           && x->pinned == y->pinned && x->contended == y->contended
           && x->measured_at == y->measured_at;
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
    char path[128];
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
    snprintf(one.bf16_isa, sizeof one.bf16_isa, "none");
    one.bf16_gflops = one.bf16_gflops_1t = 0;
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

    json_t *j = dlb_peak_to_json(&one);
    CHECK(j && json_is_null(json_object_get(j, "bf16")));
    CHECK(json_real_value(json_object_get(json_object_get(j, "fp32"),
                                          "gflops")) == 1.5);
    json_decref(j);
    snprintf(path, sizeof path, "%s/sub/peak.json", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
}

static void test_corrupt(const struct dlb_peak *p)
{
    char path[128], text[512], model[128];
    struct dlb_error err, warn;
    struct dlb_peak q;
    int found;
    dlb_peak_cpu_model(model, sizeof model);
    snprintf(path, sizeof path, "%s/peak.json", dir);
    setenv("DLBENCH_CACHE_DIR", dir, 1);
    const char *bad[] = {
        "", "{not json", "[1, 2]", "{\"probe_version\": 1}",
        "{\"probe_version\": 1, \"entries\": {\"%s\": 7}}",
        ("{\"probe_version\": 1, \"entries\": {\"%s\": {\"%d\": "
         "{\"fp32\": \"fast\"}}}}"),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, bad[i], model, p->threads);
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

int main(void)
{
    struct dlb_peak p;
    snprintf(dir, sizeof dir, "/tmp/dlb_peak_XXXXXX");
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
    rmdir(dir);
    return check_exit();
}
