/* The first convolution layer fused with the 2x2 stride-2 max pooling
 * after it, and in inference the ReLU after that (backend.h's
 * dlb_backend_conv_pool): LeNet's conv1, pool1 and relu1. The
 * convolution's output is never written, only its pooled maxima: at
 * batch 1024 that saves a write and a read of 24 MB a pass.
 *
 * Training writes nhwc and the pooling's workspace, as the unfused
 * passes leave them for the backward passes (the channels of a pixel in
 * the lanes of a vector, cpu_conv1.c's forward kernel). Inference writes
 * the host view, which the next layer's kernel takes (cpu_conv_quads.c),
 * with the pixels of a row in the lanes. Each output is summed as the
 * unfused forward kernel sums it, so the maxima are of the same values;
 * training scans the window as cpu_pool_loops.c does, so the workspace
 * is the same too. */
#include "cpu.h"

#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include "cpu_kernels.h"

/* ---- training: nhwc, with the workspace ----------------------------- */

/* P pooled pixels of one pooled
 * row from the 2 x 2P convolution outputs under them, all in registers
 * (P = 6: 24 accumulators). x is the window's top-left input of the
 * first convolution output; base is the index of that output in its
 * plane (the workspace's unit). Each output is summed as fwd_pixels sums
 * it and the window is scanned as cpu_pool_loops.c scans it (first
 * maximum in row-major order; a comparison with NaN keeps the earlier
 * value), so maxima and workspace are those of the unfused passes. */
static AVX512_INLINE void pool_pixels(const struct dlb_conv2d_desc *d,
                                      const float *x, const float (*wt)[16],
                                      __m512 bias, __m512 lo, __mmask16 m,
                                      float *y, int32_t *ws, int32_t base,
                                      const int P)
{
    size_t sw = d->stride_w, in_w = d->in_w, c = d->out_c;
    size_t down = d->stride_h * in_w; /* the second output row's input */
    int32_t W = (int32_t)d->out_w;
    __m512 a0[2 * 6], a1[2 * 6];
    UNROLL
    for (int j = 0; j < 2 * P; j++)
        a0[j] = a1[j] = bias;
    for (uint32_t r = 0; r < d->kh; r++)
        for (uint32_t s = 0; s < d->kw; s++) {
            __m512 wv = _mm512_load_ps(wt[r * d->kw + s]);
            const float *xr = x + r * in_w + s;
            UNROLL
            for (int j = 0; j < 2 * P; j++) {
                a0[j] = _mm512_fmadd_ps(_mm512_set1_ps(xr[(size_t)j * sw]),
                                        wv, a0[j]);
                a1[j] = _mm512_fmadd_ps(
                    _mm512_set1_ps(xr[down + (size_t)j * sw]), wv, a1[j]);
            }
        }
    UNROLL
    for (int k = 0; k < P; k++) {
        __m512 best = a0[2 * k];
        __mmask16 gt = _mm512_cmp_ps_mask(a0[2 * k + 1], best, _CMP_GT_OQ);
        __m512i at = _mm512_maskz_mov_epi32(gt, _mm512_set1_epi32(1));
        best = _mm512_mask_blend_ps(gt, best, a0[2 * k + 1]);
        gt = _mm512_cmp_ps_mask(a1[2 * k], best, _CMP_GT_OQ);
        at = _mm512_mask_blend_epi32(gt, at, _mm512_set1_epi32(W));
        best = _mm512_mask_blend_ps(gt, best, a1[2 * k]);
        gt = _mm512_cmp_ps_mask(a1[2 * k + 1], best, _CMP_GT_OQ);
        at = _mm512_mask_blend_epi32(gt, at, _mm512_set1_epi32(W + 1));
        best = _mm512_mask_blend_ps(gt, best, a1[2 * k + 1]);
        _mm512_mask_storeu_ps(y + (size_t)k * c, m, _mm512_max_ps(best, lo));
        if (ws)
            _mm512_mask_storeu_epi32(
                ws + (size_t)k * c, m,
                _mm512_add_epi32(at, _mm512_set1_epi32(base + 2 * k)));
    }
}

