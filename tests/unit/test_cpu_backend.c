/* The cpu backend (oneDNN) against the ref backend, op by op, forward and
 * backward, on random inputs that are never zero, at LeNet's and
 * vgg-small's real layer shapes (small batches: ref is slow on purpose),
 * at odd shapes (stride 2, padding, batch 1 and 3, non-square) and at
 * MobileNetV2's grouped and depthwise ones (with ReLU6, concatenation).
 *
 * Bounds, relative to the norm (||cpu - ref|| / ||ref||):
 *   fp32: 1e-5 (oneDNN accumulates in fp32, ref in double);
 *   bf16: 1e-2 (both see the same bf16 inputs and round outputs to bf16;
 *         one bf16 rounding is 2^-9 = 2e-3 relative per element).
 * Identical: the dropout mask and values, the max-pool workspace, casts,
 * (de)quantisation, fill, concatenation; SGD within 1e-6 per element.
 * The checks this test shares with the cuda backend's are in
 * backend_pair_ops.h and backend_pair_lenet.h. Exits 77 when the cpu
 * backend is not built in. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_impl.h" /* buffer data: its alignment */
#include "backend/dtype.h"
#include "backend_pair.h" /* dev: the cpu backend */
#include "backend_pair_pool.h"
#include "backend_pair_lenet.h"
#include "backend_pair_ops.h"
#include "util/rng.h"

#define TOL_F32 1e-5
#define TOL_BF16 1e-2

/* backend_pair.h's bounds: the same for every operation (oneDNN's
 * convolutions and GEMMs accumulate in f32 as its element-wise work). */
static double tol_of(enum dlb_dtype t, int dnn)
{
    (void)dnn;
    return t == DLB_BF16 ? TOL_BF16 : TOL_F32;
}

/* ---- convolution ---------------------------------------------------- */

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
        CALL(conv2d_fwd, &d, B(x), B(w), NULL, B(y));
        CALL(conv2d_bwd_data, &d, B(w), B(y), B(dx));
        NEAR("weights rewritten: conv fwd", y);
        NEAR("weights rewritten: conv bwd_data", dx);
        if (round == 0) {
            struct pair w2 = rand_pair(t, wn, 0.3);
            BOTH CHECK(DLB_BE_CALL(BE, copy, B(w), 0, B(w2), 0, wn * dlb_dtype_size(t)) == DLB_OK);
            release(&w2);
        } else if (round == 1 && t == DLB_F32) {
            CALL(sgd_update, &sgd, B(w), B(g), B(v));
        } else if (round == 2) {
            CALL(scale, wn, B(w), -0.5f);
        }
    }
    RELEASE(&x, &w, &y, &dx, &g, &v);
}

/* ---- relu ---------------------------------------------------------- */

/* Here, not in backend_pair_ops.h: oneDNN's relu is bounded, where the
 * cuda test asserts its backend's identical to ref's. */
static void test_relu(size_t count, enum dlb_dtype t)
{
    struct pair x = rand_pair(t, count, 1.0), dy = rand_pair(t, count, 1.0);
    struct pair y = out_pair(t, count), dx = out_pair(t, count);
    CALL(relu_fwd, count, B(x), B(y));
    NEAR("relu fwd", y);
    CALL(relu_bwd, count, B(y), B(dy), B(dx));
    NEAR("relu bwd", dx);
    /* in place, as a model runs it */
    CALL(relu_fwd, count, B(x), B(x));
    NEAR("relu fwd in place", x);
    RELEASE(&x, &dy, &y, &dx);
}

/* ---- element-wise ----------------------------------------------------- */

