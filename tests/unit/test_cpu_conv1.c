/* The cpu backend's one-input-channel convolution (cpu_conv1.c) against
 * the ref backend, and its weight gradient against finite differences.
 *
 * Forward and backward-weights sum in another order than ref: the bound
 * is 1e-5 of the norm, as for oneDNN's kernels (test_cpu_backend.c), on
 * random inputs and weights that are never zero. The gradient reaches
 * backward-weights in nhwc, as in training: it is itself the output of a
 * forward pass. Shapes: LeNet's conv1 at batch 1 (one thread) and 37
 * (both threads, an odd share), 3x3 with stride 2, one output channel,
 * 15, a kernel of 7x7 and a non-square one (forward here, backward-weights
 * handed to oneDNN), and padding (all of it oneDNN's). On a CPU with
 * AVX-512 the test also checks that the kernel took the shapes it should,
 * so that it cannot pass by never running; and the inference fusion of
 * the convolution with max pooling and ReLU. Exits 77 when the cpu backend
 * is not built in. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_impl.h"
#include "backend/cpu/cpu.h"
#include "backend/dtype.h"
#include "backend_pair.h" /* dev: the cpu backend */
#include "util/rng.h"

#define TOL 1e-5

static double tol_of(enum dlb_dtype t, int dnn)
{
    (void)t;
    (void)dnn;
    return TOL;
}

static struct dlb_conv2d_desc desc(uint32_t n, uint32_t h, uint32_t w,
                                   uint32_t oc, uint32_t kh, uint32_t kw,
                                   uint32_t stride, uint32_t pad)
{
    struct dlb_conv2d_desc d = { n, 1, h, w, oc, kh, kw, stride, stride, pad,
                                 pad, 0, 0, 1 };
    d.out_h = dlb_conv_out_size(h, kh, stride, pad);
    d.out_w = dlb_conv_out_size(w, kw, stride, pad);
    return d;
}

/* fast_fwd / fast_bwd: whether the kernel should take the forward and
 * the backward-weights pass on a CPU with AVX-512. */
static void test_shape(const char *name, struct dlb_conv2d_desc d, int bias,
                       int fast_fwd, int fast_bwd)
{
    const enum dlb_dtype t = DLB_F32;
    char what[160];
    size_t xn = dlb_conv2d_x_count(&d), wn = dlb_conv2d_w_count(&d);
    size_t yn = dlb_conv2d_y_count(&d);
    struct pair x = rand_pair(t, xn, 1.0), w = rand_pair(t, wn, 0.3);
    struct pair x2 = rand_pair(t, xn, 1.0), w2 = rand_pair(t, wn, 0.3);
    struct pair b = bias ? rand_pair(t, d.out_c, 1.0) : none;
    struct pair y = out_pair(t, yn), dy = out_pair(t, yn), dw = out_pair(t, wn);
    struct pair db = bias ? out_pair(t, d.out_c) : none;
    if (have_avx512()) {
        snprintf(what, sizeof what, "%s: the kernel takes forward", name);
        expect_true(what, dlb_cpu_conv1_fwd_fits(&d, x.d, w.d, b.d, y.d) ==
                              fast_fwd);
    }
    CALL(conv2d_fwd, &d, B(x), B(w), B(b), B(y));
    snprintf(what, sizeof what, "conv1 fwd %s%s", name, bias ? " +bias" : "");
    NEAR_DNN(what, y);
    /* the gradient: another forward pass's output, in its layout */
    CALL(conv2d_fwd, &d, B(x2), B(w2), NULL, B(dy));
    if (have_avx512()) {
        snprintf(what, sizeof what, "%s: the kernel takes backward-weights",
                 name);
        expect_true(what, dlb_cpu_conv1_bwd_weights_fits(&d, x.d, dy.d, dw.d,
                                                         db.d) == fast_bwd);
    }
    CALL(conv2d_bwd_weights, &d, B(x), B(dy), B(dw), B(db));
    snprintf(what, sizeof what, "conv1 bwd_weights %s", name);
    NEAR_DNN(what, dw);
    if (bias) {
        snprintf(what, sizeof what, "conv1 bwd_bias %s", name);
        NEAR_DNN(what, db);
    }
    RELEASE(&x, &w, &x2, &w2, &b, &y, &dy, &dw, &db);
}

/* The fusion of the convolution with 2x2 max pooling (CONV2D_POOL):
 * the cpu backend's one pass against ref's convolution, pooling and ReLU.
 * The pooled maxima are of the same sums as the unfused convolution's:
 * the bound is the convolution's; the workspace (training: ws set, no
 * ReLU) must name the same maxima, and the pooling's backward on it must
 * give ref's input gradient, in the layout the weight gradient's kernel
 * takes; the weight gradient from the pooling's gradient must be ref's
 * pooling backward and weight gradient. Odd sizes leave the last row and column unpooled. */
