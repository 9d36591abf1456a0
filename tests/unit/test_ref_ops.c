/* The ref backend's operations whose results are exact: opening backends
 * by name and the buffer rules (test_registry), SGD against a hand-worked
 * sequence, casts against known bit patterns, the elementwise operations
 * and int8 quantization; grouped convolutions, ReLU6 and concatenation on
 * hand-worked values, and the one check's refusals of their descriptors. The backward passes are test_ref_grad.c's. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/op_call.h"
#include "backend/dtype.h"

static struct dlb_backend *be;

static struct dlb_buffer *up(const double *v, size_t n)
{
    struct dlb_buffer *b = NULL;
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_F64, n, &b) == DLB_OK);
    if (b)
        CHECK(DLB_BE_CALL(be, copy_from_host, b, 0, v, n * 8) == DLB_OK);
    return b;
}

static struct dlb_buffer *zeros(size_t n)
{
    struct dlb_buffer *b = NULL;
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_F64, n, &b) == DLB_OK);
    CHECK(DLB_RUN(be, fill, n, b, 0.0) == DLB_OK);
    return b;
}

static void down(const struct dlb_buffer *b, double *v, size_t n)
{
    CHECK(DLB_BE_CALL(be, copy_to_host, v, b, 0, n * 8) == DLB_OK);
}

static void release(struct dlb_buffer **b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dlb_backend_ops_of(be)->buffer_free(be, b[i]);
        b[i] = NULL;
    }
}

static void test_registry(void)
{
    char reason[256];
    struct dlb_backend *other = NULL;
    struct dlb_buffer *small = NULL, *b = NULL;
    struct dlb_timer *t = NULL;
    double secs = -1, v[4] = { 1, 2, 3, 4 };

    /* A backend this build or machine lacks is unsupported, with the
     * reason list gives ("not built in", "no CUDA driver ..."), and opens
     * nothing. */
    for (const char *const *n = dlb_backend_names(); *n; n++) {
        char why[256];
        if (dlb_backend_available(*n, why, sizeof why))
            continue;
        CHECK(dlb_backend_open(*n, NULL, &other, reason, sizeof reason) ==
              DLB_ERR_UNSUPPORTED);
        CHECK(other == NULL && why[0] != '\0' && strcmp(reason, why) == 0);
    }
    CHECK(dlb_backend_open("gpu0", NULL, &other, reason, sizeof reason) ==
          DLB_ERR_INPUT);
    CHECK(strcmp(dlb_backend_name(be), "ref") == 0);

    CHECK(DLB_BE_CALL(be, supports, DLB_CAP_BF16, reason, sizeof reason) == 0);
    /* int8 layers in integer loops (ref_int8.c), the oracle of the cpu
     * backend's int8 kernels */
    CHECK(DLB_BE_CALL(be, supports, DLB_CAP_INT8, reason, sizeof reason) ==
          DLB_OK);
    /* An operation no kernel of the backend computes is reported. */
    small = up(v, 4);
    CHECK(DLB_RUN(be, allreduce_sum, 4, small) == DLB_ERR_UNSUPPORTED);
    CHECK(strstr(dlb_backend_last_error(be), "allreduce_sum") != NULL);
    /* A buffer smaller than its descriptor is a caller bug, said clearly,
     * the same on every backend (the core checks every operation once). */
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_RELU,
              .prop = DLB_PROP_FWD_TRAIN, .label = "relu1", .count = 5,
              .x = small, .y = small}) == DLB_ERR_INTERNAL);
    CHECK(strstr(dlb_backend_last_error(be),
                 "ref relu fwd_train of relu1: tensor x holds 4 elements; the "
                 "descriptor needs 5"));
    CHECK(DLB_BE_CALL(be, copy_to_host, v, small, 8, 32) == DLB_ERR_INTERNAL);
    CHECK(dlb_buffer_bytes(small) == 32 && dlb_buffer_count(small) == 4 &&
          dlb_buffer_dtype(small) == DLB_F64);
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_S32, 4, &b) == DLB_OK);
    CHECK(DLB_RUN(be, relu_fwd, 4, b, small)
              == DLB_ERR_INTERNAL);
    CHECK(strstr(dlb_backend_last_error(be), "x must be a float buffer"));
    CHECK(DLB_BE_CALL(be, timer_create, &t) == DLB_OK);
    CHECK(DLB_BE_CALL(be, timer_start, t) == DLB_OK);
    CHECK(DLB_BE_CALL(be, timer_stop, t) == DLB_OK);
    CHECK(DLB_BE_CALL0(be, synchronize) == DLB_OK);
    CHECK(DLB_BE_CALL(be, timer_elapsed, t, &secs) == DLB_OK);
    CHECK(secs >= 0 && secs < 1);
    dlb_backend_ops_of(be)->timer_destroy(be, t);
    release(&small, 1);
    release(&b, 1);
}