static void test_elementwise(size_t count)
{
    struct pair x = rand_pair(DLB_F32, count, 100.0);
    struct pair xb = out_pair(DLB_BF16, count), xf = out_pair(DLB_F32, count);
    struct pair xh = out_pair(DLB_F16, count);
    int found[2] = { -1, -1 };
    CALL(cast, count, B(x), B(xb));
    expect_same("cast f32 -> bf16", xb);
    CALL(cast, count, B(xb), B(xf));
    expect_same("cast bf16 -> f32", xf);
    CALL(cast, count, B(x), B(xh));
    expect_same("cast f32 -> f16", xh);
    CALL(scale, count, B(x), 0.37f);
    expect_same("scale f32", x);
    CALL(scale, count, B(xb), -3.1f);
    expect_same("scale bf16", xb);
    CALL(check_finite, count, B(x), &found[side]);
    CHECK(found[0] == 0 && found[1] == 0);
    float bad = NAN;
    size_t at = count - count / 3;
    CHECK(DLB_BE_CALL(dev, copy_from_host, x.d, at * 4, &bad, 4) == DLB_OK);
    CHECK(DLB_RUN(dev, check_finite, count, x.d, &found[0]) == DLB_OK);
    CHECK(found[0] == 1);
    bad = -INFINITY;
    CHECK(DLB_RUN(dev, cast, count, x.d, xb.d) == DLB_OK);
    CHECK(DLB_RUN(dev, check_finite, count, xb.d, &found[0]) == DLB_OK);
    CHECK(found[0] == 1);
    CALL(fill, count, B(xf), -0.3);
    expect_same("fill f32", xf);
    CALL(fill, count, B(xb), 1.0 / 3.0);
    expect_same("fill bf16", xb);
    struct pair q = out_pair(DLB_S8, count), u = out_pair(DLB_U8, count);
    struct pair y = rand_pair(DLB_F32, count, 3.0);
    CALL(quantize, count, B(y), B(q), 0.02f, 3);
    expect_same("quantize s8", q);
    CALL(quantize, count, B(y), B(u), 0.05f, 128);
    expect_same("quantize u8", u);
    CALL(dequantize, count, B(q), B(y), 0.02f, 3);
    expect_same("dequantize s8", y);
    RELEASE(&x, &xb, &xf, &xh, &q, &u, &y);
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
    dlb_status s = DLB_BE_CALL(dev, supports, DLB_CAP_F16, reason, sizeof reason);
    if (s != DLB_OK)
        CHECK(s == DLB_ERR_UNSUPPORTED && strstr(reason, "AVX512_FP16"));
    struct dlb_device_info info;
    CHECK(DLB_BE_CALL(dev, device_info, &info) == DLB_OK);
    CHECK(strstr(info.driver, "oneDNN") != NULL);
    fprintf(stderr, "cpu backend: %s, %s, %d threads\n", info.name, info.driver,
            info.compute_units);
    /* An f16 op is refused with the reason, never computed in f32. */
    if (s != DLB_OK) {
        struct dlb_buffer *h = NULL;
        CHECK(DLB_BE_CALL(dev, buffer_alloc, DLB_F16, 8, &h) == DLB_OK);
        CHECK(DLB_RUN(dev, relu_fwd, 8, h, h)
                  == DLB_ERR_UNSUPPORTED);
        CHECK(strstr(dlb_backend_last_error(dev), "fp16") != NULL);
        dlb_backend_ops_of(dev)->buffer_free(dev, h);
    }
    return DLB_BE_CALL(dev, supports, DLB_CAP_BF16, reason, sizeof reason)
           == DLB_OK;
}


/* ---- chains: layouts carried from op to op --------------------------- */

/* The cpu backend keeps a convolution's output in the layout its kernel
 * chose (nChw16c, or nhwc for LeNet's channel counts) and hands it from op
 * to op; the single-op tests above start every op from the host view.
 * These run whole forward and backward passes the way the model does
 * (in-place relu and dropout, flatten into a linear layer, pooling and
 * batch norm on a convolution's output) and compare on the way. */

