/* The AMX units' probe kernels: tdpbf16ps and tdpbssd on tiles that stay in
 * the tile registers, so that the figure is the unit's and not the
 * memory's. Linux gives a process the tile data state (8 KiB of registers
 * per thread) only when asked; where it refuses (an old kernel, a
 * hypervisor that hides the state) the units stay "none". */
#include "config.h"

#include "peak/peak_impl.h"

#if defined(DLB_HAVE_AMX) && defined(__x86_64__) && defined(__linux__)
#define DLB_PEAK_AMX 1
#include <cpuid.h>
#include <immintrin.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#ifdef DLB_PEAK_AMX

#ifndef ARCH_REQ_XCOMP_PERM
#define ARCH_REQ_XCOMP_PERM 0x1023
#endif
#define XFEATURE_XTILEDATA 18

/* Palette 1 with eight tiles of 16 rows of 64 bytes: C 16 x 16 fp32 or
 * s32, A 16 x 32 bf16 or 16 x 64 int8, B the same shape, K/2 or K/4 rows
 * of pairs or quads. */
static const struct {
    uint8_t palette, start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config = {
    .palette = 1,
    .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
    .rows = {16, 16, 16, 16, 16, 16, 16, 16},
};

#define DLB_X8(v) v, v, v, v, v, v, v, v
#define DLB_X32(v) DLB_X8(v), DLB_X8(v), DLB_X8(v), DLB_X8(v)

/* One 64-byte row of each operand, loaded with stride 0 into all 16 rows
 * of a tile: bf16 0.5 (0x3f00), int8 1. The sums stay exact integers:
 * after n rounds each accumulator element is 8n (bf16) or 64n (int8). */
static const uint16_t half_bf16[32] = {DLB_X32(0x3f00)};
static const int8_t one_int8[64] = {DLB_X32(1), DLB_X32(1)};

/* Tiles 0-5 accumulate and 6, 7 hold A and B. A tile dot product issues
 * every 16 cycles on Sapphire Rapids and takes several times that to
 * finish: six independent accumulators keep the unit busy instead of
 * waiting on their own results. */
#define DLB_X6(M) M(0) M(1) M(2) M(3) M(4) M(5)
#define DLB_ZERO(t) _tile_zero(t);
#define DLB_STORE(t) _tile_stored(t, &acc[t], 64);
#define DLB_DPBF16(t) _tile_dpbf16ps(t, 6, 7);
#define DLB_DPBSSD(t) _tile_dpbssd(t, 6, 7);

/* The six accumulators' sum, which depends on every instruction. */
__attribute__((target("amx-tile")))
static double stored_sum(int is_float)
{
    union {
        float f[16 * 16];
        int32_t i[16 * 16];
    } acc[6];
    DLB_X6(DLB_STORE)
    double s = 0;
    for (int t = 0; t < 6; t++)
        for (int e = 0; e < 16 * 16; e++)
            s += is_float ? (double)acc[t].f[e] : (double)acc[t].i[e];
    return s;
}

__attribute__((target("amx-tile,amx-bf16")))
static float amx_bf16(long iters)
{
    _tile_loadconfig(&tile_config);
    DLB_X6(DLB_ZERO)
    _tile_loadd(6, half_bf16, 0);
    _tile_loadd(7, half_bf16, 0);
    for (long i = 0; i < iters; i++) {
        DLB_X6(DLB_DPBF16)
    }
    double s = stored_sum(1);
    _tile_release(); /* back to the init state: cheap context switches */
    return (float)s;
}

/* s32 accumulators wrap without a fault; at 64 per round that takes far
 * longer than a trial. */
__attribute__((target("amx-tile,amx-int8")))
static float amx_int8(long iters)
{
    _tile_loadconfig(&tile_config);
    DLB_X6(DLB_ZERO)
    _tile_loadd(6, one_int8, 0);
    _tile_loadd(7, one_int8, 0);
    for (long i = 0; i < iters; i++) {
        DLB_X6(DLB_DPBSSD)
    }
    double s = stored_sum(0);
    _tile_release();
    return (float)s;
}

/* CPUID leaf 7 subleaf 0 EDX: AMX-BF16 bit 22, AMX-TILE 24, AMX-INT8 25. */
static unsigned leaf7_edx(void)
{
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    (void)a, (void)b, (void)c;
    return d;
}

void dlb_peak_amx_select(struct dlb_peak_kernels *k)
{
    unsigned d = leaf7_edx();
    if (!((d >> 24) & 1))
        return;
    /* per process and idempotent: asking again is harmless */
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0)
        return;
    /* per instruction: 16 x 16 outputs, each 32 bf16 or 64 int8 pairs */
    if ((d >> 22) & 1)
        k->unit[DLB_PEAK_AMX_BF16] = (struct dlb_peak_compute){
            amx_bf16, 6 * 16 * 16 * 32 * 2, "amx_bf16"};
    if ((d >> 25) & 1)
        k->unit[DLB_PEAK_AMX_INT8] = (struct dlb_peak_compute){
            amx_int8, 6 * 16 * 16 * 64 * 2, "amx_int8"};
}

#else

void dlb_peak_amx_select(struct dlb_peak_kernels *k)
{
    (void)k;
}

#endif
