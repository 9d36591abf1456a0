/* The cuda backend against the ref backend, op by op, forward and
 * backward, on random inputs that are never zero: LeNet's and vgg-small's
 * layer shapes at small batches (ref is slow on purpose), odd shapes
 * (stride 2, padding, batch 1 and 3, non-square), each float type, mixed
 * types as a mixed-precision model runs them, and the error paths.
 *
 * Bounds, relative to the norm (||cuda - ref|| / ||ref||):
 *   f32, strict (TF32 off): 1e-5 element-wise ops and the loss; 1e-4
 *        convolution, linear and batch norm (cuDNN's Winograd/FFT
 *        algorithms and one-pass statistics in f32, ref in double);
 *   tf32 (DLBENCH_CUDA_TF32=1): 5e-3 (10-bit mantissa inputs, f32 sums);
 *   f16: 5e-3 (one rounding is 2^-11 relative; inputs and outputs rounded);
 *   bf16: 1e-2 (one rounding is 2^-9).
 * Whole LeNet passes (chains) in a 16-bit type: twice the type's bound,
 * since roundings compound from layer to layer.
 * Identical: the dropout mask and values, the max-pool workspace (in a
 * 16-bit chain: differing only at ties, see expect_route_ties), casts,
 * scale, fill, (de)quantisation, int8 max pooling, concatenation; SGD
 * within 1e-6 per element. int8 convolution and linear layers: within
 * backend.h's bound (1 LSB for s8/u8 y, 1e-6 relative for f32 y),
 * expected identical (see test_int8_and_sparse); a grouped one is
 * refused, naming the groups. CSR linear layers: TOL_F32.
 * The checks this test shares with the cpu backend's are in
 * tests/unit/backend_pair_ops.h and backend_pair_lenet.h. Exits 77
 * without a GPU. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/dtype.h"
#include "backend/int8.h"
#include "backend_pair.h"
#include "backend_pair_lenet.h"
#include "backend_pair_ops.h"
#include "chain_ties.h"
#include "gpu_open.h"
#include "util/rng.h"

#define TOL_F32 1e-5
#define TOL_F32_DNN 1e-4
#define TOL_TF32 5e-3
#define TOL_F16 5e-3
#define TOL_BF16 1e-2

static double tol_f32_dnn = TOL_F32_DNN; /* TOL_TF32 in the TF32 pass */

/* The bounds listed above, for backend_pair.h's checks. */
static double tol_of(enum dlb_dtype t, int dnn)
{
    return t == DLB_BF16 ? TOL_BF16 : t == DLB_F16 ? TOL_F16
           : dnn ? tol_f32_dnn : TOL_F32;
}

#define NEAR_CHAIN(what, p)                                                 \
    expect_tol(what, p, ((p).t == DLB_F32 ? 1.0 : 2.0) * tol_of((p).t, 1))

/* ---- convolution ------------------------------------------------------ */

/* bf16 (or f16) weights with f32 activations in and out, the weight
 * gradient in either type: the compute type's bound. */
static void test_conv_mixed(enum dlb_dtype lp, enum dlb_dtype dwt)
{
    struct dlb_conv2d_desc d = conv_desc(2, 10, 12, 12, 20, 5, 1, 0);
    size_t xn = (size_t)2 * 10 * 144, wn = (size_t)20 * 10 * 25;
    size_t yn = (size_t)2 * 20 * 64;
    struct pair x = rand_pair(DLB_F32, xn, 1.0), w = rand_pair(lp, wn, 0.3);
    struct pair b = rand_pair(DLB_F32, 20, 1.0), dy = rand_pair(DLB_F32, yn, 1.0);
    struct pair y = out_pair(DLB_F32, yn), dx = out_pair(DLB_F32, xn);
    struct pair dw = out_pair(dwt, wn), db = out_pair(DLB_F32, 20);
    double tol = tol_of(lp, 1);
    CALL(conv2d_fwd, &d, B(x), B(w), B(b), B(y));
    expect_tol("conv fwd mixed: low-precision w, f32 x/y", y, tol);
    CALL(conv2d_bwd_data, &d, B(w), B(dy), B(dx));
    expect_tol("conv bwd_data mixed", dx, tol);
    CALL(conv2d_bwd_weights, &d, B(x), B(dy), B(dw), B(db));
    expect_tol("conv bwd_weights mixed", dw, tol);
    expect_tol("conv bwd_bias mixed (f32 dy)", db, TOL_F32_DNN);
    RELEASE(&x, &w, &b, &dy, &y, &dx, &dw, &db);
}

