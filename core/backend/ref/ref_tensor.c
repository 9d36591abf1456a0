/* Reading and writing ref buffers element by element, in any float type. */
#include "ref.h"
#include "../dtype.h"

#include <stdlib.h>
#include <string.h>

static uint16_t get16(const unsigned char *p, size_t i)
{
    uint16_t h;
    memcpy(&h, p + 2 * i, 2);
    return h;
}

static void set16(unsigned char *p, size_t i, uint16_t h)
{
    memcpy(p + 2 * i, &h, 2);
}

double dlb_ref_elem(const struct dlb_buffer *b, size_t i)
{
    const unsigned char *p = b->data;
    float f;
    double d;
    int32_t v;
    switch (b->dtype) {
    case DLB_F32: memcpy(&f, p + 4 * i, 4); return f;
    case DLB_F64: memcpy(&d, p + 8 * i, 8); return d;
    case DLB_F16: return dlb_f16_to_f32(get16(p, i));
    case DLB_BF16: return dlb_bf16_to_f32(get16(p, i));
    case DLB_S32: memcpy(&v, p + 4 * i, 4); return v;
    case DLB_S8: return (double)((const signed char *)p)[i];
    case DLB_U8: return (double)p[i];
    }
    return 0.0;
}

/* Out-of-range double to integer conversion is undefined: saturate. */
static double clampd(double v, double lo, double hi)
{
    return v != v ? 0.0 : v < lo ? lo : v > hi ? hi : v;
}

/* Float types round to nearest even (F16/BF16 via F32: a double rounding
 * that differs from a direct one only at exact ties of the F32 value). */
void dlb_ref_set_elem(struct dlb_buffer *b, size_t i, double v)
{
    unsigned char *p = b->data;
    float f = (float)v;
    int32_t x;
    switch (b->dtype) {
    case DLB_F32: memcpy(p + 4 * i, &f, 4); break;
    case DLB_F64: memcpy(p + 8 * i, &v, 8); break;
    case DLB_F16: set16(p, i, dlb_f32_to_f16(f)); break;
    case DLB_BF16: set16(p, i, dlb_f32_to_bf16(f)); break;
    case DLB_S32:
        x = (int32_t)clampd(v, INT32_MIN, INT32_MAX);
        memcpy(p + 4 * i, &x, 4);
        break;
    case DLB_S8:
        ((signed char *)p)[i] = (signed char)clampd(v, -128, 127);
        break;
    case DLB_U8: p[i] = (unsigned char)clampd(v, 0, 255); break;
    }
}

static dlb_status check(struct dlb_backend *be, const char *op, const char *arg,
                        const struct dlb_buffer *b, size_t count)
{
    if (!b)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref %s: %s is NULL",
                                op, arg);
    if (!dlb_dtype_is_float(b->dtype))
        return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED,
                                "ref %s: %s is %s; the operation needs a float "
                                "type (f32, f64, f16, bf16)", op, arg,
                                dlb_dtype_name(b->dtype));
    if (b->count < count)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL,
                                "ref %s: %s holds %zu elements, needs %zu",
                                op, arg, b->count, count);
    return DLB_OK;
}

static dlb_status alloc_doubles(struct dlb_backend *be, const char *op,
                                size_t count, double **out)
{
    *out = calloc(count ? count : 1, sizeof **out);
    if (!*out)
        return dlb_backend_fail(be, DLB_ERR_NOMEM,
                                "ref %s: out of memory for %zu doubles", op,
                                count);
    return DLB_OK;
}

dlb_status dlb_ref_get(struct dlb_backend *be, const char *op, const char *arg,
                       const struct dlb_buffer *b, size_t count, double **out)
{
    dlb_status s;
    *out = NULL;
    if ((s = check(be, op, arg, b, count)) ||
        (s = alloc_doubles(be, op, count, out)))
        return s;
    for (size_t i = 0; i < count; i++)
        (*out)[i] = dlb_ref_elem(b, i);
    return DLB_OK;
}

dlb_status dlb_ref_new(struct dlb_backend *be, const char *op, const char *arg,
                       const struct dlb_buffer *b, size_t count, double **out)
{
    dlb_status s;
    *out = NULL;
    if ((s = check(be, op, arg, b, count)))
        return s;
    return alloc_doubles(be, op, count, out);
}

void dlb_ref_put(struct dlb_buffer *b, const double *v, size_t count)
{
    for (size_t i = 0; i < count; i++)
        dlb_ref_set_elem(b, i, v[i]);
}

dlb_status dlb_ref_check_s32(struct dlb_backend *be, const char *op,
                             const char *arg, const struct dlb_buffer *b,
                             size_t count)
{
    if (!b)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref %s: %s is NULL",
                                op, arg);
    if (b->dtype != DLB_S32 || b->count < count)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL,
                                "ref %s: %s must be s32 with %zu elements, "
                                "is %s with %zu", op, arg, count,
                                dlb_dtype_name(b->dtype), b->count);
    return DLB_OK;
}

void dlb_ref_free_all(double **p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
}
