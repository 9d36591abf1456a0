/* Near-ties in a 16-bit chain (tests/gpu/test_cuda_ops.c): the decisions
 * two backends may take either way when their inputs differ by a rounding
 * (which pooling candidate wins, whether a ReLU passes), checked to be
 * such ties and then shared, so that the backward passes compare the
 * arithmetic. Included after backend_pair.h, whose dev, ref, download,
 * host_of and counters it uses. */
#ifndef DLB_TEST_CHAIN_TIES_H
#define DLB_TEST_CHAIN_TIES_H

/* Max pooling's routes in a 16-bit chain: the two backends' inputs differ
 * by rounding, so where two candidates of a window are within rounding of
 * each other (a tie in that type) either may win. Every route that differs
 * must be such a tie: the two candidates, read from ref's own input, no
 * further apart than `tol` times that input's root mean square, the scale
 * the chain's errors are measured on (NEAR_CHAIN; near zero a relative
 * gap means nothing). ref then takes the device's routes, so that the
 * backward passes compare the arithmetic, not the choice between
 * near-equal maxima. On the H200, bf16: 4 of 2,880 and 1 of 640 routes
 * differed; with them shared, conv1's weight gradient went from 9.4e-2 to
 * 1.4e-2 relative error (bound 2e-2). */
static void expect_route_ties(const char *what, struct pair ws, struct pair x,
                              const struct dlb_pool_desc *p, double tol)
{
    double *wd = download(dev, ws.d, ws.n, DLB_S32);
    double *wr = download(ref, ws.r, ws.n, DLB_S32);
    double *xr = download(ref, x.r, x.n, x.t);
    int32_t *routes = malloc(ws.n * sizeof *routes);
    size_t out_plane = (size_t)p->out_h * p->out_w;
    size_t in_plane = (size_t)p->in_h * p->in_w, differ = 0, not_tie = 0;
    double rms = 0.0, gap = 0.0;
    for (size_t i = 0; i < x.n; i++)
        rms += xr[i] * xr[i];
    rms = sqrt(rms / (double)(x.n ? x.n : 1));
    for (size_t o = 0; o < ws.n; o++) {
        routes[o] = (int32_t)wd[o];
        if (wd[o] == wr[o])
            continue;
        differ++;
        size_t base = o / out_plane * in_plane;
        double d = fabs(xr[base + (size_t)wd[o]] - xr[base + (size_t)wr[o]]);
        gap = fmax(gap, d);
        if (!(d <= tol * rms))
            not_tie++;
    }
    check_count++;
    if (not_tie) {
        check_failures++;
        fprintf(stderr, "FAIL %s: %zu of %zu routes differ, %zu of them not "
                "a tie (largest gap %.3g > %.0e x rms %.3g)\n", what, differ,
                ws.n, not_tie, gap, tol, rms);
    } else {
        fprintf(stderr, "ok   %-46s s32  %zu of %zu routes differ, all ties "
                "(largest gap %.2e of rms %.2e)\n", what, differ, ws.n, gap,
                rms);
    }
    CHECK(DLB_BE_CALL(ref, copy_from_host, ws.r, 0, routes,
                      ws.n * sizeof *routes) == DLB_OK);
    free(routes);
    free(wd);
    free(wr);
    free(xr);
}

/* ReLU's decisions in a 16-bit chain, as the routes above: where one
 * backend's activation is 0 and the other's a small positive value (the
 * two round differently near 0; cuda rounds a convolution's output before
 * adding the bias, ref once), relu_bwd passes the gradient on one side
 * only. One such element of pool2's output is one of the ~32 nonzero
 * entries per channel of conv2's output gradient, and conv2's backward
 * data spreads it over 5x5x10 of conv1's: conv1's bias gradient, a sum
 * over them, moves the most. Every element whose sign differs must be
 * within `tol` times the activation's root mean square of 0; ref then
 * takes the device's value there, so that the backward passes compare
 * the arithmetic. */
static void expect_relu_ties(const char *what, struct pair y, double tol)
{
    double *yd = download(dev, y.d, y.n, y.t);
    double *yr = download(ref, y.r, y.n, y.t);
    float *v = malloc(y.n * sizeof *v + 1);
    size_t differ = 0, not_tie = 0;
    double rms = 0.0, gap = 0.0;
    for (size_t i = 0; i < y.n; i++)
        rms += yr[i] * yr[i];
    rms = sqrt(rms / (double)(y.n ? y.n : 1));
    for (size_t i = 0; i < y.n; i++) {
        v[i] = (float)yr[i];
        if ((yd[i] > 0.0) == (yr[i] > 0.0))
            continue;
        differ++;
        double d = fmax(fabs(yd[i]), fabs(yr[i]));
        gap = fmax(gap, d);
        if (!(d <= tol * rms))
            not_tie++;
        v[i] = (float)yd[i]; /* a value of y's type: stored exactly */
    }
    check_count++;
    if (not_tie) {
        check_failures++;
        fprintf(stderr, "FAIL %s: %zu of %zu signs differ, %zu of them not "
                "near 0 (largest %.3g > %.0e x rms %.3g)\n", what, differ,
                y.n, not_tie, gap, tol, rms);
    } else {
        fprintf(stderr, "ok   %-46s %-4s %zu of %zu signs differ, all near 0 "
                "(largest %.2e of rms %.2e)\n", what, dlb_dtype_name(y.t),
                differ, y.n, gap, rms);
    }
    void *h = host_of(y.t, v, y.n);
    CHECK(DLB_BE_CALL(ref, copy_from_host, y.r, 0, h,
                      y.n * dlb_dtype_size(y.t)) == DLB_OK);
    free(h);
    free(v);
    free(yd);
    free(yr);
}

#endif
