/* Max and average pooling as own loops over (n, c) planes: the interface's
 * max-pool workspace is the S32 index of the maximum within the input
 * plane (first maximum on ties), which oneDNN's workspace is not, and the
 * work is memory-bound and simple. Planes run in parallel; a plane is
 * converted to float once (bf16) and pooled from L1. */
#include "cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The in-bounds window rows [r0, r1) of output row i (likewise columns). */
static void window(uint32_t i, uint32_t stride, uint32_t pad, uint32_t k,
                   uint32_t in, long *start, uint32_t *r0, uint32_t *r1)
{
    long s = (long)i * stride - (long)pad;
    *start = s;
    *r0 = s < 0 ? (uint32_t)-s : 0;
    *r1 = s + (long)k > (long)in ? (uint32_t)((long)in - s) : k;
}

/* The common 2x2, stride 2, no padding case without window bookkeeping:
 * the generic loop costs about 5x more per element. Ties keep the first
 * maximum in row-major window order, as the generic loop. */
static void max_plane_2x2(const struct dlb_pool_desc *d,
                          const float *restrict x, float *restrict y,
                          int32_t *restrict ws)
{
    const int32_t W = (int32_t)d->in_w;
    const uint32_t oh = d->out_h, ow = d->out_w;
    for (uint32_t i = 0; i < oh; i++) {
        const float *r0 = x + (size_t)2 * i * (size_t)W, *r1 = r0 + W;
        float *yr = y + (size_t)i * ow;
        int32_t *wr = ws ? ws + (size_t)i * ow : NULL;
        int32_t base = 2 * (int32_t)i * W;
        for (uint32_t j = 0; j < ow; j++) {
            /* Masks and selects, not branches: on real data the
             * comparisons are random, and mispredicted branches cost
             * several times the loop. */
            float a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j],
                  e = r1[2 * j + 1];
            int32_t mb = -(int32_t)(b > a);
            float top = b > a ? b : a;
            int32_t mc = -(int32_t)(c > top);
            float best = c > top ? c : top;
            int32_t me = -(int32_t)(e > best);
            best = e > best ? e : best;
            int32_t k = (1 & mb & ~mc & ~me) | (W & mc & ~me) | ((W + 1) & me);
            yr[j] = best;
            if (wr)
                wr[j] = base + 2 * (int32_t)j + k;
        }
    }
}

static void max_plane(const struct dlb_pool_desc *d, const float *x, float *y,
                      int32_t *ws)
{
    if (d->kh == 2 && d->kw == 2 && d->stride_h == 2 && d->stride_w == 2 &&
        d->pad_h == 0 && d->pad_w == 0) {
        max_plane_2x2(d, x, y, ws);
        return;
    }
    for (uint32_t i = 0; i < d->out_h; i++) {
        long sh;
        uint32_t r0, r1;
        window(i, d->stride_h, d->pad_h, d->kh, d->in_h, &sh, &r0, &r1);
        for (uint32_t j = 0; j < d->out_w; j++) {
            long sw;
            uint32_t c0, c1;
            window(j, d->stride_w, d->pad_w, d->kw, d->in_w, &sw, &c0, &c1);
            float best = -INFINITY;
            long arg = -1;
            for (uint32_t r = r0; r < r1; r++) {
                size_t row = (size_t)(sh + r) * d->in_w;
                for (uint32_t c = c0; c < c1; c++) {
                    size_t k = row + (size_t)(sw + c);
                    if (arg < 0 || x[k] > best) {
                        best = x[k];
                        arg = (long)k;
                    }
                }
            }
            y[(size_t)i * d->out_w + j] = best;
            if (ws)
                ws[(size_t)i * d->out_w + j] = (int32_t)arg;
        }
    }
}

static void avg_plane(const struct dlb_pool_desc *d, const float *x, float *y)
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
            float sum = 0.0f;
            for (uint32_t r = r0; r < r1; r++) {
                const float *row = x + (size_t)(sh + r) * d->in_w + sw;
                for (uint32_t c = c0; c < c1; c++)
                    sum += row[c];
            }
            y[(size_t)i * d->out_w + j] = sum * inv;
        }
    }
}

static void avg_plane_bwd(const struct dlb_pool_desc *d, const float *dy,
                          float *dx)
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
            float g = dy[(size_t)i * d->out_w + j] * inv;
            for (uint32_t r = r0; r < r1; r++) {
                float *row = dx + (size_t)(sh + r) * d->in_w + sw;
                for (uint32_t c = c0; c < c1; c++)
                    row[c] += g;
            }
        }
    }
}

/* Per-thread float planes for non-f32 buffers; NULL pointers for f32. */
struct planes {
    float *in, *out;
};

static int planes_alloc(struct planes *t, int need, size_t in, size_t out)
{
    t->in = t->out = NULL;
    if (!need)
        return 1;
    t->in = malloc(in * sizeof(float));
    t->out = malloc(out * sizeof(float));
    return t->in && t->out;
}