static void test_chain_lenet(enum dlb_dtype t, uint32_t n)
{
    struct lenet_chain c;
    lenet_open(&c, t, n);
    lenet_forward(&c);
    {
        /* pool2 without a workspace, as inference runs it (oneDNN's
         * kernel), on conv2's output, which nothing after it writes */
        struct pair y4i = out_pair(t, c.a4);
        CALL(pool_fwd, &c.p2, B(c.y3), B(y4i), NULL);
        NEAR("chain lenet pool2 without workspace", y4i);
        release(&y4i);
    }
    /* conv2's nhwc output after dropout2d: the cpu backend's AVX-512
     * loop must drop the same channels and scale as ref does */
    NEAR("chain lenet dropout2d output", c.y3);
    NEAR("chain lenet fwd logits", c.y6);
    lenet_backward(&c);
    NEAR("chain lenet conv1 output", c.y1);
    NEAR("chain lenet pool2 output", c.y4);
    expect_same("chain lenet pool1 workspace", c.ws1);
    expect_same("chain lenet pool2 workspace", c.ws2);
    NEAR("chain lenet fc1 dw", c.dw3);
    NEAR("chain lenet fc1 dx (flatten)", c.g4);
    NEAR("chain lenet conv2 dx", c.g2);
    NEAR("chain lenet conv2 dw", c.dw2);
    NEAR("chain lenet conv2 db", c.db2);
    NEAR("chain lenet conv1 dw", c.dw1);
    NEAR("chain lenet conv1 db", c.db1);
    lenet_close(&c);
}

/* Batch norm on a convolution's blocked output (nChw16c, or nhwc where
 * oneDNN's kernels choose it: its AMX kernels do for 64 channels on a
 * Sapphire Rapids), where bf16 data takes the cpu backend's own loops: x = a 1x1 identity convolution plus
 * biases of 100 and more, large means against deviations of about 1 (the
 * statistics must not cancel); dy in the host layout (viewed over);
 * backward in place (dx is dy) as the model runs it; then inference. */
static void test_bn_blocked(enum dlb_dtype t, uint32_t n, uint32_t c)
{
    const uint32_t h = 6, w = 5;
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
    CALL(fill, c, B(rv), 1.0);
    struct pair sm = out_pair(DLB_F32, c), si = out_pair(DLB_F32, c);
    struct pair dg = out_pair(DLB_F32, c), db = out_pair(DLB_F32, c);
    struct pair cv = out_pair(t, cnt), y = out_pair(t, cnt);
    struct pair g = rand_pair(t, cnt, 1.0);
    CALL(conv2d_fwd, &cd, B(x), B(wt), B(bias), B(cv));
    CALL(batchnorm_fwd_train, &d, B(cv), B(gm), B(bt), B(rm), B(rv), B(sm),
         B(si), B(y));
    NEAR("bn blocked mean 100 y", y);
    NEAR("bn blocked mean 100 saved mean", sm);
    NEAR("bn blocked mean 100 saved invstd", si);
    NEAR("bn blocked mean 100 running mean", rm);
    NEAR("bn blocked mean 100 running var", rv);
    CALL(batchnorm_bwd, &d, B(cv), B(g), B(gm), B(sm), B(si), B(g), B(dg),
         B(db));
    NEAR("bn blocked in-place dx", g);
    NEAR("bn blocked dgamma", dg);
    NEAR("bn blocked dbeta", db);
    CALL(batchnorm_fwd_infer, &d, B(cv), B(gm), B(bt), B(rm), B(rv), B(y));
    NEAR("bn blocked inference y", y);
    RELEASE(&x, &wt, &bias, &gm, &bt, &rm, &rv, &sm, &si, &dg, &db, &cv, &y,
            &g);
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
        CALL(fill, ch[i], B(rv[i]), 1.0);
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
        CHECK(DLB_RUN(dev, check_finite, a3, bo2.d, &found) == DLB_OK);
        CHECK(found == 0);
    }
    CALL(pool_fwd, &gap, B(bo2), B(g), NULL);
    CALL(linear_fwd, &fc, B(g), B(wf), B(bf), B(lg));
    NEAR("chain vgg fwd logits", lg);
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
    NEAR("chain vgg bn1 output", bo1);
    expect_same("chain vgg pool workspace", ws);
    NEAR("chain vgg bn2 output", bo2);
    NEAR("chain vgg running mean", rm[1]);
    NEAR("chain vgg bn2 dgamma", dg[1]);
    NEAR("chain vgg bn2 dbeta", dbt[1]);
    NEAR("chain vgg conv2 dw", dw2);
    NEAR("chain vgg bn1 dx", gc1);
    NEAR("chain vgg bn1 dbeta", dbt[0]);
    NEAR("chain vgg conv1 dx", gx);
    NEAR("chain vgg conv1 dw", dw1);
    RELEASE(&x, &w1, &w2, &wf, &bf, &cv1, &bo1, &po, &ws, &cv2, &bo2, &g, &lg,
            &dl, &gg, &gb2, &gc2, &gp, &gb1, &gc1, &gx, &dw1, &dw2, &dwf, &dbf);
    for (int i = 0; i < 2; i++)
        RELEASE(&gm[i], &bt[i], &rm[i], &rv[i], &sm[i], &si[i], &dg[i],
                &dbt[i]);
}

