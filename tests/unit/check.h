/* A minimal test harness for the unit tests: each CHECK prints the failing
 * expression with file:line and counts; main returns check_exit(). Exit
 * status follows automake: 0 pass, 1 fail, 77 skip. */
#ifndef DLB_TEST_CHECK_H
#define DLB_TEST_CHECK_H

#include <math.h>
#include <stdio.h>

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

/* The CPU computes in bf16 (AVX512_BF16): where the cpu backend's bf16
 * fusions run (cpu_conv_dw.c). */
static inline int check_cpu_has_bf16(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx512bf16");
#else
    return 0;
#endif
}

static inline int check_exit(void)
{
    fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