AVX512 static void pool_row(const struct dlb_conv2d_desc *d, size_t pw,
                            const float *x, const float (*wt)[16],
                            __m512 bias, __m512 lo, __mmask16 m, float *y,
                            int32_t *ws, int32_t base)
{
    size_t step = 2 * d->stride_w, k = 0, c = d->out_c;
#define POOL_AT(P)                                                          \
    pool_pixels(d, x + k * step, wt, bias, lo, m, y + k * c,                \
                ws ? ws + k * c : NULL, base + 2 * (int32_t)k, (P))
    for (; k + 6 <= pw; k += 6)
        POOL_AT(6);
    for (; k + 2 <= pw; k += 2)
        POOL_AT(2);
    for (; k < pw; k++)
        POOL_AT(1);
#undef POOL_AT
}

AVX512 static void nhwc_fwd(const struct dlb_conv2d_desc *d,
                            const struct dlb_pool_desc *p, int relu,
                            const float *x, const float *w, const float *b,
                            float *y, int32_t *ws)
{
    size_t taps = (size_t)d->kh * d->kw, c = d->out_c;
    size_t rows = (size_t)d->n * p->out_h;
    size_t macs = rows * 4 * p->out_w * taps * c;
    __attribute__((aligned(64))) float wt[CONV1_MAX_TAPS][16];
    __mmask16 m = (__mmask16)((1u << c) - 1);
    dlb_cpu_conv1_taps(d, w, wt);
    __m512 bias = b ? _mm512_maskz_loadu_ps(m, b) : _mm512_setzero_ps();
    /* without the ReLU, max(v, -inf) = v */
    __m512 lo = relu ? _mm512_setzero_ps() : _mm512_set1_ps(-__builtin_inff());
    DLB_OMP("omp parallel for schedule(static) if(macs >= CONV1_PAR_MACS)")
    for (size_t i = 0; i < rows; i++) {
        size_t n = i / p->out_h, ph = i % p->out_h;
        const float *xr =
            x + (n * d->in_h + 2 * ph * d->stride_h) * d->in_w;
        size_t off = i * p->out_w * c;
        pool_row(d, p->out_w, xr, (const float (*)[16])wt, bias, lo, m,
                 y + off, ws ? ws + off : NULL,
                 (int32_t)(2 * ph * d->out_w));
    }
    (void)macs;
}

/* ---- inference: the host view --------------------------------------- */

/* Output pixels of a row in the lanes of two vectors (32 columns of the
 * convolution, 16 pooled), CH channels at a time: the two convolution
 * rows under a pooled row times CH channels times the two vectors are 20
 * accumulators; a tap costs 4 input loads and CH weight broadcasts for
 * 20 multiply-adds. LeNet's 24 columns fill 75% of the lanes, against
 * 62% for its 10 channels in nhwc. */
#define CH 5

/* Even and odd lanes of the pair (lo, hi) as one vector each. */
static AVX512_INLINE __m512 pair_max(__m512 lo, __m512 hi)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14,
                                          12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15,
                                         13, 11, 9, 7, 5, 3, 1);
    return _mm512_max_ps(_mm512_permutex2var_ps(lo, even, hi),
                         _mm512_permutex2var_ps(lo, odd, hi));
}

/* Pooled row ph of image n, channels c0 .. c0 + CH - 1 (those below
 * out_c stored), convolution columns [col, col + 2 * width), width <= 16
 * pooled pixels. wl: the weights [channel][tap], zero past out_c. */
