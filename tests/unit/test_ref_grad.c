/* The ref backend is the oracle for every other backend, so its backward
 * passes are checked here against central finite differences of its own
 * forward passes, computed in fp64 (F64 buffers) on random non-zero inputs
 * (grouped and depthwise convolutions, ReLU6 and concatenation too), each
 * within 1e-6 (relative above 1).
 * Its exact operations (SGD, casts, elementwise) are test_ref_ops.c's. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/op_call.h"
#include "backend/dtype.h"
#include "util/rng.h"

/* The mask of dlb_dropout_keep(12345, i, threshold(0.5)) for i = 0..15. */
#define DROPOUT_BITS_12345 0x7210u

static struct dlb_backend *be;
static struct dlb_rng rng;

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

/* Uniform in +-[0.1, 1): never zero, so no gradient hides behind a zero. */
static double *randv(size_t n)
{
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        double m = 0.1 + 0.9 * dlb_rng_double(&rng);
        v[i] = dlb_rng_below(&rng, 2) ? m : -m;
    }
    return v;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* f(ctx) is the scalar sum(y * R) of a forward pass that reads x. */
typedef double (*scalar_fn)(void *ctx);

static void check_grad(const char *what, scalar_fn f, void *ctx, double *x,
                       size_t n, const double *g)
{
    const double h = 1e-5;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double save = x[i], fp, fm, num;
        x[i] = save + h;
        fp = f(ctx);
        x[i] = save - h;
        fm = f(ctx);
        x[i] = save;
        num = (fp - fm) / (2 * h);
        check_count++;
        if (fabs(num - g[i]) > 1e-6 * (fabs(num) > 1 ? fabs(num) : 1)) {
            if (bad++ < 5)
                fprintf(stderr, "%s[%zu]: analytic %.12g, numeric %.12g\n",
                        what, i, g[i], num);
            check_failures++;
        }
    }
}

/* ---- conv: padding 1, stride 2, non-square input, bias ------------- */
struct conv_ctx {
    struct dlb_conv2d_desc d;
    double *x, *w, *b, *r;
};

static size_t conv_xn(const struct dlb_conv2d_desc *d)
{
    return (size_t)d->n * d->in_c * d->in_h * d->in_w;
}
static size_t conv_wn(const struct dlb_conv2d_desc *d)
{
    return (size_t)d->out_c * (d->in_c / (d->groups > 1 ? d->groups : 1)) *
           d->kh * d->kw;
}
static size_t conv_yn(const struct dlb_conv2d_desc *d)
{
    return (size_t)d->n * d->out_c * d->out_h * d->out_w;
}

static double conv_f(void *p)
{
    struct conv_ctx *c = p;
    size_t yn = conv_yn(&c->d);
    struct dlb_buffer *b[4] = { up(c->x, conv_xn(&c->d)),
                                up(c->w, conv_wn(&c->d)), up(c->b, c->d.out_c),
                                zeros(yn) };
    double *y = malloc(yn * sizeof *y), s;
    CHECK(DLB_RUN(be, conv2d_fwd, &(c->d), b[0], b[1], b[2], b[3]) == 0);
    down(b[3], y, yn);
    s = dot(y, c->r, yn);
    free(y);
    release(b, 4);
    return s;
}

/* dx, dw and db of convolution d against central differences; with
 * `refuse`, then that an output size that does not follow is refused. */