/* ---- SGD: two steps worked by hand, values exact in binary -------------
 * lr 0.125, momentum 0.875, weight decay 0.0625, w0 = 1, v0 = 0:
 *  step 1, g = 0.5:   g' = 0.5 + 0.0625*1 = 0.5625, v = 0.5625,
 *                     w = 1 - 0.125*0.5625 = 0.9296875
 *  step 2, g = -0.25: g' = -0.25 + 0.0625*0.9296875 = -0.19189453125,
 *                     v = 0.875*0.5625 - 0.19189453125 = 0.30029296875,
 *                     w = 0.9296875 - 0.125*0.30029296875 = 0.89215087890625
 * The second element, without weight decay, follows PyTorch's doc example
 * form: v1 = g1, v2 = mu*g1 + g2. */
static void test_sgd(void)
{
    struct dlb_sgd_desc d = { .count = 2, .lr = 0.125f, .momentum = 0.875f,
                              .weight_decay = 0.0625f };
    double w0[2] = { 1.0, 2.0 }, g1[2] = { 0.5, 1.0 }, g2[2] = { -0.25, 3.0 };
    double w[2], v[2];
    struct dlb_buffer *b[4] = { up(w0, 2), up(g1, 2), zeros(2), up(g2, 2) };
    CHECK(DLB_RUN(be, sgd_update, &d, b[0], b[1], b[2]) == 0);
    down(b[0], w, 2); down(b[2], v, 2);
    CHECK(w[0] == 0.9296875 && v[0] == 0.5625);
    CHECK(DLB_RUN(be, sgd_update, &d, b[0], b[3], b[2]) == 0);
    down(b[0], w, 2); down(b[2], v, 2);
    CHECK(v[0] == 0.30029296875);
    CHECK(w[0] == 0.89215087890625);
    /* element 2: step 1 g' = 1 + 0.125 = 1.125, w = 2 - 0.140625 = 1.859375;
     * step 2 g' = 3 + 0.0625*1.859375 = 3.1162109375,
     * v = 0.875*1.125 + 3.1162109375 = 4.1005859375,
     * w = 1.859375 - 0.5125732421875 = 1.3468017578125 */
    CHECK(v[1] == 4.1005859375 && w[1] == 1.3468017578125);
    release(b, 4);
}

