/* Batch norm fused with the ReLU after it (dlb_backend_bn_relu's
 * fwd_train and bwd): the cpu backend against the ref backend, which
 * runs the two operations one after the other, forward and backward, on
 * random inputs that are never zero, on the routes the cpu backend takes:
 * bf16 in nChw16c (32 channels) and nhwc (64 channels on AMX machines),
 * where its own loops fuse the ReLU and recompute its mask in backward,
 * and f32, plain data and odd channel counts, where it runs batch norm and
 * ReLU one after the other.
 *
 * Bounds as test_cpu_backend.c's (relative to the norm): fp32 1e-5, bf16
 * 1e-2. Beyond the bounds: the output is never negative, the ReLU zeroes
 * a real share of it (so the mask is exercised), the cpu backend's fused
 * output equals its own batch norm then ReLU, and backward in place (dx is
 * dy) gives what it gives into a separate dx. Exits 77 when the cpu
 * backend is not built in. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/dtype.h"
#include "backend_pair.h" /* dev: the cpu backend */
#include "util/rng.h"

#define TOL_F32 1e-5
#define TOL_BF16 1e-2

/* The fused operation (BATCHNORM_RELU) on both sides. */
#define FCALL(f, ...) CALL(batchnorm_relu_##f, __VA_ARGS__)

static double tol_of(enum dlb_dtype t, int dnn)
{
    (void)dnn;
    return t == DLB_BF16 ? TOL_BF16 : TOL_F32;
}

/* The share of y's elements (cpu side) that are exactly 0; -1 when one
 * is negative or not finite. */
static double zero_share(struct pair y)
{
    double *v = download(dev, y.d, y.n, y.t), zeros = 0.0;
    for (size_t i = 0; i < y.n; i++) {
        if (!(v[i] >= 0.0) || !isfinite(v[i])) {
            free(v);
            return -1.0;
        }
        zeros += v[i] == 0.0;
    }
    free(v);
    return zeros / (double)y.n;
}

/* The largest difference between two cpu buffers of n elements. */
static double max_diff(const struct dlb_buffer *a, const struct dlb_buffer *b,
                       size_t n, enum dlb_dtype t)
{
    double *u = download(dev, a, n, t), *v = download(dev, b, n, t), m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(u[i] - v[i]));
    free(u);
    free(v);
    return m;
}

/* Batch norm + ReLU on n x c x (h x w) data. blocked: x is a 1x1 identity
 * convolution's output (plus biases of 100 to 160: large means against
 * deviations of about 1), in the layout the convolution chose; else x is
 * plain host data. */
