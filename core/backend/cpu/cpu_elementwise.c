/* SGD, casts, scaling, the inf/NaN check, fill, int8 (de)quantisation,
 * the add and the channel concatenation's copies: memory-bound loops over
 * chunks small enough for L1, converted to float on load and rounded to
 * the buffer's type on store, OpenMP-parallel when large. Each rounds
 * exactly as the ref backend does. */
#include "cpu.h"
#include "../dtype.h"

#include <math.h>
#include <string.h>

#define CHUNK 2048

static size_t n_chunks(size_t count)
{
    return (count + CHUNK - 1) / CHUNK;
}

static size_t chunk_len(size_t count, size_t c)
{
    size_t left = count - c * CHUNK;
    return left < CHUNK ? left : CHUNK;
}

static dlb_status check(struct dlb_backend *be, const char *op,
                        const char *arg, const struct dlb_buffer *b,
                        size_t count)
{
    if (!b || !dlb_dtype_is_float(b->dtype) || b->count < count)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: %s must be a "
                                "float buffer of at least %zu elements", op,
                                arg, count);
    return DLB_OK;
}

dlb_status dlb_cpu_sgd_update(struct dlb_backend *be,
                              const struct dlb_sgd_desc *d,
                              struct dlb_buffer *w, const struct dlb_buffer *g,
                              struct dlb_buffer *v)
{
    dlb_status s;
    size_t nc = n_chunks(d->count);
    double lr = d->lr, mom = d->momentum, wd = d->weight_decay;
    if ((s = check(be, "sgd_update", "w", w, d->count)) ||
        (s = check(be, "sgd_update", "g", g, d->count)) ||
        (s = check(be, "sgd_update", "v", v, d->count)) ||
        (s = DLB_CPU_PLAIN(be, w, g, v)))
        return s;
    /* In double, as the ref backend: the results are then identical. */
    DLB_OMP("omp parallel for schedule(static) if(d->count > DLB_CPU_PAR_MIN)")
    for (size_t c = 0; c < nc; c++) {
        float tw[CHUNK], tg[CHUNK], tv[CHUNK];
        size_t off = c * CHUNK, n = chunk_len(d->count, c);
        dlb_cpu_load_f32(w, off, n, tw);
        dlb_cpu_load_f32(g, off, n, tg);
        dlb_cpu_load_f32(v, off, n, tv);
        for (size_t i = 0; i < n; i++) {
            double grad = (double)tg[i] + wd * (double)tw[i];
            double vel = mom * (double)tv[i] + grad;
            tv[i] = (float)vel;
            tw[i] = (float)((double)tw[i] - lr * vel);
        }
        dlb_cpu_store_f32(v, off, n, tv);
        dlb_cpu_store_f32(w, off, n, tw);
    }
    dlb_cpu_written(w);
    dlb_cpu_written(v);
    return DLB_OK;
}

/* A cast keeps the source's layout (the element order does not matter to
 * it): the destination takes it with its own type, and `count` becomes
 * the physical element count. */
static dlb_status cast_layout(struct dlb_backend *be, size_t *count,
                              const struct dlb_buffer *src,
                              struct dlb_buffer *dst)
{
    const dlb_dnnl_md *lay;
    dlb_dnnl_md md;
    dlb_status s;
    if (src->dtype == DLB_F64 || dst->dtype == DLB_F64)
        return DLB_CPU_PLAIN(be, src, dst);
    if ((s = dlb_cpu_physical(be, src, *count, count)))
        return s;
    if (!(lay = dlb_cpu_layout(src)))
        return dlb_cpu_make_plain(be, dst);
    /* A layout oneDNN 3 cannot give another type: cast the host views. */
    if (dlb_dnnl_md_retype(&md, lay, dlb_cpu_dnnl_type(dst->dtype)) !=
        dnnl_success)
        return DLB_CPU_PLAIN(be, src, dst);
    return dlb_cpu_set_layout(be, dst, &md);
}

