/* Max and average pooling on the layouts a convolution's output arrives
 * in (nChw16c, nChw8c, nhwc): the same loops as the host view's but over
 * vectors of channels, so one pass reads the tensor in its own order and
 * the output keeps the layout (no reorder on either side).
 * The workspace is the S32 index within the input plane, as on the host
 * view, stored in the output's layout. Padding lanes read zeros and
 * write zeros (index 0), as oneDNN expects of padding. */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BLK 16

/* The layout of x as a code of dlb_cpu_layout_code (nChw16c, nChw8c,
 * nhwc), or 0 when it is none of them. */
static int blocked_code(const struct dlb_buffer *x, uint32_t n, uint32_t c,
                        uint32_t h, uint32_t w)
{
    const dnnl_memory_desc_t *lay = dlb_cpu_layout(x);
    int code;
    /* A host view of 1x1 planes over whole 16-channel blocks is nChw16c
     * too: the global average pool's gradient from the linear layer. */
    if (!lay && h * w == 1 && c % 16 == 0)
        return 1;
    if (!lay || lay->ndims != 4 || lay->dims[0] != (dnnl_dim_t)n ||
        lay->dims[1] != (dnnl_dim_t)c || lay->dims[2] != (dnnl_dim_t)h ||
        lay->dims[3] != (dnnl_dim_t)w)
        return 0;
    code = dlb_cpu_layout_code(lay);
    return code >= 1 && code <= 3 ? code : 0;
}

static dnnl_status_t md_of(int code, uint32_t n, uint32_t c, uint32_t h,
                           uint32_t w, enum dlb_dtype t, dnnl_memory_desc_t *md)
{
    dnnl_dims_t dims = { n, c, h, w };
    return dnnl_memory_desc_init_by_tag(md, 4, dims, dlb_cpu_dnnl_type(t),
                                        code == 1 ? dnnl_aBcd16b
                                        : code == 2 ? dnnl_aBcd8b : dnnl_acdb);
}

static void window(uint32_t i, uint32_t stride, uint32_t pad, uint32_t k,
                   uint32_t in, long *start, uint32_t *r0, uint32_t *r1)
{
    long s = (long)i * stride - (long)pad;
    *start = s;
    *r0 = s < 0 ? (uint32_t)-s : 0;
    *r1 = s + (long)k > (long)in ? (uint32_t)((long)in - s) : k;
}

/* One (image, channel block): x [in_h][in_w][B], y and ws [oh][ow][B]
 * (nhwc is one block of all channels per image). The first in-window
 * element seeds the maximum and later ones replace it only when
 * greater: the first maximum wins ties, as row-major. Lanes go by 16. */
