/* f32 3x3 stride-1 convolutions on oneDNN's Winograd kernels
 * (cpu.winograd): in inference CONV2D, CONV2D_RELU and CONV2D_ADD (the
 * sum onto a random tensor, with and without the ReLU after it), and
 * training's three passes (forward, backward data, backward weights with
 * the bias gradient), against the ref backend, on random inputs that are
 * never zero, with and without biases, batch 1 (oneDNN's F(2x2, 3x3)
 * kernel) to 16 (F(4x4, 3x3)), odd and even sizes. Bound: relative to
 * the norm, 1e-5 (fp32, as the other convolutions; measured about 1e-6
 * and below). Beyond it, facts: with
 * oneDNN 2.x on AVX-512 each case runs on the "onednn_winograd" kernel
 * (the library has it), with 3.x never (it has none on CPUs); a cpu
 * backend opened with winograd off never runs it and its direct result
 * is within 1e-5 of the Winograd one, element by element relative to
 * the largest; a stride of 2, a 5x5 or a grouped convolution, fewer than
 * 32 input or output channels or 16 M multiply-adds and bf16 tensors
 * never run it; a bad DLBENCH_CPU_WINOGRAD
 * refuses to open the backend, naming the value. The backend notes that
 * a fast algorithm ran (dlb_backend_fewer_flops: a step's GFLOP/s are
 * then effective figures) where it ran Winograd, and only there. Exits 77 when the cpu
 * backend is not built in. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_impl.h"
#include "backend/dtype.h"
#include "backend_pair.h" /* dev: the cpu backend, winograd left unset */
#include "util/rng.h"

static double tol_of(enum dlb_dtype t, int dnn)
{
    (void)t, (void)dnn;
    return 1e-5;
}

static struct dlb_backend *direct; /* cpu with cpu.winograd = off */
static int expect_wino;            /* oneDNN 2.x on AVX-512 */

static const char *kernel_name(struct dlb_backend *be, const struct dlb_op *op)
{
    const struct dlb_kernel *k = dlb_backend_kernel_for(be, op);
    return k ? k->name : "(none)";
}

static int is_wino(struct dlb_backend *be, const struct dlb_op *op)
{
    return strcmp(kernel_name(be, op), "onednn_winograd") == 0;
}

/* A buffer on the direct backend holding what `p`'s dev side holds. */
static struct dlb_buffer *copy_to_direct(const struct pair *p)
{
    struct dlb_buffer *b = NULL;
    size_t bytes = p->n * dlb_dtype_size(p->t);
    void *h = malloc(bytes);
    CHECK(DLB_BE_CALL(dev, copy_to_host, h, p->d, 0, bytes) == DLB_OK);
    CHECK(DLB_BE_CALL(direct, buffer_alloc, p->t, p->n, &b) == DLB_OK);
    CHECK(DLB_BE_CALL(direct, copy_from_host, b, 0, h, bytes) == DLB_OK);
    free(h);
    return b;
}

struct wcase {
    const char *name;
    enum dlb_op_kind kind;
    uint32_t n, in_c, out_c, hw;
    int relu, bias;
};

