/* The cpu backend's handle: the oneDNN engine and stream, the OpenMP
 * thread count and pinning, capabilities from oneDNN's ISA detection, and
 * the operation table. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sched_getaffinity, CPU_SET */
#endif
#include "cpu.h"
#include "util/cpu_quota.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The CPUs this process may run on, in order; returns how many. */
static int allowed_cpus(int *cpus, int max)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        long k = sysconf(_SC_NPROCESSORS_ONLN);
        for (int i = 0; i < k && n < max; i++)
            cpus[n++] = i;
        return n > 0 ? n : 1;
    }
    for (int i = 0; i < CPU_SETSIZE && n < max; i++)
        if (CPU_ISSET(i, &set))
            cpus[n++] = i;
    return n > 0 ? n : 1;
}

/* oneDNN runs on libgomp's pool (Debian builds it with OpenMP), so the
 * thread count is omp_set_num_threads. libgomp reads OMP_PROC_BIND when
 * it loads, before any code here, so setting it now would do nothing:
 * unless the user chose a binding, each pool thread pins itself to one
 * allowed CPU, which is what OMP_PROC_BIND=close would have done. The
 * pool keeps its threads between parallel regions, so this holds. */
static void set_threads(struct dlb_cpu *cpu, int requested)
{
    int cpus[CPU_SETSIZE];
    int n = allowed_cpus(cpus, CPU_SETSIZE);
    /* By default a thread per allowed CPU, fewer under a cgroup's CPU
     * quota (docker --cpus): see cpu_quota.h for what too many cost. */
    cpu->threads = requested > 0 ? requested : dlb_cpu_quota_threads(n);
#ifdef _OPENMP
    omp_set_num_threads(cpu->threads);
    if (getenv("OMP_PROC_BIND") || getenv("GOMP_CPU_AFFINITY") ||
        getenv("OMP_PLACES"))
        return;
    DLB_OMP("omp parallel num_threads(cpu->threads)")
    {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[omp_get_thread_num() % n], &one);
        sched_setaffinity(0, sizeof one, &one); /* 0: the calling thread */
    }
#else
    (void)n; /* without OpenMP oneDNN's own default applies */
#endif
}

void dlb_cpu_destroy(struct dlb_backend *be)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    dlb_cpu_cache_clear(cpu);
    dlb_cpu_layout_clear(cpu);
    for (int i = 0; i < DLB_CPU_SCRATCH_SLOTS; i++)
        dlb_cpu_free(cpu, cpu->scratch_block[i], cpu->scratch_bytes[i]);
    if (cpu->stream)
        dnnl_stream_destroy(cpu->stream);
    if (cpu->engine)
        dnnl_engine_destroy(cpu->engine);
    free(cpu);
}

static int isa_has(unsigned isa, unsigned want)
{
    return (isa & want) == want;
}

dlb_status dlb_cpu_supports(struct dlb_backend *be, enum dlb_backend_cap cap,
                            char *reason, size_t len)
{
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
    (void)be;
    switch (cap) {
    case DLB_CAP_F16:
        dlb_cpu_f16_reason(reason, len);
        return DLB_ERR_UNSUPPORTED;
    case DLB_CAP_BF16:
        if (isa_has(isa, dnnl_cpu_isa_avx512_core_bf16))
            return DLB_OK;
        snprintf(reason, len, "no AVX512_BF16: oneDNN would emulate bf16 "
                 "slower than fp32 on this CPU");
        return DLB_ERR_UNSUPPORTED;
    case DLB_CAP_INT8:
        if (isa_has(isa, dnnl_cpu_isa_avx512_core_vnni) ||
            isa_has(isa, dnnl_cpu_isa_avx2_vnni))
            return DLB_OK;
        snprintf(reason, len, "no VNNI: int8 would not be faster than fp32 "
                 "on this CPU");
        return DLB_ERR_UNSUPPORTED;
    case DLB_CAP_MULTI_DEVICE:
        snprintf(reason, len, "cpu runs on one device (the host)");
        return DLB_ERR_UNSUPPORTED;
    case DLB_CAP_COUNT:
        break;
    }
    snprintf(reason, len, "unknown capability %d", (int)cap);
    return DLB_ERR_UNSUPPORTED;
}