static AVX512_INLINE void planar_block(const struct dlb_conv2d_desc *d,
                                       const struct dlb_pool_desc *p,
                                       const float *x, const float *wl,
                                       const float *bl, __m512 lo, size_t n,
                                       size_t ph, size_t c0, size_t col,
                                       size_t width, float *y)
{
    size_t taps = (size_t)d->kh * d->kw, in_w = d->in_w;
    size_t cols = 2 * width;
    __mmask16 m0 = (__mmask16)(cols >= 16 ? 0xFFFFu : (1u << cols) - 1);
    __mmask16 m1 = (__mmask16)(cols <= 16 ? 0u : (1u << (cols - 16)) - 1);
    __mmask16 mo = (__mmask16)((1u << width) - 1);
    const float *x0 = x + (n * d->in_h + 2 * ph * d->stride_h) * in_w + col;
    const float *x1 = x0 + d->stride_h * in_w;
    __m512 acc[2][CH][2];
    UNROLL
    for (int c = 0; c < CH; c++) {
        __m512 bv = _mm512_set1_ps(bl[c0 + (size_t)c]);
        acc[0][c][0] = acc[0][c][1] = acc[1][c][0] = acc[1][c][1] = bv;
    }
    for (uint32_t r = 0; r < d->kh; r++)
        for (uint32_t s = 0; s < d->kw; s++) {
            size_t off = (size_t)r * in_w + s, t = (size_t)r * d->kw + s;
            __m512 a0 = _mm512_maskz_loadu_ps(m0, x0 + off);
            __m512 a1 = _mm512_maskz_loadu_ps(m1, x0 + off + 16);
            __m512 b0 = _mm512_maskz_loadu_ps(m0, x1 + off);
            __m512 b1 = _mm512_maskz_loadu_ps(m1, x1 + off + 16);
            UNROLL
            for (int c = 0; c < CH; c++) {
                __m512 wv = _mm512_set1_ps(wl[(c0 + (size_t)c) * taps + t]);
                acc[0][c][0] = _mm512_fmadd_ps(a0, wv, acc[0][c][0]);
                acc[0][c][1] = _mm512_fmadd_ps(a1, wv, acc[0][c][1]);
                acc[1][c][0] = _mm512_fmadd_ps(b0, wv, acc[1][c][0]);
                acc[1][c][1] = _mm512_fmadd_ps(b1, wv, acc[1][c][1]);
            }
        }
    size_t plane = (size_t)p->out_h * p->out_w;
    UNROLL
    for (int c = 0; c < CH; c++) {
        if (c0 + (size_t)c >= d->out_c)
            break;
        __m512 v = pair_max(_mm512_max_ps(acc[0][c][0], acc[1][c][0]),
                            _mm512_max_ps(acc[0][c][1], acc[1][c][1]));
        float *yo = y + (n * d->out_c + c0 + (size_t)c) * plane +
                    ph * p->out_w + col / 2;
        _mm512_mask_storeu_ps(yo, mo, _mm512_max_ps(v, lo));
    }
}

AVX512 static void planar_fwd(const struct dlb_conv2d_desc *d,
                              const struct dlb_pool_desc *p, int relu,
                              const float *x, const float *w, const float *b,
                              float *y)
{
    size_t taps = (size_t)d->kh * d->kw, c = d->out_c;
    size_t chunks = (c + CH - 1) / CH, rows = (size_t)d->n * p->out_h;
    size_t macs = rows * 4 * p->out_w * taps * c;
    /* weights and bias padded with zero channels to whole chunks */
    float wl[3 * CH * CONV1_MAX_TAPS], bl[3 * CH];
    memset(wl, 0, sizeof wl);
    memset(bl, 0, sizeof bl);
    memcpy(wl, w, c * taps * sizeof *w);
    if (b)
        memcpy(bl, b, c * sizeof *b);
    /* without the ReLU, max(v, -inf) = v */
    __m512 lo = relu ? _mm512_setzero_ps() : _mm512_set1_ps(-__builtin_inff());
    DLB_OMP("omp parallel for schedule(static) if(macs >= CONV1_PAR_MACS)")
    for (size_t i = 0; i < rows; i++) {
        size_t n = i / p->out_h, ph = i % p->out_h;
        for (size_t k = 0; k < chunks; k++)
            for (size_t pw = 0; pw < p->out_w; pw += 16) {
                size_t width = p->out_w - pw < 16 ? p->out_w - pw : 16;
                planar_block(d, p, x, wl, bl, lo, n, ph, k * CH, 2 * pw,
                             width, y);
            }
    }
    (void)macs;
}

