/* Op-by-op checks against ref that every backend's test runs the same
 * way: convolution, pooling, dropout, batch norm, linear, the loss and
 * SGD, forward and backward, on random inputs that are never zero. The
 * bounds are the test's (tol_of, backend_pair.h); dropout masks and
 * values and the max-pool workspace must be identical, SGD within 1e-6
 * per element. Include after backend_pair.h. */
#ifndef DLB_TEST_BACKEND_PAIR_OPS_H
#define DLB_TEST_BACKEND_PAIR_OPS_H

#include "backend_pair.h"

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
    struct pair y = out_pair(t, yn), dx = out_pair(t, xn), dw = out_pair(t, wn);
    struct pair db = bias ? out_pair(t, d.out_c) : none;
    CALL(conv2d_fwd, &d, B(x), B(w), B(b), B(y));
    snprintf(what, sizeof what, "conv fwd %s%s", name, bias ? " +bias" : "");
    NEAR_DNN(what, y);
    CALL(conv2d_bwd_data, &d, B(w), B(dy), B(dx));
    snprintf(what, sizeof what, "conv bwd_data %s", name);
    NEAR_DNN(what, dx);
    CALL(conv2d_bwd_weights, &d, B(x), B(dy), B(dw), B(db));
    snprintf(what, sizeof what, "conv bwd_weights %s", name);
    NEAR_DNN(what, dw);
    if (bias) {
        snprintf(what, sizeof what, "conv bwd_bias %s", name);
        NEAR_DNN(what, db);
    }
    RELEASE(&x, &w, &b, &dy, &y, &dx, &dw, &db);
}

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
    CALL(pool_fwd, &d, B(x), B(y), B(ws));
    snprintf(what, sizeof what, "pool fwd %s", name);
    NEAR(what, y);
    if (kind == DLB_POOL_MAX) {
        snprintf(what, sizeof what, "pool workspace %s", name);
        expect_same(what, ws);
    }
    CALL(pool_bwd, &d, B(dy), B(ws), B(dx));
    snprintf(what, sizeof what, "pool bwd %s", name);
    NEAR(what, dx);
    RELEASE(&x, &dy, &y, &dx, &ws);
}

static void test_dropout(enum dlb_dropout_mode mode, uint32_t n, uint32_t c,
                         uint32_t hw, float p, enum dlb_dtype t)
{
    size_t count = (size_t)n * c * hw;
    struct dlb_dropout_desc d = { mode, n, c, hw, p, 0x1234abcdull + count };
    struct pair x = rand_pair(t, count, 1.0), dy = rand_pair(t, count, 1.0);
    struct pair y = out_pair(t, count);
    CALL(dropout_fwd, &d, B(x), B(y));
    expect_same(mode == DLB_DROPOUT_CHANNEL ? "dropout2d fwd (mask, values)"
                                            : "dropout fwd (mask, values)", y);
    CALL(dropout_bwd, &d, B(dy), B(dy));
    expect_same("dropout bwd in place", dy);
    RELEASE(&x, &dy, &y);
}

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
    CALL(batchnorm_fwd_train, &d, B(x), B(gamma), B(beta), B(rm), B(rv), B(sm),
         B(si), B(y));
    snprintf(what, sizeof what, "bn fwd_train y %s", name);
    NEAR_DNN(what, y);
    snprintf(what, sizeof what, "bn fwd_train mean, invstd %s", name);
    NEAR_DNN(what, sm);
    NEAR_DNN(what, si);
    snprintf(what, sizeof what, "bn running mean, var (unbiased) %s", name);
    NEAR_DNN(what, rm);
    NEAR_DNN(what, rv);
    CALL(batchnorm_bwd, &d, B(x), B(dy), B(gamma), B(sm), B(si), B(dx), B(dg),
         B(dbeta));
    snprintf(what, sizeof what, "bn bwd dx %s", name);
    NEAR_DNN(what, dx);
    snprintf(what, sizeof what, "bn bwd dgamma, dbeta %s", name);
    NEAR_DNN(what, dg);
    NEAR_DNN(what, dbeta);
    CALL(batchnorm_fwd_infer, &d, B(x), B(gamma), B(beta), B(rm), B(rv), B(y));
    snprintf(what, sizeof what, "bn fwd_infer %s", name);
    NEAR_DNN(what, y);
    RELEASE(&x, &dy, &gamma, &beta, &rm, &rv, &sm, &si, &y, &dx, &dg, &dbeta);
}

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
    CALL(linear_fwd, &d, B(x), B(w), B(b), B(y));
    snprintf(what, sizeof what, "linear fwd %s%s", name, bias ? " +bias" : "");
    NEAR_DNN(what, y);
    CALL(linear_bwd, &d, B(x), B(w), B(dy), B(dx), B(dw), B(db));
    snprintf(what, sizeof what, "linear bwd %s", name);
    if (want_dx)
        NEAR_DNN(what, dx);
    NEAR_DNN(what, dw);
    if (bias)
        NEAR_DNN(what, db);
    RELEASE(&x, &w, &b, &dy, &y, &dx, &dw, &db);
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
    CALL(logsoftmax_fwd, &d, B(x), B(y));
    NEAR("logsoftmax fwd", y);
    CALL(nll_loss, &d, B(y), B(labels), B(loss));
    NEAR("nll loss", loss);
    CALL(logsoftmax_nll_bwd, &d, B(y), B(labels), 128.0f, B(dx));
    NEAR("logsoftmax+nll bwd (scale 128)", dx);
    RELEASE(&x, &labels, &y, &loss, &dx);
}