dlb_status dlb_cpu_cast(struct dlb_backend *be, size_t count,
                        const struct dlb_buffer *src, struct dlb_buffer *dst)
{
    dlb_status s;
    size_t nc;
    if ((s = check(be, "cast", "src", src, count)) ||
        (s = check(be, "cast", "dst", dst, count)))
        return s;
    if ((s = cast_layout(be, &count, src, dst)))
        return s;
    nc = n_chunks(count);
    if (src->dtype == dst->dtype) {
        memmove(dst->data, src->data, count * dlb_dtype_size(src->dtype));
    } else {
        /* Through float: exact for every source but F64, and F64 sources
         * round to float first in the ref backend too. */
        DLB_OMP("omp parallel for schedule(static) if(count > DLB_CPU_PAR_MIN)")
        for (size_t c = 0; c < nc; c++) {
            float t[CHUNK];
            size_t off = c * CHUNK, n = chunk_len(count, c);
            dlb_cpu_load_f32(src, off, n, t);
            dlb_cpu_store_f32(dst, off, n, t);
        }
    }
    dlb_cpu_written(dst);
    return DLB_OK;
}

dlb_status dlb_cpu_scale(struct dlb_backend *be, size_t count,
                         struct dlb_buffer *buf, float alpha)
{
    dlb_status s;
    size_t nc;
    if ((s = check(be, "scale", "buf", buf, count)) ||
        (s = dlb_cpu_physical(be, buf, count, &count)))
        return s;
    nc = n_chunks(count);
    if (buf->dtype == DLB_F64) {
        double *p = buf->data;
        for (size_t i = 0; i < count; i++)
            p[i] *= (double)alpha;
    } else {
        /* A float product rounds once, as the ref's exact double product
         * rounded to float does. */
        DLB_OMP("omp parallel for schedule(static) if(count > DLB_CPU_PAR_MIN)")
        for (size_t c = 0; c < nc; c++) {
            float t[CHUNK];
            size_t off = c * CHUNK, n = chunk_len(count, c);
            dlb_cpu_load_f32(buf, off, n, t);
            for (size_t i = 0; i < n; i++)
                t[i] *= alpha;
            dlb_cpu_store_f32(buf, off, n, t);
        }
    }
    dlb_cpu_written(buf);
    return DLB_OK;
}

dlb_status dlb_cpu_check_finite(struct dlb_backend *be, size_t count,
                                const struct dlb_buffer *buf, int *found)
{
    dlb_status s;
    size_t nc;
    int any = 0;
    *found = 0;
    /* A blocked layout's padding is zeros: finite. */
    if ((s = check(be, "check_finite", "buf", buf, count)) ||
        (s = dlb_cpu_physical(be, buf, count, &count)))
        return s;
    nc = n_chunks(count);
    if (buf->dtype == DLB_F64) {
        const double *p = buf->data;
        for (size_t i = 0; i < count; i++)
            any |= !isfinite(p[i]);
    } else {
        DLB_OMP("omp parallel for schedule(static) reduction(|:any) if(count > DLB_CPU_PAR_MIN)")
        for (size_t c = 0; c < nc; c++) {
            float t[CHUNK];
            size_t n = chunk_len(count, c);
            int bad = 0;
            dlb_cpu_load_f32(buf, c * CHUNK, n, t);
            for (size_t i = 0; i < n; i++) {
                uint32_t x;
                memcpy(&x, &t[i], 4);
                bad |= (x & 0x7f800000u) == 0x7f800000u; /* inf or NaN */
            }
            any |= bad;
        }
    }
    *found = any;
    return DLB_OK;
}

/* Out-of-range double to integer conversion is undefined: saturate. */
static double clampd(double v, double lo, double hi)
{
    return v != v ? 0.0 : v < lo ? lo : v > hi ? hi : v;
}