static const char *isa_name(unsigned isa)
{
    if (isa_has(isa, dnnl_cpu_isa_avx512_core_amx)) return "avx512_core_amx";
#ifdef DLB_DNNL_ISA_FP16 /* oneDNN 3 only */
    if (isa_has(isa, DLB_DNNL_ISA_FP16)) return "avx512_core_fp16";
#endif
    if (isa_has(isa, dnnl_cpu_isa_avx512_core_bf16)) return "avx512_core_bf16";
    if (isa_has(isa, dnnl_cpu_isa_avx512_core_vnni)) return "avx512_core_vnni";
    if (isa_has(isa, dnnl_cpu_isa_avx512_core)) return "avx512_core";
    if (isa_has(isa, dnnl_cpu_isa_avx2_vnni)) return "avx2_vnni";
    if (isa_has(isa, dnnl_cpu_isa_avx2)) return "avx2";
    return "sse41 or older";
}

/* The "model name" line of /proc/cpuinfo, or "" when absent. */
static void cpu_model(char *out, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    out[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += 1 + strspn(colon + 1, " \t");
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(out, len, "%s", colon);
            break;
        }
    }
    fclose(f);
}

dlb_status dlb_cpu_device_info(struct dlb_backend *be,
                               struct dlb_device_info *out)
{
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    const dnnl_version_t *v = dnnl_version();
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    memset(out, 0, sizeof *out);
    cpu_model(out->name, sizeof out->name);
    if (!out->name[0])
        snprintf(out->name, sizeof out->name, "host CPU");
    snprintf(out->driver, sizeof out->driver, "oneDNN %d.%d.%d (%s, %s)",
             v->major, v->minor, v->patch,
             v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other runtime",
             isa_name((unsigned)dnnl_get_effective_cpu_isa()));
    snprintf(out->arch, sizeof out->arch, "%s",
             isa_name((unsigned)dnnl_get_effective_cpu_isa()));
    snprintf(out->libs[0].name, sizeof out->libs[0].name, "onednn");
    snprintf(out->libs[0].version, sizeof out->libs[0].version, "%d.%d.%d",
             v->major, v->minor, v->patch);
    if (pages > 0 && page > 0)
        out->mem_total = (uint64_t)pages * (uint64_t)page;
    if (avail > 0 && page > 0)
        out->mem_free = (uint64_t)avail * (uint64_t)page;
    out->device_count = 1;
    out->compute_units = cpu->threads;
    return DLB_OK;
}


/* cpu.winograd: the configuration's choice, else the environment's, else
 * on. */
static dlb_status read_winograd(struct dlb_cpu *cpu,
                                const struct dlb_backend_config *cfg,
                                char *reason, size_t len)
{
    const char *env = getenv("DLBENCH_CPU_WINOGRAD");
    if (cfg->winograd != DLB_OPT_UNSET)
        cpu->winograd = cfg->winograd == DLB_OPT_ON;
    else if (!env || !*env || !strcmp(env, "1"))
        cpu->winograd = 1;
    else if (!strcmp(env, "0"))
        cpu->winograd = 0;
    else {
        snprintf(reason, len, "DLBENCH_CPU_WINOGRAD='%s': expected 0 or 1",
                 env);
        return DLB_ERR_INPUT;
    }
    return DLB_OK;
}

dlb_status dlb_backend_cpu_create(const struct dlb_backend_config *cfg,
                                  struct dlb_backend **out, char *reason,
                                  size_t len)
{
    struct dlb_cpu *cpu = calloc(1, sizeof *cpu);
    dnnl_status_t st;
    dlb_status s;
    *out = NULL;
    if (!cpu) {
        snprintf(reason, len, "out of memory opening backend cpu");
        return DLB_ERR_NOMEM;
    }
    cpu->seed = cfg->seed;
    if ((s = read_winograd(cpu, cfg, reason, len))) {
        free(cpu);
        return s;
    }
    if (cfg->host_alloc && cfg->host_free) {
        cpu->host_alloc = cfg->host_alloc;
        cpu->host_free = cfg->host_free;
        cpu->alloc_ctx = cfg->alloc_ctx;
    }
    /* Threads first: oneDNN sizes its scratchpads by the thread count. */
    set_threads(cpu, cfg->threads);
    if ((st = dnnl_engine_create(&cpu->engine, dnnl_cpu, 0)) != dnnl_success ||
        (st = dnnl_stream_create(&cpu->stream, cpu->engine,
                                 dnnl_stream_default_flags)) != dnnl_success) {
        snprintf(reason, len, "cpu: oneDNN engine or stream creation failed "
                 "(dnnl status %d)", (int)st);
        if (cpu->engine)
            dnnl_engine_destroy(cpu->engine);
        free(cpu);
        return DLB_ERR_RUNTIME;
    }
    if ((s = dlb_backend_new(&dlb_cpu_ops, cpu, out, reason, len))) {
        dnnl_stream_destroy(cpu->stream);
        dnnl_engine_destroy(cpu->engine);
        free(cpu);
    }
    return s;
}