static void conv_grads(const char *name, struct dlb_conv2d_desc d, int refuse)
{
    struct conv_ctx c = { .d = d };
    char what[64];
    size_t xn = conv_xn(&c.d), wn = conv_wn(&c.d), yn = conv_yn(&c.d);
    size_t oc = c.d.out_c;
    c.x = randv(xn); c.w = randv(wn); c.b = randv(oc); c.r = randv(yn);
    double *dx = calloc(xn, 8), *dw = calloc(wn, 8), *db = calloc(oc, 8);
    struct dlb_buffer *b[6] = { up(c.x, xn), up(c.w, wn), up(c.r, yn),
                                zeros(xn), zeros(wn), zeros(oc) };
    CHECK(DLB_RUN(be, conv2d_bwd_data, &(c.d), b[1], b[2], b[3]) == 0);
    CHECK(DLB_RUN(be, conv2d_bwd_weights, &(c.d), b[0], b[2], b[4], b[5]) == 0);
    down(b[3], dx, xn); down(b[4], dw, wn); down(b[5], db, oc);
    snprintf(what, sizeof what, "%s dx", name);
    check_grad(what, conv_f, &c, c.x, xn, dx);
    snprintf(what, sizeof what, "%s dw", name);
    check_grad(what, conv_f, &c, c.w, wn, dw);
    snprintf(what, sizeof what, "%s db", name);
    check_grad(what, conv_f, &c, c.b, oc, db);
    /* A descriptor whose output does not follow from its input is refused. */
    c.d.out_h = c.d.out_h + 1;
    if (refuse)
        CHECK(DLB_RUN(be, conv2d_bwd_data, &(c.d), b[1], b[2], b[3]) ==
              DLB_ERR_INTERNAL);
    release(b, 6);
    free(c.x); free(c.w); free(c.b); free(c.r); free(dx); free(dw); free(db);
}

static void test_conv(void)
{
    struct dlb_conv2d_desc d = { .n = 2, .in_c = 3, .in_h = 7, .in_w = 6,
                                 .out_c = 4, .kh = 3, .kw = 3, .stride_h = 2,
                                 .stride_w = 2, .pad_h = 1, .pad_w = 1 };
    d.out_h = dlb_conv_out_size(7, 3, 2, 1);
    d.out_w = dlb_conv_out_size(6, 3, 2, 1);
    CHECK(d.out_h == 4 && d.out_w == 3);
    conv_grads("conv", d, 1);
}

/* Grouped (4 -> 6 channels in 2 groups, stride 2, pad 1, non-square) and
 * depthwise (3 channels, stride 1, pad 1) convolutions. */
static void test_conv_groups(void)
{
    struct dlb_conv2d_desc g = { .n = 2, .in_c = 4, .in_h = 7, .in_w = 6,
                                 .out_c = 6, .kh = 3, .kw = 3, .stride_h = 2,
                                 .stride_w = 2, .pad_h = 1, .pad_w = 1,
                                 .groups = 2 };
    g.out_h = dlb_conv_out_size(7, 3, 2, 1);
    g.out_w = dlb_conv_out_size(6, 3, 2, 1);
    conv_grads("grouped conv", g, 0);
    struct dlb_conv2d_desc dw = { .n = 2, .in_c = 3, .in_h = 5, .in_w = 6,
                                  .out_c = 3, .kh = 3, .kw = 3, .stride_h = 1,
                                  .stride_w = 1, .pad_h = 1, .pad_w = 1,
                                  .out_h = 5, .out_w = 6, .groups = 3 };
    conv_grads("depthwise conv", dw, 0);
}

/* ---- pooling ------------------------------------------------------ */
struct pool_ctx {
    struct dlb_pool_desc d;
    double *x, *r;
};

static double pool_f(void *p)
{
    struct pool_ctx *c = p;
    size_t xn = (size_t)c->d.n * c->d.c * c->d.in_h * c->d.in_w;
    size_t yn = (size_t)c->d.n * c->d.c * c->d.out_h * c->d.out_w;
    struct dlb_buffer *b[2] = { up(c->x, xn), zeros(yn) };
    double *y = malloc(yn * 8), s;
    CHECK(DLB_RUN(be, pool_fwd, &(c->d), b[0], b[1], NULL) == 0);
    down(b[1], y, yn);
    s = dot(y, c->r, yn);
    free(y);
    release(b, 2);
    return s;
}