dlb_status dlb_cpu_pool_fwd(struct dlb_backend *be,
                            const struct dlb_pool_desc *d,
                            const struct dlb_buffer *x, struct dlb_buffer *y,
                            struct dlb_buffer *ws)
{
    const char *op = "pool_fwd";
    size_t planes = (size_t)d->n * d->c;
    size_t in_plane = (size_t)d->in_h * d->in_w;
    size_t out_plane = (size_t)d->out_h * d->out_w;
    int conv = 0, nomem = 0, max = d->kind == DLB_POOL_MAX;
    dlb_status s;
    if ((s = dlb_pool_desc_check(be, op, d)) ||
        (s = dlb_cpu_check_float(be, op, "x", x, planes * in_plane)) ||
        (s = dlb_cpu_check_float(be, op, "y", y, planes * out_plane)) ||
        (max && ws && (s = dlb_cpu_check_s32(be, op, "ws", ws,
                                             planes * out_plane))))
        return s;
    if (dlb_cpu_pool_blocked_fwd(be, d, x, y, ws, &s))
        return s;
    if ((s = DLB_CPU_PLAIN(be, x, y, ws)))
        return s;
    conv = x->dtype != DLB_F32 || y->dtype != DLB_F32;
    int32_t *wsp = max && ws ? ws->data : NULL;
    DLB_OMP("omp parallel if(planes * in_plane > DLB_CPU_PAR_MIN)")
    {
        struct planes t;
        int ok = planes_alloc(&t, conv, in_plane, out_plane);
        if (!ok) {
            DLB_OMP("omp atomic write")
            nomem = 1;
        }
        DLB_OMP("omp for schedule(static)")
        for (size_t p = 0; p < planes; p++) {
            if (!ok)
                continue;
            const float *xp = conv ? t.in : (const float *)x->data + p * in_plane;
            float *yp = conv ? t.out : (float *)y->data + p * out_plane;
            if (conv)
                dlb_cpu_load_f32(x, p * in_plane, in_plane, t.in);
            if (max)
                max_plane(d, xp, yp, wsp ? wsp + p * out_plane : NULL);
            else
                avg_plane(d, xp, yp);
            if (conv)
                dlb_cpu_store_f32(y, p * out_plane, out_plane, t.out);
        }
        free(t.in);
        free(t.out);
    }
    if (nomem)
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu %s: out of memory", op);
    dlb_cpu_written(y);
    if (wsp)
        dlb_cpu_written(ws);
    return DLB_OK;
}

dlb_status dlb_cpu_pool_bwd(struct dlb_backend *be,
                            const struct dlb_pool_desc *d,
                            const struct dlb_buffer *dy,
                            const struct dlb_buffer *ws, struct dlb_buffer *dx)
{
    const char *op = "pool_bwd";
    size_t planes = (size_t)d->n * d->c;
    size_t in_plane = (size_t)d->in_h * d->in_w;
    size_t out_plane = (size_t)d->out_h * d->out_w;
    int conv, nomem = 0, bad = 0, max = d->kind == DLB_POOL_MAX;
    dlb_status s;
    if ((s = dlb_pool_desc_check(be, op, d)) ||
        (s = dlb_cpu_check_float(be, op, "dy", dy, planes * out_plane)) ||
        (s = dlb_cpu_check_float(be, op, "dx", dx, planes * in_plane)) ||
        (max && (s = dlb_cpu_check_s32(be, op, "ws", ws, planes * out_plane))))
        return s;
    if (dlb_cpu_pool_blocked_bwd(be, d, dy, ws, dx, &s))
        return s;
    if ((s = DLB_CPU_PLAIN(be, dy, ws, dx)))
        return s;
    conv = dy->dtype != DLB_F32 || dx->dtype != DLB_F32;
    const int32_t *wsp = max ? ws->data : NULL;
    DLB_OMP("omp parallel if(planes * in_plane > DLB_CPU_PAR_MIN)")
    {
        struct planes t;
        int ok = planes_alloc(&t, conv, in_plane, out_plane);
        if (!ok) {
            DLB_OMP("omp atomic write")
            nomem = 1;
        }
        DLB_OMP("omp for schedule(static)")
        for (size_t p = 0; p < planes; p++) {
            if (!ok)
                continue;
            const float *dyp = conv ? t.out : (const float *)dy->data
                                                  + p * out_plane;
            float *dxp = conv ? t.in : (float *)dx->data + p * in_plane;
            if (conv)
                dlb_cpu_load_f32(dy, p * out_plane, out_plane, t.out);
            memset(dxp, 0, in_plane * sizeof *dxp);
            if (max) {
                const int32_t *w = wsp + p * out_plane;
                for (size_t k = 0; k < out_plane; k++) {
                    if (w[k] < 0 || (size_t)w[k] >= in_plane) {
                        DLB_OMP("omp atomic write")
                        bad = 1;
                        continue;
                    }
                    dxp[w[k]] += dyp[k];
                }
            } else {
                avg_plane_bwd(d, dyp, dxp);
            }
            if (conv)
                dlb_cpu_store_f32(dx, p * in_plane, in_plane, t.in);
        }
        free(t.in);
        free(t.out);
    }
    if (nomem)
        return dlb_backend_fail(be, DLB_ERR_NOMEM, "cpu %s: out of memory", op);
    if (bad)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: a workspace "
                                "index is outside the input plane", op);
    dlb_cpu_written(dx);
    return DLB_OK;
}
