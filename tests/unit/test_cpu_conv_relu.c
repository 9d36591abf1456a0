/* A convolution fused with the ReLU after it (CONV2D_RELU, inference):
 * the cpu backend's oneDNN convolution with the ReLU as a post-op against
 * the ref backend, which runs the convolution and then the ReLU, on
 * random inputs that are never zero, for the shapes ONNX models bring
 * (batch-norm-folded convolutions with a bias): 3x3 and 1x1, stride 2,
 * grouped and depthwise (MobileNetV2's ReLU6 as relu_max = 6), a stem
 * with 3 input channels, odd channel counts (nhwc) and multiples of 16
 * (blocked). Bound: relative to the norm, 1e-5 (fp32, as
 * test_cpu_backend.c's convolutions). Beyond it: the output is never
 * negative nor above relu_max, the ReLU zeroes a real share of it, and
 * the cpu backend's fused output equals its own convolution (FWD_INFER)
 * then ReLU within 1e-6 relative (the same sums, rounded once more
 * apart). The add with the ReLU after it (ADD_RELU) against ref's add
 * then ReLU, 1e-5. A convolution summed onto what its output buffer holds
 * (CONV2D_ADD, with and without the ReLU after the sum) against ref's
 * convolution, add and ReLU, 1e-5, with that buffer holding a plain
 * tensor (reordered into the convolution's layout first) or another
 * convolution's output (blocked, read as it is), for blocked, nhwc and
 * strided 1x1 (projection) shapes. A training propagation, a NaN
 * relu_max and a sum onto the convolution's own input are refused. Exits
 * 77 when the cpu backend is not built in. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "backend/backend_impl.h"
#include "backend/dtype.h"
#include "backend_pair.h" /* dev: the cpu backend */
#include "util/rng.h"

#define TOL_F32 1e-5

static double tol_of(enum dlb_dtype t, int dnn)
{
    (void)t, (void)dnn;
    return TOL_F32;
}

/* The cpu side's output: the share of exact zeros, or -1 when a value is
 * negative, above `hi` (> 0) or not finite. */
static double zero_share(const struct dlb_buffer *y, size_t n, float hi)
{
    double *v = download(dev, y, n, DLB_F32), zeros = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] >= 0.0) || !isfinite(v[i]) || (hi > 0.0f && v[i] > hi)) {
            free(v);
            return -1.0;
        }
        zeros += v[i] == 0.0;
    }
    free(v);
    return zeros / (double)n;
}

static void test_conv_relu(const char *name, uint32_t n, uint32_t in_c,
                           uint32_t hw, uint32_t out_c, uint32_t k,
                           uint32_t stride, uint32_t groups, float relu_max)
{
    struct dlb_conv2d_desc d = conv_desc(n, in_c, hw, hw, out_c, k, stride, k / 2);
    d.groups = groups;
    size_t xs = dlb_conv2d_x_count(&d), ws = dlb_conv2d_w_count(&d);
    size_t ys = dlb_conv2d_y_count(&d);
    char what[160];
    /* ReLU6 needs values above 6 to clip: larger inputs there */
    struct pair x = rand_pair(DLB_F32, xs, relu_max > 0.0f ? 8.0 : 1.0);
    struct pair w = rand_pair(DLB_F32, ws, 1.0 / sqrt((double)(in_c / groups) * k * k));
    struct pair b = rand_pair(DLB_F32, out_c, 0.5);
    struct pair y = out_pair(DLB_F32, ys), y2 = out_pair(DLB_F32, ys);
    BOTH CHECK(dlb_backend_run(BE, &(struct dlb_op){
        .kind = DLB_OP_CONV2D_RELU, .prop = DLB_PROP_FWD_INFER, .conv = d,
        .relu_max = relu_max, .x = B(x), .w = B(w), .b = B(b),
        .y = B(y)}) == DLB_OK);
    snprintf(what, sizeof what, "conv2d_relu %s", name);
    NEAR_DNN(what, y);
    double z = zero_share(y.d, ys, relu_max);
    snprintf(what, sizeof what, "conv2d_relu %s: output in [0, %s], %.0f%% zeros",
             name, relu_max > 0.0f ? "6" : "inf", 100.0 * z);
    expect_true(what, z > 0.05 && z < 0.95);
    /* the cpu side's own two operations */
    CHECK(DLB_RUN(dev, conv2d_fwd_infer, &d, x.d, w.d, b.d, y2.d) == DLB_OK);
    CHECK(dlb_backend_run(dev, &(struct dlb_op){
        .kind = DLB_OP_RELU, .prop = DLB_PROP_FWD_INFER, .count = ys,
        .relu_max = relu_max, .x = y2.d, .y = y2.d}) == DLB_OK);
    double r = max_rel_diff_on(dev, y.d, dev, y2.d, ys, DLB_F32);
    snprintf(what, sizeof what, "conv2d_relu %s: = its conv then relu (%.1e)", name, r);
    expect_true(what, r <= 1e-6);
    RELEASE(&x, &w, &b, &y, &y2);
}

