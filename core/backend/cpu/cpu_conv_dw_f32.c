/* The expansion and its depthwise convolution as one pass, f32, AVX-512
 * (cpu_conv_dw_f32.h). oneDNN fuses the pair itself only where the
 * expanded tensor is over twice the threads' L2 caches: on a Sapphire
 * Rapids (2 MB of L2 a core) none of MobileNetV2's layers at batch 1,
 * which then run as the two primitives one after the other through a
 * buffer of the whole tensor (MobileNetV2's first, 96x112x112, 4.8 MB,
 * more than a core's L2). Here a thread keeps three rows of the
 * expanded tensor, for three blocks of 16 channels, in a ring (under
 * 20 KB at 112 columns) and the depthwise convolution reads them while
 * they are in L1.
 *
 * The passes over the rows are cpu_conv_dw_pass.h's, shared with the
 * bf16 kernel; this file has the f32 1x1 tile. Compiled with a target
 * attribute, run only where the CPU has AVX-512F. */
#include "cpu_conv_dw_f32.h"

#include <math.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define DW_TARGET "avx512f"
#include "cpu_conv_dw_simd.h"

int dlb_cpu_dw_f32_available(void)
{
    return __builtin_cpu_supports("avx512f");
}

/* One input block's share of a tile: 16 channels (ni of them real, the
 * padding's zeros skipped), one FMA per channel, pixel and block. */
AVX512 INLINE void expand_block(__m512 acc[TILE_P][GROUP], const float *xp,
                                const float *wp, size_t wstride, int ni,
                                int P, int B)
{
    for (int i = 0; i < ni; i++) {
        __m512 w[GROUP];
        UNROLL for (int b = 0; b < B; b++)
            w[b] = _mm512_load_ps(wp + b * wstride + i * 16);
        UNROLL for (int p = 0; p < P; p++) {
            __m512 x = _mm512_set1_ps(xp[p * 16 + i]);
            UNROLL for (int b = 0; b < B; b++)
                acc[p][b] = _mm512_fmadd_ps(x, w[b], acc[p][b]);
        }
    }
}

/* The expanded tensor in the ring as computed. */
AVX512 INLINE __m512 ring16(__m512 v)
{
    return v;
}

AVX512 INLINE __m512 load_w16(const float *p)
{
    return _mm512_load_ps(p);
}

AVX512 INLINE void store_y16(float *p, __m512 v)
{
    _mm512_store_ps(p, v);
}

#define DW_ARGS struct dlb_cpu_dw_f32
#define DW_ELEM float
#include "cpu_conv_dw_pass.h"

size_t dlb_cpu_dw_f32_ring_floats(const struct dlb_cpu_dw_f32 *a)
{
    return dw_ring_floats(a);
}

void dlb_cpu_dw_f32_run(const struct dlb_cpu_dw_f32 *a, float *ring, int threads)
{
    dw_run(a, ring, threads);
}

#else /* not x86-64 with GCC's intrinsics */

int dlb_cpu_dw_f32_available(void)
{
    return 0;
}

size_t dlb_cpu_dw_f32_ring_floats(const struct dlb_cpu_dw_f32 *a)
{
    (void)a;
    return 0;
}

void dlb_cpu_dw_f32_run(const struct dlb_cpu_dw_f32 *a, float *ring, int threads)
{
    (void)a, (void)ring, (void)threads;
}
#endif