/* ---- casts: bit patterns ------------------------------------------- */
static float f32_of(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void test_casts_bits(void)
{
    /* bf16: round to nearest, ties to even */
    CHECK(dlb_f32_to_bf16(1.0f) == 0x3f80);
    CHECK(dlb_f32_to_bf16(f32_of(0x3f808000)) == 0x3f80); /* tie -> even */
    CHECK(dlb_f32_to_bf16(f32_of(0x3f818000)) == 0x3f82); /* tie -> even */
    CHECK(dlb_f32_to_bf16(f32_of(0x3f808001)) == 0x3f81); /* above tie */
    CHECK(dlb_f32_to_bf16(f32_of(0x3f807fff)) == 0x3f80); /* below tie */
    CHECK(dlb_f32_to_bf16(f32_of(0x7f7fffff)) == 0x7f80); /* overflow: inf */
    CHECK(dlb_f32_to_bf16(INFINITY) == 0x7f80);
    CHECK(dlb_f32_to_bf16(-INFINITY) == 0xff80);
    CHECK(dlb_f32_to_bf16(-0.0f) == 0x8000);
    CHECK(dlb_f32_to_bf16(f32_of(0x7fc00000)) == 0x7fc0);
    CHECK(dlb_f32_to_bf16(f32_of(0x7f800001)) == 0x7fc0); /* sNaN stays NaN */
    CHECK(dlb_f32_to_bf16(f32_of(0xffffffff)) == 0xffff);
    CHECK(dlb_f32_to_bf16(f32_of(0x00000001)) == 0x0000); /* f32 subnormal */
    CHECK(dlb_bf16_to_f32(0x4049) == 3.140625f);
    CHECK(isnan(dlb_bf16_to_f32(0x7fc1)));
    /* f16 */
    CHECK(dlb_f32_to_f16(1.0f) == 0x3c00);
    CHECK(dlb_f32_to_f16(-2.0f) == 0xc000);
    CHECK(dlb_f32_to_f16(0.1f) == 0x2e66);
    CHECK(dlb_f32_to_f16(65504.0f) == 0x7bff);
    CHECK(dlb_f32_to_f16(65519.0f) == 0x7bff);
    CHECK(dlb_f32_to_f16(65520.0f) == 0x7c00); /* rounds past max: inf */
    CHECK(dlb_f32_to_f16(1e10f) == 0x7c00);
    CHECK(dlb_f32_to_f16(-INFINITY) == 0xfc00);
    CHECK(dlb_f32_to_f16(NAN) == 0x7e00);
    CHECK((dlb_f32_to_f16(f32_of(0x7f800001)) & 0x7fff) > 0x7c00);
    CHECK(dlb_f32_to_f16(1.0f + 0x1p-11f) == 0x3c00);     /* tie -> even */
    CHECK(dlb_f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3c02); /* tie -> even */
    CHECK(dlb_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01);
    CHECK(dlb_f32_to_f16(0x1p-14f) == 0x0400);            /* min normal */
    CHECK(dlb_f32_to_f16(0x1p-24f) == 0x0001);            /* min subnormal */
    CHECK(dlb_f32_to_f16(1023 * 0x1p-24f) == 0x03ff);     /* max subnormal */
    CHECK(dlb_f32_to_f16(0x1p-25f) == 0x0000);            /* tie -> even 0 */
    CHECK(dlb_f32_to_f16(-0x1p-25f) == 0x8000);
    CHECK(dlb_f32_to_f16(1.5f * 0x1p-25f) == 0x0001);
    CHECK(dlb_f32_to_f16(3 * 0x1p-25f) == 0x0002);        /* 1.5 ulp -> 2 */
    CHECK(dlb_f32_to_f16(5 * 0x1p-25f) == 0x0002);        /* 2.5 ulp -> 2 */
    CHECK(dlb_f32_to_f16(2047 * 0x1p-25f) == 0x0400);     /* carries to normal */
    CHECK(dlb_f32_to_f16(0x1p-30f) == 0x0000);
    CHECK(dlb_f16_to_f32(0x0001) == 0x1p-24f);
    CHECK(dlb_f16_to_f32(0x8001) == -0x1p-24f);
    CHECK(dlb_f16_to_f32(0x03ff) == 1023 * 0x1p-24f);
    CHECK(dlb_f16_to_f32(0x7bff) == 65504.0f);
    CHECK(dlb_f16_to_f32(0x3555) == 0.333251953125f);
    CHECK(bits_of(dlb_f16_to_f32(0xfc00)) == 0xff800000u);
    CHECK(isnan(dlb_f16_to_f32(0x7e00)));
    /* Every finite f16 survives the round trip through f32. */
    int roundtrip_ok = 1;
    for (uint32_t h = 0; h < 0x10000; h++)
        if ((h & 0x7c00) != 0x7c00 && dlb_f32_to_f16(dlb_f16_to_f32((uint16_t)h)) != h)
            roundtrip_ok = 0;
    CHECK(roundtrip_ok);
}

/* The cast operation on buffers follows the scalar functions. */
static void test_cast_op(void)
{
    float src[6] = { 1.0f, f32_of(0x3f808000), 65520.0f, 0x1p-25f * 3, -0.0f,
                     NAN };
    uint16_t bf[6], hf[6];
    float back[6];
    struct dlb_buffer *f = NULL, *b = NULL, *h = NULL, *f2 = NULL;
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_F32, 6, &f) == 0);
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_BF16, 6, &b) == 0);
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_F16, 6, &h) == 0);
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_F32, 6, &f2) == 0);
    CHECK(DLB_BE_CALL(be, copy_from_host, f, 0, src, sizeof src) == 0);
    CHECK(DLB_RUN(be, cast, 6, f, b) == 0);
    CHECK(DLB_RUN(be, cast, 6, f, h) == 0);
    CHECK(DLB_BE_CALL(be, copy_to_host, bf, b, 0, sizeof bf) == 0);
    CHECK(DLB_BE_CALL(be, copy_to_host, hf, h, 0, sizeof hf) == 0);
    for (int i = 0; i < 6; i++) {
        CHECK(bf[i] == dlb_f32_to_bf16(src[i]));
        CHECK(hf[i] == dlb_f32_to_f16(src[i]));
    }
    CHECK(DLB_RUN(be, cast, 6, h, f2) == 0);
    CHECK(DLB_BE_CALL(be, copy_to_host, back, f2, 0, sizeof back) == 0);
    CHECK(back[0] == 1.0f && isinf(back[2]) && back[3] == 0x1p-23f &&
          isnan(back[5]));
    release(&f, 1); release(&b, 1); release(&h, 1); release(&f2, 1);
}