/* ---- relu ------------------------------------------------------------ */

/* Here, not in backend_pair_ops.h: the cuda backend's relu is asserted
 * identical to ref's, where the cpu test bounds oneDNN's. */
static void test_relu(size_t count, enum dlb_dtype t)
{
    struct pair x = rand_pair(t, count, 1.0), dy = rand_pair(t, count, 1.0);
    struct pair y = out_pair(t, count), dx = out_pair(t, count);
    CALL(relu_fwd, count, B(x), B(y));
    expect_same("relu fwd", y);
    CALL(relu_bwd, count, B(y), B(dy), B(dx));
    expect_same("relu bwd", dx);
    CALL(relu_fwd, count, B(x), B(x));
    expect_same("relu fwd in place", x);
    RELEASE(&x, &dy, &y, &dx);
}

/* ---- element-wise ------------------------------------------------------ */

static void test_elementwise(size_t count)
{
    struct pair x = rand_pair(DLB_F32, count, 100.0);
    struct pair xb = out_pair(DLB_BF16, count), xf = out_pair(DLB_F32, count);
    struct pair xh = out_pair(DLB_F16, count);
    int found = -1;
    CALL(cast, count, B(x), B(xb));
    expect_same("cast f32 -> bf16", xb);
    CALL(cast, count, B(xb), B(xf));
    expect_same("cast bf16 -> f32", xf);
    CALL(cast, count, B(x), B(xh));
    expect_same("cast f32 -> f16", xh);
    CALL(cast, count, B(xh), B(xb));
    expect_same("cast f16 -> bf16", xb);
    CALL(scale, count, B(x), 0.37f);
    expect_same("scale f32", x);
    CALL(scale, count, B(xb), -3.1f);
    expect_same("scale bf16", xb);
    CHECK(DLB_RUN(dev, check_finite, count, x.d, &found) == DLB_OK);
    CHECK(found == 0);
    float bad = NAN;
    size_t at = count - count / 3;
    CHECK(DLB_BE_CALL(dev, copy_from_host, x.d, at * 4, &bad, 4) == DLB_OK);
    CHECK(DLB_RUN(dev, check_finite, count, x.d, &found) == DLB_OK);
    CHECK(found == 1);
    CHECK(DLB_RUN(dev, cast, count, x.d, xb.d) == DLB_OK);
    CHECK(DLB_RUN(dev, check_finite, count, xb.d, &found) == DLB_OK);
    CHECK(found == 1);
    bad = -INFINITY;
    CHECK(DLB_BE_CALL(dev, copy_from_host, x.d, at * 4, &bad, 4) == DLB_OK);
    CHECK(DLB_RUN(dev, check_finite, count, x.d, &found) == DLB_OK);
    CHECK(found == 1);
    CALL(fill, count, B(xf), -0.3);
    expect_same("fill f32", xf);
    CALL(fill, count, B(xb), 1.0 / 3.0);
    expect_same("fill bf16", xb);
    CALL(fill, count, B(xh), 70000.0);
    expect_same("fill f16 (overflow to inf)", xh);
    struct pair q = out_pair(DLB_S8, count), u = out_pair(DLB_U8, count);
    struct pair y = rand_pair(DLB_F32, count, 3.0);
    CALL(quantize, count, B(y), B(q), 0.02f, 3);
    expect_same("quantize s8", q);
    CALL(quantize, count, B(y), B(u), 0.05f, 128);
    expect_same("quantize u8", u);
    CALL(dequantize, count, B(q), B(y), 0.02f, 3);
    expect_same("dequantize s8", y);
    struct pair cp = out_pair(DLB_F32, count);
    BOTH CHECK(DLB_BE_CALL(BE, copy, B(cp), 0, B(y), 0, count * 4) == DLB_OK);
    BOTH CHECK(DLB_BE_CALL(BE, copy, B(cp), 4, B(cp), 0, (count - 1) * 4) == DLB_OK); /* overlapping */
    expect_same("copy, overlapping copy", cp);
    RELEASE(&x, &xb, &xf, &xh, &q, &u, &y, &cp);
}

/* ---- chains, as the model runs them ------------------------------------ */