static inline void max_block(const struct dlb_pool_desc *d, const size_t B,
                             const float *restrict x, float *restrict y,
                             int32_t *restrict ws)
{
    for (uint32_t i = 0; i < d->out_h; i++) {
        long sh;
        uint32_t r0, r1;
        window(i, d->stride_h, d->pad_h, d->kh, d->in_h, &sh, &r0, &r1);
        for (uint32_t j = 0; j < d->out_w; j++) {
            long sw;
            uint32_t c0, c1;
            window(j, d->stride_w, d->pad_w, d->kw, d->in_w, &sw, &c0, &c1);
            int32_t k0 = (int32_t)((sh + r0) * (long)d->in_w + sw + c0);
            size_t o = ((size_t)i * d->out_w + j) * B;
            for (size_t l0 = 0; l0 < B; l0 += MAX_BLK) {
                const size_t L = B - l0 < MAX_BLK ? B - l0 : MAX_BLK;
                float best[MAX_BLK];
                int32_t arg[MAX_BLK];
                for (size_t l = 0; l < L; l++) {
                    best[l] = x[(size_t)k0 * B + l0 + l];
                    arg[l] = k0;
                }
                for (uint32_t r = r0; r < r1; r++) {
                    for (uint32_t c = c0; c < c1; c++) {
                        int32_t k = (int32_t)((sh + r) * (long)d->in_w + sw + c);
                        const float *xv = x + (size_t)k * B + l0;
                        for (size_t l = 0; l < L; l++) {
                            int gt = xv[l] > best[l];
                            best[l] = gt ? xv[l] : best[l];
                            arg[l] = gt ? k : arg[l];
                        }
                    }
                }
                memcpy(y + o + l0, best, L * sizeof *best);
                if (ws)
                    memcpy(ws + o + l0, arg, L * sizeof *arg);
            }
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

/* max_block with AVX-512: 16 lanes at a time with a masked tail (nhwc's
 * B is the channel count, 10 or 20 in LeNet). At -O2 for the baseline
 * ISA the compiler kept the loop above scalar with a branch per lane,
 * 4-5x slower than the host view's loop; the loop stays for CPUs
 * without AVX-512. */
/* Full-width loads and stores where they stay inside the tensor (loads)
 * or this block (stores): masked ones that cross cache lines, as nhwc's
 * 10-channel pixels do, ran at half the speed here. A store past the
 * pixel is overwritten by the next pixel's, in order, by this thread. */
__attribute__((target("avx512f")))
static void max_block_avx512(const struct dlb_pool_desc *d, size_t B,
                             const float *x, const float *x_end, float *y,
                             int32_t *ws)
{
    size_t out_blk = (size_t)d->out_h * d->out_w * B;
    for (uint32_t i = 0; i < d->out_h; i++) {
        long sh;
        uint32_t r0, r1;
        window(i, d->stride_h, d->pad_h, d->kh, d->in_h, &sh, &r0, &r1);
        for (uint32_t j = 0; j < d->out_w; j++) {
            long sw;
            uint32_t c0, c1;
            window(j, d->stride_w, d->pad_w, d->kw, d->in_w, &sw, &c0, &c1);
            int32_t k0 = (int32_t)((sh + r0) * (long)d->in_w + sw + c0);
            size_t o = ((size_t)i * d->out_w + j) * B;
            for (size_t l0 = 0; l0 < B; l0 += 16) {
                __mmask16 m = B - l0 >= 16 ? (__mmask16)0xffff
                                           : (__mmask16)((1u << (B - l0)) - 1);
                const float *p0 = x + (size_t)k0 * B + l0;
                __m512 best = p0 + 16 <= x_end ? _mm512_loadu_ps(p0)
                                               : _mm512_maskz_loadu_ps(m, p0);
                __m512i arg = _mm512_set1_epi32(k0);
                for (uint32_t r = r0; r < r1; r++)
                    for (uint32_t c = c0; c < c1; c++) {
                        int32_t k = (int32_t)((sh + r) * (long)d->in_w + sw + c);
                        const float *p = x + (size_t)k * B + l0;
                        __m512 v = p + 16 <= x_end
                                       ? _mm512_loadu_ps(p)
                                       : _mm512_maskz_loadu_ps(m, p);
                        __mmask16 gt = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ);
                        best = _mm512_mask_mov_ps(best, gt, v);
                        arg = _mm512_mask_mov_epi32(arg, gt, _mm512_set1_epi32(k));
                    }
                if (o + l0 + 16 <= out_blk) {
                    _mm512_storeu_ps(y + o + l0, best);
                    if (ws)
                        _mm512_storeu_si512(ws + o + l0, arg);
                } else {
                    _mm512_mask_storeu_ps(y + o + l0, m, best);
                    if (ws)
                        _mm512_mask_storeu_epi32(ws + o + l0, m, arg);
                }
            }
        }
    }
}
#endif

static void max_block_any(const struct dlb_pool_desc *d, size_t B,
                          const float *x, const float *x_end, float *y,
                          int32_t *ws)
{
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) {
        max_block_avx512(d, B, x, x_end, y, ws);
        return;
    }
#endif
    (void)x_end;
    max_block(d, B, x, y, ws);
}

static void avg_block(const struct dlb_pool_desc *d, size_t B,
                      const float *restrict x, float *restrict y)
{
    float inv = 1.0f / (float)(d->kh * d->kw);
    for (uint32_t i = 0; i < d->out_h; i++) {
        long sh;
        uint32_t r0, r1;
        window(i, d->stride_h, d->pad_h, d->kh, d->in_h, &sh, &r0, &r1);
        for (uint32_t j = 0; j < d->out_w; j++) {
            long sw;
            uint32_t c0, c1;
            window(j, d->stride_w, d->pad_w, d->kw, d->in_w, &sw, &c0, &c1);
            float *yv = y + ((size_t)i * d->out_w + j) * B;
            for (size_t l = 0; l < B; l++)
                yv[l] = 0.0f;
            for (uint32_t r = r0; r < r1; r++)
                for (uint32_t c = c0; c < c1; c++) {
                    const float *xv = x + ((size_t)(sh + r) * d->in_w +
                                           (size_t)(sw + c)) * B;
                    for (size_t l = 0; l < B; l++)
                        yv[l] += xv[l];
                }
            for (size_t l = 0; l < B; l++)
                yv[l] *= inv;
        }
    }
}

static void avg_block_bwd(const struct dlb_pool_desc *d, size_t B,
                          const float *restrict dy, float *restrict dx)
{
    float inv = 1.0f / (float)(d->kh * d->kw);
    for (uint32_t i = 0; i < d->out_h; i++) {
        long sh;
        uint32_t r0, r1;
        window(i, d->stride_h, d->pad_h, d->kh, d->in_h, &sh, &r0, &r1);
        for (uint32_t j = 0; j < d->out_w; j++) {
            long sw;
            uint32_t c0, c1;
            window(j, d->stride_w, d->pad_w, d->kw, d->in_w, &sw, &c0, &c1);
            const float *g = dy + ((size_t)i * d->out_w + j) * B;
            for (uint32_t r = r0; r < r1; r++)
                for (uint32_t c = c0; c < c1; c++) {
                    float *xv = dx + ((size_t)(sh + r) * d->in_w +
                                      (size_t)(sw + c)) * B;
                    for (size_t l = 0; l < B; l++)
                        xv[l] += g[l] * inv;
                }
        }
    }
}

/* Per-thread float staging of one block of a bf16 tensor; NULL for f32. */
struct stage {
    float *in, *out;
};

static int stage_alloc(struct stage *t, int conv, size_t in, size_t out)
{
    t->in = t->out = NULL;
    if (!conv)
        return 1;
    t->in = malloc(in * sizeof *t->in);
    t->out = malloc(out * sizeof *t->out);
    return t->in && t->out;
}

/* Pooling without a workspace (inference) on oneDNN's pooling primitive:
 * its nhwc kernel ran LeNet's 10-channel pool1 at batch 1024 in about a
 * quarter of the own loop's time and scales over threads; training keeps
 * the own loops, whose workspace is the interface's (oneDNN's is not). */
/* The oneDNN pooling primitive for a->d over layouts a->x and a->y, for
 * the primitive cache; inference int8 pooling builds the same one. */
dlb_status dlb_cpu_pool_build(struct dlb_backend *be, struct dlb_cpu_prim *p,
                              const void *arg)
{
    const struct dlb_cpu_pool_arg *a = arg;
    const struct dlb_pool_desc *d = a->d;
    struct dlb_cpu *cpu = dlb_backend_ctx(be);
    const char *op = a->op;
    dnnl_dims_t strides = { d->stride_h, d->stride_w };
    dnnl_dims_t kernel = { d->kh, d->kw };
    dnnl_dims_t dil = { 0, 0 };
    dnnl_dims_t pad = { d->pad_h, d->pad_w };
    dnnl_pooling_v2_desc_t pd;
    dnnl_dims_t pad_r;
    dlb_status s = DLB_OK;
    /* oneDNN's right padding makes the output size exact. */
    pad_r[0] = (dnnl_dim_t)(d->out_h - 1) * d->stride_h + d->kh - d->in_h -
               d->pad_h;
    pad_r[1] = (dnnl_dim_t)(d->out_w - 1) * d->stride_w + d->kw - d->in_w -
               d->pad_w;
    DLB_DNNL(be, op, dnnl_pooling_v2_forward_desc_init(
        &pd, dnnl_forward_inference,
        d->kind == DLB_POOL_MAX ? dnnl_pooling_max
                                : dnnl_pooling_avg_include_padding,
        a->x, a->y, strides, kernel, dil, pad, pad_r));
    DLB_DNNL(be, op, dlb_cpu_make(cpu, p, 0, &pd, NULL));
    DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[0], a->x));
    DLB_DNNL(be, op, dlb_cpu_mem(cpu, &p->mem[1], a->y));
