/* The cpu backend (oneDNN) against the ref backend, op by op, forward and
 * backward, on random inputs that are never zero, at LeNet's and
 * vgg-small's real layer shapes (small batches: ref is slow on purpose)
 * and at odd shapes (stride 2, padding, batch 1 and 3, non-square).
 *
 * Bounds, relative to the norm (||cpu - ref|| / ||ref||):
 *   fp32: 1e-5 (oneDNN accumulates in fp32, ref in double);
 *   bf16: 1e-2 (both see the same bf16 inputs and round outputs to bf16;
 *         one bf16 rounding is 2^-9 = 2e-3 relative per element).
 * Identical: the dropout mask and values, the max-pool workspace, casts,
 * (de)quantisation, fill; SGD within 1e-6 per element.
 * Exits 77 when the cpu backend is not built in. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_impl.h" /* buffer data: its alignment */
#include "backend/dtype.h"
#include "rng.h"

#define TOL_F32 1e-5
#define TOL_BF16 1e-2

static struct dlb_backend *cpu, *ref;
static struct dlb_rng rng;

/* The same tensor on both backends. */
struct pair {
    struct dlb_buffer *c, *r;
    size_t n;
    enum dlb_dtype t;
};

static const struct pair none = { NULL, NULL, 0, DLB_F32 };

/* Pick the cpu or the ref side of a pair inside a `side` loop. */
#define B(p) (side ? (p).r : (p).c)
#define B0(p) ((p).c)
#define BE (side ? ref : cpu)
#define BOTH for (int side = 0; side < 2; side++)

static double rand_nonzero(void)
{
    double m = 0.1 + 0.9 * dlb_rng_double(&rng);
    return dlb_rng_below(&rng, 2) ? m : -m;
}

static struct pair alloc_pair(enum dlb_dtype t, size_t n)
{
    struct pair p = { NULL, NULL, n, t };
    CHECK(DLB_BE_CALL(cpu, buffer_alloc, t, n, &p.c) == DLB_OK);
    CHECK(DLB_BE_CALL(ref, buffer_alloc, t, n, &p.r) == DLB_OK);
    return p;
}

static void upload(struct pair p, const void *host)
{
    size_t bytes = p.n * dlb_dtype_size(p.t);
    CHECK(DLB_BE_CALL(cpu, copy_from_host, p.c, 0, host, bytes) == DLB_OK);
    CHECK(DLB_BE_CALL(ref, copy_from_host, p.r, 0, host, bytes) == DLB_OK);
}

/* Host values of `n` floats in type t (rounded for bf16). */
static void *host_of(enum dlb_dtype t, const float *v, size_t n)
{
    void *h = malloc(n * dlb_dtype_size(t) + 1);
    for (size_t i = 0; i < n; i++) {
        if (t == DLB_F32) {
            ((float *)h)[i] = v[i];
        } else if (t == DLB_BF16) {
            ((uint16_t *)h)[i] = dlb_f32_to_bf16(v[i]);
        } else if (t == DLB_F16) {
            ((uint16_t *)h)[i] = dlb_f32_to_f16(v[i]);
        } else if (t == DLB_F64) {
            ((double *)h)[i] = v[i];
        } else if (t == DLB_S32) {
            ((int32_t *)h)[i] = (int32_t)v[i];
        }
    }
    return h;
}

static struct pair from_floats(enum dlb_dtype t, const float *v, size_t n)
{
    struct pair p = alloc_pair(t, n);
    void *h = host_of(t, v, n);
    upload(p, h);
    free(h);
    return p;
}

/* Random, never zero, scaled by `scale`. */
static struct pair rand_pair(enum dlb_dtype t, size_t n, double scale)
{
    float *v = malloc(n * sizeof *v + 1);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(scale * rand_nonzero());
    struct pair p = from_floats(t, v, n);
    free(v);
    return p;
}

/* An output: filled with garbage on both sides, so unwritten elements
 * show up. */
static struct pair out_pair(enum dlb_dtype t, size_t n)
{
    struct pair p = alloc_pair(t, n);
    CHECK(DLB_BE_CALL(cpu, fill, n, p.c, 123.0) == DLB_OK);
    CHECK(DLB_BE_CALL(ref, fill, n, p.r, -77.0) == DLB_OK);
    return p;
}

static void release(struct pair *p)
{
    dlb_backend_ops_of(cpu)->buffer_free(cpu, p->c);
    dlb_backend_ops_of(ref)->buffer_free(ref, p->r);
    p->c = p->r = NULL;
}

static double *download(struct dlb_backend *be, const struct dlb_buffer *b,
                        size_t n, enum dlb_dtype t)
{
    size_t esz = dlb_dtype_size(t);
    unsigned char *raw = malloc(n * esz + 1);
    double *v = malloc(n * sizeof *v + 1);
    CHECK(DLB_BE_CALL(be, copy_to_host, raw, b, 0, n * esz) == DLB_OK);
    for (size_t i = 0; i < n; i++) {
        float f;
        uint16_t h;
        int32_t k;
        switch (t) {
        case DLB_F32: memcpy(&f, raw + 4 * i, 4); v[i] = f; break;
        case DLB_BF16: memcpy(&h, raw + 2 * i, 2); v[i] = dlb_bf16_to_f32(h); break;
        case DLB_F16: memcpy(&h, raw + 2 * i, 2); v[i] = dlb_f16_to_f32(h); break;
        case DLB_F64: memcpy(&v[i], raw + 8 * i, 8); break;
        case DLB_S32: memcpy(&k, raw + 4 * i, 4); v[i] = k; break;
        case DLB_S8: v[i] = (signed char)raw[i]; break;
        case DLB_U8: v[i] = raw[i]; break;
        }
    }
    free(raw);
    return v;
}