static void test_chain_lenet(enum dlb_dtype t, uint32_t n)
{
    struct lenet_chain c;
    lenet_open(&c, t, n);
    lenet_forward(&c);
    NEAR_CHAIN("chain lenet fwd logits", c.y6);
    NEAR_CHAIN("chain lenet conv1 output", c.y1);
    if (t == DLB_F32) {
        expect_same("chain lenet pool1 workspace", c.ws1);
        expect_same("chain lenet pool2 workspace", c.ws2);
    } else {
        expect_route_ties("chain lenet pool1 routes", c.ws1, c.y1, &c.p1,
                          2.0 * tol_of(t, 0));
        expect_route_ties("chain lenet pool2 routes", c.ws2, c.y3, &c.p2,
                          2.0 * tol_of(t, 0));
        expect_relu_ties("chain lenet relu after pool1", c.y2,
                         2.0 * tol_of(t, 0));
        expect_relu_ties("chain lenet relu after pool2", c.y4,
                         2.0 * tol_of(t, 0));
        expect_relu_ties("chain lenet relu after fc1", c.y5,
                         2.0 * tol_of(t, 0));
    }
    lenet_backward(&c);
    NEAR_CHAIN("chain lenet fc1 dw", c.dw3);
    NEAR_CHAIN("chain lenet fc1 dx (flatten)", c.g4);
    NEAR_CHAIN("chain lenet conv2 dx", c.g2);
    NEAR_CHAIN("chain lenet conv2 dw", c.dw2);
    NEAR_CHAIN("chain lenet conv1 dw", c.dw1);
    NEAR_CHAIN("chain lenet conv1 db", c.db1);
    lenet_close(&c);
}

/* ---- int8 inference and CSR linear layers ------------------------------
 * int8: the integer part is exact on both sides, and the cuda epilogue
 * repeats ref's float steps one by one with round-to-nearest intrinsics
 * (cuda_int8.cu), so y should be identical. The bound asserted is
 * backend.h's contract, which lets a backend add the bias in another
 * order: 1 LSB for s8/u8 y, 1e-6 relative for f32 y; each line says how
 * many elements were not identical, so that a GPU run shows whether the
 * stricter expectation holds. CSR: cuSPARSE's f32 sums against ref's
 * double, TOL_F32. */
#define TOL_INT8_F32 1e-6

static struct pair rand_ints(enum dlb_dtype t, size_t n, int32_t lo,
                             int32_t hi)
{
    float *v = malloc(n * sizeof *v + 1);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(lo + (int32_t)dlb_rng_below(&rng, (uint64_t)(hi - lo) + 1));
    struct pair p = from_floats(t, v, n);
    free(v);
    return p;
}

static void expect_int8(const char *what, struct pair p)
{
    double *a = download(dev, p.d, p.n, p.t);
    double *b = download(ref, p.r, p.n, p.t);
    double num = 0.0, den = 0.0, worst = 0.0;
    size_t differ = 0;
    for (size_t i = 0; i < p.n; i++) {
        double d = fabs(a[i] - b[i]);
        differ += d != 0.0;
        worst = d > worst ? d : worst;
        num += d * d;
        den += b[i] * b[i];
    }
    double rel = den > 0.0 ? sqrt(num / den) : sqrt(num);
    int ok = p.t == DLB_F32 ? rel <= TOL_INT8_F32 : worst <= 1.0;
    check_count++;
    if (!ok) {
        check_failures++;
        fprintf(stderr, "FAIL %s (%s): %zu of %zu differ, worst %g%s\n", what,
                dlb_dtype_name(p.t), differ, p.n, worst,
                p.t == DLB_F32 ? "" : " LSB (bound 1)");
    } else if (!differ) {
        fprintf(stderr, "ok   %-46s %-4s identical\n", what, dlb_dtype_name(p.t));
    } else {
        fprintf(stderr, "ok   %-46s %-4s %zu of %zu within the bound, worst "
                "%g\n", what, dlb_dtype_name(p.t), differ, p.n, worst);
    }
    free(a);
    free(b);
}

/* One int8 layer's setting: activations (s8, u8, or f32 quantised to
 * x_type), weight scales, output type, ReLU, bias; zp is u8 x's zero
 * point (-1: 37, which needs the row-sum correction). */
struct int8_case {
    enum dlb_dtype xt;
    int x_f32, per_channel;
    enum dlb_dtype yt;
    int relu, bias, zp;
};

/* x, w, scales and bias of a layer with `out` channels and k inputs per
 * output; weights small enough that |acc| stays below 2^24 (backend.h). */
