/* A 1x1 convolution and the depthwise 3x3 convolution after it, each with
 * its ReLU, as one inference operation (CONV2D_DW: MobileNetV2's
 * expansion and depthwise layers): the cpu backend's oneDNN primitive
 * with the depthwise convolution as a post-op against the ref backend,
 * which runs the two convolutions and ReLUs apart, on random inputs that
 * are never zero, for stride 1 and 2, ReLU6, a plain ReLU or none on
 * either side, with and without biases, batch 1 and 2, odd sizes and
 * channel counts that are and are not multiples of 16; in f32 on AVX-512
 * the own kernel (dw_avx512) where oneDNN would run the pair as two
 * primitives (in bf16 too where the CPU has AVX512_BF16 without AMX),
 * and a pair large enough for oneDNN's own fused kernel
 * where the L2 caches are those of the machines here. Bound: relative
 * to the norm, 1e-5 (fp32, as the other convolutions). Beyond it: the
 * output is never negative nor above the clip where a ReLU ends it, the
 * ReLU zeroes a real share of it, and it equals the cpu backend's own
 * CONV2D_RELU twice within 1e-6 relative. In bf16 too (x, weights and
 * y bf16, biases fp32: a bf16 network's inference), where the CPU has
 * AVX512_BF16 without AMX, within 2e-2 of the norm (tol_of); on AMX no
 * bf16 fused kernel (its activations are nhwc there). The input may be another
 * convolution's output in the layout oneDNN chose. Channel counts the cpu
 * backend keeps in nhwc have no fused kernel there (the layers stay
 * apart); ref runs them. Refused on both backends: a training
 * propagation, a first convolution that is not 1x1, a second that is not
 * depthwise over its output or has stride 3, a NaN clip. Exits 77 when
 * the cpu backend is not built in. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_impl.h"
#include "backend/dtype.h"
#include "backend_pair.h" /* dev: the cpu backend */
#include "util/rng.h"

/* fp32: the other convolutions' bound. bf16: the expanded tensor is
 * rounded to bf16 on both sides (8 bits) from sums taken in another
 * order, so an element of it may differ by an ulp, 2^-8 of itself, and
 * the depthwise sums of nine of them by a few of those. */
static double tol_of(enum dlb_dtype t, int dnn)
{
    (void)dnn;
    return t == DLB_BF16 ? 2e-2 : 1e-5;
}


/* The share of exact zeros of the cpu side's y, or -1 when a value is
 * negative, above `hi` (> 0) or not finite. */
