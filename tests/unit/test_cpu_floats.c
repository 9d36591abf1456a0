/* The cpu backend's runs of bf16 as floats (cpu_floats.c): the AVX-512
 * loops and their scalar tails give bit for bit what the core's scalar
 * conversions give (round to nearest even, ties, NaN kept quiet, infinities,
 * subnormals), at every length around the 16-lane width and at offsets
 * that break the alignment. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_impl.h"
#include "backend/cpu/cpu.h"
#include "backend/dtype.h"

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int main(void)
{
    enum { N = 80 };
    float in[N], back[N];
    uint16_t raw[N + 3];
    /* specials first, then random bit patterns (every exponent) */
    static const uint32_t special[] = {
        0x7fc00000u, 0x7f800001u, 0xff800000u, 0x7f800000u, 0x00000001u,
        0x3f808000u, /* a tie: rounds to even (down) */
        0x3f818000u, /* a tie: rounds to even (up) */
        0x7f7fffffu, /* rounds up into infinity */
        0x80000000u, 0x3f800000u};
    uint32_t r = 12345u;
    for (int i = 0; i < N; i++) {
        r = r * 1664525u + 1013904223u;
        in[i] = i < (int)(sizeof special / sizeof special[0])
                    ? from_bits(special[i]) : from_bits(r);
    }
    struct dlb_buffer b = {DLB_BF16, N + 3, sizeof raw, raw, NULL};
    for (size_t off = 0; off < 3; off++)
        for (size_t n = 1; n + off <= N; n += n < 40 ? 1 : 13) {
            memset(raw, 0xab, sizeof raw);
            dlb_cpu_store_f32(&b, off, n, in);
            int same = 1;
            for (size_t i = 0; i < n; i++)
                same &= raw[off + i] == dlb_f32_to_bf16(in[i]);
            /* nothing written past the run */
            same &= off + n >= N + 3 || raw[off + n] == 0xabab;
            CHECK(same);
            dlb_cpu_load_f32(&b, off, n, back);
            int back_same = 1;
            for (size_t i = 0; i < n; i++) {
                float want = dlb_bf16_to_f32(raw[off + i]);
                back_same &= memcmp(&back[i], &want, 4) == 0;
            }
            CHECK(back_same);
        }
    return check_exit();
}