static void test_pool(enum dlb_pool_kind kind, uint32_t k, uint32_t stride,
                      uint32_t pad)
{
    struct pool_ctx c = { .d = { .kind = kind, .n = 2, .c = 3, .in_h = 7,
                                 .in_w = 6, .kh = k, .kw = k, .stride_h = stride,
                                 .stride_w = stride, .pad_h = pad, .pad_w = pad } };
    c.d.out_h = dlb_conv_out_size(7, k, stride, pad);
    c.d.out_w = dlb_conv_out_size(6, k, stride, pad);
    size_t xn = (size_t)2 * 3 * 7 * 6, yn = (size_t)2 * 3 * c.d.out_h * c.d.out_w;
    c.x = randv(xn);
    c.r = randv(yn);
    /* Distinct values at least 1e-3 apart: the argmax cannot flip under the
     * finite-difference step. */
    for (size_t i = 0; i < xn; i++)
        c.x[i] = (c.x[i] > 0 ? 1 : -1) * (0.1 + 1e-3 * (double)((i * 37) % xn));
    double *dx = malloc(xn * 8);
    struct dlb_buffer *ws = NULL, *b[4] = { up(c.x, xn), zeros(yn),
                                            up(c.r, yn), zeros(xn) };
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_S32, yn, &ws) == 0);
    CHECK(DLB_RUN(be, pool_fwd, &(c.d), b[0], b[1], ws) == 0);
    CHECK(DLB_RUN(be, pool_bwd, &(c.d), b[2], ws, b[3]) == 0);
    down(b[3], dx, xn);
    check_grad(kind == DLB_POOL_MAX ? "maxpool dx" : "avgpool dx", pool_f, &c,
               c.x, xn, dx);
    release(b, 4);
    release(&ws, 1);
    free(c.x); free(c.r); free(dx);
}

/* ---- relu --------------------------------------------------------- */
struct vec_ctx {
    size_t n;
    double *x, *r;
    struct dlb_dropout_desc dd;
};

static double relu_f(void *p)
{
    struct vec_ctx *c = p;
    struct dlb_buffer *b[2] = { up(c->x, c->n), zeros(c->n) };
    double *y = malloc(c->n * 8), s;
    CHECK(DLB_RUN(be, relu_fwd, c->n, b[0], b[1]) == 0);
    down(b[1], y, c->n);
    s = dot(y, c->r, c->n);
    free(y);
    release(b, 2);
    return s;
}

static void test_relu(void)
{
    struct vec_ctx c = { .n = 64 };
    c.x = randv(c.n); /* |x| >= 0.1: away from the kink at 0 */
    c.r = randv(c.n);
    double *dx = malloc(c.n * 8);
    struct dlb_buffer *b[3] = { up(c.x, c.n), up(c.r, c.n), zeros(c.n) };
    CHECK(DLB_RUN(be, relu_fwd, c.n, b[0], b[0]) == 0); /* in place */
    CHECK(DLB_RUN(be, relu_bwd, c.n, b[0], b[1], b[2]) == 0);
    down(b[2], dx, c.n);
    check_grad("relu dx", relu_f, &c, c.x, c.n, dx);
    release(b, 3);
    free(c.x); free(c.r); free(dx);
}

/* ---- ReLU6: relu_max 6 ---------------------------------------------- */
static double relu6_f(void *p)
{
    struct vec_ctx *c = p;
    struct dlb_buffer *b[2] = { up(c->x, c->n), zeros(c->n) };
    double *y = malloc(c->n * 8), s;
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_RELU,
              .prop = DLB_PROP_FWD_TRAIN, .count = c->n, .relu_max = 6.0f,
              .x = b[0], .y = b[1]}) == 0);
    down(b[1], y, c->n);
    s = dot(y, c->r, c->n);
    free(y);
    release(b, 2);
    return s;
}