dlb_status dlb_cpu_fill(struct dlb_backend *be, size_t count,
                        struct dlb_buffer *buf, double value)
{
    size_t nc = n_chunks(count);
    dlb_status s;
    if (!buf || buf->count < count)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu fill: buffer has "
                                "fewer than %zu elements", count);
    s = count == buf->count ? dlb_cpu_set_layout(be, buf, NULL)
                            : dlb_cpu_make_plain(be, buf);
    if (s)
        return s;
    switch (buf->dtype) {
    case DLB_F64:
        for (size_t i = 0; i < count; i++)
            ((double *)buf->data)[i] = value;
        break;
    case DLB_S32:
        for (size_t i = 0; i < count; i++)
            ((int32_t *)buf->data)[i] = (int32_t)clampd(value, INT32_MIN,
                                                        INT32_MAX);
        break;
    case DLB_S8:
        memset(buf->data, (signed char)clampd(value, -128, 127), count);
        break;
    case DLB_U8:
        memset(buf->data, (unsigned char)clampd(value, 0, 255), count);
        break;
    default:
        DLB_OMP("omp parallel for schedule(static) if(count > DLB_CPU_PAR_MIN)")
        for (size_t c = 0; c < nc; c++) {
            float t[CHUNK];
            size_t n = chunk_len(count, c);
            for (size_t i = 0; i < n; i++)
                t[i] = (float)value;
            dlb_cpu_store_f32(buf, c * CHUNK, n, t);
        }
    }
    dlb_cpu_written(buf);
    return DLB_OK;
}

static dlb_status check_int8(struct dlb_backend *be, const char *op,
                             const struct dlb_buffer *b, size_t count)
{
    if (!b || (b->dtype != DLB_S8 && b->dtype != DLB_U8) || b->count < count)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: the int8 side "
                                "must be s8 or u8 with %zu elements", op, count);
    return DLB_OK;
}

dlb_status dlb_cpu_quantize(struct dlb_backend *be, size_t count,
                            const struct dlb_buffer *src, struct dlb_buffer *dst,
                            float scale, int32_t zero_point)
{
    dlb_status s;
    size_t nc = n_chunks(count);
    int u8 = dst && dst->dtype == DLB_U8;
    double lo = u8 ? 0.0 : -128.0, hi = u8 ? 255.0 : 127.0;
    if ((s = check_int8(be, "quantize", dst, count)) ||
        (s = check(be, "quantize", "src", src, count)) ||
        (s = DLB_CPU_PLAIN(be, src, dst)))
        return s;
    DLB_OMP("omp parallel for schedule(static) if(count > DLB_CPU_PAR_MIN)")
    for (size_t c = 0; c < nc; c++) {
        float t[CHUNK];
        size_t off = c * CHUNK, n = chunk_len(count, c);
        dlb_cpu_load_f32(src, off, n, t);
        for (size_t i = 0; i < n; i++) {
            /* nearbyint rounds half to even in the default rounding mode */
            double q = nearbyint((double)t[i] / (double)scale) + zero_point;
            q = q < lo ? lo : q > hi ? hi : q;
            if (u8)
                ((unsigned char *)dst->data)[off + i] = (unsigned char)q;
            else
                ((signed char *)dst->data)[off + i] = (signed char)q;
        }
    }
    dlb_cpu_written(dst);
    return DLB_OK;
}

dlb_status dlb_cpu_dequantize(struct dlb_backend *be, size_t count,
                              const struct dlb_buffer *src,
                              struct dlb_buffer *dst, float scale,
                              int32_t zero_point)
{
    dlb_status s;
    size_t nc = n_chunks(count);
    if ((s = check_int8(be, "dequantize", src, count)) ||
        (s = check(be, "dequantize", "dst", dst, count)) ||
        (s = DLB_CPU_PLAIN(be, src, dst)))
        return s;
    DLB_OMP("omp parallel for schedule(static) if(count > DLB_CPU_PAR_MIN)")
    for (size_t c = 0; c < nc; c++) {
        float t[CHUNK];
        size_t off = c * CHUNK, n = chunk_len(count, c);
        for (size_t i = 0; i < n; i++) {
            double q = src->dtype == DLB_U8
                           ? ((const unsigned char *)src->data)[off + i]
                           : ((const signed char *)src->data)[off + i];
            t[i] = (float)((q - zero_point) * (double)scale);
        }
        dlb_cpu_store_f32(dst, off, n, t);
    }
    dlb_cpu_written(dst);
    return DLB_OK;
}