static void int8_operands(const struct int8_case *c, size_t xn, uint32_t out,
                          uint32_t k, struct dlb_int8_desc *q, struct pair *x,
                          struct pair *w, struct pair *ws, struct pair *b)
{
    int32_t wmax = (int32_t)(((1 << 24) - 1) / (255.0 * k));
    wmax = wmax > 127 ? 127 : wmax < 1 ? 1 : wmax;
    memset(q, 0, sizeof *q);
    q->x_type = c->xt;
    q->x_scale = 0.02f;
    q->x_zero_point = c->xt == DLB_U8 ? (c->zp < 0 ? 37 : c->zp) : 0;
    /* outputs of a few dozen LSB, some beyond the range (clamping) */
    q->y_scale = (float)(0.02 * 0.005 * sqrt((double)k) * 60.0 * wmax / 40.0);
    q->y_zero_point = c->yt == DLB_U8 ? 100 : 0;
    q->relu = c->relu;
    *x = c->x_f32 ? rand_pair(DLB_F32, xn, 2.0)
                  : rand_ints(c->xt, xn, dlb_int8_lo(c->xt),
                              dlb_int8_hi(c->xt));
    *w = rand_ints(DLB_S8, (size_t)out * k, -wmax, wmax);
    uint32_t ns = c->per_channel ? out : 1;
    float *s = malloc(ns * sizeof *s);
    for (uint32_t i = 0; i < ns; i++)
        s[i] = (float)(0.002 + 0.008 * dlb_rng_double(&rng));
    *ws = from_floats(DLB_F32, s, ns);
    free(s);
    *b = c->bias ? rand_ints(DLB_S32, out, -20000, 20000) : none;
}

static void int8_name(char *what, size_t len, const char *layer,
                      const struct int8_case *c)
{
    snprintf(what, len, "%s %s%s x%s, w per %s%s%s", layer,
             c->x_f32 ? "f32->" : "", dlb_dtype_name(c->xt),
             c->xt == DLB_U8 && c->zp == 128 ? " zp128" : "",
             c->per_channel ? "channel" : "tensor", c->relu ? " relu" : "",
             c->bias ? " +b" : "");
}

static void test_linear_int8(const char *name, uint32_t n, uint32_t in,
                             uint32_t out, struct int8_case c)
{
    char what[160];
    struct dlb_linear_desc d = { n, in, out };
    struct dlb_int8_desc q;
    struct pair x, w, ws, b, y = out_pair(c.yt, (size_t)n * out);
    int8_operands(&c, (size_t)n * in, out, in, &q, &x, &w, &ws, &b);
    CALL(linear_int8_fwd, &d, &q, B(x), B(w), B(ws), B(b), B(y));
    int8_name(what, sizeof what, name, &c);
    expect_int8(what, y);
    RELEASE(&x, &w, &ws, &b, &y);
}

static void test_conv_int8(const char *name, struct dlb_conv2d_desc d,
                           struct int8_case c)
{
    char what[160];
    struct dlb_int8_desc q;
    size_t xn = (size_t)d.n * d.in_c * d.in_h * d.in_w;
    struct pair x, w, ws, b;
    struct pair y = out_pair(c.yt, (size_t)d.n * d.out_c * d.out_h * d.out_w);
    int8_operands(&c, xn, d.out_c, d.in_c * d.kh * d.kw, &q, &x, &w, &ws, &b);
    CALL(conv2d_int8_fwd, &d, &q, B(x), B(w), B(ws), B(b), B(y));
    int8_name(what, sizeof what, name, &c);
    expect_int8(what, y);
    RELEASE(&x, &w, &ws, &b, &y);
}

static void test_pool_int8(enum dlb_dtype t, uint32_t n, uint32_t ch,
                           uint32_t h, uint32_t w, uint32_t k, uint32_t stride,
                           uint32_t pad)
{
    char what[160];
    struct dlb_pool_desc d = { DLB_POOL_MAX, n, ch, h, w, k, k, stride, stride,
                               pad, pad, dlb_conv_out_size(h, k, stride, pad),
                               dlb_conv_out_size(w, k, stride, pad) };
    size_t yn = (size_t)n * ch * d.out_h * d.out_w;
    struct pair x = rand_ints(t, (size_t)n * ch * h * w, dlb_int8_lo(t),
                              dlb_int8_hi(t));
    struct pair y = out_pair(t, yn);
    CALL(pool_int8_fwd, &d, B(x), B(y));
    snprintf(what, sizeof what, "int8 max pool %ux%u s%u pad%u", k, k, stride,
             pad);
    expect_same(what, y);
    d.kind = DLB_POOL_AVG;
    CHECK(DLB_RUN(dev, pool_int8_fwd, &d, x.d, y.d)
              == DLB_ERR_UNSUPPORTED);
    RELEASE(&x, &y);
}