static void test_case(const struct wcase *c)
{
    struct dlb_conv2d_desc d = conv_desc(c->n, c->in_c, c->hw, c->hw, c->out_c,
                                         3, 1, 1);
    size_t ys = dlb_conv2d_y_count(&d);
    struct pair x = rand_pair(DLB_F32, dlb_conv2d_x_count(&d), 1.0);
    struct pair w = rand_pair(DLB_F32, dlb_conv2d_w_count(&d),
                              1.0 / sqrt(9.0 * c->in_c));
    struct pair b = c->bias ? rand_pair(DLB_F32, c->out_c, 0.5) : none;
    /* CONV2D_ADD sums onto what y holds: a random tensor on both sides */
    struct pair y = c->kind == DLB_OP_CONV2D_ADD ? rand_pair(DLB_F32, ys, 1.0)
                                                 : out_pair(DLB_F32, ys);
    struct dlb_buffer *xd = copy_to_direct(&x), *wd = copy_to_direct(&w);
    struct dlb_buffer *bd = c->bias ? copy_to_direct(&b) : NULL;
    struct dlb_buffer *yd = copy_to_direct(&y);
    struct dlb_op op = {.kind = c->kind, .prop = DLB_PROP_FWD_INFER,
                        .conv = d, .relu = c->relu};
    char what[200];
    op.x = x.d, op.w = w.d, op.b = b.d, op.y = y.d;
    snprintf(what, sizeof what, "%s: kernel %s (Winograd expected: %s)",
             c->name, kernel_name(dev, &op), expect_wino ? "yes" : "no");
    expect_true(what, is_wino(dev, &op) == expect_wino);
    dlb_backend_fewer_flops_reset(dev);
    BOTH {
        op.x = B(x), op.w = B(w), op.b = c->bias ? B(b) : NULL, op.y = B(y);
        CHECK(dlb_backend_run(BE, &op) == DLB_OK);
    }
    /* the record's measure.fewer_flops: its GFLOP/s are effective ones */
    const char *noted = dlb_backend_fewer_flops(dev);
    snprintf(what, sizeof what, "%s: the backend notes a fast algorithm "
             "(%s) where it ran Winograd", c->name, noted ? noted : "none");
    expect_true(what, expect_wino ? noted && !strcmp(noted, "winograd") : !noted);
    snprintf(what, sizeof what, "%s against ref", c->name);
    NEAR_DNN(what, y);
    op.x = xd, op.w = wd, op.b = bd, op.y = yd;
    snprintf(what, sizeof what, "%s with winograd off: kernel %s", c->name,
             kernel_name(direct, &op));
    expect_true(what, !is_wino(direct, &op));
    dlb_backend_fewer_flops_reset(direct);
    CHECK(dlb_backend_run(direct, &op) == DLB_OK);
    snprintf(what, sizeof what, "%s with winograd off: no fast algorithm "
             "noted", c->name);
    expect_true(what, dlb_backend_fewer_flops(direct) == NULL);
    double r = max_rel_diff_on(dev, y.d, direct, yd, ys, DLB_F32);
    snprintf(what, sizeof what, "%s: within 1e-5 of the direct kernel "
             "element by element (%.1e)", c->name, r);
    expect_true(what, r <= 1e-5);
    RELEASE(&x, &w, &b, &y);
    dlb_backend_ops_of(direct)->buffer_free(direct, xd);
    dlb_backend_ops_of(direct)->buffer_free(direct, wd);
    if (bd)
        dlb_backend_ops_of(direct)->buffer_free(direct, bd);
    dlb_backend_ops_of(direct)->buffer_free(direct, yd);
}

/* Descriptors the Winograd kernels do not take: the list's other
 * kernels run them. */
static void test_not_applied(void)
{
    struct dlb_conv2d_desc s2 = conv_desc(8, 64, 8, 8, 64, 3, 2, 1);
    struct dlb_conv2d_desc k5 = conv_desc(8, 64, 8, 8, 64, 5, 1, 2);
    struct dlb_conv2d_desc g = conv_desc(8, 64, 8, 8, 64, 3, 1, 1);
    g.groups = 64;
    struct dlb_conv2d_desc ci = conv_desc(64, 16, 8, 8, 32, 3, 1, 1);
    struct dlb_conv2d_desc co = conv_desc(64, 32, 8, 8, 16, 3, 1, 1);
    struct dlb_conv2d_desc small = conv_desc(1, 64, 14, 14, 64, 3, 1, 1);
    struct dlb_conv2d_desc ok = conv_desc(8, 64, 8, 8, 64, 3, 1, 1);
    struct pair x = rand_pair(DLB_F32, dlb_conv2d_x_count(&ok), 1.0);
    struct pair w = rand_pair(DLB_F32, dlb_conv2d_w_count(&k5), 0.1);
    struct pair y = out_pair(DLB_F32, dlb_conv2d_y_count(&ok));
    struct pair xh = rand_pair(DLB_BF16, dlb_conv2d_x_count(&ok), 1.0);
    struct pair wh = rand_pair(DLB_BF16, dlb_conv2d_w_count(&ok), 0.1);
    struct pair yh = out_pair(DLB_BF16, dlb_conv2d_y_count(&ok));
    struct dlb_op op = {.kind = DLB_OP_CONV2D_RELU, .prop = DLB_PROP_FWD_INFER,
                        .x = x.d, .w = w.d, .y = y.d};
    op.conv = s2;
    expect_true("stride 2: not Winograd", !is_wino(dev, &op));
    op.conv = k5;
    expect_true("5x5: not Winograd", !is_wino(dev, &op));
    op.conv = g;
    expect_true("depthwise: not Winograd", !is_wino(dev, &op));
    op.conv = ci;
    expect_true("16 input channels: not Winograd", !is_wino(dev, &op));
    op.conv = co;
    expect_true("16 output channels: not Winograd", !is_wino(dev, &op));
    op.conv = small;
    expect_true("7.2 M multiply-adds (64->64 @14, batch 1): not Winograd",
                !is_wino(dev, &op));
    op.conv = ok;
    expect_true("the same layer at batch 8 (18.9 M multiply-adds): Winograd "
                "where the library has it", is_wino(dev, &op) == expect_wino);
    op.conv = ok;
    op.kind = DLB_OP_CONV2D;
    op.x = xh.d, op.w = wh.d, op.y = yh.d;
    expect_true("bf16: not Winograd", !is_wino(dev, &op));
    RELEASE(&x, &w, &y, &xh, &wh, &yh);
}