/* Whether a and b lay their elements out alike (both the host view, or
 * the same blocked layout): an element-wise pass then runs over the
 * physical storage as it is, padding included (zeros add to zeros). */
static int same_layout(const struct dlb_buffer *a, const struct dlb_buffer *b)
{
    const dlb_dnnl_md *la = dlb_cpu_layout(a), *lb = dlb_cpu_layout(b);
    return la == lb || (la && lb && dlb_dnnl_md_equal(la, lb));
}

/* ADD (and ADD_RELU, the ReLU on the sum before it is stored): in
 * float, which rounds once as ref's sum does (backend.h). Two
 * addends in one blocked layout (a residual's two convolution outputs)
 * are added where they lie and y takes that layout; otherwise all three
 * become the host view first. */
/* F32 x and g, one of them in a blocked layout covering the whole tensor
 * and the other the host view (a residual block's last convolution and
 * its identity shortcut): the plain one read in the other's layout, and y
 * written in it, so that the layers after it read it as it is instead of
 * every residual add turning the network's activations plain. Returns 0
 * when that does not apply. */
static int add_mixed(struct dlb_backend *be, const struct dlb_op *op,
                     float hi, dlb_status *st)
{
    const struct dlb_buffer *x = op->x, *g = op->g;
    struct dlb_buffer *y = op->y;
    if (x->dtype != DLB_F32 || g->dtype != DLB_F32 || y->dtype != DLB_F32 ||
        !dlb_cpu_layout(x) == !dlb_cpu_layout(g))
        return 0;
    const struct dlb_buffer *blk = dlb_cpu_layout(x) ? x : g;
    const struct dlb_buffer *pl = blk == x ? g : x;
    dlb_dnnl_md md = *dlb_cpu_layout(blk);
    size_t phys = 0;
    if (dlb_cpu_physical(be, blk, op->count, &phys) != DLB_OK ||
        !dlb_cpu_layout(blk))
        return 0; /* part of a tensor (made plain): the plain way */
    void *view = NULL;
    if ((*st = dlb_cpu_view(be, pl, &md, DLB_CPU_SLOT_VIEW_A, &view)))
        return 1;
    if (y != blk && (*st = dlb_cpu_set_layout(be, y, &md)))
        return 1;
    const float *a = blk->data, *b = view;
    float *p = y->data;
    int relu = op->kind == DLB_OP_ADD_RELU;
    DLB_OMP("omp parallel for simd schedule(static) if(phys > DLB_CPU_PAR_MIN)")
    for (size_t i = 0; i < phys; i++) {
        float v = a[i] + b[i];
        if (relu) { /* comparisons, not fminf/fmaxf: those are calls */
            v = v > 0.0f ? v : 0.0f;
            v = v < hi ? v : hi;
        }
        p[i] = v;
    }
    dlb_cpu_written(y);
    *st = DLB_OK;
    return 1;
}