/* Dense weights [out][in] with the given share of zeros, as CSR. */
struct csr {
    struct pair rows, cols, vals;
    uint32_t nnz;
};

static struct csr make_csr(uint32_t in, uint32_t out, double sparsity)
{
    float *rows = malloc((out + 1) * sizeof *rows);
    float *cols = calloc((size_t)in * out + 1, sizeof *cols);
    float *vals = calloc((size_t)in * out + 1, sizeof *vals);
    uint32_t nnz = 0;
    for (uint32_t o = 0; o < out; o++) {
        rows[o] = (float)nnz;
        for (uint32_t i = 0; i < in; i++)
            if (dlb_rng_double(&rng) >= sparsity) {
                cols[nnz] = (float)i;
                vals[nnz++] = (float)(0.3 * rand_nonzero());
            }
    }
    rows[out] = (float)nnz;
    struct csr c = { from_floats(DLB_S32, rows, out + 1),
                     from_floats(DLB_S32, cols, nnz ? nnz : 1),
                     from_floats(DLB_F32, vals, nnz ? nnz : 1), nnz };
    free(rows);
    free(cols);
    free(vals);
    return c;
}

static void csr_run(const char *name, uint32_t n, uint32_t in, uint32_t out,
                    const struct csr *w, int bias)
{
    char what[160];
    struct dlb_csr_linear_desc d = { n, in, out, w->nnz };
    struct pair x = rand_pair(DLB_F32, (size_t)n * in, 1.0);
    struct pair b = bias ? rand_pair(DLB_F32, out, 1.0) : none;
    struct pair y = out_pair(DLB_F32, (size_t)n * out);
    CALL(csr_linear_fwd, &d, B(x), B(w->rows), B(w->cols), B(w->vals), B(b),
         B(y));
    snprintf(what, sizeof what, "csr linear %s%s", name, bias ? " +bias" : "");
    NEAR(what, y);
    RELEASE(&x, &b, &y);
}

static void test_csr(const char *name, uint32_t n, uint32_t in, uint32_t out,
                     double sparsity, int bias)
{
    char what[160];
    struct csr w = make_csr(in, out, sparsity);
    snprintf(what, sizeof what, "%s b%u %.0f%%", name, n, 100.0 * sparsity);
    csr_run(what, n, in, out, &w, bias);
    /* the kept descriptor, at the same and at another batch size */
    snprintf(what, sizeof what, "%s b%u %.0f%% again", name, n, 100.0 * sparsity);
    csr_run(what, n, in, out, &w, bias);
    snprintf(what, sizeof what, "%s b%u %.0f%% (kept weights)", name, n + 5,
             100.0 * sparsity);
    csr_run(what, n + 5, in, out, &w, bias);
    RELEASE(&w.rows, &w.cols, &w.vals);
}

/* A broken structure is reported at the next wait (columns in range but
 * out of order, so that cuSPARSE reads nothing out of bounds); f16 x is
 * refused. */
static void test_csr_errors(void)
{
    const float rows[3] = { 0, 2, 3 }, cols[3] = { 5, 3, 1 }, vals[3] = { 1, 2, 3 };
    struct pair r = from_floats(DLB_S32, rows, 3), c = from_floats(DLB_S32, cols, 3);
    struct pair v = from_floats(DLB_F32, vals, 3);
    struct pair x = rand_pair(DLB_F32, 8, 1.0), y = out_pair(DLB_F32, 2);
    struct pair xh = rand_pair(DLB_F16, 8, 1.0);
    struct dlb_csr_linear_desc d = { 1, 8, 2, 3 };
    CHECK(DLB_RUN(dev, csr_linear_fwd, &d, x.d, r.d, c.d, v.d, NULL, y.d) ==
          DLB_OK);
    CHECK(DLB_BE_CALL0(dev, synchronize) == DLB_ERR_INTERNAL);
    CHECK(strstr(dlb_backend_last_error(dev), "CSR") != NULL);
    CHECK(DLB_BE_CALL0(dev, synchronize) == DLB_OK);
    CHECK(DLB_RUN(dev, csr_linear_fwd, &d, xh.d, r.d, c.d, v.d, NULL, y.d) ==
          DLB_ERR_UNSUPPORTED);
    RELEASE(&r, &c, &v, &x, &y, &xh);
}