static int conv1_pool(const struct dlb_conv2d_desc *c,
                      const struct dlb_pool_desc *p)
{
    return dlb_cpu_conv1_shape(c) && p->kind == DLB_POOL_MAX &&
           p->kh == 2 && p->kw == 2 && p->stride_h == 2 &&
           p->stride_w == 2 && p->pad_h == 0 && p->pad_w == 0 &&
           p->n == c->n && p->c == c->out_c && p->in_h == c->out_h &&
           p->in_w == c->out_w && p->out_h == c->out_h / 2 &&
           p->out_w == c->out_w / 2 && p->out_h >= 1 && p->out_w >= 1;
}

int dlb_cpu_conv_pool_applies(const struct dlb_conv2d_desc *c,
                              const struct dlb_pool_desc *p, enum dlb_dtype t)
{
    return t == DLB_F32 && conv1_pool(c, p);
}

dlb_status dlb_cpu_conv_pool_fwd(struct dlb_backend *be,
                                 const struct dlb_conv2d_desc *c,
                                 const struct dlb_pool_desc *p, int relu,
                                 const struct dlb_buffer *x,
                                 const struct dlb_buffer *w,
                                 const struct dlb_buffer *b,
                                 struct dlb_buffer *y, struct dlb_buffer *ws)
{
    const char *op = "conv2d_pool_fwd";
    dnnl_dims_t yd = { p->n, p->c, p->out_h, p->out_w };
    size_t yn = (size_t)p->n * p->c * p->out_h * p->out_w;
    const struct dlb_buffer *t[4] = { x, w, b, y };
    dlb_dnnl_md nhwc, wsmd;
    dnnl_status_t st;
    dlb_status s;
    if (!dlb_cpu_conv_pool_applies(c, p, DLB_F32) ||
        !dlb_cpu_all_f32(t, 4) || (ws && (relu || ws->dtype != DLB_S32)))
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: these shapes "
                                "or types are not the kernel's (ask applies "
                                "first; a workspace is S32 and has no ReLU "
                                "after it)", op);
    if ((s = dlb_conv2d_desc_check(be, op, c)) ||
        (s = dlb_cpu_check_float(be, op, "x", x, dlb_conv2d_x_count(c))) ||
        (s = dlb_cpu_check_float(be, op, "w", w, dlb_conv2d_w_count(c))) ||
        (b && (s = dlb_cpu_check_float(be, op, "b", b, c->out_c))) ||
        (s = dlb_cpu_check_float(be, op, "y", y, yn)) ||
        (ws && (s = dlb_cpu_check_s32(be, op, "ws", ws, yn))))
        return s;
    /* Training: y and the workspace in nhwc, as pool_fwd leaves them
     * after the convolution's nhwc output (cpu_pool_blocked.c), for the
     * backward passes. Inference: y in the host view (planar_fwd). */
    if ((st = dlb_dnnl_md_tag(&nhwc, 4, yd, dnnl_f32, dnnl_acdb)) ||
        (st = dlb_dnnl_md_tag(&wsmd, 4, yd, dnnl_s32, dnnl_acdb)))
        return dlb_cpu_dnnl_fail(be, st, op, "md(nhwc)");
    int planar = !ws && c->stride_w == 1;
    if ((s = DLB_CPU_PLAIN(be, x, w, b)) ||
        (s = dlb_cpu_set_layout(be, y, planar || c->out_c == 1 ? NULL
                                                               : &nhwc)) ||
        (ws && (s = dlb_cpu_set_layout(be, ws,
                                       c->out_c == 1 ? NULL : &wsmd))))
        return s;
    if (planar)
        planar_fwd(c, p, relu, x->data, w->data, b ? b->data : NULL,
                   y->data);
    else
        nhwc_fwd(c, p, relu, x->data, w->data, b ? b->data : NULL, y->data,
                 ws ? ws->data : NULL);
    dlb_cpu_written(y);
    if (ws)
        dlb_cpu_written(ws);
    return DLB_OK;
}