dlb_status dlb_cpu_add(struct dlb_backend *be, const struct dlb_op *op)
{
    const struct dlb_buffer *x = op->x, *g = op->g;
    struct dlb_buffer *y = op->y;
    size_t count = op->count, nc;
    dlb_status s;
    int relu = op->kind == DLB_OP_ADD_RELU;
    float hi = relu && op->relu_max > 0.0f ? op->relu_max : INFINITY;
    if (add_mixed(be, op, hi, &s))
        return s;
    int blocked = same_layout(x, g) && dlb_cpu_layout(x) != NULL;
    /* Part of a blocked tensor has no physical run: physical() then makes
     * x the host view, and the pass below does too for the others. */
    if (blocked && (s = dlb_cpu_physical(be, x, count, &count)))
        return s;
    if (blocked && dlb_cpu_layout(x)) {
        dlb_dnnl_md md = *dlb_cpu_layout(x);
        if (y != x && y != g && (s = dlb_cpu_set_layout(be, y, &md)))
            return s;
    } else if ((s = DLB_CPU_PLAIN(be, x, g, y))) {
        return s;
    }
    /* ADD_RELU: max(0, .) then the clip, on the sum in float (y's
     * rounding of it is monotone: the same as rounding first) */
    if (y->dtype == DLB_F64) {
        const double *a = x->data, *b = g->data;
        double *p = y->data;
        for (size_t i = 0; i < count; i++)
            p[i] = relu ? fmin(fmax(a[i] + b[i], 0.0), hi) : a[i] + b[i];
    } else {
        nc = n_chunks(count);
        DLB_OMP("omp parallel for schedule(static) if(count > DLB_CPU_PAR_MIN)")
        for (size_t c = 0; c < nc; c++) {
            float ta[CHUNK], tb[CHUNK];
            size_t off = c * CHUNK, n = chunk_len(count, c);
            dlb_cpu_load_f32(x, off, n, ta);
            dlb_cpu_load_f32(g, off, n, tb);
            /* vectorised whatever the cost model: -O2's would leave the
             * ReLU's selects scalar (ADD_RELU took 2.8x ADD's time) */
            DLB_OMP("omp simd")
            for (size_t i = 0; i < n; i++)
                ta[i] += tb[i];
            if (relu) /* comparisons: fminf and fmaxf are calls */
                DLB_OMP("omp simd")
                for (size_t i = 0; i < n; i++) {
                    float v = ta[i] > 0.0f ? ta[i] : 0.0f;
                    ta[i] = v < hi ? v : hi;
                }
            dlb_cpu_store_f32(y, off, n, ta);
        }
    }
    dlb_cpu_written(y);
    return DLB_OK;
}

/* CONCAT: each image's channels copied byte for byte (input and output
 * are of one type, so any float type is exact) on the host view: a
 * blocked input is made plain first, and so is y in the forward pass,
 * keeping the channels other inputs wrote; backward writes all of dx. A
 * block-aware copy would need the offset on y's channel blocks; a
 * concatenation's output mostly feeds a convolution, which reorders what
 * it reads anyway. */
dlb_status dlb_cpu_concat(struct dlb_backend *be, const struct dlb_op *op)
{
    const struct dlb_concat_desc *d = &op->concat;
    int bwd = op->prop == DLB_PROP_BWD;
    const struct dlb_buffer *src = bwd ? op->dy : op->x;
    struct dlb_buffer *dst = bwd ? op->dx : op->y;
    size_t esz = dlb_dtype_size(src->dtype), part = (size_t)d->c * d->hw;
    size_t all = (size_t)d->c_total * d->hw, at = (size_t)d->offset * d->hw;
    dlb_status s;
    if ((s = DLB_CPU_PLAIN(be, src)) ||
        (s = bwd ? dlb_cpu_set_layout(be, dst, NULL)
                 : dlb_cpu_make_plain(be, dst)))
        return s;
    const char *from = src->data;
    char *to = dst->data;
    DLB_OMP("omp parallel for schedule(static) if((size_t)d->n * part > DLB_CPU_PAR_MIN)")
    for (uint32_t n = 0; n < d->n; n++) {
        size_t s_off = bwd ? n * all + at : n * part;
        size_t d_off = bwd ? n * part : n * all + at;
        memcpy(to + d_off * esz, from + s_off * esz, part * esz);
    }
    dlb_cpu_written(dst);
    return DLB_OK;
}
