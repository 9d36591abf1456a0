/* The CSR linear op (backend.h, csr_linear_fwd) on ref and cpu against a
 * dense product computed here in double, on random inputs and weights
 * with random zeros:
 * - shapes that take each path of the cpu kernel: batch 1 and 3 (one dot
 *   product per image), 16 and 64 (one tile), 100 (a narrower last tile)
 *   and 256 (four tiles, parallel);
 * - sparsity 0, 0.5, 0.9, 0.95 and 1 (no nonzeros at all), with and
 *   without bias;
 * - tolerance per element: |y - y_exact| <= (k + 1) * 2^-24 * S, where S
 *   = |b| + sum |w x| over the row's k nonzeros: the standard bound of a
 *   recursive fp32 sum of k + 1 terms (each kernel adds in its own order);
 * - a CSR whose row pointers do not end at nnz is refused (both
 *   backends), and one with columns out of order by ref. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/op_call.h"
#include "util/rng.h"

struct csr_host {
    int32_t *rows, *cols;
    float *vals;
    uint32_t nnz;
};

static struct dlb_backend *open_be(const char *name)
{
    struct dlb_backend *be = NULL;
    char why[256];
    if (dlb_backend_open(name, NULL, &be, why, sizeof why) != DLB_OK)
        fprintf(stderr, "backend %s: %s (skipped)\n", name, why);
    return be;
}

static struct dlb_buffer *put(struct dlb_backend *be, enum dlb_dtype t,
                              const void *host, size_t count)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(be);
    struct dlb_buffer *b = NULL;
    CHECK(ops->buffer_alloc(be, t, count ? count : 1, &b) == DLB_OK);
    if (b && count && host)
        CHECK(ops->copy_from_host(be, b, 0, host, count * 4) == DLB_OK);
    return b;
}

static void to_csr(const float *w, uint32_t out, uint32_t in,
                   struct csr_host *c)
{
    c->rows = malloc((out + 1) * sizeof *c->rows);
    c->cols = malloc(((size_t)out * in + 1) * sizeof *c->cols);
    c->vals = malloc(((size_t)out * in + 1) * sizeof *c->vals);
    c->nnz = 0;
    for (uint32_t o = 0; o < out; o++) {
        c->rows[o] = (int32_t)c->nnz;
        for (uint32_t i = 0; i < in; i++)
            if (w[(size_t)o * in + i] != 0.0f) {
                c->cols[c->nnz] = (int32_t)i;
                c->vals[c->nnz++] = w[(size_t)o * in + i];
            }
    }
    c->rows[out] = (int32_t)c->nnz;
}

static void one_case(struct dlb_backend *be, uint32_t n, uint32_t in,
                     uint32_t out, double sparsity, int bias)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(be);
    struct dlb_rng r;
    dlb_rng_seed(&r, 1000u * n + in + out);
    float *x = malloc((size_t)n * in * sizeof *x);
    float *w = malloc((size_t)out * in * sizeof *w);
    float *b = malloc(out * sizeof *b);
    float *y = malloc((size_t)n * out * sizeof *y);
    for (size_t k = 0; k < (size_t)n * in; k++)
        x[k] = (float)dlb_rng_normal(&r);
    for (size_t k = 0; k < (size_t)out * in; k++)
        w[k] = dlb_rng_double(&r) < sparsity ? 0.0f
                                             : (float)dlb_rng_normal(&r) * 0.1f;
    for (uint32_t o = 0; o < out; o++)
        b[o] = (float)dlb_rng_normal(&r);
    struct csr_host c;
    to_csr(w, out, in, &c);
    struct dlb_buffer *bx = put(be, DLB_F32, x, (size_t)n * in);
    struct dlb_buffer *br = put(be, DLB_S32, c.rows, out + 1u);
    struct dlb_buffer *bc = put(be, DLB_S32, c.cols, c.nnz);
    struct dlb_buffer *bv = put(be, DLB_F32, c.vals, c.nnz);
    struct dlb_buffer *bb = bias ? put(be, DLB_F32, b, out) : NULL;
    struct dlb_buffer *by = put(be, DLB_F32, NULL, (size_t)n * out);
    struct dlb_csr_linear_desc d = {n, in, out, c.nnz};
    dlb_status s = DLB_RUN(be, csr_linear_fwd, &d, bx, br, bc, bv, bb, by);
    if (s != DLB_OK)
        fprintf(stderr, "%s: %s\n", dlb_backend_name(be),
                dlb_backend_last_error(be));
    CHECK(s == DLB_OK);
    CHECK(ops->copy_to_host(be, y, by, 0, (size_t)n * out * sizeof *y) == DLB_OK);
    int bad = 0;
    double worst = 0;
    for (uint32_t s_ = 0; s_ < n; s_++)
        for (uint32_t o = 0; o < out; o++) {
            double exact = bias ? b[o] : 0.0, mag = bias ? fabs(b[o]) : 0.0;
            for (uint32_t i = 0; i < in; i++) {
                double t = (double)w[(size_t)o * in + i] * x[(size_t)s_ * in + i];
                exact += t;
                mag += fabs(t);
            }
            double k = c.rows[o + 1] - c.rows[o] + 1.0;
            double err = fabs(y[(size_t)s_ * out + o] - exact);
            double tol = k * 0x1p-24 * mag;
            worst = fmax(worst, mag > 0 ? err / (k * 0x1p-24 * mag) : err);
            bad += !(err <= tol);
        }
    if (bad)
        fprintf(stderr, "%s: n %u in %u out %u sparsity %.2f: %d elements "
                "outside the bound (worst %.2f of it)\n", dlb_backend_name(be),
                n, in, out, sparsity, bad, worst);
    CHECK(bad == 0);
    ops->buffer_free(be, bx);
    ops->buffer_free(be, br);
    ops->buffer_free(be, bc);
    ops->buffer_free(be, bv);
    ops->buffer_free(be, bb);
    ops->buffer_free(be, by);
    free(c.rows);
    free(c.cols);
    free(c.vals);
    free(x);
    free(w);
    free(b);
    free(y);
}

static void bad_csr(struct dlb_backend *be)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(be);
    const int32_t rows[3] = {0, 1, 3}, cols[3] = {1, 2, 0};
    const float vals[3] = {1, 2, 3}, x[3] = {1, 1, 1};
    struct dlb_buffer *bx = put(be, DLB_F32, x, 3);
    struct dlb_buffer *br = put(be, DLB_S32, rows, 3);
    struct dlb_buffer *bc = put(be, DLB_S32, cols, 3);
    struct dlb_buffer *bv = put(be, DLB_F32, vals, 3);
    struct dlb_buffer *by = put(be, DLB_F32, NULL, 2);
    struct dlb_csr_linear_desc d = {1, 3, 2, 2}; /* row_ptr ends at 3 */
    CHECK(DLB_RUN(be, csr_linear_fwd, &d, bx, br, bc, bv, NULL, by) ==
          DLB_ERR_INTERNAL);
    d.nnz = 3; /* row 1 holds columns 2, 0: out of order */
    if (!strcmp(dlb_backend_name(be), "ref"))
        CHECK(DLB_RUN(be, csr_linear_fwd, &d, bx, br, bc, bv, NULL, by) ==
              DLB_ERR_INTERNAL);
    ops->buffer_free(be, bx);
    ops->buffer_free(be, br);
    ops->buffer_free(be, bc);
    ops->buffer_free(be, bv);
    ops->buffer_free(be, by);
}

static void all_cases(struct dlb_backend *be)
{
    static const struct {
        uint32_t n, in, out;
        double sparsity;
    } cases[] = {
        {1, 320, 50, 0.9}, {3, 17, 5, 0.5}, {16, 320, 50, 0.9},
        {64, 128, 10, 0.75}, {100, 33, 7, 0.0}, {256, 320, 50, 0.95},
        {37, 64, 40, 1.0}, {256, 1024, 256, 0.5},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int bias = 0; bias < 2; bias++)
            one_case(be, cases[k].n, cases[k].in, cases[k].out,
                     cases[k].sparsity, bias);
    bad_csr(be);
}

int main(void)
{
    const char *names[] = {"ref", "cpu"};
    int ran = 0;
    for (size_t k = 0; k < 2; k++) {
        struct dlb_backend *be = open_be(names[k]);
        if (!be)
            continue;
        fprintf(stderr, "backend %s\n", names[k]);
        all_cases(be);
        dlb_backend_close(be);
        ran++;
    }
    CHECK(ran > 0);
    return check_exit();
}