/* Training's three passes of one layer: the forward (the inference
 * primitive), backward data and backward weights with the bias gradient,
 * each against ref and against the direct kernels. */
static void test_training(uint32_t n, uint32_t c, uint32_t hw)
{
    struct dlb_conv2d_desc d = conv_desc(n, c, hw, hw, c, 3, 1, 1);
    size_t xs = dlb_conv2d_x_count(&d), ws = dlb_conv2d_w_count(&d);
    size_t ys = dlb_conv2d_y_count(&d);
    struct pair x = rand_pair(DLB_F32, xs, 1.0);
    struct pair w = rand_pair(DLB_F32, ws, 1.0 / sqrt(9.0 * c));
    struct pair b = rand_pair(DLB_F32, c, 0.5);
    struct pair dy = rand_pair(DLB_F32, ys, 1.0);
    struct pair y = out_pair(DLB_F32, ys), dx = out_pair(DLB_F32, xs);
    struct pair dw = out_pair(DLB_F32, ws), db = out_pair(DLB_F32, c);
    struct dlb_buffer *xd = copy_to_direct(&x), *wd = copy_to_direct(&w);
    struct dlb_buffer *bd = copy_to_direct(&b), *dyd = copy_to_direct(&dy);
    struct dlb_buffer *yd = copy_to_direct(&y), *dxd = copy_to_direct(&dx);
    struct dlb_buffer *dwd = copy_to_direct(&dw), *dbd = copy_to_direct(&db);
    struct dlb_op f = {.kind = DLB_OP_CONV2D, .prop = DLB_PROP_FWD_TRAIN,
                       .conv = d, .x = x.d, .w = w.d, .b = b.d, .y = y.d};
    struct dlb_op bd_op = {.kind = DLB_OP_CONV2D, .prop = DLB_PROP_BWD_DATA,
                           .conv = d, .w = w.d, .dy = dy.d, .dx = dx.d};
    struct dlb_op bw_op = {.kind = DLB_OP_CONV2D,
                           .prop = DLB_PROP_BWD_WEIGHTS, .conv = d, .x = x.d,
                           .dy = dy.d, .dw = dw.d, .db = db.d};
    char what[160];
    const struct dlb_op *ops[3] = { &f, &bd_op, &bw_op };
    const char *pass[3] = { "fwd_train", "bwd_data", "bwd_weights" };
    for (int i = 0; i < 3; i++) {
        snprintf(what, sizeof what, "%u->%u @%u, batch %u, %s: kernel %s", c,
                 c, hw, n, pass[i], kernel_name(dev, ops[i]));
        expect_true(what, is_wino(dev, ops[i]) == expect_wino);
    }
    CALL(conv2d_fwd, &d, B(x), B(w), B(b), B(y));
    CALL(conv2d_bwd_data, &d, B(w), B(dy), B(dx));
    CALL(conv2d_bwd_weights, &d, B(x), B(dy), B(dw), B(db));
    NEAR_DNN("training forward against ref", y);
    NEAR_DNN("backward data against ref", dx);
    NEAR_DNN("backward weights against ref", dw);
    NEAR_DNN("bias gradient against ref", db);
    CHECK(DLB_RUN(direct, conv2d_fwd, &d, xd, wd, bd, yd) == DLB_OK);
    CHECK(DLB_RUN(direct, conv2d_bwd_data, &d, wd, dyd, dxd) == DLB_OK);
    CHECK(DLB_RUN(direct, conv2d_bwd_weights, &d, xd, dyd, dwd, dbd) == DLB_OK);
    const struct dlb_buffer *mine[3] = { y.d, dx.d, dw.d };
    const struct dlb_buffer *theirs[3] = { yd, dxd, dwd };
    const size_t count[3] = { ys, xs, ws };
    for (int i = 0; i < 3; i++) {
        double r = max_rel_diff_on(dev, mine[i], direct, theirs[i],
                                   count[i], DLB_F32);
        snprintf(what, sizeof what, "%s: within 1e-5 of the direct kernel "
                 "element by element (%.1e)", pass[i], r);
        expect_true(what, r <= 1e-5);
    }
    RELEASE(&x, &w, &b, &dy, &y, &dx, &dw, &db);
    struct dlb_buffer *all[] = { xd, wd, bd, dyd, yd, dxd, dwd, dbd };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        dlb_backend_ops_of(direct)->buffer_free(direct, all[i]);
}

