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
    if (bf16)
        run_typed(DLB_BF16);
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