static void test_pool_fused(const char *name, struct dlb_conv2d_desc d,
                            int bias, int relu, int train)
{
    const enum dlb_dtype t = DLB_F32;
    struct dlb_pool_desc p = { DLB_POOL_MAX, d.n, d.out_c, d.out_h, d.out_w,
                               2, 2, 2, 2, 0, 0, d.out_h / 2, d.out_w / 2 };
    size_t xn = dlb_conv2d_x_count(&d), wn = dlb_conv2d_w_count(&d);
    size_t cn = dlb_conv2d_y_count(&d);
    size_t yn = (size_t)p.n * p.c * p.out_h * p.out_w;
    char what[160];
    struct pair x = rand_pair(t, xn, 1.0), w = rand_pair(t, wn, 0.3);
    struct pair b = bias ? rand_pair(t, d.out_c, 1.0) : none;
    struct pair c = out_pair(t, cn), y = out_pair(t, yn);
    struct pair ws = train ? alloc_pair(DLB_S32, yn) : none;
    struct dlb_op fused = DLB_OP_OF(conv2d_pool_fwd, &d, &p, relu, x.d, w.d,
                                    b.d, y.d, ws.d);
    const struct dlb_kernel *k = dlb_backend_kernel_for(dev, &fused);
    snprintf(what, sizeof what, "%s: the cpu backend fuses it", name);
    expect_true(what, (k && !strcmp(k->name, "conv1_pool_avx512")) == have_avx512());
    if (!k) {
        RELEASE(&x, &w, &b, &c, &y, &ws);
        return;
    }
    CHECK(dlb_backend_run(dev, &fused) == DLB_OK);
    CHECK(DLB_RUN(ref, conv2d_fwd, &d, x.r, w.r, b.r, c.r) == DLB_OK);
    CHECK(DLB_RUN(ref, pool_fwd, &p, c.r, y.r, ws.r) == DLB_OK);
    if (relu)
        CHECK(DLB_RUN(ref, relu_fwd, yn, y.r, y.r)
                  == DLB_OK);
    if (train) {
        struct pair dy = rand_pair(t, yn, 1.0), dc = out_pair(t, cn);
        struct pair dw = out_pair(t, wn);
        CALL(pool_bwd, &p, B(dy), B(ws), B(dc));
        snprintf(what, sizeof what, "%s: the weight gradient's kernel takes "
                 "the pooling's gradient", name);
        expect_true(what, dlb_cpu_conv1_bwd_weights_fits(&d, x.d, dc.d, dw.d,
                                                         NULL) ==
                              ((d.kh == 5 && d.kw == 5) ||
                               (d.kh == 3 && d.kw == 3)));
        /* The weight gradient straight from the pooling's gradient
         * (bwd_weights): given in nhwc, as a training step hands it over
         * (the fused pass's output over another input: the kernel), and
         * in the host view (pool_bwd into a buffer of its own, then the
         * weight gradient). Before any download, which makes buffers
         * plain. */
        struct pair x2 = rand_pair(t, xn, 1.0), dn = out_pair(t, yn);
        struct pair ws2 = alloc_pair(DLB_S32, yn), c2 = out_pair(t, cn);
        struct pair dc2 = out_pair(t, cn), gw = out_pair(t, wn);
        struct pair gb = out_pair(t, d.out_c), gw2 = out_pair(t, wn);
        struct pair gb2 = out_pair(t, d.out_c);
        CHECK(DLB_RUN(dev, conv2d_pool_fwd, &d, &p, 0, x2.d, w.d, b.d, dn.d,
                      ws2.d) == DLB_OK);
        CHECK(DLB_RUN(ref, conv2d_fwd, &d, x2.r, w.r, b.r, c2.r) == DLB_OK);
        CHECK(DLB_RUN(ref, pool_fwd, &p, c2.r, dn.r, ws2.r) == DLB_OK);
        CHECK(DLB_RUN(dev, conv2d_pool_bwd_weights, &d, &p, x.d, dn.d, ws.d,
                      gw.d, gb.d) == DLB_OK);
        CHECK(DLB_RUN(ref, pool_bwd, &p, dn.r, ws.r, dc2.r) == DLB_OK);
        CHECK(DLB_RUN(ref, conv2d_bwd_weights, &d, x.r, dc2.r, gw.r,
                      gb.r) == DLB_OK);
        CHECK(DLB_RUN(dev, conv2d_pool_bwd_weights, &d, &p, x.d, dy.d, ws.d,
                      gw2.d, gb2.d) == DLB_OK);
        CHECK(DLB_RUN(ref, conv2d_bwd_weights, &d, x.r, dc.r, gw2.r,
                      gb2.r) == DLB_OK);
        snprintf(what, sizeof what, "conv1+pool %s workspace", name);
        expect_same(what, ws);
        snprintf(what, sizeof what, "conv1+pool %s pooling's dx", name);
        expect_same(what, dc);
        snprintf(what, sizeof what, "pool1+conv1 dw, nhwc gradient, %s", name);
        NEAR_DNN(what, gw);
        snprintf(what, sizeof what, "pool1+conv1 db, nhwc gradient, %s", name);
        NEAR_DNN(what, gb);
        snprintf(what, sizeof what, "pool1+conv1 dw, plain gradient, %s", name);
        NEAR_DNN(what, gw2);
        snprintf(what, sizeof what, "pool1+conv1 db, plain gradient, %s", name);
        NEAR_DNN(what, gb2);
        RELEASE(&dy, &dc, &dw, &x2, &dn, &ws2, &c2, &dc2, &gw, &gb, &gw2,
                &gb2);
    }
    snprintf(what, sizeof what, "conv1+pool%s %s", relu ? "+relu" : "", name);
    NEAR_DNN(what, y);
    RELEASE(&x, &w, &b, &c, &y, &ws);
}

