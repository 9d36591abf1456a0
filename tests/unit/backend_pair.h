/* The same tensor on a backend under test and on ref: what the op-by-op
 * tests against ref share (test_cpu_backend, test_cuda_ops). Include
 * after check.h, with the core's private headers on the include path.
 *
 * The test opens `dev` (the backend under test) and `ref`, seeds `rng`,
 * and defines tol_of (below), its error bounds. An operation runs on both
 * sides in a BOTH loop (CALL), then a check compares the two results:
 * within a bound relative to the norm (expect_tol, NEAR, NEAR_DNN) or
 * element for element (expect_same). */
#ifndef DLB_TEST_BACKEND_PAIR_H
#define DLB_TEST_BACKEND_PAIR_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/op_call.h"
#include "backend/dtype.h"
#include "util/rng.h"

static struct dlb_backend *dev, *ref;
static struct dlb_rng rng;
/* 1: print a line for every check that passes (a per-operation error
 * table), not only for the failures. */
static int pair_log_ok;

/* The test's bound for a result of type t; `dnn` is 1 for the layers a
 * DNN library computes with algorithms of its own (convolution, linear,
 * batch norm), 0 for element-wise work, pooling and the loss. */
static double tol_of(enum dlb_dtype t, int dnn);

struct pair {
    struct dlb_buffer *d, *r; /* the backend under test's side, ref's */
    size_t n;
    enum dlb_dtype t;
};

/* An absent optional operand (a bias, a workspace). */
static const struct pair none = { NULL, NULL, 0, DLB_F32 };

/* Inside a BOTH loop: the side's buffer of a pair, and its backend. */
#define B(p) (side ? (p).r : (p).d)
#define BE (side ? ref : dev)
#define BOTH for (int side = 0; side < 2; side++)
#define CALL(op, ...) BOTH CHECK(DLB_RUN(BE, op, __VA_ARGS__) == DLB_OK)

static double rand_nonzero(void)
{
    double m = 0.1 + 0.9 * dlb_rng_double(&rng);
    return dlb_rng_below(&rng, 2) ? m : -m;
}

static struct pair alloc_pair(enum dlb_dtype t, size_t n)
{
    struct pair p = { NULL, NULL, n, t };
    CHECK(DLB_BE_CALL(dev, buffer_alloc, t, n, &p.d) == DLB_OK);
    CHECK(DLB_BE_CALL(ref, buffer_alloc, t, n, &p.r) == DLB_OK);
    return p;
}

/* Host values of `n` floats in type t (rounded for the 16-bit types). */
static void *host_of(enum dlb_dtype t, const float *v, size_t n)
{
    void *h = malloc(n * dlb_dtype_size(t) + 1);
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case DLB_F32: ((float *)h)[i] = v[i]; break;
        case DLB_BF16: ((uint16_t *)h)[i] = dlb_f32_to_bf16(v[i]); break;
        case DLB_F16: ((uint16_t *)h)[i] = dlb_f32_to_f16(v[i]); break;
        case DLB_F64: ((double *)h)[i] = v[i]; break;
        case DLB_S32: ((int32_t *)h)[i] = (int32_t)v[i]; break;
        case DLB_S8: ((int8_t *)h)[i] = (int8_t)v[i]; break;
        case DLB_U8: ((uint8_t *)h)[i] = (uint8_t)v[i]; break;
        }
    }
    return h;
}

static struct pair from_floats(enum dlb_dtype t, const float *v, size_t n)
{
    struct pair p = alloc_pair(t, n);
    void *h = host_of(t, v, n);
    size_t bytes = n * dlb_dtype_size(t);
    CHECK(DLB_BE_CALL(dev, copy_from_host, p.d, 0, h, bytes) == DLB_OK);
    CHECK(DLB_BE_CALL(ref, copy_from_host, p.r, 0, h, bytes) == DLB_OK);
    free(h);
    return p;
}

/* Random, never zero, scaled by `scale`. */
static struct pair rand_pair(enum dlb_dtype t, size_t n, double scale)
{
    float *v = malloc(n * sizeof *v + 1);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(scale * rand_nonzero());
    struct pair p = from_floats(t, v, n);
    free(v);
    return p;
}

/* An output: garbage on both sides, so that unwritten elements show. */
static struct pair out_pair(enum dlb_dtype t, size_t n)
{
    struct pair p = alloc_pair(t, n);
    CHECK(dlb_backend_run(dev, &(struct dlb_op){.kind = DLB_OP_FILL,
              .count = n, .y = p.d, .value = 123.0}) == DLB_OK);
    CHECK(dlb_backend_run(ref, &(struct dlb_op){.kind = DLB_OP_FILL,
              .count = n, .y = p.r, .value = -77.0}) == DLB_OK);
    return p;
}

static void release(struct pair *p)
{
    if (p->d)
        dlb_backend_ops_of(dev)->buffer_free(dev, p->d);
    if (p->r)
        dlb_backend_ops_of(ref)->buffer_free(ref, p->r);
    p->d = p->r = NULL;
}

#define RELEASE(...)                                                        \
    do {                                                                    \
        struct pair *all_[] = { __VA_ARGS__ };                              \
        for (size_t i_ = 0; i_ < sizeof all_ / sizeof *all_; i_++)          \
            release(all_[i_]);                                              \
    } while (0)

