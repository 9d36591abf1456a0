/* Unit tests of core/peak/peak_fresh.c: when a run's roofline is the cached
 * probe and when it is probed again. The probes and the clock are planted,
 * so the decisions are checked without timing this machine: a young probe
 * that a quick check agrees with is kept; an old one, or one the check
 * finds moved beyond the tolerance (368 against 453 GFLOP/s, as the same
 * VM read on two afternoons), is probed again and cached; a contended
 * re-probe does not replace cached figures; no cache means a probe. */
#include "peak/peak_impl.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOW 1800000000LL

static double quick_reads;     /* what the planted quick check measures */
static struct dlb_peak probe_gives; /* what the planted full probe gives */
static int quick_calls, full_calls;

static dlb_status fake_quick(int threads, double *gflops, struct dlb_error *err)
{
    (void)threads;
    (void)err;
    quick_calls++;
    *gflops = quick_reads;
    return DLB_OK;
}

static dlb_status fake_full(int threads, struct dlb_peak *out,
                            struct dlb_error *err)
{
    (void)threads;
    (void)err;
    full_calls++;
    *out = probe_gives;
    return DLB_OK;
}

static long long fake_now(void)
{
    return NOW;
}

static const struct dlb_peak_probes probes = {fake_quick, fake_full, fake_now};

/* A probe of this CPU with `threads` threads, fp32 `fp32` GFLOP/s, taken
 * `age` seconds before NOW. */
static struct dlb_peak peak_of(int threads, double fp32, long long age)
{
    struct dlb_peak p = {.threads = threads, .pinned = 1, .triad_gbs = 20,
                         .read_gbs = 30, .mem_mib = 768, .probe_s = 3,
                         .measured_at = NOW - age};
    dlb_peak_cpu_model(p.cpu_model, sizeof p.cpu_model);
    snprintf(p.mem_isa, sizeof p.mem_isa, "avx512");
    dlb_peak_set(&p, DLB_PEAK_FP32, fp32, fp32 / threads, "avx512");
    for (int u = DLB_PEAK_FP32 + 1; u < DLB_PEAK_NUNITS; u++)
        dlb_peak_set(&p, (enum dlb_peak_unit)u, 0, 0, "none");
    return p;
}

static const struct dlb_peak_policy policy = {.max_age_s = 3600, .tolerance = 0.1};

/* Run the choice against the cache file `path` with the planted probes;
 * returns what the file holds afterwards for 2 threads (fp32, or 0). */
static double choose(const char *path, struct dlb_peak_choice *c,
                     struct dlb_error *warn)
{
    struct dlb_error err = {""};
    struct dlb_peak q;
    int found = 0;
    quick_calls = full_calls = 0;
    CHECK(dlb_peak_for_run_with(2, &policy, path, &probes, c, warn, &err) == DLB_OK);
    CHECK(dlb_peak_load(path, 2, &q, &found, &err) == DLB_OK);
    return found ? q.fp32_gflops : 0;
}

int main(void)
{
    char dir[512], path[600];
    struct dlb_error err = {""}, warn = {""};
    struct dlb_peak_choice c;
    check_temp_template(dir, sizeof dir, "dlb_peak_fresh_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/peak.json", dir);

    /* no cache: a full probe, cached, no quick check */
    probe_gives = peak_of(2, 453, 0);
    CHECK(choose(path, &c, &warn) == 453);
    CHECK(full_calls == 1 && quick_calls == 0);
    CHECK(c.probed == 1 && c.age_s == 0 && c.peak.fp32_gflops == 453);
    CHECK(strstr(c.why, "no cached probe") != NULL);

    /* young and confirmed: the cache, one quick check, no probe */
    struct dlb_peak cached = peak_of(2, 368, 600);
    CHECK(dlb_peak_save(path, &cached, &err) == DLB_OK);
    quick_reads = 380; /* +3.3% */
    CHECK(choose(path, &c, &warn) == 368);
    CHECK(quick_calls == 1 && full_calls == 0);
    CHECK(c.probed == 0 && c.age_s == 600 && c.peak.fp32_gflops == 368);
    CHECK(c.check_gflops == 380);
    CHECK(strstr(c.why, "10 min old") && strstr(c.why, "within"));

    /* the machine's speed moved: 453 against the cached 368 (+23%) */
    quick_reads = 453;
    probe_gives = peak_of(2, 450, 0);
    CHECK(choose(path, &c, &warn) == 450);
    CHECK(quick_calls == 1 && full_calls == 1);
    CHECK(c.probed == 1 && c.peak.fp32_gflops == 450 && c.age_s == 0);
    CHECK(strstr(c.why, "quick check read 453") && strstr(c.why, "+23%"));
    /* and slower by as much (-19%) */
    CHECK(dlb_peak_save(path, &cached, &err) == DLB_OK);
    quick_reads = 300;
    probe_gives = peak_of(2, 305, 0);
    CHECK(choose(path, &c, &warn) == 305);
    CHECK(full_calls == 1 && c.probed == 1);

    /* stale: probed again without a quick check */
    cached = peak_of(2, 368, 7200);
    CHECK(dlb_peak_save(path, &cached, &err) == DLB_OK);
    quick_reads = 368;
    probe_gives = peak_of(2, 440, 0);
    CHECK(choose(path, &c, &warn) == 440);
    CHECK(quick_calls == 0 && full_calls == 1);
    CHECK(strstr(c.why, "2.0 h old") && strstr(c.why, "peak_max_age"));

    /* a contended re-probe keeps the cached figures and says so */
    cached = peak_of(2, 368, 600);
    CHECK(dlb_peak_save(path, &cached, &err) == DLB_OK);
    quick_reads = 200; /* someone else is busy */
    probe_gives = peak_of(2, 210, 0);
    probe_gives.contended = 1;
    CHECK(choose(path, &c, &warn) == 368);
    CHECK(full_calls == 1 && c.probed == 0 && c.peak.fp32_gflops == 368);
    CHECK(c.age_s == 600 && strstr(c.why, "contended") != NULL);
    CHECK(strstr(warn.msg, "contended") != NULL);

    /* the choice as the run records it, and read back as a child does */
    json_t *j = dlb_peak_choice_json(&c);
    struct dlb_peak back;
    CHECK(j && !strcmp(json_string_value(json_object_get(j, "source")), "cache"));
    CHECK(json_real_value(json_object_get(j, "age_s")) == 600);
    CHECK(json_real_value(json_object_get(j, "check_gflops")) == 200);
    CHECK(dlb_peak_choice_figures(j, &back, &err) == DLB_OK);
    CHECK(back.fp32_gflops == 368 && back.measured_at == NOW - 600);
    json_decref(j);

    remove(path);
    rmdir(dir);
    return check_exit();
}