/* sum(y * g) on the cpu backend for weights wv: linear in the weights,
 * so a central difference is exact but for rounding. */
static double loss_of(const struct dlb_conv2d_desc *d, struct dlb_buffer *x,
                      struct dlb_buffer *w, struct dlb_buffer *y,
                      const float *wv, const double *g)
{
    size_t wn = dlb_conv2d_w_count(d), yn = dlb_conv2d_y_count(d);
    float *yv = malloc(yn * sizeof *yv);
    double l = 0.0;
    CHECK(DLB_BE_CALL(dev, copy_from_host, w, 0, wv, wn * sizeof *wv) ==
          DLB_OK);
    CHECK(DLB_RUN(dev, conv2d_fwd, &(*d), x, w, NULL, y)
              == DLB_OK);
    CHECK(DLB_BE_CALL(dev, copy_to_host, yv, y, 0, yn * sizeof *yv) ==
          DLB_OK);
    for (size_t i = 0; i < yn; i++)
        l += (double)yv[i] * g[i];
    free(yv);
    return l;
}

/* dL/dw by backward-weights (the gradient g handed over in nhwc, from a
 * forward pass of a one-hot input) against central differences of L. */
static void test_numeric(void)
{
    struct dlb_conv2d_desc d = desc(2, 9, 8, 6, 3, 3, 1, 0);
    size_t xn = dlb_conv2d_x_count(&d), wn = dlb_conv2d_w_count(&d);
    size_t yn = dlb_conv2d_y_count(&d);
    float *xv = malloc(xn * sizeof *xv), *wv = malloc(wn * sizeof *wv);
    float *gv = malloc(yn * sizeof *gv), *dwv = malloc(wn * sizeof *dwv);
    double *g = malloc(yn * sizeof *g);
    struct dlb_buffer *x, *w, *y, *gb, *dwb, *one, *gw;
    for (size_t i = 0; i < xn; i++)
        xv[i] = (float)rand_nonzero();
    for (size_t i = 0; i < wn; i++)
        wv[i] = (float)(0.3 * rand_nonzero());
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F32, xn, &x) == DLB_OK);
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F32, wn, &w) == DLB_OK);
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F32, yn, &y) == DLB_OK);
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F32, yn, &gb) == DLB_OK);
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F32, wn, &dwb) == DLB_OK);
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F32, xn, &one) == DLB_OK);
    CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F32, wn, &gw) == DLB_OK);
    CHECK(DLB_BE_CALL(dev, copy_from_host, x, 0, xv, xn * sizeof *xv) ==
          DLB_OK);
    /* g in nhwc: the forward pass of random weights over a random input */
    {
        float *ov = malloc(xn * sizeof *ov), *gwv = malloc(wn * sizeof *gwv);
        for (size_t i = 0; i < xn; i++)
            ov[i] = (float)rand_nonzero();
        for (size_t i = 0; i < wn; i++)
            gwv[i] = (float)rand_nonzero();
        CHECK(DLB_BE_CALL(dev, copy_from_host, one, 0, ov, xn * sizeof *ov) ==
              DLB_OK);
        CHECK(DLB_BE_CALL(dev, copy_from_host, gw, 0, gwv,
                          wn * sizeof *gwv) == DLB_OK);
        CHECK(DLB_RUN(dev, conv2d_fwd, &d, one, gw, NULL, gb) == DLB_OK);
        free(ov);
        free(gwv);
    }
    CHECK(DLB_RUN(dev, conv2d_bwd_weights, &d, x, gb, dwb, NULL) ==
          DLB_OK);
    CHECK(DLB_BE_CALL(dev, copy_to_host, dwv, dwb, 0, wn * sizeof *dwv) ==
          DLB_OK);
    CHECK(DLB_BE_CALL(dev, copy_to_host, gv, gb, 0, yn * sizeof *gv) ==
          DLB_OK);
    for (size_t i = 0; i < yn; i++)
        g[i] = gv[i];
    double worst = 0.0;
    const float h = 0.25f; /* exact in binary: w +- h rounds little */
    for (size_t i = 0; i < wn; i++) {
        float keep = wv[i];
        wv[i] = keep + h;
        double lp = loss_of(&d, x, w, y, wv, g);
        wv[i] = keep - h;
        double lm = loss_of(&d, x, w, y, wv, g);
        wv[i] = keep;
        double fd = (lp - lm) / (2.0 * (double)h);
        double e = fabs(fd - (double)dwv[i]) / (fabs(fd) + 1.0);
        if (e > worst)
            worst = e;
    }
    char what[160];
    snprintf(what, sizeof what,
             "conv1 bwd_weights against central differences (worst %.2g)",
             worst);
    expect_true(what, worst < 1e-4);
    dlb_backend_ops_of(dev)->buffer_free(dev, x);
    dlb_backend_ops_of(dev)->buffer_free(dev, w);
    dlb_backend_ops_of(dev)->buffer_free(dev, y);
    dlb_backend_ops_of(dev)->buffer_free(dev, gb);
    dlb_backend_ops_of(dev)->buffer_free(dev, dwb);
    dlb_backend_ops_of(dev)->buffer_free(dev, one);
    dlb_backend_ops_of(dev)->buffer_free(dev, gw);
    free(xv);
    free(wv);
    free(gv);
    free(dwv);
    free(g);
}