static void test_bn_relu(const char *name, enum dlb_dtype t, uint32_t n,
                         uint32_t c, uint32_t h, uint32_t w, int blocked)
{
    struct dlb_batchnorm_desc d = { n, c, h * w, 1e-5f, 0.1f };
    size_t cnt = (size_t)n * c * h * w;
    char what[160];
    struct pair x = rand_pair(t, cnt, 2.0), cv = x;
    struct pair wt = none, bias = none;
    if (blocked) {
        struct dlb_conv2d_desc cd = conv_desc(n, c, h, w, c, 1, 1, 0);
        float *eye = calloc((size_t)c * c, sizeof *eye);
        float *off = malloc(c * sizeof *off);
        for (uint32_t i = 0; i < c; i++) {
            eye[(size_t)i * c + i] = 1.0f;
            off[i] = 100.0f + 4.0f * (float)(i % 16);
        }
        wt = from_floats(t, eye, (size_t)c * c);
        bias = from_floats(t, off, c);
        free(eye);
        free(off);
        cv = out_pair(t, cnt);
        CALL(conv2d_fwd, &cd, B(x), B(wt), B(bias), B(cv));
    }
    /* beta of either sign: the ReLU keeps a different share per channel */
    struct pair gm = rand_pair(DLB_F32, c, 1.0), bt = rand_pair(DLB_F32, c, 0.8);
    struct pair rm = rand_pair(DLB_F32, c, 0.5), rv = alloc_pair(DLB_F32, c);
    CALL(fill, c, B(rv), 1.0);
    struct pair sm = out_pair(DLB_F32, c), si = out_pair(DLB_F32, c);
    struct pair dg = out_pair(DLB_F32, c), db = out_pair(DLB_F32, c);
    struct pair y = out_pair(t, cnt), dx = out_pair(t, cnt);
    struct pair g = rand_pair(t, cnt, 1.0);

    FCALL(fwd_train, &d, B(cv), B(gm), B(bt), B(rm), B(rv),
         B(sm), B(si), B(y));
#define NEARF(p, tag) \
    (snprintf(what, sizeof what, "%s %s", name, tag), NEAR(what, p))
    NEARF(y, "fwd y");
    NEARF(sm, "fwd saved mean");
    NEARF(si, "fwd saved invstd");
    NEARF(rm, "fwd running mean");
    NEARF(rv, "fwd running var");
    double z = zero_share(y);
    if (!(z > 0.1 && z < 0.9))
        fprintf(stderr, "%s: share of zeros %g, want (0.1, 0.9)\n", name, z);
    CHECK(z > 0.1 && z < 0.9);

    /* The same as the backend's own batch norm, then ReLU, bit for bit
     * but for the fused route's scale (from the saved float inverse
     * deviation): within one bf16 rounding of the output's scale. */
    {
        struct pair y2 = out_pair(t, cnt), rm2 = rand_pair(DLB_F32, c, 0.5);
        struct pair rv2 = alloc_pair(DLB_F32, c), sm2 = out_pair(DLB_F32, c);
        struct pair si2 = out_pair(DLB_F32, c);
        CHECK(DLB_RUN(dev, fill, c, rv2.d, 1.0) == DLB_OK);
        CHECK(DLB_RUN(dev, batchnorm_fwd_train, &d, cv.d, gm.d, bt.d, rm2.d,
                      rv2.d, sm2.d, si2.d, y2.d) == DLB_OK);
        CHECK(DLB_RUN(dev, relu_fwd, cnt, y2.d, y2.d) == DLB_OK);
        double m = max_diff(y.d, y2.d, cnt, t);
        if (!(m <= (t == DLB_BF16 ? 0.05 : 1e-5)))
            fprintf(stderr, "%s: fused against unfused: %g\n", name, m);
        CHECK(m <= (t == DLB_BF16 ? 0.05 : 1e-5));
        RELEASE(&y2, &rm2, &rv2, &sm2, &si2);
    }

    FCALL(bwd, &d, B(cv), B(y), B(g), B(gm), B(bt), B(sm),
         B(si), B(dx), B(dg), B(db));
    NEARF(dx, "bwd dx");
    NEARF(dg, "bwd dgamma");
    NEARF(db, "bwd dbeta");
    /* In place, as a caller that no longer needs dy runs it. */
    FCALL(bwd, &d, B(cv), B(y), B(g), B(gm), B(bt), B(sm),
         B(si), B(g), B(dg), B(db));
    NEARF(g, "bwd in-place dx");
    NEARF(dg, "bwd in-place dgamma");
    CHECK(max_diff(g.d, dx.d, cnt, t) == 0.0);
#undef NEARF
    if (blocked)
        RELEASE(&wt, &bias, &cv);
    RELEASE(&x, &gm, &bt, &rm, &rv, &sm, &si, &dg, &db, &y, &dx, &g);
}

static void run_typed(enum dlb_dtype t)
{
    const char *tn = t == DLB_BF16 ? "bf16" : "f32";
    char name[96];
    snprintf(name, sizeof name, "%s blocked 32 @6x5", tn);
    test_bn_relu(name, t, 3, 32, 6, 5, 1);
    /* nhwc on AMX machines: the layout vgg-small's 64 and 128 channels
     * take there */
    snprintf(name, sizeof name, "%s blocked 64 @7x7", tn);
    test_bn_relu(name, t, 2, 64, 7, 7, 1);
    snprintf(name, sizeof name, "%s blocked 128 @7x7 batch 1", tn);
    test_bn_relu(name, t, 1, 128, 7, 7, 1);
    snprintf(name, sizeof name, "%s plain 32 @4x4", tn);
    test_bn_relu(name, t, 3, 32, 4, 4, 0);
    snprintf(name, sizeof name, "%s plain odd 5 @3x3", tn);
    test_bn_relu(name, t, 2, 5, 3, 3, 0);
}

int main(void)
{
    char reason[512];
    int rc = pair_open("cpu", reason, sizeof reason);
    if (rc >= 0)
        return rc;
    dlb_rng_seed(&rng, 2027);
    (void)expect_same; /* backend_pair.h's, for exact results: none here */
    /* Both built-in backends have it. */
    int has = dlb_backend_has_kind(dev, DLB_OP_BATCHNORM_RELU) &&
              dlb_backend_has_kind(ref, DLB_OP_BATCHNORM_RELU);
    CHECK(has);
    if (!has)
        return check_exit();

    run_typed(DLB_F32);
    if (DLB_BE_CALL(dev, supports, DLB_CAP_BF16, reason, sizeof reason) == DLB_OK)
        run_typed(DLB_BF16);
    else
        fprintf(stderr, "bf16 cases skipped: %s\n", reason);

    dlb_backend_close(dev);
    dlb_backend_close(ref);
    return check_exit();
}