out:
    return s;
}

static dlb_status pool_infer(struct dlb_backend *be,
                             const struct dlb_pool_desc *d, int code,
                             const struct dlb_buffer *x, struct dlb_buffer *y,
                             const dnnl_memory_desc_t *ymd)
{
    struct dlb_cpu_key k;
    struct dlb_cpu_pool_arg a = { "pool_fwd", d, dlb_cpu_layout(x), ymd };
    struct dlb_cpu_prim *p;
    dlb_status s;
    uint32_t v[] = { d->kind, d->n, d->c, d->in_h, d->in_w, d->kh, d->kw,
                     d->stride_h, d->stride_w, d->pad_h, d->pad_w,
                     (uint32_t)code, x->dtype, y->dtype };
    memset(&k, 0, sizeof k);
    k.op = DLB_CPU_POOL_FWD_INFER;
    memcpy(k.w, v, sizeof v);
    if ((s = dlb_cpu_cache_get(be, &k, dlb_cpu_pool_build, &a, &p)) ||
        (s = dlb_cpu_set_layout(be, y, ymd)))
        return s;
    DLB_DNNL(be, "pool_fwd", dlb_cpu_bind(p->mem[0], x->data));
    DLB_DNNL(be, "pool_fwd", dlb_cpu_bind(p->mem[1], y->data));
    dnnl_exec_arg_t args[2] = { { DNNL_ARG_SRC, p->mem[0] },
                                { DNNL_ARG_DST, p->mem[1] } };
    DLB_DNNL(be, "pool_fwd", dlb_cpu_exec(dlb_backend_ctx(be), p->prim[0], 2,
                                          args));
    dlb_cpu_written(y);
out:
    return s;
}

