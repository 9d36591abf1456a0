/* Op-by-op checks against ref that every backend's test runs the same
 * way: convolution (grouped and depthwise too), pooling, dropout, batch
 * norm, linear, the loss, SGD, ReLU6 and channel concatenation, forward
 * and backward, on random inputs that are never zero. The bounds are the
 * test's (tol_of, backend_pair.h); dropout masks and values, the
 * max-pool workspace and concatenated copies must be identical, SGD
 * within 1e-6 per element. Include after backend_pair.h. */
#ifndef DLB_TEST_BACKEND_PAIR_OPS_H
#define DLB_TEST_BACKEND_PAIR_OPS_H

#include "backend_pair.h"

static void test_conv(const char *name, struct dlb_conv2d_desc d,
                      enum dlb_dtype t, int bias)
{
    char what[160];
    size_t xn = (size_t)d.n * d.in_c * d.in_h * d.in_w;
    size_t wn = (size_t)d.out_c * (d.in_c / (d.groups > 1 ? d.groups : 1)) *
                d.kh * d.kw;
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

/* conv_desc's convolution in g groups. */
static struct dlb_conv2d_desc grouped(struct dlb_conv2d_desc d, uint32_t g)
{
    d.groups = g;
    return d;
}

/* RELU with relu_max 6 (ReLU6) on inputs in +-[0.9, 9): some clipped,
 * some passed, some zeroed; backward, then forward in place. The ReLU's
 * bound (element-wise). */
static void test_relu6(size_t count, enum dlb_dtype t)
{
    struct pair x = rand_pair(t, count, 9.0), dy = rand_pair(t, count, 1.0);
    struct pair y = out_pair(t, count), dx = out_pair(t, count);
    BOTH CHECK(dlb_backend_run(BE, &(struct dlb_op){.kind = DLB_OP_RELU,
                   .prop = DLB_PROP_FWD_TRAIN, .count = count,
                   .relu_max = 6.0f, .x = B(x), .y = B(y)}) == DLB_OK);
    NEAR("relu6 fwd", y);
    BOTH CHECK(dlb_backend_run(BE, &(struct dlb_op){.kind = DLB_OP_RELU,
                   .prop = DLB_PROP_BWD, .count = count, .relu_max = 6.0f,
                   .y = B(y), .dy = B(dy), .dx = B(dx)}) == DLB_OK);
    NEAR("relu6 bwd", dx);
    BOTH CHECK(dlb_backend_run(BE, &(struct dlb_op){.kind = DLB_OP_RELU,
                   .prop = DLB_PROP_FWD_INFER, .count = count,
                   .relu_max = 6.0f, .x = B(x), .y = B(x)}) == DLB_OK);
    NEAR("relu6 fwd in place", x);
    RELEASE(&x, &dy, &y, &dx);
}

/* One CONCAT of channels [offset, offset + c) on both sides. */
static void concat_run(enum dlb_prop prop, struct dlb_concat_desc d,
                       struct pair part, struct pair all)
{
    BOTH CHECK(dlb_backend_run(BE, &(struct dlb_op){.kind = DLB_OP_CONCAT,
                   .prop = prop, .concat = d,
                   .x = prop == DLB_PROP_BWD ? NULL : B(part),
                   .y = prop == DLB_PROP_BWD ? NULL : B(all),
                   .dy = prop == DLB_PROP_BWD ? B(all) : NULL,
                   .dx = prop == DLB_PROP_BWD ? B(part) : NULL}) == DLB_OK);
}

/* CONCAT of `parts` inputs of cs[i] channels (n images of hw pixels)
 * into one output, written last input first, then every input's gradient
 * from the output's: byte copies, identical to ref's. */
static void test_concat(enum dlb_dtype t, uint32_t n, uint32_t hw,
                        const uint32_t *cs, int parts)
{
    struct pair x[3], dx[3];
    uint32_t at[3], total = 0;
    char what[96];
    for (int i = 0; i < parts; i++) {
        at[i] = total;
        total += cs[i];
        x[i] = rand_pair(t, (size_t)n * cs[i] * hw, 1.0);
        dx[i] = out_pair(t, (size_t)n * cs[i] * hw);
    }
    struct pair y = out_pair(t, (size_t)n * total * hw);
    struct pair dy = rand_pair(t, (size_t)n * total * hw, 1.0);
    for (int i = parts - 1; i >= 0; i--)
        concat_run(DLB_PROP_FWD_TRAIN,
                   (struct dlb_concat_desc){n, cs[i], total, at[i], hw}, x[i],
                   y);
    snprintf(what, sizeof what, "concat fwd of %d inputs", parts);
    expect_same(what, y);
    for (int i = 0; i < parts; i++) {
        concat_run(DLB_PROP_BWD,
                   (struct dlb_concat_desc){n, cs[i], total, at[i], hw}, dx[i],
                   dy);
        snprintf(what, sizeof what, "concat bwd, input %d of %d", i + 1, parts);
        expect_same(what, dx[i]);
        RELEASE(&x[i], &dx[i]);
    }
    RELEASE(&y, &dy);
}

/* A depthwise block as MobileNetV2 runs it, on the backend's own layout
 * of a convolution's output (the cpu backend's blocked one): depthwise
 * 3x3 conv, ReLU6 in place, concatenated behind a second input; back
 * through the concatenation, ReLU6 and the convolution. Within the
 * convolution's bound. */
static void test_depthwise_chain(enum dlb_dtype t)
{
    struct dlb_conv2d_desc d = grouped(conv_desc(2, 32, 8, 8, 32, 3, 1, 1), 32);
    size_t an = (size_t)2 * 32 * 64, on = (size_t)2 * 48 * 64;
    struct pair x = rand_pair(t, an, 1.0), w = rand_pair(t, 32 * 9, 2.0);
    struct pair other = rand_pair(t, (size_t)2 * 16 * 64, 1.0);
    struct pair y = out_pair(t, an), cat = out_pair(t, on);
    struct pair dcat = rand_pair(t, on, 1.0), dy = out_pair(t, an);
    struct pair dx = out_pair(t, an), dw = out_pair(t, 32 * 9);
    struct dlb_concat_desc c0 = {2, 16, 48, 0, 64}, c1 = {2, 32, 48, 16, 64};
    CALL(conv2d_fwd, &d, B(x), B(w), NULL, B(y));
    BOTH CHECK(dlb_backend_run(BE, &(struct dlb_op){.kind = DLB_OP_RELU,
                   .prop = DLB_PROP_FWD_TRAIN, .count = an, .relu_max = 6.0f,
                   .x = B(y), .y = B(y)}) == DLB_OK);
    concat_run(DLB_PROP_FWD_TRAIN, c1, y, cat);
    concat_run(DLB_PROP_FWD_TRAIN, c0, other, cat);
    NEAR_DNN("depthwise chain: conv, relu6, concat", cat);
    concat_run(DLB_PROP_BWD, c1, dy, dcat);
    BOTH CHECK(dlb_backend_run(BE, &(struct dlb_op){.kind = DLB_OP_RELU,
                   .prop = DLB_PROP_BWD, .count = an, .relu_max = 6.0f,
                   .y = B(y), .dy = B(dy), .dx = B(dy)}) == DLB_OK);
    NEAR_DNN("depthwise chain: relu6 bwd in place", dy);
    CALL(conv2d_bwd_data, &d, B(w), B(dy), B(dx));
    CALL(conv2d_bwd_weights, &d, B(x), B(dy), B(dw), NULL);
    NEAR_DNN("depthwise chain: conv dx", dx);
    NEAR_DNN("depthwise chain: conv dw", dw);
    RELEASE(&x, &w, &other, &y, &cat, &dcat, &dy, &dx, &dw);
}

/* Random integers in [lo, hi] of int8 type t. */
static struct pair rand_int8(enum dlb_dtype t, size_t n, int lo, int hi)
{
    float *v = malloc(n * sizeof *v + 1);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(lo + (int)dlb_rng_below(&rng, (uint64_t)(hi - lo + 1)));
    struct pair p = from_floats(t, v, n);
    free(v);
    return p;
}

/* A grouped int8 convolution is computed as ref computes it (f32 y:
 * backend.h's 1e-6 relative), or refused with DLB_ERR_UNSUPPORTED naming
 * the groups: never as a dense one. Skipped without int8. */
static void test_conv_int8_grouped(void)
{
    char why[256];
    if (DLB_BE_CALL(dev, supports, DLB_CAP_INT8, why, sizeof why) != DLB_OK)
        return;
    struct dlb_conv2d_desc d = grouped(conv_desc(2, 16, 6, 6, 16, 3, 1, 1), 4);
    struct dlb_int8_desc q = { DLB_U8, 0.05f, 12, 1.0f, 0, 1 };
    size_t xn = 2 * 16 * 36, wn = 16 * 4 * 9, yn = 2 * 16 * 36;
    struct pair x = rand_int8(DLB_U8, xn, 0, 255);
    struct pair w = rand_int8(DLB_S8, wn, -127, 127);
    struct pair ws = rand_pair(DLB_F32, 16, 0.01), y = out_pair(DLB_F32, yn);
    dlb_status st[2];
    BOTH st[side] = dlb_backend_run(BE, &(struct dlb_op){
        .kind = DLB_OP_CONV2D_INT8, .prop = DLB_PROP_FWD_INFER, .conv = d,
        .q = q, .x = B(x), .w = B(w), .w_scale = B(ws), .y = B(y)});
    CHECK(st[1] == DLB_OK);
    if (st[0] == DLB_ERR_UNSUPPORTED)
        expect_true("int8 conv in 4 groups: refused, naming the groups",
                    strstr(dlb_backend_last_error(dev), "groups") != NULL);
    else if (st[0] == DLB_OK)
        expect_tol("int8 conv in 4 groups -> f32 relu", y, 1e-6);
    else
        expect_true("int8 conv in 4 groups: runs or is refused", 0);
    RELEASE(&x, &w, &ws, &y);
}

/* Grouped and depthwise convolutions (MobileNetV2's: stride 1 and 2, pad
 * 1), ReLU6 and concatenation in type t: the operations of the networks
 * after vgg-small, which test_cpu_backend and test_cuda_ops append; with
 * f32, the grouped int8 convolution too. */
static void test_groups_relu6_concat(enum dlb_dtype t)
{
    static const uint32_t two[2] = {5, 11}, three[3] = {16, 3, 8};
    test_conv("grouped g2 16->32 k3p1 @8",
              grouped(conv_desc(2, 16, 8, 8, 32, 3, 1, 1), 2), t, 1);
    test_conv("grouped g4 16->32 k3p1 @8",
              grouped(conv_desc(2, 16, 8, 8, 32, 3, 1, 1), 4), t, 0);
    test_conv("grouped g4 16->32 k3 s2 @9",
              grouped(conv_desc(3, 16, 9, 9, 32, 3, 2, 0), 4), t, 1);
    test_conv("depthwise 32 k3 s1 p1 @10",
              grouped(conv_desc(2, 32, 10, 10, 32, 3, 1, 1), 32), t, 1);
    test_conv("depthwise 32 k3 s2 p1 @10",
              grouped(conv_desc(2, 32, 10, 10, 32, 3, 2, 1), 32), t, 0);
    test_conv("depthwise 16 k3 s1 p1 @32 (MobileNetV2-32's first)",
              grouped(conv_desc(2, 16, 32, 32, 16, 3, 1, 1), 16), t, 0);
    test_conv("depthwise 48 k3 s2 p1 @32",
              grouped(conv_desc(2, 48, 32, 32, 48, 3, 2, 1), 48), t, 0);
    test_conv("depthwise 24 k3 s2 p1 @7 (odd)",
              grouped(conv_desc(3, 24, 7, 7, 24, 3, 2, 1), 24), t, 1);
    test_relu6(4 * 16 * 8 * 8, t);
    test_relu6(77, t);
    test_concat(t, 3, 7 * 5, two, 2);
    test_concat(t, 2, 16, three, 3);
    test_depthwise_chain(t);
    if (t == DLB_F32)
        test_conv_int8_grouped();
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