/* A buffer's first `n` elements of type t as doubles (malloc'ed). */
static double *download(struct dlb_backend *be, const struct dlb_buffer *b,
                        size_t n, enum dlb_dtype t)
{
    size_t esz = dlb_dtype_size(t);
    unsigned char *raw = calloc(n * esz + 1, 1);
    double *v = calloc(n + 1, sizeof *v);
    CHECK(DLB_BE_CALL(be, copy_to_host, raw, b, 0, n * esz) == DLB_OK);
    for (size_t i = 0; i < n; i++) {
        float f;
        uint16_t h;
        int32_t k;
        switch (t) {
        case DLB_F32: memcpy(&f, raw + 4 * i, 4); v[i] = f; break;
        case DLB_BF16: memcpy(&h, raw + 2 * i, 2); v[i] = dlb_bf16_to_f32(h); break;
        case DLB_F16: memcpy(&h, raw + 2 * i, 2); v[i] = dlb_f16_to_f32(h); break;
        case DLB_F64: memcpy(&v[i], raw + 8 * i, 8); break;
        case DLB_S32: memcpy(&k, raw + 4 * i, 4); v[i] = k; break;
        case DLB_S8: v[i] = (signed char)raw[i]; break;
        case DLB_U8: v[i] = raw[i]; break;
        }
    }
    free(raw);
    return v;
}

/* The largest |a - b| over the largest |b|, element by element: a on
 * backend ba, b on bb, both of type t. */
static inline double max_rel_diff_on(struct dlb_backend *ba,
                                     const struct dlb_buffer *a,
                                     struct dlb_backend *bb,
                                     const struct dlb_buffer *b, size_t n,
                                     enum dlb_dtype t)
{
    double *u = download(ba, a, n, t), *v = download(bb, b, n, t);
    double m = 0.0, scale = 0.0;
    for (size_t i = 0; i < n; i++) {
        m = fmax(m, fabs(u[i] - v[i]));
        scale = fmax(scale, fabs(v[i]));
    }
    free(u);
    free(v);
    return scale > 0.0 ? m / scale : m;
}

/* ||dev - ref|| / ||ref|| over the pair's elements. */
static double rel_err(struct pair p)
{
    double *a = download(dev, p.d, p.n, p.t);
    double *b = download(ref, p.r, p.n, p.t);
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < p.n; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    free(a);
    free(b);
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static void expect_tol(const char *what, struct pair p, double tol)
{
    double e = rel_err(p);
    check_count++;
    if (!(e <= tol)) {
        check_failures++;
        fprintf(stderr, "FAIL %s (%s): relative error %.3g > %.g\n", what,
                dlb_dtype_name(p.t), e, tol);
    } else if (pair_log_ok) {
        fprintf(stderr, "ok   %-46s %-4s rel err %.2e (bound %.0e)\n", what,
                dlb_dtype_name(p.t), e, tol);
    }
}

#define NEAR(what, p) expect_tol(what, p, tol_of((p).t, 0))
#define NEAR_DNN(what, p) expect_tol(what, p, tol_of((p).t, 1))

/* Element for element identical (bitwise for floats but the sign of 0;
 * NaN equals NaN). */
static void expect_same(const char *what, struct pair p)
{
    double *a = download(dev, p.d, p.n, p.t);
    double *b = download(ref, p.r, p.n, p.t);
    size_t bad = 0;
    for (size_t i = 0; i < p.n; i++)
        if (!(a[i] == b[i]) && !(a[i] != a[i] && b[i] != b[i]))
            bad++;
    check_count++;
    if (bad) {
        check_failures++;
        fprintf(stderr, "FAIL %s: %zu of %zu elements differ\n", what, bad, p.n);
    } else if (pair_log_ok) {
        fprintf(stderr, "ok   %-46s %-4s identical\n", what, dlb_dtype_name(p.t));
    }
    free(a);
    free(b);
}

/* Open backend `name` as dev and the ref backend as ref, with the
 * configuration the op-by-op tests use (all threads, seed 42). Returns -1
 * when both are open, else main's exit status: 77 when `name` is not
 * built in or cannot run here (the reason printed), 1 on a failure. */
static inline int pair_open(const char *name, char *reason, size_t len)
{
    struct dlb_backend_config cfg = { .threads = 0, .seed = 42 };
    pair_log_ok = getenv("DLB_TEST_VERBOSE") != NULL;
    dlb_status s = dlb_backend_open(name, &cfg, &dev, reason, len);
    if (s == DLB_ERR_UNSUPPORTED) {
        fprintf(stderr, "skip: %s\n", reason);
        return 77;
    }
    CHECK(s == DLB_OK);
    CHECK(dlb_backend_open("ref", &cfg, &ref, reason, len) == DLB_OK);
    return dev && ref ? -1 : check_exit();
}

/* A check of a fact, not of a value: counted as the others. */
static inline void expect_true(const char *what, int ok)
{
    check_count++;
    if (!ok) {
        check_failures++;
        fprintf(stderr, "FAIL %s\n", what);
    } else if (pair_log_ok) {
        fprintf(stderr, "ok   %s\n", what);
    }
}

/* Whether the cpu backend's own AVX-512 kernels can run here: the tests
 * of those kernels then check that they took the shapes they should. */
static inline int have_avx512(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
    return __builtin_cpu_supports("avx512f") != 0;
#else
    return 0;
#endif
}

/* A square-kernel convolution's descriptor with its output size. */
static struct dlb_conv2d_desc conv_desc(uint32_t n, uint32_t ic, uint32_t h,
                                        uint32_t w, uint32_t oc, uint32_t k,
                                        uint32_t stride, uint32_t pad)
{
    struct dlb_conv2d_desc d = { n, ic, h, w, oc, k, k, stride, stride, pad,
                                 pad, 0, 0, 1 };
    d.out_h = dlb_conv_out_size(h, k, stride, pad);
    d.out_w = dlb_conv_out_size(w, k, stride, pad);
    return d;
}

#endif
