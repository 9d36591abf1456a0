/* int8 backend operations (backend.h, API 1.1) and (de)quantisation:
 *
 * - quantize then dequantize returns every value within half a step
 *   (scale / 2) inside the representable range and the range's end
 *   outside it; dequantize then quantize returns every int8 value
 *   exactly; on ref and cpu, u8 with a zero point and s8;
 * - ref's int8 convolution and linear layer with f32 output equal the
 *   fp32 computation on the dequantised values (the fake-quantised
 *   model) within 1e-5 relative: the integer path means what the
 *   quantised model means;
 * - the cpu backend's oneDNN int8 kernels against ref: u8 / s8 sources
 *   with and without a zero point, zero padding, stride 2, per-tensor
 *   and per-channel weight scales, with and without bias and ReLU, f32,
 *   u8 (with a zero point) and s8 outputs, at LeNet's and vgg-small's
 *   layer shapes and at grouped and depthwise ones (MobileNetV2's).
 *   Tolerance: int8 outputs within 1 (one step of the output scale;
 *   both accumulate exactly, and only where the float requantisation
 *   lands within rounding of a half can they differ), f32 outputs within
 *   1e-6 relative; the number of int8 outputs that differ is printed (0
 *   in practice);
 * - an f32 input (the first layer's) gives exactly what its quantised
 *   values give, on both backends, through the cpu backend's fused
 *   quantise + im2col path for one input channel too (four, two and one
 *   output pixels per im2col row; test_cpu_quantise.c holds the
 *   quantisation itself); weights written again are used (the packed
 *   copy is rebuilt);
 * - CONV2D_INT8_ADD against the layers apart and cpu against ref, and
 *   its refusals;
 * - max pooling of int8 data is identical on both, also on the nhwc
 *   output of an int8 convolution (conv -> pool -> conv stays int8).
 * The cpu part is skipped where the backend is not built in or the CPU
 * has no VNNI. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/op_call.h"
#include "backend/dtype.h"
#include "backend/int8.h"
#include "util/rng.h"

static struct dlb_backend *cpu, *ref;
static struct dlb_rng rng;

static struct dlb_backend *open_be(const char *name)
{
    struct dlb_backend *be = NULL;
    char why[256] = "";
    if (dlb_backend_open(name, NULL, &be, why, sizeof why) != DLB_OK)
        fprintf(stderr, "backend %s: %s (skipped)\n", name, why);
    return be;
}

static struct dlb_buffer *buf(struct dlb_backend *be, enum dlb_dtype t,
                              size_t n, const void *host)
{
    struct dlb_buffer *b = NULL;
    CHECK(DLB_BE_CALL(be, buffer_alloc, t, n, &b) == DLB_OK);
    if (b && host)
        CHECK(DLB_BE_CALL(be, copy_from_host, b, 0, host,
                          n * dlb_dtype_size(t)) == DLB_OK);
    return b;
}

static void *down(struct dlb_backend *be, const struct dlb_buffer *b)
{
    size_t bytes = dlb_buffer_bytes(b);
    void *h = malloc(bytes + 1);
    CHECK(DLB_BE_CALL(be, copy_to_host, h, b, 0, bytes) == DLB_OK);
    return h;
}

static void drop(struct dlb_backend *be, struct dlb_buffer *b)
{
    if (b)
        dlb_backend_ops_of(be)->buffer_free(be, b);
}

static int32_t qval(enum dlb_dtype t, const void *p, size_t i)
{
    return t == DLB_U8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

/* Random int8 values of type t in n bytes. */
static void *rand_q(enum dlb_dtype t, size_t n, int lo, int hi)
{
    unsigned char *v = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        int x = lo + (int)dlb_rng_below(&rng, (uint64_t)(hi - lo + 1));
        v[i] = t == DLB_U8 ? (unsigned char)x : (unsigned char)(int8_t)x;
    }
    return v;
}

/* ---- quantize / dequantize ------------------------------------------ */