static void test_bad_environment(void)
{
    struct dlb_backend_config cfg = {.threads = 1, .seed = 1};
    struct dlb_backend *be = NULL;
    char reason[512] = "";
    setenv("DLBENCH_CPU_WINOGRAD", "yes", 1);
    dlb_status s = dlb_backend_open("cpu", &cfg, &be, reason, sizeof reason);
    expect_true("DLBENCH_CPU_WINOGRAD=yes refused, naming the value",
                s == DLB_ERR_INPUT && strstr(reason, "'yes'") != NULL);
    if (be)
        dlb_backend_close(be);
    /* the configuration's choice wins over the environment */
    cfg.winograd = DLB_OPT_OFF;
    s = dlb_backend_open("cpu", &cfg, &be, reason, sizeof reason);
    expect_true("cpu.winograd set: the environment is not read", s == DLB_OK);
    if (be)
        dlb_backend_close(be);
    unsetenv("DLBENCH_CPU_WINOGRAD");
}

int main(void)
{
    char reason[512];
    unsetenv("DLBENCH_CPU_WINOGRAD");
    int rc = pair_open("cpu", reason, sizeof reason);
    if (rc >= 0)
        return rc;
    struct dlb_backend_config off = {.threads = 0, .seed = 42,
                                     .winograd = DLB_OPT_OFF};
    CHECK(dlb_backend_open("cpu", &off, &direct, reason, sizeof reason) ==
          DLB_OK);
    if (!direct)
        return check_exit();
    struct dlb_device_info info;
    CHECK(DLB_BE_CALL(dev, device_info, &info) == DLB_OK);
    expect_wino = strncmp(info.driver, "oneDNN 2.", 9) == 0 &&
                  strncmp(info.arch, "avx512_core", 11) == 0;
    fprintf(stderr, "%s on %s: Winograd kernels %s\n", info.driver, info.arch,
            expect_wino ? "expected" : "not expected");
    dlb_rng_seed(&rng, 977);
    (void)expect_same;
    static const struct wcase cases[] = {
        /* name, kind, n, in_c, out_c, hw, relu, bias */
        {"conv2d_relu 64->64 @28, batch 1", DLB_OP_CONV2D_RELU, 1, 64, 64, 28, 0, 1},
        {"conv2d 64->96 @23, batch 1, no bias", DLB_OP_CONV2D, 1, 64, 96, 23, 0, 0},
        {"conv2d_add + relu 64->64 @15, batch 8", DLB_OP_CONV2D_ADD, 8, 64, 64, 15, 1, 1},
        {"conv2d_add 128->128 @11, batch 1", DLB_OP_CONV2D_ADD, 1, 128, 128, 11, 0, 1},
        {"conv2d_relu 32->64 @12, batch 16", DLB_OP_CONV2D_RELU, 16, 32, 64, 12, 0, 1},
        {"conv2d_add + relu 64->64 @8, batch 16", DLB_OP_CONV2D_ADD, 16, 64, 64, 8, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        test_case(&cases[i]);
    test_training(8, 64, 15);
    test_training(2, 128, 14);
    test_not_applied();
    test_bad_environment();
    dlb_backend_close(direct);
    dlb_backend_close(dev);
    dlb_backend_close(ref);
    return check_exit();
}
