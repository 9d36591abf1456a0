/* Max pooling of int8 data (backend.h, API 1.1), in the layout the data
 * arrives in, so that conv -> pool -> conv stays int8 and never leaves
 * the kernels' layout. nhwc (what the int8 convolutions write) runs as an
 * own loop over each pixel's run of channels: oneDNN 2.6's int8 pooling
 * (jit_int) took 1.3 ms for LeNet's pool1 at batch 256 on one core, four
 * times its fp32 pooling; other layouts go to oneDNN. */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

/* Max pooling on nhwc, separably: for each output row, the element-wise
 * maximum of the window's input rows into v (one contiguous run of
 * w * c bytes per row), then, without horizontal padding, of each
 * window's pixels as whole shifted runs into h, from which every output
 * pixel is one copy. The loops are simple element-wise ones marked simd:
 * byte loops of unknown length stay scalar under -O2's cost model, and a
 * per-pixel loop over LeNet's 10 channels ran at a third of oneDNN's fp32
 * pooling. v and h hold w * c + 16 elements. */
#define NHWC_MAX_ROW(T)                                                     \
    static void nhwc_max_row_##T(const struct dlb_pool_desc *d, const T *x, \
                                 T *y, size_t row, T *v, T *h)              \
    {                                                                       \
        size_t c = d->c, wc = (size_t)d->in_w * c;                          \
        size_t n = row / d->out_h, i = row % d->out_h;                      \
        long ih0 = (long)(i * d->stride_h) - (long)d->pad_h;                \
        long r0 = ih0 < 0 ? 0 : ih0;                                        \
        long r1 = ih0 + (long)d->kh > (long)d->in_h ? (long)d->in_h         \
                                                    : ih0 + (long)d->kh;    \
        const T *first = x + (n * d->in_h + (size_t)r0) * wc;               \
        T *out = y + row * d->out_w * c;                                    \
        DLB_OMP("omp simd")                                                 \
        for (size_t k = 0; k < wc; k++)                                     \
            v[k] = first[k];                                                \
        for (long r = r0 + 1; r < r1; r++) {                                \
            const T *in = x + (n * d->in_h + (size_t)r) * wc;               \
            DLB_OMP("omp simd")                                             \
            for (size_t k = 0; k < wc; k++)                                 \
                v[k] = in[k] > v[k] ? in[k] : v[k];                         \
        }                                                                   \
        if (d->pad_w == 0) {                                                \
            size_t span = ((size_t)d->in_w - d->kw + 1) * c;                \
            DLB_OMP("omp simd")                                             \
            for (size_t k = 0; k < span; k++)                               \
                h[k] = v[k];                                                \
            for (size_t q = 1; q < d->kw; q++) {                            \
                const T *in = v + q * c;                                    \
                DLB_OMP("omp simd")                                         \
                for (size_t k = 0; k < span; k++)                           \
                    h[k] = in[k] > h[k] ? in[k] : h[k];                     \
            }                                                               \
            for (uint32_t j = 0; j < d->out_w; j++) {                       \
                const T *src = h + (size_t)j * d->stride_w * c;             \
                T *dst = out + (size_t)j * c;                               \
                /* 16 bytes spill into the next pixel, written after; */   \
                /* the row's last pixel copies exactly */                  \
                if (c * sizeof(T) <= 16 && j + 1 < d->out_w)                \
                    memcpy(dst, src, 16);                                   \
                else                                                        \
                    for (size_t k = 0; k < c; k++)                          \
                        dst[k] = src[k];                                    \
            }                                                               \
            return;                                                         \
        }                                                                   \
        for (uint32_t j = 0; j < d->out_w; j++) {                           \
            long iw0 = (long)(j * d->stride_w) - (long)d->pad_w;            \
            long c0 = iw0 < 0 ? 0 : iw0;                                    \
            long c1 = iw0 + (long)d->kw > (long)d->in_w ? (long)d->in_w     \
                                                        : iw0 + (long)d->kw; \
            T *dst = out + (size_t)j * c;                                   \
            for (size_t k = 0; k < c; k++)                                  \
                dst[k] = v[(size_t)c0 * c + k];                             \
            for (long q = c0 + 1; q < c1; q++) {                            \
                const T *in = v + (size_t)q * c;                            \
                DLB_OMP("omp simd")                                         \
                for (size_t k = 0; k < c; k++)                              \
                    dst[k] = in[k] > dst[k] ? in[k] : dst[k];               \
            }                                                               \
        }                                                                   \
    }
NHWC_MAX_ROW(uint8_t)
NHWC_MAX_ROW(int8_t)

/* Padding never wins a maximum: windows are cut to the input (pad is
 * below the window, so none is empty). */