static void round_trip(struct dlb_backend *be, enum dlb_dtype t, float scale,
                       int32_t zp)
{
    enum { N = 4096 };
    float x[N], back[N];
    int lo = t == DLB_U8 ? 0 : -128, hi = t == DLB_U8 ? 255 : 127;
    for (int i = 0; i < N; i++)
        x[i] = (float)(4.0 * (dlb_rng_double(&rng) - 0.5)) * 255 * scale / 2;
    struct dlb_buffer *f = buf(be, DLB_F32, N, x), *q = buf(be, t, N, NULL);
    struct dlb_buffer *g = buf(be, DLB_F32, N, NULL);
    CHECK(DLB_RUN(be, quantize, N, f, q, scale, zp)
              == DLB_OK);
    CHECK(DLB_RUN(be, dequantize, N, q, g, scale, zp)
              == DLB_OK);
    CHECK(DLB_BE_CALL(be, copy_to_host, back, g, 0, sizeof back) == DLB_OK);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        double min = (double)scale * (lo - zp), max = (double)scale * (hi - zp);
        double want = x[i] < min ? min : x[i] > max ? max : x[i];
        bad += fabs(back[i] - want) > scale / 2 * (1 + 1e-6);
    }
    CHECK(bad == 0);
    /* every int8 value survives dequantize -> quantize */
    unsigned char all[256];
    for (int v = 0; v < 256; v++)
        all[v] = t == DLB_U8 ? (unsigned char)v
                             : (unsigned char)(int8_t)(v - 128);
    struct dlb_buffer *q2 = buf(be, t, 256, all), *q3 = buf(be, t, 256, NULL);
    CHECK(DLB_RUN(be, dequantize, 256, q2, g, scale, zp)
              == DLB_OK);
    CHECK(DLB_RUN(be, quantize, 256, g, q3, scale, zp)
              == DLB_OK);
    unsigned char *again = down(be, q3);
    CHECK(memcmp(again, all, 256) == 0);
    free(again);
    drop(be, f), drop(be, q), drop(be, g), drop(be, q2), drop(be, q3);
}

/* ---- one int8 layer on a backend ------------------------------------ */

struct layer {
    const char *name;
    int conv;
    struct dlb_conv2d_desc cd;
    struct dlb_linear_desc ld;
    enum dlb_dtype xt, yt;
    int32_t xzp, yzp;
    int relu, bias, per_channel;
    int f32_in;        /* x is F32, quantised by the op */
};

struct data {
    void *x, *w;
    float *xf;         /* f32_in: the values x quantises */
    float *ws;
    int32_t *b;
    size_t xn, wn, yn;
    uint32_t out_c;
};

static void counts(const struct layer *L, struct data *d)
{
    if (L->conv) {
        const struct dlb_conv2d_desc *c = &L->cd;
        d->xn = (size_t)c->n * c->in_c * c->in_h * c->in_w;
        uint32_t g = c->groups > 1 ? c->groups : 1;
        d->wn = (size_t)c->out_c * (c->in_c / g) * c->kh * c->kw;
        d->yn = (size_t)c->n * c->out_c * c->out_h * c->out_w;
        d->out_c = c->out_c;
    } else {
        d->xn = (size_t)L->ld.n * L->ld.in;
        d->wn = (size_t)L->ld.out * L->ld.in;
        d->yn = (size_t)L->ld.n * L->ld.out;
        d->out_c = L->ld.out;
    }
}

static void make_data(const struct layer *L, struct data *d, float x_scale)
{
    counts(L, d);
    d->x = rand_q(L->xt, d->xn, L->xt == DLB_U8 ? 0 : -128,
                  L->xt == DLB_U8 ? 255 : 127);
    d->xf = NULL;
    if (L->f32_in) { /* values around the range, ties and clipping included */
        d->xf = malloc(d->xn * sizeof *d->xf);
        for (size_t i = 0; i < d->xn; i++) {
            int32_t v = qval(L->xt, d->x, i) - L->xzp;
            d->xf[i] = x_scale * ((float)v + (i % 3 ? 0.5f : 0.25f)) *
                       (i % 7 ? 1.0f : 1.5f);
            ((unsigned char *)d->x)[i] = (unsigned char)dlb_int8_quantize(
                d->xf[i], x_scale, L->xzp, L->xt == DLB_U8 ? 0 : -128,
                L->xt == DLB_U8 ? 255 : 127);
        }
    }
    d->w = rand_q(DLB_S8, d->wn, -127, 127);
    d->ws = malloc(d->out_c * sizeof *d->ws);
    d->b = malloc(d->out_c * sizeof *d->b);
    for (uint32_t o = 0; o < d->out_c; o++) {
        d->ws[o] = (float)(0.001 + 0.01 * dlb_rng_double(&rng));
        d->b[o] = (int32_t)dlb_rng_below(&rng, 20001) - 10000;
    }
}

static void free_data(struct data *d)
{
    free(d->x), free(d->w), free(d->ws), free(d->b), free(d->xf);
}