int main(void)
{
    char reason[512];
    int rc = pair_open("cpu", reason, sizeof reason);
    if (rc >= 0)
        return rc;
    dlb_rng_seed(&rng, 2029);
    (void)conv_desc; /* backend_pair.h's: square kernels only */
    test_shape("lenet n=1", desc(1, 28, 28, 10, 5, 5, 1, 0), 1, 1, 1);
    test_shape("lenet n=37", desc(37, 28, 28, 10, 5, 5, 1, 0), 1, 1, 1);
    test_shape("3x3 stride 2 n=5", desc(5, 17, 13, 7, 3, 3, 2, 0), 0, 1, 1);
    test_shape("one output channel", desc(4, 12, 10, 1, 5, 5, 1, 0), 1, 1, 1);
    test_shape("15 channels n=9", desc(9, 20, 19, 15, 3, 3, 1, 0), 1, 1, 1);
    test_shape("7x7", desc(3, 16, 16, 8, 7, 7, 1, 0), 1, 1, 0);
    test_shape("5x3", desc(3, 16, 16, 8, 5, 3, 1, 0), 1, 1, 0);
    test_shape("padded", desc(3, 14, 14, 10, 5, 5, 1, 2), 1, 0, 0);
    test_shape("16 channels", desc(2, 14, 14, 16, 5, 5, 1, 0), 1, 0, 0);
    test_numeric();
    test_pool_fused("lenet n=3", desc(3, 28, 28, 10, 5, 5, 1, 0), 1, 1, 0);
    test_pool_fused("lenet n=64 no relu", desc(64, 28, 28, 10, 5, 5, 1, 0),
                    1, 0, 0);
    test_pool_fused("odd 3x3 stride 2", desc(2, 23, 21, 7, 3, 3, 2, 0), 0,
                    1, 0);
    test_pool_fused("13 wide", desc(2, 17, 30, 3, 5, 5, 1, 0), 1, 1, 0);
    test_pool_fused("lenet n=33 training", desc(33, 28, 28, 10, 5, 5, 1, 0),
                    1, 0, 1);
    test_pool_fused("odd training", desc(3, 19, 23, 6, 3, 3, 1, 0), 1, 0, 1);
    dlb_backend_close(dev);
    dlb_backend_close(ref);
    return check_exit();
}