dlb_status dlb_cpu_conv_pool_bwd_weights(struct dlb_backend *be,
                                         const struct dlb_conv2d_desc *c,
                                         const struct dlb_pool_desc *p,
                                         const struct dlb_buffer *x,
                                         const struct dlb_buffer *dy,
                                         const struct dlb_buffer *ws,
                                         struct dlb_buffer *dw,
                                         struct dlb_buffer *db)
{
    const char *op = "conv2d_pool_bwd_weights";
    size_t yn = (size_t)p->n * p->c * p->out_h * p->out_w;
    const struct dlb_buffer *t[4] = { x, dy, dw, db };
    dlb_status s;
    if (!dlb_cpu_conv_pool_applies(c, p, DLB_F32) ||
        !dlb_cpu_all_f32(t, 4) || ws->dtype != DLB_S32)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: these shapes "
                                "or types are not the kernel's (ask applies "
                                "first)", op);
    if ((s = dlb_conv2d_desc_check(be, op, c)) ||
        (s = dlb_cpu_check_float(be, op, "x", x, dlb_conv2d_x_count(c))) ||
        (s = dlb_cpu_check_float(be, op, "dy", dy, yn)) ||
        (s = dlb_cpu_check_s32(be, op, "ws", ws, yn)) ||
        (s = dlb_cpu_check_float(be, op, "dw", dw, dlb_conv2d_w_count(c))) ||
        (db && (s = dlb_cpu_check_float(be, op, "db", db, c->out_c))))
        return s;
    /* in place where dy and ws are in nhwc (one channel: the host view),
     * as the training pass and the ReLU's backward after it leave them */
    const dlb_dnnl_md *dl = dlb_cpu_layout(dy), *wl = dlb_cpu_layout(ws);
    int nhwc = c->out_c == 1 ? !dl && !wl
                             : dl && wl && dlb_cpu_layout_code(dl) == 3 &&
                                   dlb_cpu_layout_code(wl) == 3;
    if (nhwc && ((c->kh == 5 && c->kw == 5) || (c->kh == 3 && c->kw == 3)))
        return dlb_cpu_conv1_bwd_weights_pooled(be, c, p, x, dy, ws, dw, db);
    struct dlb_buffer *g = NULL;
    if ((s = dlb_cpu_buffer_alloc(be, DLB_F32, dlb_conv2d_y_count(c), &g)))
        return s;
    /* the two passes, on the kernels the model's own would run */
    s = dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_POOL,
            .prop = DLB_PROP_BWD, .pool = *p, .dy = dy,
            .ws = (struct dlb_buffer *)ws, .dx = g});
    if (s == DLB_OK)
        s = dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_CONV2D,
                .prop = DLB_PROP_BWD_WEIGHTS, .conv = *c, .x = x, .dy = g,
                .dw = dw, .db = db});
    dlb_cpu_buffer_free(be, g);
    return s;
}

#else /* not x86-64 with GCC or clang */

int dlb_cpu_conv_pool_applies(const struct dlb_conv2d_desc *c,
                              const struct dlb_pool_desc *p, enum dlb_dtype t)
{
    (void)c, (void)p, (void)t;
    return 0;
}

dlb_status dlb_cpu_conv_pool_fwd(struct dlb_backend *be,
                                 const struct dlb_conv2d_desc *c,
                                 const struct dlb_pool_desc *p, int relu,
                                 const struct dlb_buffer *x,
                                 const struct dlb_buffer *w,
                                 const struct dlb_buffer *b,
                                 struct dlb_buffer *y, struct dlb_buffer *ws)
{
    (void)c, (void)p, (void)relu, (void)x, (void)w, (void)b, (void)y;
    (void)ws;
    return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu conv2d_pool_fwd: the "
                            "one-channel kernel needs x86-64");
}
dlb_status dlb_cpu_conv_pool_bwd_weights(struct dlb_backend *be,
                                         const struct dlb_conv2d_desc *c,
                                         const struct dlb_pool_desc *p,
                                         const struct dlb_buffer *x,
                                         const struct dlb_buffer *dy,
                                         const struct dlb_buffer *ws,
                                         struct dlb_buffer *dw,
                                         struct dlb_buffer *db)
{
    (void)c, (void)p, (void)x, (void)dy, (void)ws, (void)dw, (void)db;
    return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu conv2d_pool_bwd_weights: "
                            "the one-channel kernel needs x86-64");
}
#endif