/* Run layer L on `be` into a new buffer of type yt. */
static struct dlb_buffer *run(struct dlb_backend *be, const struct layer *L,
                              const struct data *d,
                              const struct dlb_int8_desc *q, enum dlb_dtype yt,
                              int f32_in)
{
    struct dlb_buffer *x = f32_in ? buf(be, DLB_F32, d->xn, d->xf)
                                  : buf(be, L->xt, d->xn, d->x);
    struct dlb_buffer *w = buf(be, DLB_S8, d->wn, d->w);
    struct dlb_buffer *s = buf(be, DLB_F32, L->per_channel ? d->out_c : 1,
                               d->ws);
    struct dlb_buffer *b = L->bias ? buf(be, DLB_S32, d->out_c, d->b) : NULL;
    struct dlb_buffer *y = buf(be, yt, d->yn, NULL);
    dlb_status st = L->conv
        ? DLB_RUN(be, conv2d_int8_fwd, &(L->cd), &(*q), x, w, s, b, y)
        : DLB_RUN(be, linear_int8_fwd, &(L->ld), &(*q), x, w, s, b, y);
    if (st != DLB_OK)
        fprintf(stderr, "%s on %s: %s\n", L->name, dlb_backend_name(be),
                dlb_backend_last_error(be));
    CHECK(st == DLB_OK);
    drop(be, x), drop(be, w), drop(be, s), drop(be, b);
    return y;
}

/* The fake-quantised layer in double: dequantised x, w and bias. */
static double fake(const struct layer *L, const struct data *d,
                   const struct dlb_int8_desc *q, size_t yi)
{
    double acc = 0.0;
    uint32_t o;
    float s;
    if (L->conv) {
        const struct dlb_conv2d_desc *c = &L->cd;
        size_t plane = (size_t)c->out_h * c->out_w;
        size_t n = yi / (plane * c->out_c), i = (yi % plane) / c->out_w;
        size_t j = yi % c->out_w;
        uint32_t g = c->groups > 1 ? c->groups : 1, icg = c->in_c / g;
        o = (uint32_t)((yi / plane) % c->out_c);
        s = d->ws[L->per_channel ? o : 0];
        uint32_t c0 = o / (c->out_c / g) * icg; /* o's group of inputs */
        for (uint32_t ci = c0; ci < c0 + icg; ci++)
            for (uint32_t r = 0; r < c->kh; r++)
                for (uint32_t t = 0; t < c->kw; t++) {
                    long ih = (long)(i * c->stride_h + r) - (long)c->pad_h;
                    long iw = (long)(j * c->stride_w + t) - (long)c->pad_w;
                    if (ih < 0 || iw < 0 || ih >= (long)c->in_h ||
                        iw >= (long)c->in_w)
                        continue;
                    size_t xi = ((n * c->in_c + ci) * c->in_h + (size_t)ih) *
                                c->in_w + (size_t)iw;
                    size_t wi = ((o * (size_t)icg + ci - c0) * c->kh + r) *
                                c->kw + t;
                    acc += q->x_scale * (double)(qval(L->xt, d->x, xi) -
                                                 q->x_zero_point) *
                           s * (double)qval(DLB_S8, d->w, wi);
                }
    } else {
        size_t n = yi / L->ld.out;
        o = (uint32_t)(yi % L->ld.out);
        s = d->ws[L->per_channel ? o : 0];
        for (uint32_t i = 0; i < L->ld.in; i++)
            acc += q->x_scale *
                   (double)(qval(L->xt, d->x, n * L->ld.in + i) -
                            q->x_zero_point) *
                   s * (double)qval(DLB_S8, d->w, (size_t)o * L->ld.in + i);
    }
    if (L->bias)
        acc += (double)q->x_scale * s * d->b[o];
    return L->relu && acc < 0 ? 0.0 : acc;
}