int dlb_cpu_pool_blocked_fwd(struct dlb_backend *be,
                             const struct dlb_pool_desc *d,
                             const struct dlb_buffer *x, struct dlb_buffer *y,
                             struct dlb_buffer *ws, dlb_status *st)
{
    int code = blocked_code(x, d->n, d->c, d->in_h, d->in_w);
    int max = d->kind == DLB_POOL_MAX, nomem = 0;
    dnnl_memory_desc_t ymd, wmd;
    if (!code || (x->dtype != DLB_F32 && x->dtype != DLB_BF16))
        return 0;
    if (md_of(code, d->n, d->c, d->out_h, d->out_w, y->dtype, &ymd) ||
        (max && ws &&
         md_of(code, d->n, d->c, d->out_h, d->out_w, DLB_S32, &wmd)))
        return 0;
    if ((!max || !ws) && dlb_cpu_layout(x) && x->dtype == y->dtype) {
        *st = pool_infer(be, d, code, x, y, &ymd);
        return 1;
    }
    if ((*st = dlb_cpu_set_layout(be, y, &ymd)) ||
        (max && ws && (*st = dlb_cpu_set_layout(be, ws, &wmd))))
        return 1;
    size_t B = code == 1 ? 16 : code == 2 ? 8 : d->c;
    size_t nb = (size_t)ymd.padded_dims[1] / B, blocks = (size_t)d->n * nb;
    size_t in_blk = (size_t)d->in_h * d->in_w * B;
    size_t out_blk = (size_t)d->out_h * d->out_w * B;
    int conv = x->dtype != DLB_F32 || y->dtype != DLB_F32;
    int32_t *wsp = max && ws ? ws->data : NULL;
    DLB_OMP("omp parallel if(blocks * in_blk > DLB_CPU_PAR_MIN)")
    {
        struct stage t;
        int ok = stage_alloc(&t, conv, in_blk, out_blk);
        if (!ok) {
            DLB_OMP("omp atomic write")
            nomem = 1;
        }
        DLB_OMP("omp for schedule(static)")
        for (size_t b = 0; b < blocks; b++) {
            if (!ok)
                continue;
            const float *xb = conv ? t.in : (const float *)x->data + b * in_blk;
            float *yb = conv ? t.out : (float *)y->data + b * out_blk;
            if (conv)
                dlb_cpu_load_f32(x, b * in_blk, in_blk, t.in);
            /* the end of what xb may be read up to: the staged block or
             * the whole tensor */
            const float *xe = conv ? t.in + in_blk
                                   : (const float *)x->data + blocks * in_blk;
            if (max)
                max_block_any(d, B, xb, xe, yb, wsp ? wsp + b * out_blk : NULL);
            else
                avg_block(d, B, xb, yb);
            if (conv)
                dlb_cpu_store_f32(y, b * out_blk, out_blk, t.out);
        }
        free(t.in);
        free(t.out);
    }
    *st = nomem ? dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu pool_fwd: out of "
                                   "memory") : DLB_OK;
    dlb_cpu_written(y);
    if (wsp)
        dlb_cpu_written(ws);
    return 1;
}

