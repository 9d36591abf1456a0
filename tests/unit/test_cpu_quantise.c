/* The cpu backend's quantisation of fp32 activations (cpu_quantise.c):
 * the AVX-512 path and its scalar tail give the bytes ref's quantize
 * gives (dlb_int8_quantize: round half to even of x / scale in double,
 * the zero point, the clamp), for u8 and s8, with and without a zero
 * point, on exact halves (a power-of-two scale makes x / scale exactly
 * k + 0.5), values a hair off a half, values past either end, NaN,
 * infinities and -0, at every length around the 16-lane width and at
 * offsets that break the alignment; and the scalar code's reciprocal
 * shortcut, on ties and their neighbours over five scales. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend_impl.h"
#include "backend/cpu/cpu.h"
#include "backend/int8.h"
#include "util/rng.h"

enum { N = 150 };

/* Mostly values inside the type's range, which the vector path takes;
 * four in every 48 an edge case, each sending its group of 16
 * to the scalar code: every run has groups of each kind. */
static void fill(float *in, float scale, int32_t lo, int32_t hi,
                 uint32_t seed)
{
    static const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f,
                                    1e30f, -1e30f};
    uint32_t r = seed;
    for (int i = 0; i < N; i++) {
        r = r * 1664525u + 1013904223u;
        int k = (int)(r >> 24) - 128; /* -128..127 */
        switch (i % 48) {
        case 5: /* exact half: (k + 0.5) * scale */
            in[i] = ((float)k + 0.5f) * scale;
            break;
        case 13: /* a hair off a half, either side */
            in[i] = nextafterf(((float)k + 0.5f) * scale,
                               (r & 64) ? INFINITY : -INFINITY);
            break;
        case 21: /* past the ends of u8 and s8 */
            in[i] = (float)k * 3.0f * scale;
            break;
        case 29:
            in[i] = special[(i / 48) % (sizeof special / sizeof special[0])];
            break;
        default: /* within [lo, hi] once quantised */
            in[i] = ((float)lo + (float)(hi - lo) *
                                     ((float)(r >> 8 & 0xffff) / 65536.0f)) *
                    scale;
        }
    }
}

static void check_case(enum dlb_dtype t, float scale, int32_t zp,
                       uint32_t seed)
{
    float in[N];
    unsigned char got[N + 1], want[N];
    int32_t lo = dlb_int8_lo(t), hi = dlb_int8_hi(t);
    fill(in, scale, lo - zp, hi - zp, seed);
    struct dlb_int8_desc q;
    memset(&q, 0, sizeof q);
    q.x_type = t;
    q.x_scale = scale;
    q.x_zero_point = zp;
    for (int i = 0; i < N; i++)
        want[i] = (unsigned char)dlb_int8_quantize(in[i], scale, zp, lo, hi);
    /* every length up to 40 at offsets 0..3, then the whole run (its
     * groups 2, 4, 5, 7 and 8 are in range: the vector path's) */
    int bad = 0;
    for (int off = 0; off < 4 && !bad; off++)
        for (int n = 0; n <= 40 && off + n <= N && !bad; n++) {
            memset(got, 0xa5, sizeof got);
            dlb_cpu_quantise_run(&q, in + off, got, (size_t)n);
            bad = memcmp(got, want + off, (size_t)n) != 0 || got[n] != 0xa5;
        }
    dlb_cpu_quantise_run(&q, in, got, N);
    bad |= memcmp(got, want, N) != 0;
    CHECK(!bad);
}

/* The scalar code's reciprocal shortcut (dlb_int8_quantize_fast, which
 * the vector path defers to) gives quantize's exact value:
 * on ties (x = (k + 1/2) * scale), values next to them, both ends of the
 * range and far outside it, for scales that are and are not powers of 2. */
static void test_fast_quantize(void)
{
    struct dlb_rng rng;
    dlb_rng_seed(&rng, 8);
    static const float scales[] = { 0.25f, 0.011f, 0.0078125f, 3.3e-5f, 7.0f };
    long bad = 0, n = 0;
    for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
        float sc = scales[s];
        double inv = 1.0 / (double)sc;
        for (int k = -300; k <= 300; k++) {
            float tie = (float)((k + 0.5) * sc);
            float xs[5] = { tie, nextafterf(tie, INFINITY),
                            nextafterf(tie, -INFINITY), (float)(k * sc),
                            (float)(dlb_rng_double(&rng) * 600 - 300) * sc };
            for (int j = 0; j < 5; j++, n += 2) {
                bad += dlb_int8_quantize(xs[j], sc, 37, 0, 255) !=
                       dlb_int8_quantize_fast(xs[j], inv, sc, 37, 0, 255);
                bad += dlb_int8_quantize(xs[j], sc, 0, -128, 127) !=
                       dlb_int8_quantize_fast(xs[j], inv, sc, 0, -128, 127);
            }
        }
    }
    CHECK(bad == 0);
    CHECK(dlb_int8_quantize_fast(NAN, 4.0, 0.25f, 10, 0, 255) == 0);
    CHECK(dlb_int8_quantize_fast(1e30f, 4.0, 0.25f, 10, 0, 255) == 255);
    fprintf(stderr, "fast quantize: %ld values, %ld differ\n", n, bad);
}

int main(void)
{
    test_fast_quantize();
    check_case(DLB_U8, 0.25f, 0, 1u);     /* ReLU'd activations */
    check_case(DLB_U8, 0.125f, 37, 2u);   /* with a zero point */
    check_case(DLB_S8, 0.5f, 0, 3u);
    check_case(DLB_S8, 0.0625f, -5, 4u);
    check_case(DLB_U8, 0.0371f, 128, 5u); /* not a power of two */
    check_case(DLB_S8, 1.7e-3f, 3, 6u);
    return check_exit();
}
