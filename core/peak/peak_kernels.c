/* The probe's kernels. Each ISA's version carries a function-level target
 * attribute and is picked at run time, so one binary built without -march
 * flags uses AVX-512 where the CPU has it and still runs on any x86-64 (or
 * other) CPU through the AVX2 and plain C versions. The AVX-512 units'
 * kernels are built where configure found the compiler knows them
 * (DLB_HAVE_*); the AMX ones are in peak_amx.c. */
#include "config.h"

#include "peak/peak_impl.h"

#if defined(__x86_64__) || defined(__i386__)
#define DLB_PEAK_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

/* Sixteen chains: FMA latency (4 cycles on recent cores) times the number of
 * FMA pipes (2) needs at least 8 in flight; 16 leaves margin for cores with
 * longer latency. Distinct start values stop the compiler merging chains. */
#define DLB_X16(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) \
                   M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)
#define DLB_X12(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) \
                   M(8) M(9) M(10) M(11)

/* acc = acc * 0.999999 + 1e-6 converges to 1: no overflow, no denormals
 * (which would slow some CPUs down and measure the wrong thing). */
static float fp32_c(long iters)
{
    float x[16];
    for (int k = 0; k < 16; k++)
        x[k] = 0.01f * (float)k;
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < 16; k++)
            x[k] = x[k] * 0.999999f + 1e-6f;
    float s = 0;
    for (int k = 0; k < 16; k++)
        s += x[k];
    return s;
}

static void triad_c(double *a, const double *b, const double *c, double s,
                    size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

static double sum_c(const double *a, size_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* independent adds */
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i];
        s1 += a[i + 1];
        s2 += a[i + 2];
        s3 += a[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i];
    return (s0 + s1) + (s2 + s3);
}

#ifdef DLB_PEAK_X86

#define DLB_INIT512(k) __m512 x##k = _mm512_set1_ps(0.01f * (k));
#define DLB_FMA512(k) x##k = _mm512_fmadd_ps(x##k, m, b);
#define DLB_ADD512(k) s = _mm512_add_ps(s, x##k);

__attribute__((target("avx512f,fma")))
static float fp32_avx512(long iters)
{
    const __m512 m = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
    DLB_X16(DLB_INIT512)
    for (long i = 0; i < iters; i++) {
        DLB_X16(DLB_FMA512)
    }
    __m512 s = _mm512_setzero_ps();
    DLB_X16(DLB_ADD512)
    return _mm512_reduce_add_ps(s);
}

#define DLB_INIT256(k) __m256 x##k = _mm256_set1_ps(0.01f * (k));
#define DLB_FMA256(k) x##k = _mm256_fmadd_ps(x##k, m, b);
#define DLB_ADD256(k) s = _mm256_add_ps(s, x##k);

/* 12 chains: AVX2 has 16 ymm registers, two of which hold m and b. */
__attribute__((target("avx2,fma")))
static float fp32_avx2(long iters)
{
    const __m256 m = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
    DLB_X12(DLB_INIT256)
    for (long i = 0; i < iters; i++) {
        DLB_X12(DLB_FMA256)
    }
    __m256 s = _mm256_setzero_ps();
    DLB_X12(DLB_ADD256)
    float v[8];
    _mm256_storeu_ps(v, s);
    return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

#ifdef DLB_HAVE_AVX512BF16
#define DLB_DPBF(k) x##k = _mm512_dpbf16_ps(x##k, h, h);

/* Each lane adds 2 * 1e-3 * 1e-3 per step: after the longest trial the
 * sums are tens at most, far from overflow. */
__attribute__((target("avx512f,avx512bf16")))
static float bf16_avx512(long iters)
{
    const __m512 q = _mm512_set1_ps(1e-3f);
    const __m512bh h = _mm512_cvtne2ps_pbh(q, q);
    DLB_X16(DLB_INIT512)
    for (long i = 0; i < iters; i++) {
        DLB_X16(DLB_DPBF)
    }
    __m512 s = _mm512_setzero_ps();
    DLB_X16(DLB_ADD512)
    return _mm512_reduce_add_ps(s);
}
#endif

/* config.h describes the compiler configure ran; the fuzz build compiles
 * the core with clang, whose version 14 has no AVX512-FP16 intrinsics. */
#if defined(__clang__) && __clang_major__ < 15
#undef DLB_HAVE_AVX512FP16
#endif

#ifdef DLB_HAVE_AVX512FP16
#define DLB_INITPH(k) __m512h x##k = _mm512_set1_ph(0.01f * (k));
#define DLB_FMAPH(k) x##k = _mm512_fmadd_ph(x##k, m, b);
#define DLB_ADDPH(k) s = _mm512_add_ps(s, widen_ph(x##k));

__attribute__((target("avx512f,avx512fp16")))
static inline __m512 widen_ph(__m512h x)
{
    __m512i i = _mm512_castph_si512(x);
    return _mm512_add_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(i)),
                         _mm512_cvtph_ps(_mm512_extracti64x4_epi64(i, 1)));
}

