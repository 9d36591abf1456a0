/* The cpu backend's convolution of a few channels on the host view
 * (cpu_conv_quads.c: 4 pixels by 4 channels to a vector) against the ref
 * backend, through the inference entry (dlb_backend_conv_pool's
 * conv_fwd_infer) as inference runs LeNet's conv2; training's conv2d_fwd
 * keeps oneDNN's kernel. The bound is 1e-5 of the
 * norm, as for oneDNN's kernels (test_cpu_backend.c), on random inputs
 * that are never zero. Shapes: LeNet's conv2 at batch 1 (one thread, a
 * block cut short) and 37 (both threads), fewer channel groups than a
 * block holds (4, 8 and 12 channels), 3x3 from 2 channels, 3 quads to a
 * row; and shapes oneDNN keeps (16
 * channels, a row of 6, stride 2, an input in nhwc, the kernel's shapes
 * in channel groups: it computes one group only). The packed weights
 * must follow every write of the weights. On a CPU with AVX-512 the test
 * checks that the kernel took the shapes it should. Exits 77 when the cpu
 * backend is not built in. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "backend/backend_impl.h"
#include "backend/cpu/cpu.h"
#include "backend/dtype.h"
#include "backend_pair.h" /* dev: the cpu backend */
#include "util/rng.h"

static double tol_of(enum dlb_dtype t, int dnn)
{
    (void)t;
    (void)dnn;
    return 1e-5;
}

static void test_fwd(const char *name, struct dlb_conv2d_desc d, int bias,
                     int fast)
{
    const enum dlb_dtype t = DLB_F32;
    char what[160];
    size_t xn = dlb_conv2d_x_count(&d), wn = dlb_conv2d_w_count(&d);
    size_t yn = dlb_conv2d_y_count(&d);
    struct pair x = rand_pair(t, xn, 1.0), w = rand_pair(t, wn, 0.3);
    struct pair b = bias ? rand_pair(t, d.out_c, 1.0) : none;
    struct pair y = out_pair(t, yn);
    struct dlb_op op = DLB_OP_OF(conv2d_fwd_infer, &d, x.d, w.d, b.d, y.d);
    const struct dlb_kernel *k = dlb_backend_kernel_for(dev, &op);
    if (have_avx512()) {
        snprintf(what, sizeof what, "%s: the kernel takes it", name);
        expect_true(what, (k && !strcmp(k->name, "conv_quads")) == fast);
    }
    /* a training pass never runs it */
    op.prop = DLB_PROP_FWD_TRAIN;
    k = dlb_backend_kernel_for(dev, &op);
    snprintf(what, sizeof what, "%s: not in training", name);
    expect_true(what, k && strcmp(k->name, "conv_quads") != 0);
    CHECK(DLB_RUN(dev, conv2d_fwd_infer, &d, x.d, w.d, b.d, y.d) == DLB_OK);
    CHECK(DLB_RUN(ref, conv2d_fwd, &d, x.r, w.r, b.r, y.r) == DLB_OK);
    snprintf(what, sizeof what, "quads fwd %s%s", name, bias ? " +bias" : "");
    NEAR_DNN(what, y);
    /* new weights: the packed copy must be built again */
    float *v = malloc(wn * sizeof *v);
    for (size_t i = 0; i < wn; i++)
        v[i] = (float)(0.2 * rand_nonzero());
    BOTH CHECK(DLB_BE_CALL(BE, copy_from_host, B(w), 0, v, wn * sizeof *v) ==
               DLB_OK);
    free(v);
    CHECK(DLB_RUN(dev, conv2d_fwd_infer, &d, x.d, w.d, b.d, y.d) == DLB_OK);
    CHECK(DLB_RUN(ref, conv2d_fwd, &d, x.r, w.r, b.r, y.r) == DLB_OK);
    snprintf(what, sizeof what, "quads fwd %s, weights rewritten", name);
    NEAR_DNN(what, y);
    RELEASE(&x, &w, &b, &y);
}

/* x in nhwc, as a training pass hands it over: oneDNN's, not the
 * kernel's. */
static void test_nhwc_input(void)
{
    const enum dlb_dtype t = DLB_F32;
    struct dlb_conv2d_desc c1 = conv_desc(2, 1, 16, 16, 10, 5, 1, 0);
    struct dlb_conv2d_desc c2 = conv_desc(2, 10, 12, 12, 20, 5, 1, 0);
    struct pair x = rand_pair(t, dlb_conv2d_x_count(&c1), 1.0);
    struct pair w1 = rand_pair(t, dlb_conv2d_w_count(&c1), 0.3);
    struct pair w2 = rand_pair(t, dlb_conv2d_w_count(&c2), 0.3);
    struct pair h = out_pair(t, dlb_conv2d_y_count(&c1));
    struct pair y = out_pair(t, dlb_conv2d_y_count(&c2));
    CALL(conv2d_fwd, &c1, B(x), B(w1), NULL, B(h));
    expect_true("an nhwc input is oneDNN's",
                !dlb_cpu_conv_quads_fits(&c2, h.d, w2.d, NULL, y.d));
    CHECK(DLB_RUN(dev, conv2d_fwd_infer, &c2, h.d, w2.d, NULL, y.d) == DLB_OK);
    CHECK(DLB_RUN(ref, conv2d_fwd, &c2, h.r, w2.r, NULL, y.r) == DLB_OK);
    NEAR_DNN("quads fwd from nhwc (oneDNN)", y);
    RELEASE(&x, &w1, &w2, &h, &y);
}

int main(void)
{
    char reason[512];
    int rc = pair_open("cpu", reason, sizeof reason);
    if (rc >= 0)
        return rc;
    dlb_rng_seed(&rng, 2030);
    (void)expect_same;
    test_fwd("lenet conv2 n=1", conv_desc(1, 10, 12, 12, 20, 5, 1, 0), 1, 1);
    test_fwd("lenet conv2 n=37", conv_desc(37, 10, 12, 12, 20, 5, 1, 0), 1, 1);
    test_fwd("4 channels", conv_desc(3, 6, 9, 14, 4, 3, 1, 0), 1, 1);
    test_fwd("8 channels", conv_desc(2, 5, 8, 8, 8, 5, 1, 0), 0, 1);
    test_fwd("12 channels 3x3 from 2", conv_desc(5, 2, 10, 10, 12, 3, 1, 0),
             1, 1);
    test_fwd("3 quads a row", conv_desc(3, 10, 16, 16, 20, 5, 1, 0), 1, 1);
    test_fwd("16 channels", conv_desc(2, 10, 12, 12, 16, 5, 1, 0), 1, 0);
    test_fwd("a row of 6", conv_desc(2, 10, 10, 10, 20, 5, 1, 0), 1, 0);
    test_fwd("stride 2", conv_desc(2, 10, 19, 19, 20, 5, 2, 0), 1, 0);
    test_nhwc_input();
    {
        struct dlb_conv2d_desc g = conv_desc(2, 10, 12, 12, 20, 5, 1, 0);
        g.groups = 2;
        test_fwd("lenet conv2 in 2 groups", g, 1, 0);
        g.groups = 10;
        test_fwd("lenet conv2 depthwise-like, 10 groups", g, 0, 0);
    }
    dlb_backend_close(dev);
    dlb_backend_close(ref);
    return check_exit();
}