/* CONV2D_ADD: y holds g (`blocked`: another convolution's output, in
 * the layout oneDNN chose; else random host data), then the convolution
 * of x is summed onto it, [ReLU]. */
static void test_conv_add(const char *name, uint32_t in_c, uint32_t hw,
                          uint32_t out_c, uint32_t k, uint32_t stride,
                          int blocked, int relu)
{
    struct dlb_conv2d_desc d = conv_desc(2, in_c, hw, hw, out_c, k, stride, k / 2);
    size_t ys = dlb_conv2d_y_count(&d);
    /* g from a 3x3 convolution of out_c channels at the output's size */
    struct dlb_conv2d_desc gd = conv_desc(2, out_c, d.out_h, d.out_w, out_c,
                                          3, 1, 1);
    struct pair x = rand_pair(DLB_F32, dlb_conv2d_x_count(&d), 1.0);
    struct pair w = rand_pair(DLB_F32, dlb_conv2d_w_count(&d),
                              1.0 / sqrt((double)in_c * k * k));
    struct pair b = rand_pair(DLB_F32, out_c, 0.5);
    struct pair gx = rand_pair(DLB_F32, dlb_conv2d_x_count(&gd), 1.0);
    struct pair gw = rand_pair(DLB_F32, dlb_conv2d_w_count(&gd),
                               1.0 / sqrt((double)out_c * 9));
    struct pair y = rand_pair(DLB_F32, ys, 1.0), c = out_pair(DLB_F32, ys);
    struct pair y2 = out_pair(DLB_F32, ys), y3 = out_pair(DLB_F32, ys);
    char what[160];
    if (blocked)
        CALL(conv2d_fwd_infer, &gd, B(gx), B(gw), NULL, B(y));
    /* the cpu side's own convolution then add, from a copy of y */
    CHECK(dlb_backend_run(dev, &(struct dlb_op){.kind = DLB_OP_ADD,
        .count = ys, .x = y.d, .g = y.d, .y = y2.d}) == DLB_OK);
    CHECK(dlb_backend_run(dev, &(struct dlb_op){.kind = DLB_OP_SCALE,
        .count = ys, .alpha = 0.5f, .y = y2.d}) == DLB_OK);
    BOTH CHECK(dlb_backend_run(BE, &(struct dlb_op){
        .kind = DLB_OP_CONV2D_ADD, .prop = DLB_PROP_FWD_INFER, .conv = d,
        .relu = relu, .x = B(x), .w = B(w), .b = B(b), .y = B(y)}) == DLB_OK);
    snprintf(what, sizeof what, "conv2d_add %s onto %s%s", name,
             blocked ? "a convolution's output" : "a plain tensor",
             relu ? ", relu" : "");
    NEAR_DNN(what, y);
    if (relu) {
        double z = zero_share(y.d, ys, 0.0f);
        snprintf(what, sizeof what, "conv2d_add %s: output >= 0, %.0f%% zeros",
                 name, 100.0 * z);
        expect_true(what, z > 0.05 && z < 0.95);
    }
    CHECK(DLB_RUN(dev, conv2d_fwd_infer, &d, x.d, w.d, b.d, c.d) == DLB_OK);
    CHECK(dlb_backend_run(dev, &(struct dlb_op){
        .kind = relu ? DLB_OP_ADD_RELU : DLB_OP_ADD, .count = ys, .x = c.d,
        .g = y2.d, .y = y3.d}) == DLB_OK);
    double r = max_rel_diff_on(dev, y.d, dev, y3.d, ys, DLB_F32);
    snprintf(what, sizeof what, "conv2d_add %s: = its conv then add (%.1e)",
             name, r);
    expect_true(what, r <= 1e-6);
    RELEASE(&x, &w, &b, &gx, &gw, &y, &c, &y2, &y3);
}