static void test_elementwise(void)
{
    double v[4] = { 1.5, -2.0, 3.0, 0.25 }, out[4];
    struct dlb_buffer *b = up(v, 4), *q = NULL;
    int found = -1;
    CHECK(DLB_RUN(be, scale, 4, b, 0.5f) == 0);
    down(b, out, 4);
    CHECK(out[0] == 0.75 && out[1] == -1.0);
    CHECK(DLB_RUN(be, check_finite, 4, b, &found) == 0 && found == 0);
    v[2] = INFINITY;
    CHECK(DLB_BE_CALL(be, copy_from_host, b, 0, v, sizeof v) == 0);
    CHECK(DLB_RUN(be, check_finite, 4, b, &found) == 0 && found == 1);
    v[2] = NAN;
    CHECK(DLB_BE_CALL(be, copy_from_host, b, 0, v, sizeof v) == 0);
    CHECK(DLB_RUN(be, check_finite, 4, b, &found) == 0 && found == 1);
    CHECK(DLB_RUN(be, check_finite, 2, b, &found) == 0 && found == 0);
    CHECK(DLB_RUN(be, fill, 4, b, 7.0) == 0);
    down(b, out, 4);
    CHECK(out[3] == 7.0);
    /* int8: 1.25/0.5 = 2.5 rounds to even 2; clamps at 127 */
    double qv[4] = { 1.25, -0.75, 100.0, 0.0 };
    int8_t qb[4];
    CHECK(DLB_BE_CALL(be, copy_from_host, b, 0, qv, sizeof qv) == 0);
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_S8, 4, &q) == 0);
    CHECK(DLB_RUN(be, quantize, 4, b, q, 0.5f, 1) == 0);
    CHECK(DLB_BE_CALL(be, copy_to_host, qb, q, 0, 4) == 0);
    CHECK(qb[0] == 3 && qb[1] == -1 && qb[2] == 127 && qb[3] == 1);
    CHECK(DLB_RUN(be, dequantize, 4, q, b, 0.5f, 1) == 0);
    down(b, out, 4);
    CHECK(out[0] == 1.0 && out[2] == 63.0 && out[3] == 0.0);
    release(&b, 1);
    release(&q, 1);
}

/* The operations of the networks after vgg-small on hand-worked values,
 * and the one check's refusals of their descriptors. */
