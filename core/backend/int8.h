/* What every backend computes for an int8 layer (backend.h, API 1.1): the
 * checks of its buffers and quantisation, the output multiplier and the
 * requantisation, written once so that ref, cpu and cuda agree on every
 * float operation. */
#ifndef DLB_CORE_BACKEND_INT8_H
#define DLB_CORE_BACKEND_INT8_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <dlbench/backend.h>

/* The buffers of one int8 convolution or linear layer and the element
 * counts they must hold; out_c is the number of output channels. */
struct dlb_int8_args {
    const struct dlb_buffer *x, *w, *w_scale, *b, *y;
    size_t x_count, w_count, y_count;
    uint32_t out_c;
};

/* DLB_ERR_INTERNAL naming `op` and the argument at fault: types (x of
 * q->x_type or F32, w S8, w_scale F32 of 1 or out_c, b S32 of out_c, y
 * F32/S8/U8), sizes, scales > 0 and finite, zero points in their type's
 * range (0 for S8). */
dlb_status dlb_int8_check(struct dlb_backend *be, const char *op,
                          const struct dlb_int8_desc *q,
                          const struct dlb_int8_args *a);

/* The multiplier M of output channel o (backend.h): x_scale * w_scale,
 * divided by y_scale when y is S8 or U8, in float. */
static inline float dlb_int8_multiplier(const struct dlb_int8_desc *q,
                                        float w_scale, int int8_out)
{
    float m = q->x_scale * w_scale;
    return int8_out ? m / q->y_scale : m;
}

/* The real (or, for int8 y, the requantisation's unrounded) output. */
static inline float dlb_int8_value(int64_t acc, int32_t bias, float m,
                                   int relu)
{
    float v = ((float)acc + (float)bias) * m;
    return relu && v < 0.0f ? 0.0f : v;
}

/* quantize's value of x (backend.h): round_half_even(x / scale) +
 * zero_point clamped to [lo, hi], computed in double; NaN gives 0, as
 * ref's quantize. Clamping before rounding changes nothing (the bounds
 * are integers) and keeps the rounding trick's argument below 2^51: adding
 * and subtracting 1.5 * 2^52 rounds half to even in the default rounding
 * mode, without a call to nearbyint in the inner loop. */
static inline int32_t dlb_int8_quantize(float x, float scale,
                                        int32_t zero_point, int32_t lo,
                                        int32_t hi)
{
    double q = (double)x / (double)scale;
    double dlo = (double)(lo - zero_point), dhi = (double)(hi - zero_point);
    if (q != q)
        return 0;
    q = q < dlo ? dlo : q > dhi ? dhi : q;
    q = (q + 6755399441055744.0) - 6755399441055744.0;
    return (int32_t)q + zero_point;
}

/* The same value without a division in the common case: x times the
 * reciprocal `inv` = 1.0 / scale (in double) is within a few units in
 * the 52nd bit of x / scale, so it rounds the same way unless it lies
 * within 1e-9 of a half, where the exact division decides. Three to four
 * times faster than dividing, on loops the compiler cannot vectorise. */
static inline int32_t dlb_int8_quantize_fast(float x, double inv, float scale,
                                             int32_t zero_point, int32_t lo,
                                             int32_t hi)
{
    double q = (double)x * inv;
    double dlo = (double)(lo - zero_point), dhi = (double)(hi - zero_point);
    if (!(q >= dlo && q <= dhi)) /* outside, or NaN */
        return dlb_int8_quantize(x, scale, zero_point, lo, hi);
    double r = (q + 6755399441055744.0) - 6755399441055744.0;
    double off = q - r;
    if (off > 0.5 - 1e-9 || off < -0.5 + 1e-9)
        return dlb_int8_quantize(x, scale, zero_point, lo, hi);
    return (int32_t)r + zero_point;
}

/* The range of an int8 type: [0, 255] for U8, [-128, 127] for S8. */
static inline int32_t dlb_int8_lo(enum dlb_dtype t)
{
    return t == DLB_U8 ? 0 : -128;
}
static inline int32_t dlb_int8_hi(enum dlb_dtype t)
{
    return t == DLB_U8 ? 255 : 127;
}

/* round_half_even(v) + zero_point, clamped to [lo, hi]. */
static inline int32_t dlb_int8_requantize(float v, int32_t zero_point,
                                          int32_t lo, int32_t hi)
{
    float r = nearbyintf(v) + (float)zero_point;
    return r < (float)lo ? lo : r > (float)hi ? hi : (int32_t)r;
}

#endif