int dlb_cpu_pool_blocked_bwd(struct dlb_backend *be,
                             const struct dlb_pool_desc *d,
                             const struct dlb_buffer *dy,
                             const struct dlb_buffer *ws, struct dlb_buffer *dx,
                             dlb_status *st)
{
    int max = d->kind == DLB_POOL_MAX, bad = 0, nomem = 0;
    /* Max pooling follows the workspace's layout, average dy's. */
    const struct dlb_buffer *ref = max ? ws : dy;
    int code = blocked_code(ref, d->n, d->c, d->out_h, d->out_w);
    dnnl_memory_desc_t dymd, xmd;
    void *dyv = NULL;
    if (!code || (dy->dtype != DLB_F32 && dy->dtype != DLB_BF16))
        return 0;
    if (md_of(code, d->n, d->c, d->out_h, d->out_w, dy->dtype, &dymd) ||
        md_of(code, d->n, d->c, d->in_h, d->in_w, dx->dtype, &xmd))
        return 0;
    /* dy over to the layout first: dx may share nothing with it, but its
     * storage can move when set. */
    if ((*st = dlb_cpu_view(be, dy, &dymd, DLB_CPU_SLOT_VIEW_A, &dyv)) ||
        (*st = dlb_cpu_set_layout(be, dx, &xmd)))
        return 1;
    size_t B = code == 1 ? 16 : code == 2 ? 8 : d->c;
    size_t nb = (size_t)xmd.padded_dims[1] / B, blocks = (size_t)d->n * nb;
    size_t in_blk = (size_t)d->in_h * d->in_w * B;
    size_t out_blk = (size_t)d->out_h * d->out_w * B;
    size_t in_plane = (size_t)d->in_h * d->in_w;
    int conv = dy->dtype != DLB_F32 || dx->dtype != DLB_F32;
    const int32_t *wsp = max ? ws->data : NULL;
    /* A view of dy in its own type, for the bf16 loads below. */
    struct dlb_buffer dyb = *dy;
    dyb.data = dyv;
    DLB_OMP("omp parallel if(blocks * in_blk > DLB_CPU_PAR_MIN)")
    {
        struct stage t;
        int ok = stage_alloc(&t, conv, in_blk, out_blk);
        if (!ok) {
            DLB_OMP("omp atomic write")
            nomem = 1;
        }
        DLB_OMP("omp for schedule(static)")
        for (size_t b = 0; b < blocks; b++) {
            if (!ok)
                continue;
            const float *g = conv ? t.out : (const float *)dyv + b * out_blk;
            float *dxb = conv ? t.in : (float *)dx->data + b * in_blk;
            if (conv)
                dlb_cpu_load_f32(&dyb, b * out_blk, out_blk, t.out);
            memset(dxb, 0, in_blk * sizeof *dxb);
            if (max) {
                const int32_t *w = wsp + b * out_blk;
                for (size_t k = 0; k < out_blk; k += B)
                    for (size_t l = 0; l < B; l++) {
                        uint32_t at = (uint32_t)w[k + l]; /* < 0: huge */
                        if (at >= in_plane) {
                            DLB_OMP("omp atomic write")
                            bad = 1;
                            continue;
                        }
                        dxb[(size_t)at * B + l] += g[k + l];
                    }
            } else {
                avg_block_bwd(d, B, g, dxb);
            }
            if (conv)
                dlb_cpu_store_f32(dx, b * in_blk, in_blk, t.in);
        }
        free(t.in);
        free(t.out);
    }
    if (nomem)
        *st = dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu pool_bwd: out of "
                               "memory");
    else if (bad)
        *st = dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu pool_bwd: a "
                               "workspace index is outside the input plane");
    else
        *st = DLB_OK;
    dlb_cpu_written(dx);
    return 1;
}