static void test_groups_relu6_concat(void)
{
    /* depthwise 1x1: y[c] = w[c] x[c] + b[c]; then 4 -> 2 channels in 2
     * groups: y[0] = x[0] + 2 x[1], y[1] = 3 x[2] + 4 x[3] */
    struct dlb_conv2d_desc dw = { 1, 2, 1, 2, 2, 1, 1, 1, 1, 0, 0, 1, 2, 2 };
    struct dlb_conv2d_desc g2 = { 1, 4, 1, 1, 2, 1, 1, 1, 1, 0, 0, 1, 1, 2 };
    double xv[4] = { 1, -2, 3, 5 }, wv[4] = { 10, 100, 3, 4 }, bv[2] = { 1, 2 };
    double out[6];
    struct dlb_buffer *x = up(xv, 4), *w = up(wv, 4), *b = up(bv, 2);
    struct dlb_buffer *y = zeros(4);
    CHECK(DLB_RUN(be, conv2d_fwd, &dw, x, w, b, y) == 0);
    down(y, out, 4);
    CHECK(out[0] == 11 && out[1] == -19 && out[2] == 302 && out[3] == 502);
    wv[0] = 1, wv[1] = 2;
    CHECK(DLB_BE_CALL(be, copy_from_host, w, 0, wv, sizeof wv) == 0);
    CHECK(DLB_RUN(be, conv2d_fwd, &g2, x, w, NULL, y) == 0);
    down(y, out, 2);
    CHECK(out[0] == -3 && out[1] == 29);
    /* groups that do not divide the channels are the caller's bug */
    g2.groups = 3;
    CHECK(DLB_RUN(be, conv2d_fwd, &g2, x, w, NULL, y) == DLB_ERR_INTERNAL);
    CHECK(strstr(dlb_backend_last_error(be), "groups do not divide") != NULL);
    g2.groups = 2;
    /* w sized for the groups: 2 * (4 / 2) weights; one fewer is refused */
    struct dlb_buffer *w3 = up(wv, 3);
    CHECK(DLB_RUN(be, conv2d_fwd, &g2, x, w3, NULL, y) == DLB_ERR_INTERNAL);
    CHECK(strstr(dlb_backend_last_error(be), "tensor w holds 3") != NULL);
    release(&w3, 1);

    /* ReLU6: clipped at 6 forward, no gradient where clipped or <= 0 */
    double rv[5] = { -1, 0.5, 6, 7, 5.75 }, ones[5] = { 1, 1, 1, 1, 1 };
    struct dlb_buffer *r = up(rv, 5), *g = up(ones, 5), *rd = zeros(5);
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_RELU,
              .prop = DLB_PROP_FWD_INFER, .count = 5, .relu_max = 6.0f,
              .x = r, .y = r}) == 0);
    down(r, out, 5);
    CHECK(out[0] == 0 && out[1] == 0.5 && out[2] == 6 && out[3] == 6 &&
          out[4] == 5.75);
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_RELU,
              .prop = DLB_PROP_BWD, .count = 5, .relu_max = 6.0f, .y = r,
              .dy = g, .dx = rd}) == 0);
    down(rd, out, 5);
    CHECK(out[0] == 0 && out[1] == 1 && out[2] == 0 && out[3] == 0 &&
          out[4] == 1);
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_RELU,
              .prop = DLB_PROP_FWD_INFER, .count = 5, .relu_max = -1.0f,
              .x = r, .y = r}) == DLB_ERR_INTERNAL);
    CHECK(strstr(dlb_backend_last_error(be), "relu_max") != NULL);
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_RELU,
              .prop = DLB_PROP_BWD, .count = 5, .relu_max = NAN, .y = r,
              .dy = g, .dx = rd}) == DLB_ERR_INTERNAL);

    /* CONCAT: x [2][1][2] into channels [1, 2) of y [2][3][2], the rest
     * of y untouched; back out again */
    double cv[4] = { 1, 2, 3, 4 }, yv[12];
    for (int i = 0; i < 12; i++)
        yv[i] = -1 - i;
    struct dlb_buffer *cx = up(cv, 4), *cy = up(yv, 12), *cd = zeros(4);
    struct dlb_concat_desc cat = { 2, 1, 3, 1, 2 };
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_CONCAT,
              .prop = DLB_PROP_FWD_TRAIN, .concat = cat, .x = cx,
              .y = cy}) == 0);
    down(cy, yv, 12);
    CHECK(yv[0] == -1 && yv[1] == -2 && yv[2] == 1 && yv[3] == 2 &&
          yv[4] == -5 && yv[8] == 3 && yv[9] == 4 && yv[11] == -12);
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_CONCAT,
              .prop = DLB_PROP_BWD, .concat = cat, .dy = cy, .dx = cd}) == 0);
    down(cd, out, 4);
    CHECK(out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == 4);
    /* refused: channels past the output, a missing tensor, two types */
    cat.offset = 3;
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_CONCAT,
              .prop = DLB_PROP_FWD_TRAIN, .concat = cat, .x = cx,
              .y = cy}) == DLB_ERR_INTERNAL);
    CHECK(strstr(dlb_backend_last_error(be), "outside the 3") != NULL);
    cat.offset = 0;
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_CONCAT,
              .prop = DLB_PROP_BWD, .concat = cat, .dy = cy}) ==
          DLB_ERR_INTERNAL);
    CHECK(strstr(dlb_backend_last_error(be), "tensor dx is missing") != NULL);
    struct dlb_buffer *c32 = NULL;
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_F32, 4, &c32) == 0);
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_CONCAT,
              .prop = DLB_PROP_FWD_TRAIN, .concat = cat, .x = c32,
              .y = cy}) == DLB_ERR_INTERNAL);
    CHECK(strstr(dlb_backend_last_error(be), "of one type") != NULL);
    struct dlb_buffer *all[] = { x, w, b, y, r, g, rd, cx, cy, cd, c32 };
    release(all, sizeof all / sizeof all[0]);
}

int main(void)
{
    char reason[256];
    struct dlb_backend_config cfg = { .threads = 1, .device = 0, .seed = 42 };
    CHECK(dlb_backend_open("ref", &cfg, &be, reason, sizeof reason) == DLB_OK);
    if (!be) {
        fprintf(stderr, "cannot open ref: %s\n", reason);
        return 1;
    }
    test_registry();
    test_sgd();
    test_casts_bits();
    test_cast_op();
    test_elementwise();
    test_groups_relu6_concat();
    dlb_backend_close(be);
    return check_exit();
}
