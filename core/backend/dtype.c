#include "dtype.h"

#include <string.h>

size_t dlb_dtype_size(enum dlb_dtype t)
{
    switch (t) {
    case DLB_F32: case DLB_S32: return 4;
    case DLB_F16: case DLB_BF16: return 2;
    case DLB_S8: case DLB_U8: return 1;
    case DLB_F64: return 8;
    }
    return 0;
}

const char *dlb_dtype_name(enum dlb_dtype t)
{
    switch (t) {
    case DLB_F32: return "f32";
    case DLB_F16: return "f16";
    case DLB_BF16: return "bf16";
    case DLB_S8: return "s8";
    case DLB_U8: return "u8";
    case DLB_S32: return "s32";
    case DLB_F64: return "f64";
    }
    return "unknown";
}

int dlb_dtype_is_float(enum dlb_dtype t)
{
    return t == DLB_F32 || t == DLB_F16 || t == DLB_BF16 || t == DLB_F64;
}

static uint32_t f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

static float f32_from_bits(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

uint16_t dlb_f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x0040u); /* keep it a quiet NaN */
    /* Adding 0x7fff plus the lowest kept bit rounds ties to even; a carry
     * out of the exponent gives infinity, which is the right overflow. */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float dlb_bf16_to_f32(uint16_t h)
{
    return f32_from_bits((uint32_t)h << 16);
}

/* Round `v` right by `shift` bits (1..31), ties to even. */
static uint32_t shift_round_even(uint32_t v, unsigned shift)
{
    uint32_t q = v >> shift;
    uint32_t rem = v & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return q;
}

uint16_t dlb_f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    uint32_t e = ax >> 23, mant = ax & 0x7fffffu;

    if (ax > 0x7f800000u) /* NaN: quiet, keep the top payload bits */
        return (uint16_t)(sign | 0x7e00u | (mant >> 13));
    if (ax >= 0x477ff000u) /* >= 65520 rounds past 65504: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (e >= 113) /* normal in binary16; a rounding carry may bump e */
        return (uint16_t)(sign | shift_round_even(((e - 112) << 23) | mant, 13));
    if (e < 102) /* below a quarter of the smallest subnormal: zero */
        return sign;
    /* Subnormal: the value is (2^23 + mant) * 2^(e-150) and binary16
     * subnormals count units of 2^-24, so shift right by 126 - e. */
    return (uint16_t)(sign | shift_round_even(0x800000u | mant, 126 - e));
}

float dlb_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (e == 0) {
        float v = (float)mant * 0x1.0p-24f; /* exact: mant < 2^10 */
        return sign ? -v : v;
    }
    if (e == 31)
        return f32_from_bits(sign | 0x7f800000u | (mant << 13));
    return f32_from_bits(sign | ((e + 112) << 23) | (mant << 13));
}