static void test_relu6(void)
{
    struct vec_ctx c = { .n = 64 };
    int clipped = 0, passed = 0;
    c.x = randv(c.n);
    c.r = randv(c.n);
    for (size_t i = 0; i < c.n; i++) {
        c.x[i] *= 9.0; /* +-[0.9, 9): away from 0; and from 6, below */
        if (fabs(c.x[i] - 6.0) < 0.01)
            c.x[i] += 0.05;
        clipped += c.x[i] > 6.0;
        passed += c.x[i] > 0.0 && c.x[i] < 6.0;
    }
    CHECK(clipped > 0 && passed > 0);
    double *dx = malloc(c.n * 8);
    struct dlb_buffer *b[3] = { up(c.x, c.n), up(c.r, c.n), zeros(c.n) };
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_RELU,
              .prop = DLB_PROP_FWD_TRAIN, .count = c.n, .relu_max = 6.0f,
              .x = b[0], .y = b[0]}) == 0); /* in place */
    CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_RELU,
              .prop = DLB_PROP_BWD, .count = c.n, .relu_max = 6.0f,
              .y = b[0], .dy = b[1], .dx = b[2]}) == 0);
    down(b[2], dx, c.n);
    check_grad("relu6 dx", relu6_f, &c, c.x, c.n, dx);
    release(b, 3);
    free(c.x); free(c.r); free(dx);
}

/* ---- concatenation of three inputs ---------------------------------- */
struct cat_ctx {
    struct dlb_concat_desc d[3];
    double *x[3], *r;
    size_t yn;
};

static double concat_f(void *p)
{
    struct cat_ctx *c = p;
    struct dlb_buffer *y = zeros(c->yn), *x[3];
    double *v = malloc(c->yn * 8), s;
    for (int i = 0; i < 3; i++) {
        x[i] = up(c->x[i], (size_t)c->d[i].n * c->d[i].c * c->d[i].hw);
        CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_CONCAT,
                  .prop = DLB_PROP_FWD_TRAIN, .concat = c->d[i], .x = x[i],
                  .y = y}) == 0);
    }
    down(y, v, c->yn);
    s = dot(v, c->r, c->yn);
    free(v);
    release(x, 3);
    release(&y, 1);
    return s;
}

static void test_concat(void)
{
    const uint32_t n = 2, hw = 5, cs[3] = { 2, 3, 1 }, at[3] = { 4, 0, 3 };
    struct cat_ctx c;
    c.yn = (size_t)n * 6 * hw;
    c.r = randv(c.yn);
    struct dlb_buffer *dy = up(c.r, c.yn);
    for (int i = 0; i < 3; i++) {
        size_t xn = (size_t)n * cs[i] * hw;
        c.d[i] = (struct dlb_concat_desc){ n, cs[i], 6, at[i], hw };
        c.x[i] = randv(xn);
    }
    for (int i = 0; i < 3; i++) {
        size_t xn = (size_t)n * cs[i] * hw;
        struct dlb_buffer *dx = zeros(xn);
        double *g = malloc(xn * 8);
        char what[32];
        CHECK(dlb_backend_run(be, &(struct dlb_op){.kind = DLB_OP_CONCAT,
                  .prop = DLB_PROP_BWD, .concat = c.d[i], .dy = dy,
                  .dx = dx}) == 0);
        down(dx, g, xn);
        snprintf(what, sizeof what, "concat dx%d", i);
        check_grad(what, concat_f, &c, c.x[i], xn, g);
        release(&dx, 1);
        free(g);
    }
    release(&dy, 1);
    for (int i = 0; i < 3; i++)
        free(c.x[i]);
    free(c.r);
}

/* ---- dropout: the mask is fixed by the seed ----------------------- */
static double dropout_f(void *p)
{
    struct vec_ctx *c = p;
    struct dlb_buffer *b[2] = { up(c->x, c->n), zeros(c->n) };
    double *y = malloc(c->n * 8), s;
    CHECK(DLB_RUN(be, dropout_fwd, &(c->dd), b[0], b[1]) == 0);
    down(b[1], y, c->n);
    s = dot(y, c->r, c->n);
    free(y);
    release(b, 2);
    return s;
}

