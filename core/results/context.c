/* The environment a run measured: what a reader needs to judge whether two
 * results files are comparable. Anything that cannot be found is recorded
 * as "unknown" or null rather than failing the run. */
/* _GNU_SOURCE (from the build): sched_getaffinity, CPU_COUNT, getloadavg */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "util/cpu_quota.h"
#include "results/results.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#ifdef PACKAGE_VERSION
#define DLB_VERSION_STRING PACKAGE_VERSION
#else
#define DLB_VERSION_STRING "unknown"
#endif
#include "results/git_commit.h" /* made by the build, at every build */
#ifndef DLB_BUILD_CFLAGS
#define DLB_BUILD_CFLAGS ""
#endif
#ifndef DLB_INIH_VERSION
#define DLB_INIH_VERSION "unknown"
#endif

#if defined(__clang__)
#define DLB_COMPILER_NAME "clang"
#elif defined(__GNUC__)
#define DLB_COMPILER_NAME "gcc"
#else
#define DLB_COMPILER_NAME "unknown"
#endif

/* Only the CPU flags that change which kernels run or how noisy timing is:
 * the full list is over a hundred entries of mostly irrelevant features
 * (and on x86 varies with microcode and kernel), which buries the ones a
 * reader compares. "hypervisor" is kept: a virtual machine is noisier. */
static int flag_relevant(const char *f)
{
    static const char *const prefixes[] = {
        "sse", "avx", "amx", "asimd", "sve",
        "sme2", "smef", "smei", "smeb", /* not "sme": x86's smep is security */
    };
    static const char *const exact[] = {
        "ssse3", "fma", "f16c", "bmi1", "bmi2", "popcnt", "hypervisor",
        "fphp", "bf16", "i8mm", "sme",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(f, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
        if (strcmp(f, exact[i]) == 0)
            return 1;
    return 0;
}

/* The value after "key<tabs>: " in a /proc/cpuinfo line, or NULL. */
static char *cpuinfo_value(char *line, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(line, key, n) != 0 || (line[n] != ' ' && line[n] != '\t' &&
                                       line[n] != ':'))
        return NULL;
    char *colon = strchr(line + n, ':');
    if (!colon)
        return NULL;
    char *v = colon + 1 + strspn(colon + 1, " \t");
    v[strcspn(v, "\n")] = '\0';
    return v;
}

/* Model, flags and physical core count from the first processor's
 * entries (flags) and all of them ("physical id"/"core id" pairs). */
static void cpuinfo(json_t *cpu)
{
    char model[256] = "unknown";
    json_t *flags = json_array();
    json_t *cores = json_object(); /* set of "package:core" */
    char phys[32] = "0";
    int have_flags = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        char *v;
        if ((v = cpuinfo_value(line, "model name")) ||
            ((v = cpuinfo_value(line, "Hardware")) && !strcmp(model, "unknown")))
            snprintf(model, sizeof model, "%s", v);
        else if ((v = cpuinfo_value(line, "physical id")))
            snprintf(phys, sizeof phys, "%s", v);
        else if ((v = cpuinfo_value(line, "core id"))) {
            char key[80];
            snprintf(key, sizeof key, "%s:%s", phys, v);
            json_object_set_new(cores, key, json_null());
        } else if (!have_flags && ((v = cpuinfo_value(line, "flags")) ||
                                   (v = cpuinfo_value(line, "Features")))) {
            have_flags = 1;
            for (char *save, *t = strtok_r(v, " \t", &save); t;
                 t = strtok_r(NULL, " \t", &save))
                if (flag_relevant(t))
                    json_array_append_new(flags, json_string(t));
        }
    }
    free(line);
    if (f)
        fclose(f);
    json_object_set_new(cpu, "model", json_string(model));
    json_object_set_new(cpu, "flags", flags);
    /* Without topology lines (many ARM kernels) the count is unknown. */
    size_t ncores = json_object_size(cores);
    json_object_set_new(cpu, "physical_cores",
                        ncores ? json_integer((json_int_t)ncores) : json_null());
    json_decref(cores);
}