/* acc = acc * 0.5 + 0.5 converges to exactly 1 in fp16 (the last step,
 * 1 - 2^-12, is a tie that rounds to 1, which is even): no overflow, no
 * subnormals, and a result the test can check to the bit. */
__attribute__((target("avx512f,avx512fp16")))
static float fp16_avx512(long iters)
{
    const __m512h m = _mm512_set1_ph(0.5f), b = _mm512_set1_ph(0.5f);
    DLB_X16(DLB_INITPH)
    for (long i = 0; i < iters; i++) {
        DLB_X16(DLB_FMAPH)
    }
    __m512 s = _mm512_setzero_ps();
    DLB_X16(DLB_ADDPH)
    return _mm512_reduce_add_ps(s);
}
#endif

#ifdef DLB_HAVE_AVX512VNNI
#define DLB_INITDP(k) __m512i x##k = _mm512_set1_epi32(k);
#define DLB_DPBUSD(k) x##k = _mm512_dpbusd_epi32(x##k, ones, ones);
#define DLB_ADDDP(k) s = _mm512_add_ps(s, _mm512_cvtepi32_ps(x##k));

/* Each lane adds 4 per step (four 1 x 1 products): a call would have to
 * run for over a second to reach 2^31, and s32 lanes wrap without a fault
 * anyway. The sum over lanes is taken in floats, which cannot overflow. */
__attribute__((target("avx512f,avx512vnni")))
static float vnni_avx512(long iters)
{
    const __m512i ones = _mm512_set1_epi8(1);
    DLB_X16(DLB_INITDP)
    for (long i = 0; i < iters; i++) {
        DLB_X16(DLB_DPBUSD)
    }
    __m512 s = _mm512_setzero_ps();
    DLB_X16(DLB_ADDDP)
    return _mm512_reduce_add_ps(s);
}
#endif

/* Plain (not streaming) stores: the figure is what ordinary code gets. */
__attribute__((target("avx512f")))
static void triad_avx512(double *a, const double *b, const double *c,
                         double s, size_t n)
{
    const __m512d vs = _mm512_set1_pd(s);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512d r0 = _mm512_fmadd_pd(vs, _mm512_loadu_pd(c + i),
                                     _mm512_loadu_pd(b + i));
        __m512d r1 = _mm512_fmadd_pd(vs, _mm512_loadu_pd(c + i + 8),
                                     _mm512_loadu_pd(b + i + 8));
        _mm512_storeu_pd(a + i, r0);
        _mm512_storeu_pd(a + i + 8, r1);
    }
    triad_c(a + i, b + i, c + i, s, n - i);
}

__attribute__((target("avx512f")))
static double sum_avx512(const double *a, size_t n)
{
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_add_pd(s0, _mm512_loadu_pd(a + i));
        s1 = _mm512_add_pd(s1, _mm512_loadu_pd(a + i + 8));
        s2 = _mm512_add_pd(s2, _mm512_loadu_pd(a + i + 16));
        s3 = _mm512_add_pd(s3, _mm512_loadu_pd(a + i + 24));
    }
    s0 = _mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3));
    return _mm512_reduce_add_pd(s0) + sum_c(a + i, n - i);
}

__attribute__((target("avx2,fma")))
static void triad_avx2(double *a, const double *b, const double *c,
                       double s, size_t n)
{
    const __m256d vs = _mm256_set1_pd(s);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256d r0 = _mm256_fmadd_pd(vs, _mm256_loadu_pd(c + i),
                                     _mm256_loadu_pd(b + i));
        __m256d r1 = _mm256_fmadd_pd(vs, _mm256_loadu_pd(c + i + 4),
                                     _mm256_loadu_pd(b + i + 4));
        _mm256_storeu_pd(a + i, r0);
        _mm256_storeu_pd(a + i + 4, r1);
    }
    triad_c(a + i, b + i, c + i, s, n - i);
}