static void test_int8_and_sparse(void)
{
    const enum dlb_dtype U8 = DLB_U8, S8 = DLB_S8, F32 = DLB_F32;
    /* linear: m and k multiples of 4 take cuBLASLt's IMMA path, the rest
     * (out 10, in 17) the dp4a kernel */
    test_linear_int8("int8 linear lenet fc1 b4", 4, 320, 50,
                     (struct int8_case){ U8, 0, 0, F32, 0, 1, -1 });
    test_linear_int8("int8 linear lenet fc1 b4", 4, 320, 52,
                     (struct int8_case){ U8, 0, 1, U8, 1, 1, -1 });
    test_linear_int8("int8 linear 84->10 b3", 3, 84, 10,
                     (struct int8_case){ S8, 0, 1, S8, 0, 1, 0 });
    test_linear_int8("int8 linear 17->5 b3", 3, 17, 5,
                     (struct int8_case){ U8, 1, 1, U8, 1, 1, -1 });
    test_linear_int8("int8 linear 120->84 b1", 1, 120, 84,
                     (struct int8_case){ S8, 1, 0, S8, 0, 0, 0 });
    test_linear_int8("int8 linear 64->32 b7", 7, 64, 32,
                     (struct int8_case){ U8, 0, 1, F32, 1, 1, 128 });
    test_linear_int8("int8 linear 400->120 b64", 64, 400, 120,
                     (struct int8_case){ S8, 0, 1, F32, 0, 1, 0 });
    test_linear_int8("int8 linear 400->120 b64", 64, 400, 120,
                     (struct int8_case){ U8, 1, 0, S8, 1, 1, -1 });
    /* conv: im2col pads k to a multiple of 4, the weights to out_c's */
    test_conv_int8("int8 conv lenet conv1 b3", conv_desc(3, 1, 28, 28, 6, 5, 1, 0),
                   (struct int8_case){ U8, 1, 1, U8, 1, 1, -1 });
    test_conv_int8("int8 conv lenet conv2 b2", conv_desc(2, 6, 12, 12, 16, 5, 1, 0),
                   (struct int8_case){ U8, 0, 1, F32, 0, 1, -1 });
    test_conv_int8("int8 conv vgg 3x3 pad1 b2", conv_desc(2, 32, 14, 14, 64, 3, 1, 1),
                   (struct int8_case){ S8, 0, 0, S8, 1, 1, 0 });
    test_conv_int8("int8 conv vgg first 3->32 pad1 b2",
                   conv_desc(2, 3, 32, 32, 32, 3, 1, 1),
                   (struct int8_case){ U8, 1, 1, U8, 1, 1, -1 });
    test_conv_int8("int8 conv 3->5 s2 pad2 7x9 b2", conv_desc(2, 3, 7, 9, 5, 3, 2, 2),
                   (struct int8_case){ U8, 0, 1, U8, 0, 1, -1 });
    test_conv_int8("int8 conv 7->13 pad1 b1", conv_desc(1, 7, 10, 10, 13, 3, 1, 1),
                   (struct int8_case){ S8, 1, 1, F32, 0, 0, 0 });
    test_pool_int8(S8, 2, 10, 24, 24, 2, 2, 0);
    test_pool_int8(U8, 3, 4, 9, 7, 3, 2, 1);
    test_csr("lenet fc1", 4, 320, 50, 0.5, 1);
    test_csr("lenet fc1", 4, 320, 50, 0.9, 1);
    test_csr("fc 400->120", 1, 400, 120, 0.9, 0);
    test_csr("fc 400->120", 33, 400, 120, 0.5, 1);
    test_csr("all zero", 3, 50, 10, 1.0, 1);
    test_csr_errors();
}

/* ---- errors, timers, capabilities -------------------------------------- */

static void test_errors(void)
{
    struct dlb_buffer *huge = NULL, *f64 = NULL, *y = NULL, *lab = NULL;
    struct dlb_buffer *loss = NULL;
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(dev);
    /* Out of device memory is NOMEM (the configuration's status oom), with
     * the reason, and does not poison the next call. */
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F32, (size_t)1 << 48, &huge) ==
          DLB_ERR_NOMEM);
    CHECK(huge == NULL);
    CHECK(strstr(dlb_backend_last_error(dev), "out of device memory") != NULL);
    fprintf(stderr, "oom: %s\n", dlb_backend_last_error(dev));
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F32, 16, &y) == DLB_OK);
    /* f64 is refused with a reason, never computed in another type */
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F64, 16, &f64) == DLB_OK);
    CHECK(DLB_RUN(dev, relu_fwd, 16, f64, f64)
              == DLB_ERR_UNSUPPORTED);
    CHECK(strstr(dlb_backend_last_error(dev), "f64") != NULL);
    /* a bad label surfaces at the next synchronize */
    int32_t labels[2] = { 1, 12 };
    struct dlb_loss_desc ld = { 2, 8 };
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_S32, 2, &lab) == DLB_OK);
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F32, 1, &loss) == DLB_OK);
    CHECK(DLB_BE_CALL(dev, copy_from_host, lab, 0, labels, sizeof labels) == DLB_OK);
    CHECK(DLB_RUN(dev, fill, 16, y, -1.0) == DLB_OK);
    CHECK(DLB_RUN(dev, nll_loss, &ld, y, lab, loss) == DLB_OK);
    CHECK(DLB_BE_CALL0(dev, synchronize) == DLB_ERR_INTERNAL);
    CHECK(strstr(dlb_backend_last_error(dev), "label") != NULL);
    CHECK(DLB_BE_CALL0(dev, synchronize) == DLB_OK); /* reported once */
    ops->buffer_free(dev, y);
    ops->buffer_free(dev, f64);
    ops->buffer_free(dev, lab);
    ops->buffer_free(dev, loss);
}