static void test_layer(const struct layer *L)
{
    struct data d;
    make_data(L, &d, 0.02f);
    struct dlb_int8_desc q = { L->xt, 0.02f, L->xzp, 1.0f, L->yzp, L->relu };
    /* f32 output on ref: the fake-quantised layer, and the output scale
     * that spreads the int8 output over its range (some clipping). */
    struct dlb_buffer *yr = run(ref, L, &d, &q, DLB_F32, L->f32_in);
    float *f = down(ref, yr);
    double most = 0.0, err = 0.0, norm = 0.0;
    for (size_t i = 0; i < d.yn; i++) {
        double want = fake(L, &d, &q, i);
        err = fmax(err, fabs(f[i] - want));
        norm = fmax(norm, fabs(want));
        most = fmax(most, fabs(f[i]));
    }
    CHECK(err <= 1e-5 * fmax(norm, 1e-30));
    q.y_scale = (float)(most / (L->yt == DLB_U8 ? 200.0 : 100.0));
    if (!(q.y_scale > 0))
        q.y_scale = 1.0f;
    drop(ref, yr);
    /* an f32 input means its quantised values, on each backend */
    for (int k = 0; L->f32_in && k < 2; k++) {
        struct dlb_backend *be = k ? cpu : ref;
        if (!be)
            continue;
        struct dlb_buffer *a = run(be, L, &d, &q, L->yt, 1);
        struct dlb_buffer *b = run(be, L, &d, &q, L->yt, 0);
        void *ha = down(be, a), *hb = down(be, b);
        CHECK(memcmp(ha, hb, dlb_buffer_bytes(a)) == 0);
        free(ha), free(hb);
        drop(be, a), drop(be, b);
    }
    if (cpu) {
        yr = run(ref, L, &d, &q, L->yt, L->f32_in);
        struct dlb_buffer *yc = run(cpu, L, &d, &q, L->yt, L->f32_in);
        void *a = down(ref, yr), *b = down(cpu, yc);
        size_t differ = 0, worse = 0;
        for (size_t i = 0; i < d.yn; i++) {
            if (L->yt == DLB_F32) {
                float u = ((float *)a)[i], v = ((float *)b)[i];
                worse += fabs(u - v) > 1e-6 * fmax(fabs(u), most * 1e-3);
                differ += u != v;
            } else {
                int32_t u = qval(L->yt, a, i), v = qval(L->yt, b, i);
                worse += abs(u - v) > 1;
                differ += u != v;
            }
        }
        fprintf(stderr, "  %-28s %s: %zu of %zu differ (%zu beyond "
                "tolerance)\n", L->name, dlb_dtype_name(L->yt), differ, d.yn,
                worse);
        CHECK(worse == 0);
        free(a), free(b);
        drop(ref, yr), drop(cpu, yc);
    }
    free(f);
    free_data(&d);
}

static struct dlb_conv2d_desc conv(uint32_t n, uint32_t ic, uint32_t hw,
                                   uint32_t oc, uint32_t k, uint32_t stride,
                                   uint32_t pad)
{
    uint32_t o = dlb_conv_out_size(hw, k, stride, pad);
    return (struct dlb_conv2d_desc){ n, ic, hw, hw, oc, k, k, stride, stride,
                                     pad, pad, o, o, 1 };
}