static dlb_status nhwc_max(struct dlb_backend *be,
                           const struct dlb_pool_desc *d,
                           const struct dlb_buffer *x, struct dlb_buffer *y)
{
    size_t rows = (size_t)d->n * d->out_h, wc = (size_t)d->in_w * d->c;
    size_t work = (size_t)d->n * d->in_h * wc;
    int u8 = x->dtype == DLB_U8, nomem = 0;
    DLB_OMP("omp parallel if(work > DLB_CPU_PAR_MIN)")
    {
        unsigned char *v = malloc(2 * (wc + 16));
        if (!v) {
            DLB_OMP("omp atomic write")
            nomem = 1;
        }
        DLB_OMP("omp for schedule(static)")
        for (size_t row = 0; row < rows; row++) {
            if (!v)
                continue;
            if (u8)
                nhwc_max_row_uint8_t(d, x->data, y->data, row, v,
                                     v + wc + 16);
            else
                nhwc_max_row_int8_t(d, x->data, y->data, row,
                                    (int8_t *)v, (int8_t *)(v + wc + 16));
        }
        free(v);
    }
    (void)work;
    return nomem ? dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu pool_int8_fwd: "
                                    "out of memory") : DLB_OK;
}

/* x's layout as a format tag for dims of the output: oneDNN's activation
 * layouts keep theirs, anything else is read as the host view. */
static dnnl_format_tag_t tag_of(struct dlb_backend *be,
                                const struct dlb_buffer *x, dlb_status *s)
{
    static const dnnl_format_tag_t tags[] = { dnnl_abcd, dnnl_aBcd16b,
                                              dnnl_aBcd8b, dnnl_acdb };
    const dlb_dnnl_md *lay = dlb_cpu_layout(x);
    int code = lay ? dlb_cpu_layout_code(lay) : 0;
    *s = DLB_OK;
    if (lay && !code)
        *s = dlb_cpu_make_plain(be, x);
    return tags[code];
}

dlb_status dlb_cpu_pool_int8_fwd(struct dlb_backend *be,
                                 const struct dlb_pool_desc *d,
                                 const struct dlb_buffer *x,
                                 struct dlb_buffer *y)
{
    const char *op = "pool_int8_fwd";
    size_t xn = (size_t)d->n * d->c * d->in_h * d->in_w;
    size_t yn = (size_t)d->n * d->c * d->out_h * d->out_w;
    dlb_dnnl_md xmd, ymd;
    struct dlb_cpu_pool_arg a = { op, d, &xmd, &ymd };
    struct dlb_cpu_prim *p;
    struct dlb_cpu_key k;
    dlb_status s;
    if ((s = dlb_pool_desc_check(be, op, d)))
        return s;
    if (d->kind != DLB_POOL_MAX)
        return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED, "cpu %s: only max "
                                "pooling keeps int8 data exact", op);
    if (!x || !y || (x->dtype != DLB_S8 && x->dtype != DLB_U8) ||
        y->dtype != x->dtype || x->count < xn || y->count < yn)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: x and y must "
                                "be s8 or u8 of one type with %zu and %zu "
                                "elements", op, xn, yn);
    dnnl_format_tag_t tag = tag_of(be, x, &s);
    if (s)
        return s;
    dnnl_dims_t xd = { d->n, d->c, d->in_h, d->in_w };
    dnnl_dims_t yd = { d->n, d->c, d->out_h, d->out_w };
    dnnl_data_type_t t = dlb_cpu_dnnl_type(x->dtype);
    DLB_DNNL(be, op, dlb_dnnl_md_tag(&xmd, 4, xd, t, tag));
    DLB_DNNL(be, op, dlb_dnnl_md_tag(&ymd, 4, yd, t, tag));
    if (tag == dnnl_acdb) {
        if ((s = dlb_cpu_set_layout(be, y, &ymd)))
            return s;
        s = nhwc_max(be, d, x, y);
        dlb_cpu_written(y);
        return s;
    }
    uint32_t v[] = { d->n, d->c, d->in_h, d->in_w, d->kh, d->kw, d->stride_h,
                     d->stride_w, d->pad_h, d->pad_w, (uint32_t)tag,
                     (uint32_t)x->dtype };
    memset(&k, 0, sizeof k);
    k.op = DLB_CPU_POOL_INT8;
    memcpy(k.w, v, sizeof v);
    if ((s = dlb_cpu_cache_get(be, &k, dlb_cpu_pool_build, &a, &p)) ||
        (s = dlb_cpu_set_layout(be, y, &ymd)))
        return s;
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[0], x->data));
    DLB_DNNL(be, op, dlb_cpu_bind(p->mem[1], y->data));
    dnnl_exec_arg_t args[2] = { { DNNL_ARG_SRC, p->mem[0] },
                                { DNNL_ARG_DST, p->mem[1] } };
    DLB_DNNL(be, op, dlb_cpu_exec(dlb_backend_ctx(be), p->prim[0], 2, args));
    dlb_cpu_written(y);
out:
    return s;
}