__attribute__((target("avx2")))
static double sum_avx2(const double *a, size_t n)
{
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_add_pd(s0, _mm256_loadu_pd(a + i));
        s1 = _mm256_add_pd(s1, _mm256_loadu_pd(a + i + 4));
        s2 = _mm256_add_pd(s2, _mm256_loadu_pd(a + i + 8));
        s3 = _mm256_add_pd(s3, _mm256_loadu_pd(a + i + 12));
    }
    s0 = _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3));
    double v[4];
    _mm256_storeu_pd(v, s0);
    return ((v[0] + v[1]) + (v[2] + v[3])) + sum_c(a + i, n - i);
}

/* CPUID leaf 7's flags, read directly because older compilers'
 * __builtin_cpu_supports does not know the newer names; the OS side (zmm
 * state saved) is covered by the avx512f check before them. AVX512_BF16 is
 * subleaf 1 EAX bit 5, AVX512_VNNI subleaf 0 ECX bit 11, AVX512_FP16
 * subleaf 0 EDX bit 23. */
#if defined(DLB_HAVE_AVX512BF16) || defined(DLB_HAVE_AVX512FP16) \
    || defined(DLB_HAVE_AVX512VNNI)
static int cpu_leaf7(unsigned sub, int reg, int bit)
{
    unsigned r[4];
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, sub, r[0], r[1], r[2], r[3]);
    return (r[reg] >> bit) & 1;
}

enum { EAX, EBX, ECX, EDX };
#endif

static void avx512_units(struct dlb_peak_kernels *k)
{
#ifdef DLB_HAVE_AVX512BF16
    if (cpu_leaf7(1, EAX, 5))
        /* one vdpbf16ps: 16 lanes x 2 bf16 pairs x (mul + add) */
        k->unit[DLB_PEAK_BF16] = (struct dlb_peak_compute){
            bf16_avx512, 16 * 16 * 2 * 2, "avx512_bf16"};
#endif
#ifdef DLB_HAVE_AVX512FP16
    if (cpu_leaf7(0, EDX, 23))
        /* one vfmadd...ph: 32 lanes x (mul + add) */
        k->unit[DLB_PEAK_FP16] = (struct dlb_peak_compute){
            fp16_avx512, 16 * 32 * 2, "avx512_fp16"};
#endif
#ifdef DLB_HAVE_AVX512VNNI
    if (cpu_leaf7(0, ECX, 11))
        /* one vpdpbusd: 16 lanes x 4 int8 pairs x (mul + add) */
        k->unit[DLB_PEAK_VNNI] = (struct dlb_peak_compute){
            vnni_avx512, 16 * 16 * 4 * 2, "avx512_vnni"};
#endif
    (void)k;
}
#endif /* DLB_PEAK_X86 */

void dlb_peak_kernels_select(enum dlb_peak_isa cap, struct dlb_peak_kernels *k)
{
    *k = (struct dlb_peak_kernels){
        .isa = DLB_PEAK_ISA_C, .name = "c",
        .triad = triad_c, .sum = sum_c,
    };
    for (int u = 0; u < DLB_PEAK_NUNITS; u++)
        k->unit[u] = (struct dlb_peak_compute){NULL, 0, "none"};
    k->unit[DLB_PEAK_FP32] = (struct dlb_peak_compute){fp32_c, 16 * 2, "c"};
#ifdef DLB_PEAK_X86
    /* __builtin_cpu_supports also checks that the OS saves ymm/zmm state */
    __builtin_cpu_init();
    if (cap >= DLB_PEAK_ISA_AVX2 && __builtin_cpu_supports("avx2")
        && __builtin_cpu_supports("fma")) {
        k->isa = DLB_PEAK_ISA_AVX2;
        k->name = "avx2";
        k->unit[DLB_PEAK_FP32] = (struct dlb_peak_compute){
            fp32_avx2, 12 * 8 * 2, "avx2"};
        k->triad = triad_avx2;
        k->sum = sum_avx2;
    }
    if (cap >= DLB_PEAK_ISA_AVX512 && __builtin_cpu_supports("avx512f")
        && k->isa == DLB_PEAK_ISA_AVX2) {
        k->isa = DLB_PEAK_ISA_AVX512;
        k->name = "avx512";
        k->unit[DLB_PEAK_FP32] = (struct dlb_peak_compute){
            fp32_avx512, 16 * 16 * 2, "avx512"};
        k->triad = triad_avx512;
        k->sum = sum_avx512;
        avx512_units(k);
    }
    if (cap >= DLB_PEAK_ISA_AVX512)
        dlb_peak_amx_select(k);
#else
    (void)cap;
#endif
}