static void test_layers(void)
{
    const struct layer cases[] = {
        /* LeNet conv1: the image, u8 with a zero point, requantised */
        { "lenet conv1 u8 zp -> u8", 1, conv(3, 1, 28, 10, 5, 1, 0), {0},
          DLB_U8, DLB_U8, 37, 0, 1, 1, 1, 0 },
        { "lenet conv2 u8 -> u8", 1, conv(2, 10, 12, 20, 5, 1, 0), {0},
          DLB_U8, DLB_U8, 0, 0, 1, 1, 0, 0 },
        /* vgg-small: padding with a source zero point */
        { "vgg conv1 pad u8 zp -> u8", 1, conv(2, 1, 28, 32, 3, 1, 1), {0},
          DLB_U8, DLB_U8, 50, 0, 1, 1, 1, 0 },
        { "vgg conv3 pad u8 -> u8", 1, conv(2, 64, 14, 64, 3, 1, 1), {0},
          DLB_U8, DLB_U8, 0, 0, 1, 1, 1, 0 },
        { "vgg conv5 u8 -> f32 relu", 1, conv(2, 128, 7, 128, 3, 1, 1), {0},
          DLB_U8, DLB_F32, 0, 0, 1, 1, 1, 0 },
        { "s8 pad -> s8 no relu", 1, conv(2, 32, 14, 64, 3, 1, 1), {0},
          DLB_S8, DLB_S8, 0, 0, 0, 1, 1, 0 },
        { "s8 -> f32 per tensor", 1, conv(2, 16, 9, 16, 3, 1, 1), {0},
          DLB_S8, DLB_F32, 0, 0, 0, 0, 0, 0 },
        { "stride 2 u8 zp -> u8 zp", 1, conv(3, 16, 11, 32, 3, 2, 1), {0},
          DLB_U8, DLB_U8, 20, 100, 0, 1, 1, 0 },
        { "lenet fc1 u8 -> u8", 0, {0}, { 5, 320, 50 },
          DLB_U8, DLB_U8, 0, 0, 1, 1, 1, 0 },
        { "lenet fc2 u8 -> f32", 0, {0}, { 5, 50, 10 },
          DLB_U8, DLB_F32, 0, 0, 0, 1, 1, 0 },
        { "linear u8 zp -> f32", 0, {0}, { 4, 128, 10 },
          DLB_U8, DLB_F32, 90, 0, 0, 1, 0, 0 },
        { "linear s8 -> s8", 0, {0}, { 3, 64, 32 },
          DLB_S8, DLB_S8, 0, 0, 1, 0, 1, 0 },
        /* f32 inputs, quantised by the op: the first layers */
        { "f32 lenet conv1 -> u8", 1, conv(3, 1, 28, 10, 5, 1, 0), {0},
          DLB_U8, DLB_U8, 73, 0, 1, 1, 1, 1 },
        { "f32 vgg conv1 pad -> u8", 1, conv(2, 1, 28, 32, 3, 1, 1), {0},
          DLB_U8, DLB_U8, 73, 0, 1, 1, 1, 1 },
        { "f32 s8 conv1 stride 2 -> s8", 1, conv(2, 1, 13, 8, 3, 2, 1), {0},
          DLB_S8, DLB_S8, 0, 0, 0, 1, 1, 1 },
        { "f32 conv 16ch -> f32", 1, conv(2, 16, 9, 16, 3, 1, 1), {0},
          DLB_U8, DLB_F32, 30, 0, 1, 1, 1, 1 },
        { "f32 conv1 two pixels a row", 1, conv(2, 1, 10, 8, 5, 1, 0), {0},
          DLB_U8, DLB_U8, 73, 0, 1, 1, 1, 1 },
        { "f32 conv1 stride 2, two a row", 1, conv(2, 1, 15, 8, 3, 2, 1),
          {0}, DLB_U8, DLB_F32, 73, 0, 0, 0, 0, 1 },
        { "f32 linear -> f32", 0, {0}, { 4, 128, 10 },
          DLB_U8, DLB_F32, 20, 0, 0, 1, 1, 1 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        test_layer(&cases[k]);
}

/* CONV2D_INT8_ADD: the int8 conv with an F32 output summed onto what y
 * holds (random values, the other branch), with the sum's ReLU, clipped
 * or not, and the conv's own ReLU before the sum. On ref against
 * CONV2D_INT8 into a tensor of its own plus the branch in float (the
 * same value but for the sum's order of roundings: within 1e-6 of the
 * largest output), and on cpu (oneDNN's sum post-op, the branch put in
 * the kernel's layout first) against ref within 1e-6, as test_layer. */
static void add_case(const struct layer *L, int relu, float clip)
{
    struct data d;
    make_data(L, &d, 0.02f);
    struct dlb_int8_desc q = { L->xt, 0.02f, L->xzp, 1.0f, 0, L->relu };
    float *branch = malloc(d.yn * sizeof *branch);
    for (size_t i = 0; i < d.yn; i++)
        branch[i] = (float)(40.0 * (dlb_rng_double(&rng) - 0.5));
    float *out[2] = { NULL, NULL };
    for (int k = 0; k < 2; k++) {
        struct dlb_backend *be = k ? cpu : ref;
        if (!be)
            continue;
        struct dlb_buffer *x = L->f32_in ? buf(be, DLB_F32, d.xn, d.xf)
                                         : buf(be, L->xt, d.xn, d.x);
        struct dlb_buffer *w = buf(be, DLB_S8, d.wn, d.w);
        struct dlb_buffer *sc = buf(be, DLB_F32, L->per_channel ? d.out_c : 1,
                                    d.ws);
        struct dlb_buffer *b = L->bias ? buf(be, DLB_S32, d.out_c, d.b) : NULL;
        struct dlb_buffer *y = buf(be, DLB_F32, d.yn, branch);
        struct dlb_op op = { .kind = DLB_OP_CONV2D_INT8_ADD,
                             .prop = DLB_PROP_FWD_INFER, .conv = L->cd,
                             .q = q, .x = x, .w = w, .w_scale = sc, .b = b,
                             .y = y, .relu = relu, .relu_max = clip };
        CHECK(dlb_backend_kernel_for(be, &op) != NULL);
        dlb_status st = dlb_backend_run(be, &op);
        if (st != DLB_OK)
            fprintf(stderr, "%s on %s: %s\n", L->name, dlb_backend_name(be),
                    dlb_backend_last_error(be));
        CHECK(st == DLB_OK);
        out[k] = down(be, y);
        drop(be, x), drop(be, w), drop(be, sc), drop(be, b), drop(be, y);
    }
    /* apart, on ref: the conv, then the branch and the ReLU in float */
    struct dlb_buffer *yr = run(ref, L, &d, &q, DLB_F32, L->f32_in);
    float *v = down(ref, yr);
    double most = 0.0, err = 0.0, cerr = 0.0;
    size_t clipped = 0;
    for (size_t i = 0; i < d.yn; i++) {
        float want = v[i] + branch[i];
        if (relu) {
            want = want > 0.0f ? want : 0.0f;
            clipped += clip > 0.0f && want > clip;
            want = clip > 0.0f && want > clip ? clip : want;
        }
        most = fmax(most, fabs(want));
        err = fmax(err, fabs(out[0][i] - want));
        if (out[1])
            cerr = fmax(cerr, fabs(out[1][i] - out[0][i]));
    }
    fprintf(stderr, "  %-28s add relu %d clip %g: ref vs apart %.3g, cpu vs "
            "ref %.3g (largest %.3g, %zu clipped)\n", L->name, relu,
            (double)clip, err, cerr, most, clipped);
    CHECK(err <= 1e-6 * most && cerr <= 1e-6 * most);
    CHECK(clip == 0.0f || clipped > 0);
    drop(ref, yr);
    free(v), free(out[0]), free(out[1]), free(branch);
    free_data(&d);
}

static void test_add_layers(void)
{
    const struct layer block = { "resnet block conv2", 1,
                                 conv(2, 16, 8, 16, 3, 1, 1), {0}, DLB_U8,
                                 DLB_F32, 0, 0, 0, 1, 1, 0 };
    const struct layer down = { "projection 1x1 stride 2", 1,
                                conv(2, 16, 8, 32, 1, 2, 0), {0}, DLB_U8,
                                DLB_F32, 0, 0, 0, 1, 1, 0 };
    const struct layer f32_in = { "f32 input, own relu", 1,
                                  conv(2, 16, 8, 16, 3, 1, 1), {0}, DLB_U8,
                                  DLB_F32, 30, 0, 1, 1, 1, 1 };
    const struct layer tensor = { "s8 per tensor, no bias", 1,
                                  conv(2, 8, 7, 16, 3, 1, 1), {0}, DLB_S8,
                                  DLB_F32, 0, 0, 0, 0, 0, 0 };
    add_case(&block, 1, 0.0f);
    add_case(&block, 0, 0.0f);
    add_case(&block, 1, 6.0f);
    add_case(&down, 1, 0.0f);
    add_case(&f32_in, 1, 0.0f);
    add_case(&tensor, 0, 0.0f);
    /* refused with the reason: an int8 or bf16 y, a training pass, a
     * negative clip */
    struct data d;
    make_data(&block, &d, 0.02f);
    struct dlb_buffer *x = buf(ref, DLB_U8, d.xn, d.x);
    struct dlb_buffer *w = buf(ref, DLB_S8, d.wn, d.w);
    struct dlb_buffer *sc = buf(ref, DLB_F32, d.out_c, d.ws);
    struct dlb_buffer *y8 = buf(ref, DLB_U8, d.yn, NULL);
    struct dlb_buffer *y16 = buf(ref, DLB_BF16, d.yn, NULL);
    struct dlb_buffer *y = buf(ref, DLB_F32, d.yn, NULL);
    struct dlb_op op = { .kind = DLB_OP_CONV2D_INT8_ADD,
                         .prop = DLB_PROP_FWD_INFER, .conv = block.cd,
                         .q = { DLB_U8, 0.02f, 0, 1.0f, 0, 0 }, .x = x,
                         .w = w, .w_scale = sc, .y = y8 };
    CHECK(dlb_backend_run(ref, &op) == DLB_ERR_INTERNAL &&
          strstr(dlb_backend_last_error(ref), "y must be a float buffer"));
    op.y = y16;
    CHECK(dlb_backend_run(ref, &op) == DLB_ERR_INTERNAL &&
          strstr(dlb_backend_last_error(ref), "y must be F32"));
    op.y = y;
    op.prop = DLB_PROP_FWD_TRAIN;
    CHECK(dlb_backend_run(ref, &op) == DLB_ERR_INTERNAL &&
          strstr(dlb_backend_last_error(ref),
                 "conv2d_int8_add is an inference operation"));
    op.prop = DLB_PROP_FWD_INFER;
    op.relu_max = -1.0f;
    CHECK(dlb_backend_run(ref, &op) == DLB_ERR_INTERNAL &&
          strstr(dlb_backend_last_error(ref), "relu_max must be 0"));
    drop(ref, x), drop(ref, w), drop(ref, sc), drop(ref, y8);
    drop(ref, y16), drop(ref, y);
    free_data(&d);
}

/* Grouped and depthwise int8 convolutions (MobileNetV2's), on ref
 * against the fake-quantised layer and on the cpu backend (oneDNN's
 * grouped int8 kernels) against ref, as test_layers. */
static void test_grouped_layers(void)
{
    struct dlb_conv2d_desc g2 = conv(2, 16, 9, 32, 3, 1, 1);
    struct dlb_conv2d_desc dw1 = conv(2, 32, 10, 32, 3, 1, 1);
    struct dlb_conv2d_desc dw2 = conv(2, 32, 10, 32, 3, 2, 1);
    struct dlb_conv2d_desc g4 = conv(2, 16, 9, 16, 3, 1, 1);
    g2.groups = 2, dw1.groups = 32, dw2.groups = 32, g4.groups = 4;
    const struct layer cases[] = {
        { "grouped g2 u8 zp -> u8", 1, g2, {0},
          DLB_U8, DLB_U8, 20, 0, 1, 1, 1, 0 },
        { "depthwise u8 zp -> f32 relu", 1, dw1, {0},
          DLB_U8, DLB_F32, 30, 0, 1, 1, 0, 0 },
        { "depthwise s8 stride 2 -> s8", 1, dw2, {0},
          DLB_S8, DLB_S8, 0, 0, 0, 1, 1, 0 },
        { "f32 grouped g4 -> u8 zp", 1, g4, {0},
          DLB_U8, DLB_U8, 73, 90, 1, 0, 1, 1 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        test_layer(&cases[k]);
}

/* ---- max pooling ---------------------------------------------------- */

static void pool_case(const struct dlb_pool_desc *d, enum dlb_dtype t,
                      struct dlb_buffer *xc, struct dlb_buffer *xr)
{
    size_t yn = (size_t)d->n * d->c * d->out_h * d->out_w;
    struct dlb_buffer *yr = buf(ref, t, yn, NULL);
    CHECK(DLB_RUN(ref, pool_int8_fwd, &(*d), xr, yr)
              == DLB_OK);
    if (cpu) {
        struct dlb_buffer *yc = buf(cpu, t, yn, NULL);
        CHECK(DLB_RUN(cpu, pool_int8_fwd, &(*d), xc, yc)
                  == DLB_OK);
        void *a = down(ref, yr), *b = down(cpu, yc);
        CHECK(memcmp(a, b, yn) == 0);
        free(a), free(b);
        drop(cpu, yc);
    }
    drop(ref, yr);
}

static void test_pool(void)
{
    struct dlb_pool_desc d = { DLB_POOL_MAX, 3, 20, 8, 8, 2, 2, 2, 2, 0, 0,
                               4, 4 };
    size_t xn = (size_t)d.n * d.c * d.in_h * d.in_w;
    for (int k = 0; k < 2; k++) {
        enum dlb_dtype t = k ? DLB_S8 : DLB_U8;
        void *x = rand_q(t, xn, k ? -128 : 0, k ? 127 : 255);
        struct dlb_buffer *xr = buf(ref, t, xn, x);
        struct dlb_buffer *xc = cpu ? buf(cpu, t, xn, x) : NULL;
        pool_case(&d, t, xc, xr);
        drop(ref, xr), drop(cpu, xc);
        free(x);
    }
    /* 3x3 windows, stride 2, padding 1: padding never wins */
    struct dlb_pool_desc p = { DLB_POOL_MAX, 2, 16, 7, 7, 3, 3, 2, 2, 1, 1,
                               4, 4 };
    xn = (size_t)p.n * p.c * p.in_h * p.in_w;
    void *x = rand_q(DLB_S8, xn, -128, -100); /* all below zero */
    struct dlb_buffer *xr = buf(ref, DLB_S8, xn, x);
    struct dlb_buffer *xc = cpu ? buf(cpu, DLB_S8, xn, x) : NULL;
    pool_case(&p, DLB_S8, xc, xr);
    drop(ref, xr), drop(cpu, xc);
    free(x);
    /* average pooling of int8 data is not offered */
    p.kind = DLB_POOL_AVG;
    struct dlb_buffer *a = buf(ref, DLB_S8, xn, NULL);
    struct dlb_buffer *b = buf(ref, DLB_S8, 512, NULL);
    CHECK(DLB_RUN(ref, pool_int8_fwd, &p, a, b)
              == DLB_ERR_UNSUPPORTED);
    drop(ref, a), drop(ref, b);
}

/* conv (u8 out, nhwc on the cpu) -> max pool -> conv: the chain the
 * quantised LeNet runs, identical on both backends up to the tolerance. */
static void test_chain(void)
{
    struct layer c1 = { "chain conv", 1, conv(2, 10, 12, 20, 5, 1, 0), {0},
                        DLB_U8, DLB_U8, 0, 0, 1, 1, 1, 0 };
    struct data d;
    make_data(&c1, &d, 0.02f);
    struct dlb_int8_desc q = { DLB_U8, 0.02f, 0, 0.5f, 0, 1 };
    struct dlb_pool_desc pd = { DLB_POOL_MAX, 2, 20, 8, 8, 2, 2, 2, 2, 0, 0,
                                4, 4 };
    size_t pn = (size_t)2 * 20 * 4 * 4;
    struct dlb_buffer *yr = run(ref, &c1, &d, &q, DLB_U8, 0);
    struct dlb_buffer *pr = buf(ref, DLB_U8, pn, NULL);
    CHECK(DLB_RUN(ref, pool_int8_fwd, &pd, yr, pr)
              == DLB_OK);
    if (cpu) {
        struct dlb_buffer *yc = run(cpu, &c1, &d, &q, DLB_U8, 0);
        struct dlb_buffer *pc = buf(cpu, DLB_U8, pn, NULL);
        CHECK(DLB_RUN(cpu, pool_int8_fwd, &pd, yc, pc)
                  == DLB_OK);
        uint8_t *a = down(ref, pr), *b = down(cpu, pc);
        size_t worse = 0;
        for (size_t i = 0; i < pn; i++)
            worse += abs((int)a[i] - (int)b[i]) > 1;
        CHECK(worse == 0);
        free(a), free(b);
        drop(cpu, yc), drop(cpu, pc);
    }
    drop(ref, yr), drop(ref, pr);
    free_data(&d);
}

/* Weights written again reach a one-channel convolution: the cpu
 * backend keeps them packed for several pixels per row until the buffer
 * changes. */
static void test_rewrite(void)
{
    if (!cpu)
        return;
    struct layer L = { "rewrite", 1, conv(2, 1, 12, 8, 5, 1, 0), {0},
                       DLB_U8, DLB_U8, 0, 0, 1, 0, 0, 0 };
    struct data d;
    make_data(&L, &d, 0.02f);
    struct dlb_int8_desc q = { DLB_U8, 0.02f, 0, 0.05f, 0, 1 };
    struct dlb_buffer *x = buf(cpu, DLB_U8, d.xn, d.x);
    struct dlb_buffer *w = buf(cpu, DLB_S8, d.wn, d.w);
    struct dlb_buffer *s = buf(cpu, DLB_F32, 1, d.ws);
    struct dlb_buffer *y = buf(cpu, DLB_U8, d.yn, NULL);
    CHECK(DLB_RUN(cpu, conv2d_int8_fwd, &(L.cd), &q, x, w, s, NULL, y) ==
          DLB_OK);
    for (size_t i = 0; i < d.wn; i++) /* new weights, same buffer */
        ((signed char *)d.w)[i] = (signed char)(-((signed char *)d.w)[i] / 2);
    CHECK(DLB_BE_CALL(cpu, copy_from_host, w, 0, d.w, d.wn) == DLB_OK);
    CHECK(DLB_RUN(cpu, conv2d_int8_fwd, &(L.cd), &q, x, w, s, NULL, y) ==
          DLB_OK);
    struct dlb_buffer *yr = run(ref, &L, &d, &q, DLB_U8, 0);
    void *a = down(cpu, y), *b = down(ref, yr);
    CHECK(memcmp(a, b, d.yn) == 0);
    free(a), free(b);
    drop(cpu, x), drop(cpu, w), drop(cpu, s), drop(cpu, y), drop(ref, yr);
    free_data(&d);
}

int main(void)
{
    dlb_rng_seed(&rng, 8);
    ref = open_be("ref");
    cpu = open_be("cpu");
    CHECK(ref != NULL);
    if (!ref)
        return check_exit();
    char why[256] = "";
    if (cpu && dlb_backend_ops_of(cpu)->supports(cpu, DLB_CAP_INT8, why,
                                                 sizeof why) != DLB_OK) {
        fprintf(stderr, "cpu: %s (cpu comparisons skipped)\n", why);
        dlb_backend_close(cpu);
        cpu = NULL;
    }
    round_trip(ref, DLB_U8, 0.025f, 128);
    round_trip(ref, DLB_S8, 0.01f, 0);
    if (cpu) {
        round_trip(cpu, DLB_U8, 0.025f, 128);
        round_trip(cpu, DLB_S8, 0.01f, 0);
    }
    test_layers();
    test_pool();
    test_chain();
    test_rewrite();
    test_grouped_layers();
    test_add_layers();
    dlb_backend_close(cpu);
    dlb_backend_close(ref);
    return check_exit();
}
