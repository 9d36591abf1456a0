/* A minimal test harness for the unit tests: each CHECK prints the failing
 * expression with file:line and counts; main returns check_exit(). Exit
 * status follows automake: 0 pass, 1 fail, 77 skip. */
#ifndef DLB_TEST_CHECK_H
#define DLB_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

static int check_failures;
static int check_count;

#define CHECK(cond)                                                         \
    do {                                                                    \
        check_count++;                                                      \
        if (!(cond)) {                                                      \
            check_failures++;                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,          \
                    __LINE__, #cond);                                       \
        }                                                                   \
    } while (0)

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_NEAR(a, b, tol)                                               \
    do {                                                                    \
        double check_a_ = (a), check_b_ = (b);                              \
        double check_s_ = fabs(check_b_) > 1.0 ? fabs(check_b_) : 1.0;      \
        check_count++;                                                      \
        if (!(fabs(check_a_ - check_b_) <= (tol) * check_s_)) {             \
            check_failures++;                                               \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.17g, "        \
                    "expected %.17g (tol %g)\n", __FILE__, __LINE__, #a,     \
                    check_a_, check_b_, (double)(tol));                     \
        }                                                                   \
    } while (0)

/* The CPU computes in bf16 (AVX512_BF16). */
static inline int check_cpu_has_bf16(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx512bf16");
#else
    return 0;
#endif
}

/* Whether /proc/cpuinfo's first "flags" line has `flag`: the kernel's view
 * of CPUID. */
static inline int check_cpu_flag(const char *flag)
{
    char line[8192];
    int found = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        char *c = strchr(line, ':');
        for (char *w = c ? strtok(c + 1, " \t\n") : NULL; w;
             w = strtok(NULL, " \t\n"))
            found |= strcmp(w, flag) == 0;
        break;
    }
    if (f)
        fclose(f);
    return found;
}

/* Whether the kernel grants this process AMX's tile data (Linux asks a
 * process to request it; oneDNN does before its AMX kernels run). */
static inline int check_amx_granted(void)
{
#if defined(__linux__) && defined(__x86_64__)
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
                   18 /* XFEATURE_XTILEDATA */) == 0;
#else
    return 0;
#endif
}

/* The CPU computes bf16 on AMX, as oneDNN sees it: the cpu backend keeps
 * bf16 activations in nhwc there, where its bf16 1x1+depthwise fusion
 * does not apply (cpu_conv.c's dlb_cpu_conv_act_tag); with AVX512_BF16
 * alone they are blocked and it does (cpu_conv_dw.c). */
static inline int check_cpu_has_amx_bf16(void)
{
    return check_cpu_flag("amx_bf16") && check_cpu_flag("amx_tile") &&
           check_amx_granted();
}

/* Where the cpu backend's bf16 1x1+depthwise fusion runs. */
static inline int check_cpu_bf16_dw_fuses(void)
{
    return check_cpu_has_bf16() && !check_cpu_has_amx_bf16();
}

/* A mkdtemp/mkstemp template, "$TMPDIR/" + name (name ends in XXXXXX), as
 * the integration tests use: a machine whose /tmp is small or not writable
 * sets TMPDIR, and `make check` runs under it on CI. "/tmp" where TMPDIR
 * is unset or empty. A template that does not fit is a hard error (99),
 * not a test that silently skips its files. */
static inline void check_temp_template(char *buf, size_t len, const char *name)
{
    const char *t = getenv("TMPDIR");
    int n = snprintf(buf, len, "%s/%s", t && *t ? t : "/tmp", name);
    if (n < 0 || (size_t)n >= len) {
        fprintf(stderr, "TMPDIR too long for a %zu-byte template\n", len);
        exit(99);
    }
}

static inline int check_exit(void)
{
    fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