static void test_dropout(enum dlb_dropout_mode mode)
{
    struct vec_ctx c = { .dd = { .mode = mode, .n = 3, .c = 4, .hw = 5,
                                 .p = 0.5f, .seed = 99 } };
    c.n = 3 * 4 * 5;
    c.x = randv(c.n);
    c.r = randv(c.n);
    double *dx = malloc(c.n * 8), *y = malloc(c.n * 8);
    struct dlb_buffer *b[4] = { up(c.x, c.n), up(c.r, c.n), zeros(c.n),
                                zeros(c.n) };
    CHECK(DLB_RUN(be, dropout_fwd, &(c.dd), b[0], b[3]) == 0);
    CHECK(DLB_RUN(be, dropout_bwd, &(c.dd), b[1], b[2]) == 0);
    down(b[2], dx, c.n);
    down(b[3], y, c.n);
    check_grad(mode == DLB_DROPOUT_CHANNEL ? "dropout2d dx" : "dropout dx",
               dropout_f, &c, c.x, c.n, dx);
    int kept = 0, planes_mixed = 0;
    for (size_t i = 0; i < c.n; i++) {
        CHECK(y[i] == 0.0 || fabs(y[i] - 2.0 * c.x[i]) < 1e-15);
        kept += y[i] != 0.0;
        if (mode == DLB_DROPOUT_CHANNEL && i % 5 && (y[i] != 0) != (y[i - 1] != 0))
            planes_mixed = 1;
    }
    CHECK(kept > 0 && kept < (int)c.n); /* some of each at p = 0.5 */
    CHECK(!planes_mixed);               /* dropout2d drops whole planes */
    release(b, 4);
    free(c.x); free(c.r); free(dx); free(y);
}

/* Pin the hash: a CUDA or oneDNN port must reproduce these exactly. */
static void test_dropout_mask(void)
{
    uint32_t thr = dlb_dropout_threshold(0.5f);
    size_t kept = 0, n = 100000;
    CHECK(thr == 1u << 23);
    CHECK(dlb_dropout_threshold(0.0f) == 0 && dlb_dropout_threshold(1.0f) == 1u << 24);
    for (size_t i = 0; i < n; i++)
        kept += (size_t)dlb_dropout_keep(7, i, dlb_dropout_threshold(0.3f));
    CHECK(fabs((double)kept / (double)n - 0.7) < 0.01);
    unsigned bits = 0;
    for (unsigned i = 0; i < 16; i++)
        bits |= (unsigned)dlb_dropout_keep(12345, i, thr) << i;
    printf("dropout mask bits (seed 12345, p 0.5, i 0..15): 0x%04x\n", bits);
    CHECK(bits == DROPOUT_BITS_12345);
}
/* ---- batchnorm, training mode ------------------------------------- */
struct bn_ctx {
    struct dlb_batchnorm_desc d;
    double *x, *g, *bt, *r;
};

static double bn_f(void *p)
{
    struct bn_ctx *c = p;
    size_t n = (size_t)c->d.n * c->d.c * c->d.hw, C = c->d.c;
    struct dlb_buffer *b[8] = { up(c->x, n), up(c->g, C), up(c->bt, C),
                                zeros(C), zeros(C), zeros(C), zeros(C),
                                zeros(n) };
    double *y = malloc(n * 8), s;
    CHECK(DLB_RUN(be, batchnorm_fwd_train, &(c->d), b[0], b[1], b[2], b[3],
                  b[4], b[5], b[6], b[7]) == 0);
    down(b[7], y, n);
    s = dot(y, c->r, n);
    free(y);
    release(b, 8);
    return s;
}