/* ||cpu - ref|| / ||ref|| over the pair's elements. */
static double rel_err(struct pair p)
{
    double *a = download(cpu, p.c, p.n, p.t);
    double *b = download(ref, p.r, p.n, p.t);
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < p.n; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    free(a);
    free(b);
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static double tol_of(enum dlb_dtype t)
{
    return t == DLB_BF16 ? TOL_BF16 : TOL_F32;
}

static void expect_near(const char *what, struct pair p)
{
    double e = rel_err(p), tol = tol_of(p.t);
    check_count++;
    if (!(e <= tol)) {
        check_failures++;
        fprintf(stderr, "FAIL %s (%s): relative error %.3g > %.g\n", what,
                dlb_dtype_name(p.t), e, tol);
    } else if (getenv("DLB_TEST_VERBOSE")) {
        fprintf(stderr, "ok   %-44s %-4s rel err %.2e\n", what,
                dlb_dtype_name(p.t), e);
    }
}

/* Element for element identical (bitwise for floats but the sign of 0). */
static void expect_same(const char *what, struct pair p)
{
    double *a = download(cpu, p.c, p.n, p.t);
    double *b = download(ref, p.r, p.n, p.t);
    size_t bad = 0;
    for (size_t i = 0; i < p.n; i++)
        if (!(a[i] == b[i]) && !(a[i] != a[i] && b[i] != b[i]))
            bad++;
    check_count++;
    if (bad) {
        check_failures++;
        fprintf(stderr, "FAIL %s: %zu of %zu elements differ\n", what, bad, p.n);
    }
    free(a);
    free(b);
}

/* ---- convolution ---------------------------------------------------- */

static struct dlb_conv2d_desc conv_desc(uint32_t n, uint32_t ic, uint32_t h,
                                        uint32_t w, uint32_t oc, uint32_t k,
                                        uint32_t stride, uint32_t pad)
{
    struct dlb_conv2d_desc d = { n, ic, h, w, oc, k, k, stride, stride, pad,
                                 pad, 0, 0 };
    d.out_h = dlb_conv_out_size(h, k, stride, pad);
    d.out_w = dlb_conv_out_size(w, k, stride, pad);
    return d;
}

static void test_conv(const char *name, struct dlb_conv2d_desc d,
                      enum dlb_dtype t, int bias)
{
    char what[160];
    size_t xn = (size_t)d.n * d.in_c * d.in_h * d.in_w;
    size_t wn = (size_t)d.out_c * d.in_c * d.kh * d.kw;
    size_t yn = (size_t)d.n * d.out_c * d.out_h * d.out_w;
    struct pair x = rand_pair(t, xn, 1.0), w = rand_pair(t, wn, 0.3);
    struct pair b = bias ? rand_pair(t, d.out_c, 1.0) : none;
    struct pair dy = rand_pair(t, yn, 1.0);
    struct pair y = out_pair(t, yn), dx = out_pair(t, xn);
    struct pair dw = out_pair(t, wn);
    struct pair db = bias ? out_pair(t, d.out_c) : none;
    BOTH CHECK(DLB_BE_CALL(BE, conv2d_fwd, &d, B(x), B(w), B(b), B(y)) == DLB_OK);
    snprintf(what, sizeof what, "conv fwd %s%s", name, bias ? " +bias" : "");
    expect_near(what, y);
    BOTH CHECK(DLB_BE_CALL(BE, conv2d_bwd_data, &d, B(w), B(dy), B(dx)) == DLB_OK);
    snprintf(what, sizeof what, "conv bwd_data %s", name);
    expect_near(what, dx);
    BOTH CHECK(DLB_BE_CALL(BE, conv2d_bwd_weights, &d, B(x), B(dy), B(dw),
                           B(db)) == DLB_OK);
    snprintf(what, sizeof what, "conv bwd_weights %s", name);
    expect_near(what, dw);
    if (bias) {
        snprintf(what, sizeof what, "conv bwd_bias %s", name);
        expect_near(what, db);
    }
    struct pair *all[] = { &x, &w, &b, &dy, &y, &dx, &dw, &db };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

/* A reordered weight copy must follow every write of the weight buffer:
 * run, rewrite w through copy_from_host, sgd_update and fill, and compare
 * with ref after each. */
static void test_weight_versions(enum dlb_dtype t)
{
    struct dlb_conv2d_desc d = conv_desc(2, 16, 7, 7, 32, 3, 1, 1);
    size_t xn = (size_t)2 * 16 * 49, wn = (size_t)32 * 16 * 9;
    size_t yn = (size_t)2 * 32 * 49;
    struct pair x = rand_pair(t, xn, 1.0), w = rand_pair(t, wn, 0.3);
    struct pair y = out_pair(t, yn), dx = out_pair(t, xn);
    struct pair g = rand_pair(t, wn, 1.0), v = rand_pair(t, wn, 0.1);
    struct dlb_sgd_desc sgd = { wn, 0.5f, 0.9f, 0.01f };
    for (int round = 0; round < 4; round++) {
        BOTH CHECK(DLB_BE_CALL(BE, conv2d_fwd, &d, B(x), B(w), NULL, B(y))
                   == DLB_OK);
        BOTH CHECK(DLB_BE_CALL(BE, conv2d_bwd_data, &d, B(w), B(y), B(dx))
                   == DLB_OK);
        expect_near("weights rewritten: conv fwd", y);
        expect_near("weights rewritten: conv bwd_data", dx);
        if (round == 0) {
            struct pair w2 = rand_pair(t, wn, 0.3);
            BOTH CHECK(DLB_BE_CALL(BE, copy, B(w), 0, B(w2), 0,
                                   wn * dlb_dtype_size(t)) == DLB_OK);
            release(&w2);
        } else if (round == 1 && t == DLB_F32) {
            BOTH CHECK(DLB_BE_CALL(BE, sgd_update, &sgd, B(w), B(g), B(v))
                       == DLB_OK);
        } else if (round == 2) {
            BOTH CHECK(DLB_BE_CALL(BE, scale, wn, B(w), -0.5f) == DLB_OK);
        }
    }
    struct pair *all[] = { &x, &w, &y, &dx, &g, &v };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

/* ---- pooling, relu, dropout ---------------------------------------- */

static void test_pool(const char *name, enum dlb_pool_kind kind, uint32_t n,
                      uint32_t c, uint32_t h, uint32_t w, uint32_t k,
                      uint32_t stride, uint32_t pad, enum dlb_dtype t)
{
    char what[160];
    struct dlb_pool_desc d = { kind, n, c, h, w, k, k, stride, stride, pad, pad,
                               dlb_conv_out_size(h, k, stride, pad),
                               dlb_conv_out_size(w, k, stride, pad) };
    size_t xn = (size_t)n * c * h * w, yn = (size_t)n * c * d.out_h * d.out_w;
    struct pair x = rand_pair(t, xn, 1.0), dy = rand_pair(t, yn, 1.0);
    struct pair y = out_pair(t, yn), dx = out_pair(t, xn);
    struct pair ws = kind == DLB_POOL_MAX ? alloc_pair(DLB_S32, yn) : none;
    BOTH CHECK(DLB_BE_CALL(BE, pool_fwd, &d, B(x), B(y), B(ws)) == DLB_OK);
    snprintf(what, sizeof what, "pool fwd %s", name);
    expect_near(what, y);
    if (kind == DLB_POOL_MAX) {
        snprintf(what, sizeof what, "pool workspace %s", name);
        expect_same(what, ws);
    }
    BOTH CHECK(DLB_BE_CALL(BE, pool_bwd, &d, B(dy), B(ws), B(dx)) == DLB_OK);
    snprintf(what, sizeof what, "pool bwd %s", name);
    expect_near(what, dx);
    struct pair *all[] = { &x, &dy, &y, &dx, &ws };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

static void test_relu(size_t count, enum dlb_dtype t)
{
    struct pair x = rand_pair(t, count, 1.0), dy = rand_pair(t, count, 1.0);
    struct pair y = out_pair(t, count), dx = out_pair(t, count);
    BOTH CHECK(DLB_BE_CALL(BE, relu_fwd, count, B(x), B(y)) == DLB_OK);
    expect_near("relu fwd", y);
    BOTH CHECK(DLB_BE_CALL(BE, relu_bwd, count, B(y), B(dy), B(dx)) == DLB_OK);
    expect_near("relu bwd", dx);
    /* in place, as a model runs it */
    BOTH CHECK(DLB_BE_CALL(BE, relu_fwd, count, B(x), B(x)) == DLB_OK);
    expect_near("relu fwd in place", x);
    struct pair *all[] = { &x, &dy, &y, &dx };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

static void test_dropout(enum dlb_dropout_mode mode, uint32_t n, uint32_t c,
                         uint32_t hw, float p, enum dlb_dtype t)
{
    size_t count = (size_t)n * c * hw;
    struct dlb_dropout_desc d = { mode, n, c, hw, p, 0x1234abcdull + count };
    struct pair x = rand_pair(t, count, 1.0), dy = rand_pair(t, count, 1.0);
    struct pair y = out_pair(t, count);
    BOTH CHECK(DLB_BE_CALL(BE, dropout_fwd, &d, B(x), B(y)) == DLB_OK);
    expect_same(mode == DLB_DROPOUT_CHANNEL ? "dropout2d fwd (mask, values)"
                                            : "dropout fwd (mask, values)", y);
    BOTH CHECK(DLB_BE_CALL(BE, dropout_bwd, &d, B(dy), B(dy)) == DLB_OK);
    expect_same("dropout bwd in place", dy);
    release(&x);
    release(&dy);
    release(&y);
}

/* ---- batch normalisation -------------------------------------------- */

static void test_bn(const char *name, uint32_t n, uint32_t c, uint32_t hw,
                    enum dlb_dtype t)
{
    char what[160];
    struct dlb_batchnorm_desc d = { n, c, hw, 1e-5f, 0.1f };
    size_t cnt = (size_t)n * c * hw;
    struct pair x = rand_pair(t, cnt, 2.0), dy = rand_pair(t, cnt, 1.0);
    struct pair gamma = rand_pair(DLB_F32, c, 1.0);
    struct pair beta = rand_pair(DLB_F32, c, 1.0);
    struct pair rm = rand_pair(DLB_F32, c, 0.5);
    float *ones = malloc(c * sizeof *ones);
    for (uint32_t i = 0; i < c; i++)
        ones[i] = 1.0f + 0.5f * (float)dlb_rng_double(&rng);
    struct pair rv = from_floats(DLB_F32, ones, c);
    free(ones);
    struct pair sm = out_pair(DLB_F32, c), si = out_pair(DLB_F32, c);
    struct pair y = out_pair(t, cnt), dx = out_pair(t, cnt);
    struct pair dg = out_pair(DLB_F32, c), dbeta = out_pair(DLB_F32, c);
    BOTH CHECK(DLB_BE_CALL(BE, batchnorm_fwd_train, &d, B(x), B(gamma), B(beta),
                           B(rm), B(rv), B(sm), B(si), B(y)) == DLB_OK);
    snprintf(what, sizeof what, "bn fwd_train y %s", name);
    expect_near(what, y);
    snprintf(what, sizeof what, "bn fwd_train mean/invstd/running %s", name);
    expect_near(what, sm);
    expect_near(what, si);
    expect_near(what, rm);
    expect_near(what, rv);
    BOTH CHECK(DLB_BE_CALL(BE, batchnorm_bwd, &d, B(x), B(dy), B(gamma), B(sm),
                           B(si), B(dx), B(dg), B(dbeta)) == DLB_OK);
    snprintf(what, sizeof what, "bn bwd dx %s", name);
    expect_near(what, dx);
    snprintf(what, sizeof what, "bn bwd dgamma, dbeta %s", name);
    expect_near(what, dg);
    expect_near(what, dbeta);
    BOTH CHECK(DLB_BE_CALL(BE, batchnorm_fwd_infer, &d, B(x), B(gamma), B(beta),
                           B(rm), B(rv), B(y)) == DLB_OK);
    snprintf(what, sizeof what, "bn fwd_infer %s", name);
    expect_near(what, y);
    struct pair *all[] = { &x, &dy, &gamma, &beta, &rm, &rv, &sm, &si,
                           &y, &dx, &dg, &dbeta };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

/* ---- linear, loss ----------------------------------------------------- */

static void test_linear(const char *name, uint32_t n, uint32_t in, uint32_t out,
                        enum dlb_dtype t, int bias, int want_dx)
{
    char what[160];
    struct dlb_linear_desc d = { n, in, out };
    struct pair x = rand_pair(t, (size_t)n * in, 1.0);
    struct pair w = rand_pair(t, (size_t)out * in, 0.3);
    struct pair b = bias ? rand_pair(t, out, 1.0) : none;
    struct pair dy = rand_pair(t, (size_t)n * out, 1.0);
    struct pair y = out_pair(t, (size_t)n * out);
    struct pair dx = want_dx ? out_pair(t, (size_t)n * in) : none;
    struct pair dw = out_pair(t, (size_t)out * in);
    struct pair db = bias ? out_pair(t, out) : none;
    BOTH CHECK(DLB_BE_CALL(BE, linear_fwd, &d, B(x), B(w), B(b), B(y)) == DLB_OK);
    snprintf(what, sizeof what, "linear fwd %s%s", name, bias ? " +bias" : "");
    expect_near(what, y);
    BOTH CHECK(DLB_BE_CALL(BE, linear_bwd, &d, B(x), B(w), B(dy), B(dx), B(dw),
                           B(db)) == DLB_OK);
    snprintf(what, sizeof what, "linear bwd %s", name);
    if (want_dx)
        expect_near(what, dx);
    expect_near(what, dw);
    if (bias)
        expect_near(what, db);
    struct pair *all[] = { &x, &w, &b, &dy, &y, &dx, &dw, &db };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

static void test_loss(uint32_t n, uint32_t classes, enum dlb_dtype t)
{
    struct dlb_loss_desc d = { n, classes };
    size_t cnt = (size_t)n * classes;
    struct pair x = rand_pair(t, cnt, 3.0);
    float *lab = malloc(n * sizeof *lab);
    for (uint32_t i = 0; i < n; i++)
        lab[i] = (float)dlb_rng_below(&rng, classes);
    struct pair labels = from_floats(DLB_S32, lab, n);
    free(lab);
    struct pair y = out_pair(t, cnt), loss = out_pair(DLB_F32, 1);
    struct pair dx = out_pair(t, cnt);
    BOTH CHECK(DLB_BE_CALL(BE, logsoftmax_fwd, &d, B(x), B(y)) == DLB_OK);
    expect_near("logsoftmax fwd", y);
    BOTH CHECK(DLB_BE_CALL(BE, nll_loss, &d, B(y), B(labels), B(loss)) == DLB_OK);
    expect_near("nll loss", loss);
    BOTH CHECK(DLB_BE_CALL(BE, logsoftmax_nll_bwd, &d, B(y), B(labels), 128.0f,
                           B(dx)) == DLB_OK);
    expect_near("logsoftmax+nll bwd (scale 128)", dx);
    struct pair *all[] = { &x, &labels, &y, &loss, &dx };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

/* ---- element-wise ----------------------------------------------------- */

static void test_sgd(size_t count)
{
    struct dlb_sgd_desc d = { count, 0.05f, 0.9f, 5e-4f };
    struct pair w = rand_pair(DLB_F32, count, 1.0);
    struct pair g = rand_pair(DLB_F32, count, 1.0);
    struct pair v = rand_pair(DLB_F32, count, 0.1);
    for (int step = 0; step < 3; step++)
        BOTH CHECK(DLB_BE_CALL(BE, sgd_update, &d, B(w), B(g), B(v)) == DLB_OK);
    double *a = download(cpu, w.c, count, DLB_F32);
    double *b = download(ref, w.r, count, DLB_F32);
    double *va = download(cpu, v.c, count, DLB_F32);
    double *vb = download(ref, v.r, count, DLB_F32);
    size_t bad = 0;
    for (size_t i = 0; i < count; i++)
        if (fabs(a[i] - b[i]) > 1e-6 * fmax(1.0, fabs(b[i])) ||
            fabs(va[i] - vb[i]) > 1e-6 * fmax(1.0, fabs(vb[i])))
            bad++;
    check_count++;
    if (bad) {
        check_failures++;
        fprintf(stderr, "FAIL sgd: %zu of %zu elements beyond 1e-6\n", bad,
                count);
    }
    free(a);
    free(b);
    free(va);
    free(vb);
    release(&w);
    release(&g);
    release(&v);
}

static void test_elementwise(size_t count)
{
    struct pair x = rand_pair(DLB_F32, count, 100.0);
    struct pair xb = out_pair(DLB_BF16, count), xf = out_pair(DLB_F32, count);
    struct pair xh = out_pair(DLB_F16, count);
    int found[2] = { -1, -1 };
    BOTH CHECK(DLB_BE_CALL(BE, cast, count, B(x), B(xb)) == DLB_OK);
    expect_same("cast f32 -> bf16", xb);
    BOTH CHECK(DLB_BE_CALL(BE, cast, count, B(xb), B(xf)) == DLB_OK);
    expect_same("cast bf16 -> f32", xf);
    BOTH CHECK(DLB_BE_CALL(BE, cast, count, B(x), B(xh)) == DLB_OK);
    expect_same("cast f32 -> f16", xh);
    BOTH CHECK(DLB_BE_CALL(BE, scale, count, B(x), 0.37f) == DLB_OK);
    expect_same("scale f32", x);
    BOTH CHECK(DLB_BE_CALL(BE, scale, count, B(xb), -3.1f) == DLB_OK);
    expect_same("scale bf16", xb);
    BOTH CHECK(DLB_BE_CALL(BE, check_finite, count, B(x), &found[side])
               == DLB_OK);
    CHECK(found[0] == 0 && found[1] == 0);
    float bad = NAN;
    size_t at = count - count / 3;
    CHECK(DLB_BE_CALL(cpu, copy_from_host, x.c, at * 4, &bad, 4) == DLB_OK);
    CHECK(DLB_BE_CALL(cpu, check_finite, count, x.c, &found[0]) == DLB_OK);
    CHECK(found[0] == 1);
    bad = -INFINITY;
    CHECK(DLB_BE_CALL(cpu, cast, count, x.c, xb.c) == DLB_OK);
    CHECK(DLB_BE_CALL(cpu, check_finite, count, xb.c, &found[0]) == DLB_OK);
    CHECK(found[0] == 1);
    BOTH CHECK(DLB_BE_CALL(BE, fill, count, B(xf), -0.3) == DLB_OK);
    expect_same("fill f32", xf);
    BOTH CHECK(DLB_BE_CALL(BE, fill, count, B(xb), 1.0 / 3.0) == DLB_OK);
    expect_same("fill bf16", xb);
    struct pair q = out_pair(DLB_S8, count), u = out_pair(DLB_U8, count);
    struct pair y = rand_pair(DLB_F32, count, 3.0);
    BOTH CHECK(DLB_BE_CALL(BE, quantize, count, B(y), B(q), 0.02f, 3) == DLB_OK);
    expect_same("quantize s8", q);
    BOTH CHECK(DLB_BE_CALL(BE, quantize, count, B(y), B(u), 0.05f, 128)
               == DLB_OK);
    expect_same("quantize u8", u);
    BOTH CHECK(DLB_BE_CALL(BE, dequantize, count, B(q), B(y), 0.02f, 3)
               == DLB_OK);
    expect_same("dequantize s8", y);
    struct pair *all[] = { &x, &xb, &xf, &xh, &q, &u, &y };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

/* ---- allocator, capabilities ---------------------------------------- */

struct counting {
    size_t allocs, frees, live_bytes;
};

static void *count_alloc(void *ctx, size_t bytes)
{
    struct counting *c = ctx;
    c->allocs++;
    c->live_bytes += bytes;
    return malloc(bytes);
}

static void count_free(void *ctx, void *p, size_t bytes)
{
    struct counting *c = ctx;
    c->frees++;
    c->live_bytes -= bytes;
    free(p);
}

static void test_allocator(const char *name)
{
    struct counting cnt = { 0, 0, 0 };
    struct dlb_backend_config cfg = { .threads = 1, .seed = 1,
                                      .host_alloc = count_alloc,
                                      .host_free = count_free,
                                      .alloc_ctx = &cnt };
    struct dlb_backend *be = NULL;
    struct dlb_buffer *b[3] = { NULL, NULL, NULL };
    char reason[256];
    CHECK(dlb_backend_open(name, &cfg, &be, reason, sizeof reason) == DLB_OK);
    if (!be)
        return;
    for (int i = 0; i < 3; i++) {
        CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_F32, 1000 + 7 * (size_t)i,
                          &b[i]) == DLB_OK);
        CHECK(b[i] && ((uintptr_t)b[i]->data & 63u) == 0);
    }
    CHECK(cnt.allocs >= 3);
    for (int i = 0; i < 3; i++)
        dlb_backend_ops_of(be)->buffer_free(be, b[i]);
    dlb_backend_close(be);
    CHECK(cnt.allocs == cnt.frees);
    CHECK(cnt.live_bytes == 0);
}

static int test_caps(void)
{
    char reason[256] = "";
    dlb_status s = DLB_BE_CALL(cpu, supports, DLB_CAP_F16, reason, sizeof reason);
    if (s != DLB_OK)
        CHECK(s == DLB_ERR_UNSUPPORTED && strstr(reason, "AVX512_FP16"));
    struct dlb_device_info info;
    CHECK(DLB_BE_CALL(cpu, device_info, &info) == DLB_OK);
    CHECK(strstr(info.driver, "oneDNN") != NULL);
    fprintf(stderr, "cpu backend: %s, %s, %d threads\n", info.name, info.driver,
            info.compute_units);
    /* An f16 op is refused with the reason, never computed in f32. */
    if (s != DLB_OK) {
        struct dlb_buffer *h = NULL;
        CHECK(DLB_BE_CALL(cpu, buffer_alloc, DLB_F16, 8, &h) == DLB_OK);
        CHECK(DLB_BE_CALL(cpu, relu_fwd, 8, h, h) == DLB_ERR_UNSUPPORTED);
        CHECK(strstr(dlb_backend_last_error(cpu), "fp16") != NULL);
        dlb_backend_ops_of(cpu)->buffer_free(cpu, h);
    }
    return DLB_BE_CALL(cpu, supports, DLB_CAP_BF16, reason, sizeof reason)
           == DLB_OK;
}


/* ---- chains: layouts carried from op to op --------------------------- */

/* The cpu backend keeps a convolution's output in the layout its kernel
 * chose (nChw16c, or nhwc for LeNet's channel counts) and hands it from op
 * to op; the single-op tests above start every op from the host view.
 * These run whole forward and backward passes the way the model does
 * (in-place relu and dropout, flatten into a linear layer, pooling and
 * batch norm on a convolution's output) and compare on the way. */
#define CALL(op, ...) BOTH CHECK(DLB_BE_CALL(BE, op, __VA_ARGS__) == DLB_OK)

static void test_chain_lenet(enum dlb_dtype t, uint32_t n)
{
    struct dlb_conv2d_desc c1 = conv_desc(n, 1, 28, 28, 10, 5, 1, 0);
    struct dlb_conv2d_desc c2 = conv_desc(n, 10, 12, 12, 20, 5, 1, 0);
    struct dlb_pool_desc p1 = { DLB_POOL_MAX, n, 10, 24, 24, 2, 2, 2, 2, 0, 0,
                                12, 12 };
    struct dlb_pool_desc p2 = { DLB_POOL_MAX, n, 20, 8, 8, 2, 2, 2, 2, 0, 0,
                                4, 4 };
    struct dlb_dropout_desc d2 = { DLB_DROPOUT_CHANNEL, n, 20, 64, 0.5f, 77 };
    struct dlb_dropout_desc d3 = { DLB_DROPOUT_ELEMENT, n, 50, 1, 0.5f, 78 };
    struct dlb_linear_desc f1 = { n, 320, 50 }, f2 = { n, 50, 10 };
    size_t a1 = (size_t)n * 5760, a2 = (size_t)n * 1440, a3 = (size_t)n * 1280,
           a4 = (size_t)n * 320;
    struct pair x = rand_pair(t, (size_t)n * 784, 1.0);
    struct pair w1 = rand_pair(t, 250, 0.3), b1 = rand_pair(t, 10, 0.5);
    struct pair w2 = rand_pair(t, 5000, 0.1), b2 = rand_pair(t, 20, 0.5);
    struct pair w3 = rand_pair(t, 16000, 0.1), b3 = rand_pair(t, 50, 0.5);
    struct pair w4 = rand_pair(t, 500, 0.3), b4 = rand_pair(t, 10, 0.5);
    struct pair y1 = out_pair(t, a1), y2 = out_pair(t, a2), y3 = out_pair(t, a3);
    struct pair y4 = out_pair(t, a4), y5 = out_pair(t, (size_t)n * 50);
    struct pair y6 = out_pair(t, (size_t)n * 10);
    struct pair ws1 = alloc_pair(DLB_S32, a2), ws2 = alloc_pair(DLB_S32, a4);
    struct pair g6 = rand_pair(t, (size_t)n * 10, 1.0);
    struct pair g5 = out_pair(t, (size_t)n * 50), g4 = out_pair(t, a4);
    struct pair g3 = out_pair(t, a3), g2 = out_pair(t, a2), g1 = out_pair(t, a1);
    struct pair dw1 = out_pair(t, 250), db1 = out_pair(t, 10);
    struct pair dw2 = out_pair(t, 5000), db2 = out_pair(t, 20);
    struct pair dw3 = out_pair(t, 16000), db3 = out_pair(t, 50);
    struct pair dw4 = out_pair(t, 500), db4 = out_pair(t, 10);
    CALL(conv2d_fwd, &c1, B(x), B(w1), B(b1), B(y1));
    CALL(pool_fwd, &p1, B(y1), B(y2), B(ws1));
    CALL(relu_fwd, a2, B(y2), B(y2));
    CALL(conv2d_fwd, &c2, B(y2), B(w2), B(b2), B(y3));
    CALL(dropout_fwd, &d2, B(y3), B(y3));
    CALL(pool_fwd, &p2, B(y3), B(y4), B(ws2));
    {
        /* without a workspace, as inference runs it (oneDNN's kernel) */
        struct pair y4i = out_pair(t, a4);
        CALL(pool_fwd, &p2, B(y3), B(y4i), NULL);
        expect_near("chain lenet pool2 without workspace", y4i);
        release(&y4i);
    }
    CALL(relu_fwd, a4, B(y4), B(y4));
    CALL(linear_fwd, &f1, B(y4), B(w3), B(b3), B(y5)); /* after a flatten */
    CALL(relu_fwd, (size_t)n * 50, B(y5), B(y5));
    CALL(dropout_fwd, &d3, B(y5), B(y5));
    CALL(linear_fwd, &f2, B(y5), B(w4), B(b4), B(y6));
    expect_near("chain lenet fwd logits", y6);
    CALL(linear_bwd, &f2, B(y5), B(w4), B(g6), B(g5), B(dw4), B(db4));
    CALL(dropout_bwd, &d3, B(g5), B(g5));
    CALL(relu_bwd, (size_t)n * 50, B(y5), B(g5), B(g5));
    CALL(linear_bwd, &f1, B(y4), B(w3), B(g5), B(g4), B(dw3), B(db3));
    CALL(relu_bwd, a4, B(y4), B(g4), B(g4));
    CALL(pool_bwd, &p2, B(g4), B(ws2), B(g3));
    CALL(dropout_bwd, &d2, B(g3), B(g3));
    CALL(conv2d_bwd_data, &c2, B(w2), B(g3), B(g2));
    CALL(conv2d_bwd_weights, &c2, B(y2), B(g3), B(dw2), B(db2));
    CALL(relu_bwd, a2, B(y2), B(g2), B(g2));
    CALL(pool_bwd, &p1, B(g2), B(ws1), B(g1));
    CALL(conv2d_bwd_weights, &c1, B(x), B(g1), B(dw1), B(db1));
    expect_near("chain lenet conv1 output", y1);
    expect_near("chain lenet pool2 output", y4);
    expect_same("chain lenet pool1 workspace", ws1);
    expect_same("chain lenet pool2 workspace", ws2);
    expect_near("chain lenet fc1 dw", dw3);
    expect_near("chain lenet fc1 dx (flatten)", g4);
    expect_near("chain lenet conv2 dx", g2);
    expect_near("chain lenet conv2 dw", dw2);
    expect_near("chain lenet conv2 db", db2);
    expect_near("chain lenet conv1 dw", dw1);
    expect_near("chain lenet conv1 db", db1);
    struct pair *all[] = { &x, &w1, &b1, &w2, &b2, &w3, &b3, &w4, &b4, &y1,
                           &y2, &y3, &y4, &y5, &y6, &ws1, &ws2, &g6, &g5, &g4,
                           &g3, &g2, &g1, &dw1, &db1, &dw2, &db2, &dw3, &db3,
                           &dw4, &db4 };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

/* Batch norm on a convolution's blocked output (nChw16c), where bf16 data
 * takes the cpu backend's own loops: x = a 1x1 identity convolution plus
 * biases of 100 and more, large means against deviations of about 1 (the
 * statistics must not cancel); dy in the host layout (viewed over);
 * backward in place (dx is dy) as the model runs it; then inference. */
static void test_bn_blocked(enum dlb_dtype t, uint32_t n)
{
    const uint32_t c = 32, h = 6, w = 5;
    struct dlb_conv2d_desc cd = conv_desc(n, c, h, w, c, 1, 1, 0);
    struct dlb_batchnorm_desc d = { n, c, h * w, 1e-5f, 0.1f };
    size_t cnt = (size_t)n * c * h * w;
    float *eye = calloc((size_t)c * c, sizeof *eye);
    float *off = malloc(c * sizeof *off);
    for (uint32_t i = 0; i < c; i++) {
        eye[(size_t)i * c + i] = 1.0f;
        off[i] = 100.0f + 4.0f * (float)i;
    }
    struct pair x = rand_pair(t, cnt, 2.0), wt = from_floats(t, eye, (size_t)c * c);
    struct pair bias = from_floats(t, off, c);
    free(eye);
    free(off);
    struct pair gm = rand_pair(DLB_F32, c, 1.0), bt = rand_pair(DLB_F32, c, 1.0);
    struct pair rm = rand_pair(DLB_F32, c, 0.5), rv = alloc_pair(DLB_F32, c);
    BOTH CHECK(DLB_BE_CALL(BE, fill, c, B(rv), 1.0) == DLB_OK);
    struct pair sm = out_pair(DLB_F32, c), si = out_pair(DLB_F32, c);
    struct pair dg = out_pair(DLB_F32, c), db = out_pair(DLB_F32, c);
    struct pair cv = out_pair(t, cnt), y = out_pair(t, cnt);
    struct pair g = rand_pair(t, cnt, 1.0);
    CALL(conv2d_fwd, &cd, B(x), B(wt), B(bias), B(cv));
    CALL(batchnorm_fwd_train, &d, B(cv), B(gm), B(bt), B(rm), B(rv), B(sm),
         B(si), B(y));
    expect_near("bn blocked mean 100 y", y);
    expect_near("bn blocked mean 100 saved mean", sm);
    expect_near("bn blocked mean 100 saved invstd", si);
    expect_near("bn blocked mean 100 running mean", rm);
    expect_near("bn blocked mean 100 running var", rv);
    CALL(batchnorm_bwd, &d, B(cv), B(g), B(gm), B(sm), B(si), B(g), B(dg),
         B(db));
    expect_near("bn blocked in-place dx", g);
    expect_near("bn blocked dgamma", dg);
    expect_near("bn blocked dbeta", db);
    CALL(batchnorm_fwd_infer, &d, B(cv), B(gm), B(bt), B(rm), B(rv), B(y));
    expect_near("bn blocked inference y", y);
    struct pair *all[] = { &x, &wt, &bias, &gm, &bt, &rm, &rv, &sm, &si, &dg,
                           &db, &cv, &y, &g };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

/* conv -> bn -> relu -> dropout (blocked, 32 channels), max pool, conv ->
 * bn -> relu -> dropout2d, global average pool, linear; and back. */
static void test_chain_vgg(enum dlb_dtype t, uint32_t n)
{
    struct dlb_conv2d_desc c1 = conv_desc(n, 16, 8, 8, 32, 3, 1, 1);
    struct dlb_conv2d_desc c2 = conv_desc(n, 32, 4, 4, 48, 3, 1, 1);
    struct dlb_batchnorm_desc n1 = { n, 32, 64, 1e-5f, 0.1f };
    struct dlb_batchnorm_desc n2 = { n, 48, 16, 1e-5f, 0.1f };
    struct dlb_pool_desc mp = { DLB_POOL_MAX, n, 32, 8, 8, 2, 2, 2, 2, 0, 0,
                                4, 4 };
    struct dlb_pool_desc gap = { DLB_POOL_AVG, n, 48, 4, 4, 4, 4, 4, 4, 0, 0,
                                 1, 1 };
    struct dlb_dropout_desc d1 = { DLB_DROPOUT_ELEMENT, n, 32, 64, 0.3f, 5 };
    struct dlb_dropout_desc d2 = { DLB_DROPOUT_CHANNEL, n, 48, 16, 0.3f, 6 };
    struct dlb_linear_desc fc = { n, 48, 10 };
    size_t a1 = (size_t)n * 2048, a2 = (size_t)n * 512, a3 = (size_t)n * 768;
    struct pair x = rand_pair(t, (size_t)n * 1024, 1.0);
    struct pair w1 = rand_pair(t, 32 * 16 * 9, 0.2);
    struct pair w2 = rand_pair(t, 48 * 32 * 9, 0.1);
    struct pair wf = rand_pair(t, 480, 0.3), bf = rand_pair(t, 10, 0.5);
    struct pair gm[2], bt[2], rm[2], rv[2], sm[2], si[2], dg[2], dbt[2];
    uint32_t ch[2] = { 32, 48 };
    for (int i = 0; i < 2; i++) {
        gm[i] = rand_pair(DLB_F32, ch[i], 1.0);
        bt[i] = rand_pair(DLB_F32, ch[i], 1.0);
        rm[i] = rand_pair(DLB_F32, ch[i], 0.5);
        rv[i] = alloc_pair(DLB_F32, ch[i]);
        BOTH CHECK(DLB_BE_CALL(BE, fill, ch[i], B(rv[i]), 1.0) == DLB_OK);
        sm[i] = out_pair(DLB_F32, ch[i]);
        si[i] = out_pair(DLB_F32, ch[i]);
        dg[i] = out_pair(DLB_F32, ch[i]);
        dbt[i] = out_pair(DLB_F32, ch[i]);
    }
    struct pair cv1 = out_pair(t, a1), bo1 = out_pair(t, a1);
    struct pair po = out_pair(t, a2), ws = alloc_pair(DLB_S32, a2);
    struct pair cv2 = out_pair(t, a3), bo2 = out_pair(t, a3);
    struct pair g = out_pair(t, (size_t)n * 48), lg = out_pair(t, (size_t)n * 10);
    struct pair dl = rand_pair(t, (size_t)n * 10, 1.0);
    struct pair gg = out_pair(t, (size_t)n * 48), gb2 = out_pair(t, a3);
    struct pair gc2 = out_pair(t, a3), gp = out_pair(t, a2);
    struct pair gb1 = out_pair(t, a1), gc1 = out_pair(t, a1);
    struct pair gx = out_pair(t, (size_t)n * 1024);
    struct pair dw1 = out_pair(t, 32 * 16 * 9), dw2 = out_pair(t, 48 * 32 * 9);
    struct pair dwf = out_pair(t, 480), dbf = out_pair(t, 10);
    CALL(conv2d_fwd, &c1, B(x), B(w1), NULL, B(cv1));
    CALL(batchnorm_fwd_train, &n1, B(cv1), B(gm[0]), B(bt[0]), B(rm[0]),
         B(rv[0]), B(sm[0]), B(si[0]), B(bo1));
    CALL(relu_fwd, a1, B(bo1), B(bo1));
    CALL(dropout_fwd, &d1, B(bo1), B(bo1));
    CALL(pool_fwd, &mp, B(bo1), B(po), B(ws));
    CALL(conv2d_fwd, &c2, B(po), B(w2), NULL, B(cv2));
    CALL(batchnorm_fwd_train, &n2, B(cv2), B(gm[1]), B(bt[1]), B(rm[1]),
         B(rv[1]), B(sm[1]), B(si[1]), B(bo2));
    CALL(relu_fwd, a3, B(bo2), B(bo2));
    CALL(dropout_fwd, &d2, B(bo2), B(bo2));
    {
        int found = 1;
        CHECK(DLB_BE_CALL(cpu, check_finite, a3, B0(bo2), &found) == DLB_OK);
        CHECK(found == 0);
    }
    CALL(pool_fwd, &gap, B(bo2), B(g), NULL);
    CALL(linear_fwd, &fc, B(g), B(wf), B(bf), B(lg));
    expect_near("chain vgg fwd logits", lg);
    CALL(linear_bwd, &fc, B(g), B(wf), B(dl), B(gg), B(dwf), B(dbf));
    CALL(pool_bwd, &gap, B(gg), NULL, B(gb2));
    CALL(dropout_bwd, &d2, B(gb2), B(gb2));
    CALL(relu_bwd, a3, B(bo2), B(gb2), B(gb2));
    CALL(batchnorm_bwd, &n2, B(cv2), B(gb2), B(gm[1]), B(sm[1]), B(si[1]),
         B(gc2), B(dg[1]), B(dbt[1]));
    CALL(conv2d_bwd_data, &c2, B(w2), B(gc2), B(gp));
    CALL(conv2d_bwd_weights, &c2, B(po), B(gc2), B(dw2), NULL);
    CALL(pool_bwd, &mp, B(gp), B(ws), B(gb1));
    CALL(dropout_bwd, &d1, B(gb1), B(gb1));
    CALL(relu_bwd, a1, B(bo1), B(gb1), B(gb1));
    CALL(batchnorm_bwd, &n1, B(cv1), B(gb1), B(gm[0]), B(sm[0]), B(si[0]),
         B(gc1), B(dg[0]), B(dbt[0]));
    CALL(conv2d_bwd_data, &c1, B(w1), B(gc1), B(gx));
    CALL(conv2d_bwd_weights, &c1, B(x), B(gc1), B(dw1), NULL);
    expect_near("chain vgg bn1 output", bo1);
    expect_same("chain vgg pool workspace", ws);
    expect_near("chain vgg bn2 output", bo2);
    expect_near("chain vgg running mean", rm[1]);
    expect_near("chain vgg bn2 dgamma", dg[1]);
    expect_near("chain vgg bn2 dbeta", dbt[1]);
    expect_near("chain vgg conv2 dw", dw2);
    expect_near("chain vgg bn1 dx", gc1);
    expect_near("chain vgg bn1 dbeta", dbt[0]);
    expect_near("chain vgg conv1 dx", gx);
    expect_near("chain vgg conv1 dw", dw1);
    struct pair *all[] = { &x, &w1, &w2, &wf, &bf, &cv1, &bo1, &po, &ws, &cv2,
                           &bo2, &g, &lg, &dl, &gg, &gb2, &gc2, &gp, &gb1,
                           &gc1, &gx, &dw1, &dw2, &dwf, &dbf };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
    for (int i = 0; i < 2; i++) {
        struct pair *ch_all[] = { &gm[i], &bt[i], &rm[i], &rv[i], &sm[i],
                                  &si[i], &dg[i], &dbt[i] };
        for (size_t k = 0; k < sizeof ch_all / sizeof *ch_all; k++)
            release(ch_all[k]);
    }
}


/* Mixed types, as a mixed-precision model runs a convolution: bf16
 * weights with f32 activations in and out (batch norm and the loss stay
 * f32, no cast passes), and the weight gradient in either type. The cpu
 * backend computes in bf16, so the bound is bf16's even for f32 outputs;
 * ref computes everything in double from the same inputs. */
static void expect_near_tol(const char *what, struct pair p, double tol)
{
    double e = rel_err(p);
    check_count++;
    if (!(e <= tol)) {
        check_failures++;
        fprintf(stderr, "FAIL %s: relative error %.3g > %.g\n", what, e, tol);
    } else if (getenv("DLB_TEST_VERBOSE")) {
        fprintf(stderr, "ok   %-44s mix  rel err %.2e\n", what, e);
    }
}

static void test_conv_mixed(const char *name, struct dlb_conv2d_desc d)
{
    char what[160];
    size_t xn = (size_t)d.n * d.in_c * d.in_h * d.in_w;
    size_t wn = (size_t)d.out_c * d.in_c * d.kh * d.kw;
    size_t yn = (size_t)d.n * d.out_c * d.out_h * d.out_w;
    struct pair x = rand_pair(DLB_F32, xn, 1.0), w = rand_pair(DLB_BF16, wn, 0.3);
    struct pair b = rand_pair(DLB_F32, d.out_c, 1.0);
    struct pair dy = rand_pair(DLB_F32, yn, 1.0);
    struct pair xb = rand_pair(DLB_BF16, xn, 1.0), dyb = rand_pair(DLB_BF16, yn, 1.0);
    struct pair y = out_pair(DLB_F32, yn), dx = out_pair(DLB_F32, xn);
    struct pair dw = out_pair(DLB_BF16, wn), dw32 = out_pair(DLB_F32, wn);
    struct pair db = out_pair(DLB_F32, d.out_c);
    CALL(conv2d_fwd, &d, B(x), B(w), B(b), B(y));
    snprintf(what, sizeof what, "conv fwd f32/bf16->f32 %s", name);
    expect_near_tol(what, y, TOL_BF16);
    CALL(conv2d_bwd_data, &d, B(w), B(dy), B(dx));
    snprintf(what, sizeof what, "conv bwd_data bf16/f32->f32 %s", name);
    expect_near_tol(what, dx, TOL_BF16);
    CALL(conv2d_bwd_weights, &d, B(x), B(dy), B(dw), B(db));
    snprintf(what, sizeof what, "conv bwd_weights f32->bf16 %s", name);
    expect_near_tol(what, dw, TOL_BF16);
    expect_near_tol(what, db, TOL_BF16);
    CALL(conv2d_bwd_weights, &d, B(xb), B(dyb), B(dw32), NULL);
    snprintf(what, sizeof what, "conv bwd_weights bf16->f32 %s", name);
    expect_near_tol(what, dw32, TOL_BF16);
    /* An f32 output fed on: the next bf16 convolution reads it blocked. */
    CALL(conv2d_fwd, &d, B(x), B(w), NULL, B(y));
    CALL(relu_fwd, yn, B(y), B(y));
    expect_near_tol("conv fwd mixed then relu", y, TOL_BF16);
    struct pair *all[] = { &x, &w, &b, &dy, &xb, &dyb, &y, &dx, &dw, &dw32,
                           &db };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

static void run_typed(enum dlb_dtype t)
{
    /* LeNet, batch 4 */
    test_conv("lenet conv1 1->10 k5 @28", conv_desc(4, 1, 28, 28, 10, 5, 1, 0),
              t, 1);
    test_conv("lenet conv2 10->20 k5 @12", conv_desc(4, 10, 12, 12, 20, 5, 1, 0),
              t, 1);
    /* vgg-small's layers, batch 2 */
    test_conv("vgg conv1 1->32 k3p1 @28", conv_desc(2, 1, 28, 28, 32, 3, 1, 1),
              t, 0);
    test_conv("vgg conv2 32->64 k3p1 @14", conv_desc(2, 32, 14, 14, 64, 3, 1, 1),
              t, 0);
    test_conv("vgg conv3 64->64 k3p1 @14", conv_desc(2, 64, 14, 14, 64, 3, 1, 1),
              t, 0);
    test_conv("vgg conv4 64->128 k3p1 @7", conv_desc(2, 64, 7, 7, 128, 3, 1, 1),
              t, 0);
    test_conv("vgg conv5 128->128 k3p1 @7",
              conv_desc(2, 128, 7, 7, 128, 3, 1, 1), t, 0);
    /* odd shapes */
    test_conv("batch 1 3->5 k3 s2 p1 @9", conv_desc(1, 3, 9, 9, 5, 3, 2, 1), t, 1);
    test_conv("batch 3 6->7 k4 s2 p2 @11", conv_desc(3, 6, 11, 11, 7, 4, 2, 2),
              t, 1);
    {
        struct dlb_conv2d_desc d = conv_desc(3, 17, 10, 13, 9, 3, 1, 0);
        d.stride_w = 2;
        d.out_w = dlb_conv_out_size(13, 3, 2, 0);
        test_conv("batch 3 17->9 non-square stride 1x2", d, t, 1);
    }
    test_weight_versions(t);

    test_pool("lenet max 2x2 @24", DLB_POOL_MAX, 4, 10, 24, 24, 2, 2, 0, t);
    test_pool("lenet max 2x2 @8", DLB_POOL_MAX, 4, 20, 8, 8, 2, 2, 0, t);
    test_pool("vgg max 2x2 @14 (odd 7 out)", DLB_POOL_MAX, 2, 64, 14, 14, 2, 2, 0,
              t);
    test_pool("vgg global avg 7x7", DLB_POOL_AVG, 3, 128, 7, 7, 7, 7, 0, t);
    test_pool("max 3x3 s2 p1 @9", DLB_POOL_MAX, 1, 3, 9, 9, 3, 2, 1, t);
    test_pool("avg 3x3 s2 p1 @10", DLB_POOL_AVG, 3, 2, 10, 10, 3, 2, 1, t);

    test_relu(4 * 10 * 12 * 12, t);
    test_relu(77, t);
    test_dropout(DLB_DROPOUT_CHANNEL, 4, 20, 64, 0.5f, t);
    test_dropout(DLB_DROPOUT_ELEMENT, 4, 50, 1, 0.5f, t);
    test_dropout(DLB_DROPOUT_ELEMENT, 3, 7, 5, 0.2f, t);
    test_dropout(DLB_DROPOUT_ELEMENT, 2, 3, 3, 1.0f, t);

    test_bn("vgg bn1 32 @28", 2, 32, 784, t);
    test_bn("vgg bn5 128 @7", 3, 128, 49, t);
    test_bn("batch 1 odd 5 @3x3", 1, 5, 9, t);

    test_linear("lenet fc1 320->50", 8, 320, 50, t, 1, 1);
    test_linear("lenet fc2 50->10", 8, 50, 10, t, 1, 1);
    test_linear("vgg fc 128->10 no dx", 3, 128, 10, t, 1, 0);
    test_linear("batch 1 7->3 no bias", 1, 7, 3, t, 0, 1);

    test_loss(8, 10, t);
    test_loss(1, 3, t);

    test_chain_lenet(t, 3);
    test_chain_lenet(t, 1);
    test_chain_vgg(t, 2);
    test_bn_blocked(t, 3);
}

int main(void)
{
    struct dlb_backend_config cfg = { .threads = 0, .seed = 42 };
    char reason[512];
    dlb_status s = dlb_backend_open("cpu", &cfg, &cpu, reason, sizeof reason);
    if (s == DLB_ERR_UNSUPPORTED) {
        fprintf(stderr, "skip: %s\n", reason);
        return 77;
    }
    CHECK(s == DLB_OK);
    CHECK(dlb_backend_open("ref", &cfg, &ref, reason, sizeof reason) == DLB_OK);
    if (!cpu || !ref)
        return check_exit();
    dlb_rng_seed(&rng, 2024);

    int bf16 = test_caps();
    run_typed(DLB_F32);
    if (bf16) {
        run_typed(DLB_BF16);
        test_conv_mixed("vgg conv3 64->64 k3p1 @14",
                        conv_desc(2, 64, 14, 14, 64, 3, 1, 1));
        test_conv_mixed("lenet conv2 10->20 k5 @12",
                        conv_desc(3, 10, 12, 12, 20, 5, 1, 0));
    }
    else
        fprintf(stderr, "bf16 cases skipped: the CPU lacks AVX512_BF16\n");
    test_sgd(1000);
    test_sgd(100003);
    test_elementwise(1000);
    test_elementwise(70001);
    test_allocator("cpu");
    test_allocator("ref");

    dlb_backend_close(cpu);
    dlb_backend_close(ref);
    return check_exit();
}