static double zero_share(const struct dlb_buffer *y, size_t n, float hi)
{
    double *v = download(dev, y, n, y->dtype), zeros = 0.0;
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

struct dw_case {
    const char *name;
    uint32_t n, in_c, hw, out_c, stride;
    int relu, relu2;      /* a ReLU after each convolution */
    float clip, clip2;    /* its clip (6: ReLU6), 0 for none */
    int bias, blocked_in; /* biases; x another convolution's output */
};

static struct dlb_op dw_op(const struct dw_case *c, struct dlb_conv2d_desc d,
                           struct dlb_conv2d_desc e)
{
    return (struct dlb_op){
        .kind = DLB_OP_CONV2D_DW, .prop = DLB_PROP_FWD_INFER, .conv = d,
        .dwconv = e, .relu = c->relu, .relu_max = c->clip, .relu2 = c->relu2,
        .relu2_max = c->clip2 };
}

static void test_dw(const struct dw_case *c, enum dlb_dtype tt)
{
    struct dlb_conv2d_desc d = conv_desc(c->n, c->in_c, c->hw, c->hw,
                                         c->out_c, 1, 1, 0);
    struct dlb_conv2d_desc e = conv_desc(c->n, c->out_c, c->hw, c->hw,
                                         c->out_c, 3, c->stride, 1);
    e.groups = c->out_c;
    /* x from a 3x3 convolution where it is another one's output */
    struct dlb_conv2d_desc xd = conv_desc(c->n, c->in_c, c->hw, c->hw,
                                          c->in_c, 3, 1, 1);
    size_t ys = dlb_conv2d_y_count(&e), ts = dlb_conv2d_y_count(&d);
    double big = c->clip > 0.0f || c->clip2 > 0.0f ? 8.0 : 1.0;
    struct pair x = rand_pair(tt, dlb_conv2d_x_count(&d), big);
    struct pair x0 = rand_pair(tt, dlb_conv2d_x_count(&xd), 1.0);
    struct pair w0 = rand_pair(tt, dlb_conv2d_w_count(&xd),
                               big / sqrt(9.0 * c->in_c));
    struct pair w = rand_pair(tt, dlb_conv2d_w_count(&d),
                              1.0 / sqrt((double)c->in_c));
    struct pair w2 = rand_pair(tt, dlb_conv2d_w_count(&e), 1.0 / 3.0);
    /* the biases fp32, as a bf16 network keeps them */
    struct pair b = c->bias ? rand_pair(DLB_F32, c->out_c, 0.5) : none;
    struct pair b2 = c->bias ? rand_pair(DLB_F32, c->out_c, 0.5) : none;
    struct pair y = out_pair(tt, ys), t = out_pair(tt, ts);
    struct pair y2 = out_pair(tt, ys);
    char what[200];
    if (c->blocked_in)
        CALL(conv2d_fwd_infer, &xd, B(x0), B(w0), NULL, B(x));
    struct dlb_op op = dw_op(c, d, e);
    op.x = x.d, op.w = w.d, op.w2 = w2.d;
    snprintf(what, sizeof what, "cpu has a %s conv2d_dw kernel for %s",
             dlb_dtype_name(tt), c->name);
    const struct dlb_kernel *k = dlb_backend_kernel_for(dev, &op);
    expect_true(what, k != NULL);
    /* In f32 on AVX-512, and in bf16 where the CPU has AVX512_BF16
     * without AMX, the own kernel takes every pair oneDNN would run as two
     * primitives, which it does for an expanded tensor under twice the
     * threads' L2 caches: every case but the last. */
    if (c->hw < 100 && (tt == DLB_F32 ? check_cpu_flag("avx512f")
                                      : check_cpu_bf16_dw_fuses())) {
        snprintf(what, sizeof what, "conv2d_dw %s %s runs on dw_avx512 (%s)",
                 dlb_dtype_name(tt), c->name, k ? k->name : "none");
        expect_true(what, k && !strcmp(k->name, "dw_avx512"));
    }
    BOTH {
        op.x = B(x), op.w = B(w), op.b = c->bias ? B(b) : NULL;
        op.w2 = B(w2), op.b2 = c->bias ? B(b2) : NULL, op.y = B(y);
        CHECK(dlb_backend_run(BE, &op) == DLB_OK);
    }
    snprintf(what, sizeof what, "conv2d_dw %s %s (%s)", dlb_dtype_name(tt),
             c->name, k ? k->name : "none");
    NEAR_DNN(what, y);
    if (c->relu2) {
        double z = zero_share(y.d, ys, c->clip2);
        snprintf(what, sizeof what, "conv2d_dw %s: output in [0, %g], "
                 "%.0f%% zeros", c->name, c->clip2 > 0.0f ? c->clip2 : INFINITY,
                 100.0 * z);
        expect_true(what, z > 0.02 && z < 0.98);
    }
    /* the cpu side's own two convolutions */
    CHECK(dlb_backend_run(dev, &(struct dlb_op){
        .kind = c->relu ? DLB_OP_CONV2D_RELU : DLB_OP_CONV2D,
        .prop = DLB_PROP_FWD_INFER, .conv = d, .relu_max = c->clip,
        .x = x.d, .w = w.d, .b = b.d, .y = t.d}) == DLB_OK);
    CHECK(dlb_backend_run(dev, &(struct dlb_op){
        .kind = c->relu2 ? DLB_OP_CONV2D_RELU : DLB_OP_CONV2D,
        .prop = DLB_PROP_FWD_INFER, .conv = e, .relu_max = c->clip2,
        .x = t.d, .w = w2.d, .b = b2.d, .y = y2.d}) == DLB_OK);
    double r = max_rel_diff_on(dev, y.d, dev, y2.d, ys, tt);
    snprintf(what, sizeof what, "conv2d_dw %s %s: = the two convolutions apart "
             "(%.1e)", dlb_dtype_name(tt), c->name, r);
    /* In bf16 the own kernel rounds the expanded tensor to bf16 as the
     * two layers apart store it, from sums in the same order as oneDNN's
     * vdpbf16ps kernels: within one bf16 step (2^-8) of the largest
     * output, where the other kernels' bound is tol_of's. */
    int own = k && !strcmp(k->name, "dw_avx512");
    expect_true(what, r <= (tt == DLB_F32 ? 1e-6 : own ? 0x1p-8 : tol_of(tt, 1)));
    RELEASE(&x, &x0, &w0, &w, &w2, &b, &b2, &y, &t, &y2);
}

/* Channel counts the cpu backend lays out nhwc: no fused kernel there;
 * ref computes the operation. */
static void test_nhwc_left_apart(void)
{
    struct dw_case c = { "5->10", 2, 5, 6, 10, 1, 1, 1, 6.0f, 6.0f, 1, 0 };
    struct dlb_conv2d_desc d = conv_desc(2, 5, 6, 6, 10, 1, 1, 0);
    struct dlb_conv2d_desc e = conv_desc(2, 10, 6, 6, 10, 3, 1, 1);
    e.groups = 10;
    struct dlb_op op = dw_op(&c, d, e);
    expect_true("cpu: no conv2d_dw kernel for 10 channels (nhwc)",
                dlb_backend_kernel_for(dev, &op) == NULL);
    expect_true("ref: a conv2d_dw kernel for any shape",
                dlb_backend_kernel_for(ref, &op) != NULL);
}

/* bf16 on AMX: the activations are nhwc (on AMX oneDNN 3.2 fuses the
 * pair only by running its two kernels in turn, slower than apart): no
 * fused kernel; the model runs the two convolutions apart. */
static void test_amx_left_apart(void)
{
    struct dw_case c = { "16->96", 2, 16, 14, 96, 2, 1, 1, 6.0f, 6.0f, 1, 0 };
    struct dlb_conv2d_desc d = conv_desc(2, 16, 14, 14, 96, 1, 1, 0);
    struct dlb_conv2d_desc e = conv_desc(2, 96, 14, 14, 96, 3, 2, 1);
    e.groups = 96;
    struct pair x = rand_pair(DLB_BF16, dlb_conv2d_x_count(&d), 1.0);
    struct dlb_op op = dw_op(&c, d, e);
    op.x = x.d;
    expect_true("cpu: no bf16 conv2d_dw kernel on AMX (nhwc)",
                dlb_backend_kernel_for(dev, &op) == NULL);
    RELEASE(&x);
}

static void test_refusals(void)
{
    struct dw_case c = { "", 1, 16, 6, 32, 1, 1, 1, 6.0f, 6.0f, 0, 0 };
    struct dlb_conv2d_desc d = conv_desc(1, 16, 6, 6, 32, 1, 1, 0);
    struct dlb_conv2d_desc e = conv_desc(1, 32, 6, 6, 32, 3, 1, 1);
    e.groups = 32;
    struct pair x = rand_pair(DLB_F32, dlb_conv2d_x_count(&d), 1.0);
    struct pair w = rand_pair(DLB_F32, 9 * dlb_conv2d_w_count(&d), 0.1);
    struct pair w2 = rand_pair(DLB_F32, 32 * dlb_conv2d_w_count(&e), 0.1);
    struct pair y = out_pair(DLB_F32, 32 * 6 * 6);
    BOTH {
        struct dlb_op op = dw_op(&c, d, e), bad;
        op.x = B(x), op.w = B(w), op.w2 = B(w2), op.y = B(y);
        CHECK(dlb_backend_run(BE, &op) == DLB_OK);
        bad = op;
        bad.prop = DLB_PROP_FWD_TRAIN;
        expect_true("conv2d_dw: FWD_TRAIN refused", dlb_backend_run(BE, &bad) != DLB_OK);
        bad = op;
        bad.conv = conv_desc(1, 16, 6, 6, 32, 3, 1, 1);
        expect_true("conv2d_dw: a 3x3 first convolution refused",
                    dlb_backend_run(BE, &bad) != DLB_OK);
        bad = op;
        bad.dwconv.groups = 1;
        expect_true("conv2d_dw: a dense second convolution refused",
                    dlb_backend_run(BE, &bad) != DLB_OK);
        bad = op;
        bad.dwconv = conv_desc(1, 32, 6, 6, 32, 3, 3, 1);
        bad.dwconv.groups = 32;
        expect_true("conv2d_dw: stride 3 refused", dlb_backend_run(BE, &bad) != DLB_OK);
        bad = op;
        bad.dwconv = conv_desc(1, 32, 7, 7, 32, 3, 1, 1);
        bad.dwconv.groups = 32;
        expect_true("conv2d_dw: a depthwise input of another size refused",
                    dlb_backend_run(BE, &bad) != DLB_OK);
        bad = op;
        bad.relu2_max = NAN;
        expect_true("conv2d_dw: NaN relu2_max refused",
                    dlb_backend_run(BE, &bad) != DLB_OK);
    }
    RELEASE(&x, &w, &w2, &y);
}

int main(void)
{
    char reason[512];
    int rc = pair_open("cpu", reason, sizeof reason);
    if (rc >= 0)
        return rc;
    dlb_rng_seed(&rng, 2031);
    (void)expect_same;
    int has = dlb_backend_has_kind(dev, DLB_OP_CONV2D_DW) &&
              dlb_backend_has_kind(ref, DLB_OP_CONV2D_DW);
    CHECK(has);
    if (!has)
        return check_exit();
    static const struct dw_case cases[] = {
        /* name, n, in_c, hw, out_c, stride, relu, relu2, clip, clip2,
         * bias, blocked_in */
        { "16->96 @14 stride 2, relu6", 2, 16, 14, 96, 2, 1, 1, 6.0f, 6.0f, 1, 0 },
        { "24->144 @9 stride 1, relu6", 2, 24, 9, 144, 1, 1, 1, 6.0f, 6.0f, 1, 1 },
        { "32->192 @7 stride 2, relu6, batch 1", 1, 32, 7, 192, 2, 1, 1, 6.0f, 6.0f, 1, 1 },
        { "64->128 @6 stride 1, relu, batch 1", 1, 64, 6, 128, 1, 1, 1, 0.0f, 0.0f, 1, 0 },
        { "32->64 @8 stride 2, no relus, no biases", 2, 32, 8, 64, 2, 0, 0, 0.0f, 0.0f, 0, 0 },
        { "16->48 @5 stride 1, relu6 then none", 2, 16, 5, 48, 1, 1, 0, 6.0f, 0.0f, 1, 1 },
        { "16->32 @11 stride 2, none then relu6", 2, 16, 11, 32, 2, 0, 1, 0.0f, 6.0f, 1, 0 },
        /* 40 channels: the last block half padding (its biases masked) */
        { "24->40 @10 stride 1, relu6", 1, 24, 10, 40, 1, 1, 1, 6.0f, 6.0f, 1, 1 },
        { "40->240 @13 stride 2, relu6", 1, 40, 13, 240, 2, 1, 1, 6.0f, 6.0f, 1, 1 },
        /* MobileNetV2's first pair at batch 2: 9.6 MB expanded, over
         * twice the L2 of two threads on the machines here, where oneDNN
         * fuses it in one kernel of its own */
        { "16->96 @112 stride 2, relu6, batch 2", 2, 16, 112, 96, 2, 1, 1, 6.0f, 6.0f, 1, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        test_dw(&cases[i], DLB_F32);
    /* a mixed-precision network's inference (model_fuse.c) */
    if (check_cpu_bf16_dw_fuses())
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            test_dw(&cases[i], DLB_BF16);
    else if (check_cpu_has_amx_bf16())
        test_amx_left_apart();
    else
        fprintf(stderr, "bf16 cases skipped: no AVX512_BF16 on this CPU\n");
    test_nhwc_left_apart();
    test_refusals();
    dlb_backend_close(dev);
    dlb_backend_close(ref);
    return check_exit();
}