/* ADD rounds once, as ref's exact sum does: identical on the host view,
 * in place too (y = x); two convolution outputs (a backend's own layout,
 * where it has one) added where they lie, within the convolutions'
 * bound. */
static void test_add(enum dlb_dtype t, size_t count)
{
    struct pair x = rand_pair(t, count, 1.0), g = rand_pair(t, count, 1.0);
    struct pair y = out_pair(t, count);
    CALL(add, count, B(x), B(g), B(y));
    expect_same(t == DLB_F32 ? "add f32" : "add 16-bit", y);
    CALL(add, count, B(x), B(g), B(x));
    expect_same("add in place", x);
    RELEASE(&x, &g, &y);
    struct dlb_conv2d_desc d = {4, 8, 10, 10, 16, 3, 3, 1, 1, 1, 1, 10, 10, 1};
    size_t xn = 4 * 8 * 100, wn = 16 * 8 * 9, yn = 4 * 16 * 100;
    struct pair cx = rand_pair(t, xn, 1.0), w1 = rand_pair(t, wn, 0.3);
    struct pair w2 = rand_pair(t, wn, 0.3);
    struct pair y1 = out_pair(t, yn), y2 = out_pair(t, yn), s = out_pair(t, yn);
    CALL(conv2d_fwd, &d, B(cx), B(w1), NULL, B(y1));
    CALL(conv2d_fwd, &d, B(cx), B(w2), NULL, B(y2));
    CALL(add, yn, B(y1), B(y2), B(s));
    NEAR_DNN("add of two convolution outputs", s);
    RELEASE(&cx, &w1, &w2, &y1, &y2, &s);
}

/* Three steps with momentum and weight decay: w and v within 1e-6. */
static void test_sgd(size_t count)
{
    struct dlb_sgd_desc d = { count, 0.05f, 0.9f, 5e-4f };
    struct pair w = rand_pair(DLB_F32, count, 1.0);
    struct pair g = rand_pair(DLB_F32, count, 1.0);
    struct pair v = rand_pair(DLB_F32, count, 0.1);
    for (int step = 0; step < 3; step++)
        CALL(sgd_update, &d, B(w), B(g), B(v));
    double *a = download(dev, w.d, count, DLB_F32);
    double *b = download(ref, w.r, count, DLB_F32);
    double *va = download(dev, v.d, count, DLB_F32);
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
    RELEASE(&w, &g, &v);
}

#endif