static void test_batchnorm(void)
{
    struct bn_ctx c = { .d = { .n = 3, .c = 2, .hw = 5, .eps = 1e-5f,
                               .momentum = 0.1f } };
    size_t n = 30, C = 2;
    c.x = randv(n); c.g = randv(C); c.bt = randv(C); c.r = randv(n);
    double ones[2] = { 1, 1 }, rm[2], rv[2], sm[2], dx[30], dg[2], dbt[2];
    struct dlb_buffer *b[11] = { up(c.x, n), up(c.g, C), up(c.bt, C), zeros(C),
                                 up(ones, C), zeros(C), zeros(C), zeros(n),
                                 up(c.r, n), zeros(n), zeros(C) };
    struct dlb_buffer *dbb = zeros(C);
    CHECK(DLB_RUN(be, batchnorm_fwd_train, &(c.d), b[0], b[1], b[2], b[3], b[4],
                  b[5], b[6], b[7]) == 0);
    CHECK(DLB_RUN(be, batchnorm_bwd, &(c.d), b[0], b[8], b[1], b[5], b[6], b[9],
                  b[10], dbb) == 0);
    down(b[9], dx, n); down(b[10], dg, C); down(dbb, dbt, C);
    check_grad("batchnorm dx", bn_f, &c, c.x, n, dx);
    check_grad("batchnorm dgamma", bn_f, &c, c.g, C, dg);
    check_grad("batchnorm dbeta", bn_f, &c, c.bt, C, dbt);
    /* Running statistics: momentum 0.1, unbiased variance, from 0 and 1. */
    down(b[3], rm, C); down(b[4], rv, C); down(b[5], sm, C);
    for (size_t ch = 0; ch < C; ch++) {
        double mean = 0, sq = 0;
        for (size_t k = 0; k < 15; k++)
            mean += c.x[(k / 5) * 10 + ch * 5 + k % 5] / 15;
        for (size_t k = 0; k < 15; k++) {
            double e = c.x[(k / 5) * 10 + ch * 5 + k % 5] - mean;
            sq += e * e;
        }
        CHECK_NEAR(sm[ch], mean, 1e-12);
        CHECK_NEAR(rm[ch], 0.1 * mean, 1e-8);
        CHECK_NEAR(rv[ch], 0.9 + 0.1 * sq / 14, 1e-8);
    }
    /* Inference with the running statistics is the plain affine map. */
    double y[30];
    CHECK(DLB_RUN(be, batchnorm_fwd_infer, &(c.d), b[0], b[1], b[2], b[3], b[4],
                  b[7]) == 0);
    down(b[7], y, n);
    CHECK_NEAR(y[7], c.g[1] * (c.x[7] - rm[1]) / sqrt(rv[1] + 1e-5) + c.bt[1],
               1e-6);
    release(b, 11);
    release(&dbb, 1);
    free(c.x); free(c.g); free(c.bt); free(c.r);
}

/* ---- linear --------------------------------------------------------- */
struct lin_ctx {
    struct dlb_linear_desc d;
    double *x, *w, *b, *r;
};

static double lin_f(void *p)
{
    struct lin_ctx *c = p;
    size_t xn = (size_t)c->d.n * c->d.in, wn = (size_t)c->d.out * c->d.in;
    size_t yn = (size_t)c->d.n * c->d.out;
    struct dlb_buffer *b[4] = { up(c->x, xn), up(c->w, wn), up(c->b, c->d.out),
                                zeros(yn) };
    double *y = malloc(yn * 8), s;
    CHECK(DLB_RUN(be, linear_fwd, &(c->d), b[0], b[1], b[2], b[3]) == 0);
    down(b[3], y, yn);
    s = dot(y, c->r, yn);
    free(y);
    release(b, 4);
    return s;
}

static void test_linear(void)
{
    struct lin_ctx c = { .d = { .n = 3, .in = 7, .out = 4 } };
    c.x = randv(21); c.w = randv(28); c.b = randv(4); c.r = randv(12);
    double dx[21], dw[28], db[4];
    struct dlb_buffer *b[7] = { up(c.x, 21), up(c.w, 28), up(c.r, 12),
                                zeros(21), zeros(28), zeros(4), NULL };
    CHECK(DLB_RUN(be, linear_bwd, &(c.d), b[0], b[1], b[2], b[3], b[4],
                  b[5]) == 0);
    down(b[3], dx, 21); down(b[4], dw, 28); down(b[5], db, 4);
    check_grad("linear dx", lin_f, &c, c.x, 21, dx);
    check_grad("linear dw", lin_f, &c, c.w, 28, dw);
    check_grad("linear db", lin_f, &c, c.b, 4, db);
    /* Without dx and db (the first layer) only dw is written. */
    CHECK(DLB_RUN(be, linear_bwd, &(c.d), b[0], b[1], b[2], NULL, b[4],
                  NULL) == 0);
    release(b, 6);
    free(c.x); free(c.w); free(c.b); free(c.r);
}