/* Mixed types, as a mixed-precision model runs a convolution: bf16
 * weights with f32 activations in and out (batch norm and the loss stay
 * f32, no cast passes), and the weight gradient in either type. The cpu
 * backend computes in bf16, so the bound is bf16's even for f32 outputs;
 * ref computes everything in double from the same inputs. */
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
    expect_tol(what, y, TOL_BF16);
    CALL(conv2d_bwd_data, &d, B(w), B(dy), B(dx));
    snprintf(what, sizeof what, "conv bwd_data bf16/f32->f32 %s", name);
    expect_tol(what, dx, TOL_BF16);
    CALL(conv2d_bwd_weights, &d, B(x), B(dy), B(dw), B(db));
    snprintf(what, sizeof what, "conv bwd_weights f32->bf16 %s", name);
    expect_tol(what, dw, TOL_BF16);
    expect_tol(what, db, TOL_BF16);
    CALL(conv2d_bwd_weights, &d, B(xb), B(dyb), B(dw32), NULL);
    snprintf(what, sizeof what, "conv bwd_weights bf16->f32 %s", name);
    expect_tol(what, dw32, TOL_BF16);
    /* An f32 output fed on: the next bf16 convolution reads it blocked. */
    CALL(conv2d_fwd, &d, B(x), B(w), NULL, B(y));
    CALL(relu_fwd, yn, B(y), B(y));
    expect_tol("conv fwd mixed then relu", y, TOL_BF16);
    RELEASE(&x, &w, &b, &dy, &xb, &dyb, &y, &dx, &dw, &dw32, &db);
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
    test_bn_blocked(t, 3, 32);
    /* 64 channels: nhwc for the bf16 loops on AMX machines (f32 takes
     * oneDNN's kernel, checked at 32) */
    if (t == DLB_BF16)
        test_bn_blocked(t, 3, 64);
}

int main(void)
{
    char reason[512];
    int rc = pair_open("cpu", reason, sizeof reason);
    if (rc >= 0)
        return rc;
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
    /* f32 pooling in nhwc (3, 10, 20, 24 channels) and nChw16c (32), odd
     * sizes; last: they draw from rng, and the bounds above were set on
     * the values drawn before them */
    test_max2x2_after_conv(DLB_F32, 2, 3, 6, 8);
    test_max2x2_after_conv(DLB_F32, 3, 10, 24, 24);
    test_max2x2_after_conv(DLB_F32, 2, 20, 8, 8);
    test_max2x2_after_conv(DLB_F32, 1, 24, 4, 6);
    test_max2x2_after_conv(DLB_F32, 2, 32, 6, 6);
    test_max2x2_after_conv(DLB_F32, 2, 10, 7, 9);
    test_add(DLB_F32, 70001);
    if (bf16)
        test_add(DLB_BF16, 1000);
    /* grouped and depthwise convolutions, ReLU6, concatenation */
    test_groups_relu6_concat(DLB_F32);
    if (bf16)
        test_groups_relu6_concat(DLB_BF16);

    dlb_backend_close(dev);
    dlb_backend_close(ref);
    return check_exit();
}