int main(void)
{
    char reason[512];
    int rc = pair_open("cpu", reason, sizeof reason);
    if (rc >= 0)
        return rc;
    dlb_rng_seed(&rng, 2029);
    (void)expect_same;
    int has = dlb_backend_has_kind(dev, DLB_OP_CONV2D_RELU) &&
              dlb_backend_has_kind(ref, DLB_OP_CONV2D_RELU);
    CHECK(has);
    if (!has)
        return check_exit();
    test_conv_relu("3x3 32->32 @8", 2, 32, 8, 32, 3, 1, 1, 0.0f);
    test_conv_relu("1x1 64->16 @7", 2, 64, 7, 16, 1, 1, 1, 0.0f);
    test_conv_relu("3x3 stride 2 16->32 @9", 2, 16, 9, 32, 3, 2, 1, 0.0f);
    test_conv_relu("stem 7x7 stride 2 3->16 @15", 2, 3, 15, 16, 7, 2, 1, 0.0f);
    test_conv_relu("odd 3x3 5->7 @6", 3, 5, 6, 7, 3, 1, 1, 0.0f);
    test_conv_relu("grouped 3x3 32->32 g4 @6", 2, 32, 6, 32, 3, 1, 4, 0.0f);
    test_conv_relu("depthwise relu6 3x3 32 @8", 2, 32, 8, 32, 3, 1, 32, 6.0f);
    test_conv_relu("1x1 relu6 16->48 @5", 2, 16, 5, 48, 1, 1, 1, 6.0f);

    /* ADD_RELU: x + g then the ReLU (and ReLU6), against ref's add then
     * ReLU; plain host data */
    for (int clip = 0; clip < 2; clip++) {
        size_t n = 3 * 37 * 11; /* not a multiple of any vector width */
        struct pair a = rand_pair(DLB_F32, n, clip ? 8.0 : 1.0);
        struct pair g = rand_pair(DLB_F32, n, clip ? 8.0 : 1.0);
        struct pair y = out_pair(DLB_F32, n);
        float hi = clip ? 6.0f : 0.0f;
        BOTH CHECK(dlb_backend_run(BE, &(struct dlb_op){
            .kind = DLB_OP_ADD_RELU, .count = n, .relu_max = hi, .x = B(a),
            .g = B(g), .y = B(y)}) == DLB_OK);
        NEAR(clip ? "add_relu relu6" : "add_relu", y);
        double z = zero_share(y.d, n, hi);
        expect_true(clip ? "add_relu relu6: output in [0, 6], zeros" :
                           "add_relu: output >= 0, zeros", z > 0.05 && z < 0.95);
        RELEASE(&a, &g, &y);
    }

    /* ADD and ADD_RELU of a convolution's output (in the layout oneDNN
     * chose: blocked at 32 channels) and a plain tensor, either way round:
     * the cpu backend adds in the blocked layout */
    for (int k = 0; k < 4; k++) {
        struct dlb_conv2d_desc cd = conv_desc(2, 32, 8, 8, 32, 3, 1, 1);
        size_t ys = dlb_conv2d_y_count(&cd);
        struct pair x = rand_pair(DLB_F32, dlb_conv2d_x_count(&cd), 1.0);
        struct pair w = rand_pair(DLB_F32, dlb_conv2d_w_count(&cd), 0.06);
        struct pair c = out_pair(DLB_F32, ys), y = out_pair(DLB_F32, ys);
        struct pair g = rand_pair(DLB_F32, ys, 1.0);
        int swap = k & 1, relu = k >> 1;
        CALL(conv2d_fwd_infer, &cd, B(x), B(w), NULL, B(c));
        BOTH CHECK(dlb_backend_run(BE, &(struct dlb_op){
            .kind = relu ? DLB_OP_ADD_RELU : DLB_OP_ADD, .count = ys,
            .x = swap ? B(g) : B(c), .g = swap ? B(c) : B(g),
            .y = B(y)}) == DLB_OK);
        char what[96];
        snprintf(what, sizeof what, "%s of a blocked and a plain tensor%s",
                 relu ? "add_relu" : "add", swap ? " (plain first)" : "");
        NEAR_DNN(what, y);
        /* and the sum read again by a convolution after it */
        struct pair c2 = out_pair(DLB_F32, ys);
        CALL(conv2d_fwd_infer, &cd, B(y), B(w), NULL, B(c2));
        snprintf(what, sizeof what, "a convolution of that %s", relu ? "add_relu" : "add");
        NEAR_DNN(what, c2);
        RELEASE(&x, &w, &c, &y, &g, &c2);
    }

    /* CONV2D_ADD: a residual block's last convolution (3x3 and 1x1,
     * blocked at multiples of 16, nhwc at odd counts) and a projection
     * (1x1 stride 2) summed onto the other branch */
    CHECK(dlb_backend_has_kind(dev, DLB_OP_CONV2D_ADD) &&
          dlb_backend_has_kind(ref, DLB_OP_CONV2D_ADD));
    for (int k = 0; k < 4; k++) {
        int blocked = k & 1, relu = k >> 1;
        test_conv_add("3x3 32->32 @8", 32, 8, 32, 3, 1, blocked, relu);
        test_conv_add("1x1 16->64 @7", 16, 7, 64, 1, 1, blocked, relu);
        test_conv_add("projection 1x1 stride 2 32->64 @8", 32, 8, 64, 1, 2,
                      blocked, relu);
        test_conv_add("odd 3x3 5->7 @6", 5, 6, 7, 3, 1, blocked, relu);
    }

    /* refused: training (its backward would need the pre-ReLU output) and
     * a NaN clip */
    struct dlb_conv2d_desc d = conv_desc(1, 16, 4, 4, 16, 3, 1, 1);
    struct pair x = rand_pair(DLB_F32, dlb_conv2d_x_count(&d), 1.0);
    struct pair w = rand_pair(DLB_F32, dlb_conv2d_w_count(&d), 0.1);
    struct pair y = out_pair(DLB_F32, dlb_conv2d_y_count(&d));
    BOTH {
        struct dlb_op op = { .kind = DLB_OP_CONV2D_RELU, .prop = DLB_PROP_FWD_TRAIN,
                             .conv = d, .x = B(x), .w = B(w), .y = B(y) };
        expect_true("conv2d_relu: FWD_TRAIN refused", dlb_backend_run(BE, &op) != DLB_OK);
        op.prop = DLB_PROP_FWD_INFER;
        op.relu_max = NAN;
        expect_true("conv2d_relu: NaN relu_max refused", dlb_backend_run(BE, &op) != DLB_OK);
        op.kind = DLB_OP_CONV2D_ADD;
        op.relu_max = 0.0f;
        op.prop = DLB_PROP_FWD_TRAIN;
        expect_true("conv2d_add: FWD_TRAIN refused", dlb_backend_run(BE, &op) != DLB_OK);
        op.prop = DLB_PROP_FWD_INFER;
        op.x = B(y);
        expect_true("conv2d_add: a sum onto its own input refused",
                    dlb_backend_run(BE, &op) != DLB_OK);
    }
    RELEASE(&x, &w, &y);
    dlb_backend_close(dev);
    dlb_backend_close(ref);
    return check_exit();
}