static void test_timer_and_info(void)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(dev);
    struct dlb_timer *t = NULL;
    struct dlb_buffer *b = NULL;
    struct dlb_device_info info;
    char reason[256] = "";
    double secs = -1.0;
    CHECK(ops->timer_create(dev, &t) == DLB_OK);
    CHECK(ops->buffer_alloc(dev, DLB_F32, 1 << 20, &b) == DLB_OK);
    CHECK(ops->timer_start(dev, t) == DLB_OK);
    for (int i = 0; i < 10; i++)
        CHECK(DLB_RUN(dev, scale, (size_t)1 << 20, b, 1.0f) == DLB_OK);
    CHECK(ops->timer_stop(dev, t) == DLB_OK);
    CHECK(ops->synchronize(dev) == DLB_OK);
    CHECK(ops->timer_elapsed(dev, t, &secs) == DLB_OK);
    CHECK(secs > 0.0 && secs < 1.0);
    ops->timer_destroy(dev, t);
    ops->buffer_free(dev, b);
    CHECK(ops->device_info(dev, &info) == DLB_OK);
    CHECK(info.compute_units > 0 && info.mem_total > 0 && info.device_count > 0);
    CHECK(strstr(info.driver, "cuDNN") != NULL);
    fprintf(stderr, "cuda backend: %s; %s; %.1f GiB\n", info.name, info.driver,
            (double)info.mem_total / 1073741824.0);
    /* int8 layers: cuBLASLt's int8 GEMM or dp4a on every device the
     * build runs on; the device record names cuSPARSE's version */
    CHECK(DLB_BE_CALL(dev, supports, DLB_CAP_INT8, reason, sizeof reason) ==
          DLB_OK);
    int sparse_listed = 0;
    for (int i = 0; i < 8 && info.libs[i].name[0]; i++)
        sparse_listed |= !strcmp(info.libs[i].name, "cusparse") &&
                         info.libs[i].version[0];
    CHECK(sparse_listed);
}

static void run_all(int with_16bit)
{
    test_conv("lenet conv1 b3", conv_desc(3, 1, 28, 28, 10, 5, 1, 0), DLB_F32, 1);
    test_conv("lenet conv2 b2", conv_desc(2, 10, 12, 12, 20, 5, 1, 0), DLB_F32, 1);
    test_conv("vgg 3x3 pad1 b2", conv_desc(2, 32, 14, 14, 64, 3, 1, 1), DLB_F32, 0);
    test_conv("stride2 pad2 5x7 b1", conv_desc(1, 3, 5, 7, 4, 3, 2, 2), DLB_F32, 1);
    test_linear("lenet fc1 b4", 4, 320, 50, DLB_F32, 1, 1);
    test_linear("first layer, no dx", 3, 17, 5, DLB_F32, 1, 0);
    test_bn("vgg bn b2", 2, 32, 196, DLB_F32);
    test_bn("after linear (hw 1) b8", 8, 50, 1, DLB_F32);
    test_add(DLB_F32, 100003);
    test_groups_relu6_concat(DLB_F32);
    if (!with_16bit)
        return;
    enum dlb_dtype lp[2] = { DLB_BF16, DLB_F16 };
    for (int k = 0; k < 2; k++) {
        test_conv("lenet conv2 b2", conv_desc(2, 10, 12, 12, 20, 5, 1, 0), lp[k], 1);
        test_conv("vgg 3x3 pad1 b2", conv_desc(2, 32, 14, 14, 64, 3, 1, 1), lp[k], 0);
        test_linear("lenet fc1 b4", 4, 320, 50, lp[k], 1, 1);
        test_bn("vgg bn b2", 2, 32, 196, lp[k]);
        test_pool("max 2x2 s2", DLB_POOL_MAX, 2, 10, 24, 24, 2, 2, 0, lp[k]);
        test_relu(1000, lp[k]);
        test_dropout(DLB_DROPOUT_ELEMENT, 4, 50, 1, 0.5f, lp[k]);
        test_loss(16, 10, lp[k]);
        test_conv_mixed(lp[k], DLB_F32);
        test_conv_mixed(lp[k], lp[k]);
        test_chain_lenet(lp[k], 2);
        test_add(lp[k], 1000);
        test_groups_relu6_concat(lp[k]);
    }
}

