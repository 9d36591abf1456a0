/* 2x2 stride-2 max pooling of data in the layout a convolution hands
 * over (a 1x1 identity convolution puts it there), forward and backward,
 * against ref: the output, the workspace and the input gradient are
 * copies of input values and indices, so they must agree exactly. What
 * test_cpu_backend (f32) and test_cpu_pool16 (bf16) share. Include after
 * backend_pair.h. */
#ifndef DLB_TEST_BACKEND_PAIR_POOL_H
#define DLB_TEST_BACKEND_PAIR_POOL_H

#include "backend_pair.h"

static void test_max2x2_after_conv(enum dlb_dtype t, uint32_t n, uint32_t c,
                                   uint32_t h, uint32_t w)
{
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
    const char *tn = dlb_dtype_name(t);
    char what[128];
    CALL(conv2d_fwd, &cd, B(x), B(wt), NULL, B(cv));
    CALL(pool_fwd, &d, B(cv), B(y), B(ws));
    /* Backward before any comparison: reading a buffer back makes it
     * plain, and backward follows the workspace's layout. */
    CALL(pool_bwd, &d, B(dy), B(ws), B(dx));
    snprintf(what, sizeof what, "max 2x2 %s %ux%ux%ux%u y", tn, n, c, h, w);
    expect_same(what, y);
    snprintf(what, sizeof what, "max 2x2 %s %ux%ux%ux%u workspace", tn, n, c,
             h, w);
    expect_same(what, ws);
    snprintf(what, sizeof what, "max 2x2 %s %ux%ux%ux%u dx", tn, n, c, h, w);
    expect_same(what, dx);
    RELEASE(&x, &wt, &cv, &y, &dx, &ws, &dy);
}

#endif