static json_t *cpu_object(void)
{
    json_t *cpu = json_object();
    cpuinfo(cpu);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    json_object_set_new(cpu, "logical_cpus_online",
                        online > 0 ? json_integer(online) : json_null());
    /* taskset, cgroups and batch schedulers narrow what this process may
     * use; that, not the machine's size, bounds the threads worth using. */
    cpu_set_t set;
    CPU_ZERO(&set);
    json_object_set_new(cpu, "logical_cpus_allowed",
                        sched_getaffinity(0, sizeof set, &set) == 0
                            ? json_integer(CPU_COUNT(&set)) : json_null());
    double quota = dlb_cpu_quota();
    json_object_set_new(cpu, "cgroup_cpu_quota",
                        quota > 0 ? json_real(quota) : json_null());
    /* "powersave" can halve throughput; worth seeing next to the numbers. */
    FILE *g = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "r");
    char gov[64] = "";
    if (g) {
        if (!fgets(gov, sizeof gov, g))
            gov[0] = '\0';
        fclose(g);
    }
    gov[strcspn(gov, "\n")] = '\0';
    json_object_set_new(cpu, "scaling_governor",
                        gov[0] ? json_string(gov) : json_null());
    return cpu;
}

/* PRETTY_NAME from os-release(5), unquoted. */
static json_t *os_pretty_name(void)
{
    static const char *const paths[] = {"/etc/os-release",
                                        "/usr/lib/os-release"};
    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f)
            continue;
        char line[512];
        json_t *out = NULL;
        while (!out && fgets(line, sizeof line, f)) {
            if (strncmp(line, "PRETTY_NAME=", 12) != 0)
                continue;
            char *v = line + 12;
            v[strcspn(v, "\n")] = '\0';
            size_t n = strlen(v);
            if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
                v[n - 1] = '\0';
                v++;
            }
            out = json_string(v);
        }
        fclose(f);
        if (out)
            return out;
    }
    return json_string("unknown");
}

static json_t *os_object(void)
{
    struct utsname u;
    int ok = uname(&u) == 0;
    return json_pack("{s:s, s:s, s:s, s:o}",
                     "sysname", ok ? u.sysname : "unknown",
                     "release", ok ? u.release : "unknown",
                     "machine", ok ? u.machine : "unknown",
                     "pretty_name", os_pretty_name());
}

static json_t *libraries_object(void)
{
#if JANSSON_VERSION_HEX >= 0x020d00
    const char *jansson = jansson_version_str(); /* the library loaded */
#else
    const char *jansson = JANSSON_VERSION;
#endif
    /* The parent never loads oneDNN (the configurations' records say
     * which library ran: device.libraries.onednn); the build's headers
     * and where they came from are known here. */
#ifdef DLB_ONEDNN_BUILD
    json_t *onednn = json_string(DLB_ONEDNN_BUILD);
#else
    json_t *onednn = json_null();
#endif
    return json_pack("{s:s, s:s, s:s, s:o}", "jansson", jansson,
                     "zlib", zlibVersion(), "inih", DLB_INIH_VERSION,
                     "onednn_build", onednn);
}

static json_t *loadavg_array(void)
{
    double l[3];
    if (getloadavg(l, 3) != 3)
        return json_null();
    return json_pack("[f, f, f]", l[0], l[1], l[2]);
}

json_t *dlb_context_collect(void)
{
    char host[256] = "";
    if (gethostname(host, sizeof host) != 0 || !host[0])
        strcpy(host, "unknown");
    host[sizeof host - 1] = '\0';

    struct sysinfo si;
    json_t *mem = sysinfo(&si) == 0
        ? json_integer((json_int_t)si.totalram * (json_int_t)si.mem_unit)
        : json_null();

    char start[32] = "unknown";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%SZ", &tm);

    return json_pack("{s:s, s:{s:s, s:s}, s:s, s:o, s:o, s:o, "
                     "s:{s:s, s:s, s:s}, s:o, s:o}",
                     "start_utc", start,
                     "dlbench", "version", DLB_VERSION_STRING,
                     "git_commit", DLB_GIT_COMMIT,
                     "host", host,
                     "cpu", cpu_object(),
                     "memory_total_bytes", mem,
                     "os", os_object(),
                     "compiler", "name", DLB_COMPILER_NAME,
                     "version", __VERSION__, "flags", DLB_BUILD_CFLAGS,
                     "libraries", libraries_object(),
                     "loadavg", loadavg_array());
}

json_t *dlb_context_get(json_t *context, const char *name)
{
    json_t *v = json_object_get(context, name);
    if (v)
        return v;
    char key[256];
    const char *dot = strchr(name, '.');
    if (!dot || (size_t)(dot - name) >= sizeof key)
        return NULL;
    memcpy(key, name, (size_t)(dot - name));
    key[dot - name] = '\0';
    json_t *inner = json_object_get(context, key);
    return json_is_object(inner) ? dlb_context_get(inner, dot + 1) : NULL;
}
