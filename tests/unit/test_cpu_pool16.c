/* 2x2 stride-2 max pooling of bf16 data in blocks of 16 lanes
 * (cpu_pool_bf16.c: nChw16c, or nhwc on machines whose convolutions hand
 * that over) against the ref backend: the output, the workspace and the
 * input gradient are copies of input values and indices, so they must
 * agree exactly; random bf16 inputs tie now and then, which tests the
 * first maximum. Shapes the loops take (even sizes, channels a multiple
 * of 16, 24 channels padded to 32) and some they hand back (odd sizes).
 * Exits 77 when the cpu backend is not built in or the CPU has no bf16. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/dtype.h"
#include "backend_pair.h" /* dev: the cpu backend */
#include "util/rng.h"

static double tol_of(enum dlb_dtype t, int dnn)
{
    (void)t;
    (void)dnn;
    return 0.0;
}

/* x in the layout a convolution hands over: a 1x1 identity convolution. */
static void test_max2x2(uint32_t n, uint32_t c, uint32_t h, uint32_t w)
{
    const enum dlb_dtype t = DLB_BF16;
    struct dlb_conv2d_desc cd = conv_desc(n, c, h, w, c, 1, 1, 0);
    struct dlb_pool_desc d = { DLB_POOL_MAX, n, c, h, w, 2, 2, 2, 2, 0, 0,
                               h / 2, w / 2 };
    size_t xn = (size_t)n * c * h * w, yn = (size_t)n * c * (h / 2) * (w / 2);
    float *eye = calloc((size_t)c * c, sizeof *eye);
    for (uint32_t i = 0; i < c; i++)
        eye[(size_t)i * c + i] = 1.0f;
    struct pair x = rand_pair(t, xn, 1.0), wt = from_floats(t, eye, (size_t)c * c);
    free(eye);
    struct pair cv = out_pair(t, xn), y = out_pair(t, yn), dx = out_pair(t, xn);
    struct pair ws = alloc_pair(DLB_S32, yn), dy = rand_pair(t, yn, 1.0);
    char what[128];
    CALL(conv2d_fwd, &cd, B(x), B(wt), NULL, B(cv));
    CALL(pool_fwd, &d, B(cv), B(y), B(ws));
    /* Backward before any comparison: reading a buffer back makes it
     * plain, and backward follows the workspace's layout. */
    CALL(pool_bwd, &d, B(dy), B(ws), B(dx));
    snprintf(what, sizeof what, "max 2x2 bf16 %ux%ux%ux%u y", n, c, h, w);
    expect_same(what, y);
    snprintf(what, sizeof what, "max 2x2 bf16 %ux%ux%ux%u workspace", n, c, h, w);
    expect_same(what, ws);
    snprintf(what, sizeof what, "max 2x2 bf16 %ux%ux%ux%u dx", n, c, h, w);
    expect_same(what, dx);
    RELEASE(&x, &wt, &cv, &y, &dx, &ws, &dy);
}

int main(void)
{
    struct dlb_backend_config cfg = { .threads = 0, .seed = 42 };
    char reason[512];
    pair_log_ok = getenv("DLB_TEST_VERBOSE") != NULL;
    dlb_status s = dlb_backend_open("cpu", &cfg, &dev, reason, sizeof reason);
    if (s == DLB_ERR_UNSUPPORTED) {
        fprintf(stderr, "skip: %s\n", reason);
        return 77;
    }
    CHECK(s == DLB_OK);
    CHECK(dlb_backend_open("ref", &cfg, &ref, reason, sizeof reason) == DLB_OK);
    if (!dev || !ref)
        return check_exit();
    if (DLB_BE_CALL(dev, supports, DLB_CAP_BF16, reason, sizeof reason) != DLB_OK) {
        fprintf(stderr, "skip: %s\n", reason);
        dlb_backend_close(dev);
        dlb_backend_close(ref);
        return 77;
    }
    dlb_rng_seed(&rng, 2028);
    (void)tol_of;
    (void)expect_tol; /* backend_pair.h's, for rounded results: none here */
    test_max2x2(3, 32, 8, 8);    /* vgg-small's pool1 kind, nChw16c */
    test_max2x2(2, 64, 14, 14);  /* pool2: nhwc on AMX machines */
    test_max2x2(1, 128, 6, 4);
    test_max2x2(2, 24, 4, 6);    /* padded to 32 channels */
    test_max2x2(2, 32, 7, 7);    /* odd: the general loops */
    test_max2x2(1, 20, 9, 8);
    dlb_backend_close(dev);
    dlb_backend_close(ref);
    return check_exit();
}