int main(void)
{
    struct dlb_backend_config cfg = { .seed = 7 };
    char why[512];
    pair_log_ok = 1; /* the per-operation error table of the device check */
    dlb_rng_seed(&rng, 20261129);
    dev = gpu_open_or_skip(&cfg);
    if (dlb_backend_open("ref", &cfg, &ref, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "ref: %s\n", why);
        return 1;
    }
    test_timer_and_info();
    test_errors();
    run_all(DLB_BE_CALL(dev, supports, DLB_CAP_BF16, why, sizeof why) == DLB_OK);
    test_pool("max 2x2 s2", DLB_POOL_MAX, 2, 10, 24, 24, 2, 2, 0, DLB_F32);
    test_pool("max 3x3 s2 pad1 (overlap)", DLB_POOL_MAX, 3, 4, 9, 7, 3, 2, 1, DLB_F32);
    test_pool("avg 7x7 global", DLB_POOL_AVG, 2, 128, 7, 7, 7, 7, 0, DLB_F32);
    test_pool("avg 3x3 s1 pad1", DLB_POOL_AVG, 2, 3, 6, 5, 3, 1, 1, DLB_F32);
    test_relu(100003, DLB_F32);
    test_dropout(DLB_DROPOUT_ELEMENT, 4, 50, 1, 0.5f, DLB_F32);
    test_dropout(DLB_DROPOUT_CHANNEL, 3, 20, 64, 0.5f, DLB_F32);
    test_dropout(DLB_DROPOUT_ELEMENT, 2, 10, 7, 1.0f, DLB_F32);
    test_loss(64, 10, DLB_F32);
    test_sgd(100003);
    test_elementwise(100003);
    test_chain_lenet(DLB_F32, 3);
    test_int8_and_sparse();

    /* TF32: the same convolutions and GEMMs with tensor-core f32 inputs. */
    dlb_backend_close(dev);
    setenv("DLBENCH_CUDA_TF32", "1", 1);
    dev = gpu_open_or_skip(&cfg);
    tol_f32_dnn = TOL_TF32;
    fprintf(stderr, "-- tf32 --\n");
    run_all(0);
    dlb_backend_close(dev);

    /* search: the timed choice, then the cached one, same results; the
     * cache file in a directory of this test's own. */
    char cache[] = "/tmp/dlbench-cuda-test.XXXXXX";
    CHECK(mkdtemp(cache) != NULL);
    setenv("DLBENCH_CACHE_DIR", cache, 1);
    setenv("DLBENCH_CUDA_TF32", "0", 1);
    setenv("DLBENCH_CUDNN_ALGO", "search", 1);
    setenv("DLBENCH_CUDA_ALLOC", "async", 1);
    dev = gpu_open_or_skip(&cfg);
    tol_f32_dnn = TOL_F32_DNN;
    fprintf(stderr, "-- cudnn search, stream-ordered allocation --\n");
    test_chain_lenet(DLB_F32, 2);
    test_conv("vgg 3x3 pad1 b2 (searched)", conv_desc(2, 32, 14, 14, 64, 3, 1, 1),
              DLB_F32, 0);
    dlb_backend_close(dev);
    dev = gpu_open_or_skip(&cfg);
    test_conv("vgg 3x3 pad1 b2 (from the cache)",
              conv_desc(2, 32, 14, 14, 64, 3, 1, 1), DLB_F32, 0);
    dlb_backend_close(dev);
    char file[sizeof cache + 32];
    snprintf(file, sizeof file, "%s/cudnn-algos.tsv", cache);
    FILE *f = fopen(file, "r");
    CHECK(f != NULL); /* the search kept its choices */
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            fprintf(stderr, "cache: %s", line);
        fclose(f);
    }
    remove(file);
    rmdir(cache);
    dlb_backend_close(ref);
    return check_exit();
}