/* ---- log-softmax + NLL ----------------------------------------------- */
struct loss_ctx {
    struct dlb_loss_desc d;
    double *x;
    struct dlb_buffer *labels;
};

static double loss_f(void *p)
{
    struct loss_ctx *c = p;
    size_t n = (size_t)c->d.n * c->d.classes;
    struct dlb_buffer *b[3] = { up(c->x, n), zeros(n), zeros(1) };
    double loss;
    CHECK(DLB_RUN(be, logsoftmax_fwd, &(c->d), b[0], b[1]) == 0);
    CHECK(DLB_RUN(be, nll_loss, &(c->d), b[1], c->labels, b[2]) == 0);
    down(b[2], &loss, 1);
    release(b, 3);
    return loss;
}

static void test_loss(void)
{
    struct loss_ctx c = { .d = { .n = 4, .classes = 5 } };
    int32_t lab[4] = { 0, 3, 4, 3 };
    double dx[20], dx2[20], y[20];
    c.x = randv(20);
    c.x[2] = 30.0; /* a large logit: the stable form must not overflow */
    CHECK(DLB_BE_CALL(be, buffer_alloc, DLB_S32, 4, &c.labels) == 0);
    CHECK(DLB_BE_CALL(be, copy_from_host, c.labels, 0, lab, sizeof lab) == 0);
    struct dlb_buffer *b[3] = { up(c.x, 20), zeros(20), zeros(20) };
    CHECK(DLB_RUN(be, logsoftmax_fwd, &(c.d), b[0], b[1]) == 0);
    CHECK(DLB_RUN(be, logsoftmax_nll_bwd, &(c.d), b[1], c.labels, 1.0f,
                  b[2]) == 0);
    down(b[2], dx, 20);
    down(b[1], y, 20);
    double rowsum = 0;
    for (int k = 0; k < 5; k++)
        rowsum += exp(y[k]);
    CHECK_NEAR(rowsum, 1.0, 1e-12);
    check_grad("logsoftmax+nll dx", loss_f, &c, c.x, 20, dx);
    /* The loss scale multiplies the gradient (AMP). */
    CHECK(DLB_RUN(be, logsoftmax_nll_bwd, &(c.d), b[1], c.labels, 1024.0f,
                  b[2]) == 0);
    down(b[2], dx2, 20);
    CHECK_NEAR(dx2[7], 1024.0 * dx[7], 1e-9);
    /* A label outside [0, classes) is refused. */
    lab[1] = 5;
    CHECK(DLB_BE_CALL(be, copy_from_host, c.labels, 0, lab, sizeof lab) == 0);
    CHECK(DLB_RUN(be, nll_loss, &(c.d), b[1], c.labels, b[2]) ==
          DLB_ERR_INTERNAL);
    release(b, 3);
    release(&c.labels, 1);
    free(c.x);
}

int main(void)
{
    char reason[256];
    struct dlb_backend_config cfg = { .threads = 1, .device = 0, .seed = 42 };
    dlb_rng_seed(&rng, 1234);
    CHECK(dlb_backend_open("ref", &cfg, &be, reason, sizeof reason) == DLB_OK);
    if (!be) {
        fprintf(stderr, "cannot open ref: %s\n", reason);
        return 1;
    }
    test_conv();
    test_pool(DLB_POOL_MAX, 2, 2, 0);
    test_pool(DLB_POOL_MAX, 3, 2, 1);
    test_pool(DLB_POOL_AVG, 2, 2, 0);
    test_pool(DLB_POOL_AVG, 3, 2, 1);
    test_relu();
    test_batchnorm();
    test_linear();
    test_loss();
    test_dropout(DLB_DROPOUT_ELEMENT);
    test_dropout(DLB_DROPOUT_CHANNEL);
    test_dropout_mask();
    /* the networks after vgg-small: last, as the rng draws come in order */
    test_conv_groups();
    test_relu6();
    test_concat();
    dlb_backend_close(be);
    return check_exit();
}
