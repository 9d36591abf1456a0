/* Where the CSR linear kernel wins: dense linear_fwd against
 * csr_linear_fwd on one backend (cpu by default; argv[1] names another),
 * for LeNet's fc1 (320 -> 50), vgg-small's head (128 -> 10) and a large
 * layer (1024 -> 1024), at batch 1, 4, 64 and 256 and sparsity 50 to 95%
 * (random zeros). Each cell is the fastest of 11 timed loops of calls per
 * kernel, the two kernels' loops in turns: on a shared machine the
 * fastest loop is the one least disturbed, and a microsecond kernel's
 * median follows the scheduler more than the kernel.
 * `bench_sparse_linear [BACKEND [THREADS]]` runs the table (THREADS 0 =
 * all cores), `bench_sparse_linear BACKEND BATCH IN OUT SPARSITY
 * [THREADS]` one cell.
 * Built by `make bench`, not run as a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/op_call.h"
#include "util/rng.h"

#define RUNS 11

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct dlb_buffer *put(struct dlb_backend *be, enum dlb_dtype t,
                              const void *host, size_t count)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(be);
    struct dlb_buffer *b = NULL;
    if (ops->buffer_alloc(be, t, count ? count : 1, &b) != DLB_OK)
        exit(1);
    if (host && count)
        ops->copy_from_host(be, b, 0, host, count * 4);
    return b;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct args {
    struct dlb_backend *be;
    struct dlb_linear_desc ld;
    struct dlb_csr_linear_desc cd;
    struct dlb_buffer *x, *w, *b, *y, *rows, *cols, *vals;
};

static dlb_status call(const struct args *a, int sparse)
{
    return sparse ? DLB_RUN(a->be, csr_linear_fwd, &(a->cd), a->x, a->rows,
                            a->cols, a->vals, a->b, a->y)
                  : DLB_RUN(a->be, linear_fwd, &(a->ld), a->x, a->w, a->b,
                            a->y);
}

/* Seconds per call of one timed loop. */
static double loop(const struct args *a, int sparse, int reps)
{
    double t0 = now_s();
    for (int k = 0; k < reps; k++)
        call(a, sparse);
    DLB_BE_CALL0(a->be, synchronize);
    return (now_s() - t0) / reps;
}

/* The fastest loop's seconds per call for dense (td) and CSR (ts), their
 * loops run in turns so that load from elsewhere hits both alike. */
static void time_both(const struct args *a, double *td, double *ts)
{
    double d[RUNS], s[RUNS];
    double flop = 2.0 * a->ld.n * a->ld.in * a->ld.out;
    int reps = flop < 1e6 ? 2000 : flop < 1e8 ? 100 : 10;
    call(a, 0);
    call(a, 1);
    for (int r = 0; r < RUNS; r++) {
        d[r] = loop(a, 0, reps);
        s[r] = loop(a, 1, reps);
    }
    qsort(d, RUNS, sizeof *d, cmp);
    qsort(s, RUNS, sizeof *s, cmp);
    *td = d[0];
    *ts = s[0];
}

static void cell(struct dlb_backend *be, uint32_t n, uint32_t in, uint32_t out,
                 double sparsity)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(be);
    struct dlb_rng r;
    dlb_rng_seed(&r, 3);
    size_t nw = (size_t)out * in;
    float *x = malloc((size_t)n * in * sizeof *x), *w = malloc(nw * sizeof *w);
    float *b = malloc(out * sizeof *b), *vals = malloc(nw * sizeof *vals);
    int32_t *rows = malloc((out + 1) * sizeof *rows);
    int32_t *cols = malloc(nw * sizeof *cols);
    uint32_t nnz = 0;
    for (size_t k = 0; k < (size_t)n * in; k++)
        x[k] = (float)dlb_rng_normal(&r);
    for (size_t k = 0; k < nw; k++)
        w[k] = dlb_rng_double(&r) < sparsity ? 0.0f : (float)dlb_rng_normal(&r);
    for (uint32_t o = 0; o < out; o++) {
        b[o] = 0.1f;
        rows[o] = (int32_t)nnz;
        for (uint32_t i = 0; i < in; i++)
            if (w[(size_t)o * in + i] != 0.0f) {
                cols[nnz] = (int32_t)i;
                vals[nnz++] = w[(size_t)o * in + i];
            }
    }
    rows[out] = (int32_t)nnz;
    struct args a = {be, {n, in, out}, {n, in, out, nnz},
                     put(be, DLB_F32, x, (size_t)n * in), put(be, DLB_F32, w, nw),
                     put(be, DLB_F32, b, out), put(be, DLB_F32, NULL,
                                                   (size_t)n * out),
                     put(be, DLB_S32, rows, out + 1u), put(be, DLB_S32, cols, nnz),
                     put(be, DLB_F32, vals, nnz)};
    double td, ts;
    time_both(&a, &td, &ts);
    printf("%5u %5u %5u %6.2f %12.2f %12.2f %8.2fx  %s\n", n, in, out, sparsity,
           td * 1e6, ts * 1e6, td / ts, ts < td ? "CSR" : "dense");
    struct dlb_buffer *bufs[] = {a.x, a.w, a.b, a.y, a.rows, a.cols, a.vals};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        ops->buffer_free(be, bufs[k]);
    free(x);
    free(w);
    free(b);
    free(vals);
    free(rows);
    free(cols);
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "cpu";
    int cell_args = argc >= 6;
    struct dlb_backend_config cfg = {
        .threads = argc == 3 ? atoi(argv[2]) : argc == 7 ? atoi(argv[6]) : 0};
    struct dlb_backend *be = NULL;
    char why[256];
    if (dlb_backend_open(name, &cfg, &be, why, sizeof why) != DLB_OK) {
        fprintf(stderr, "backend %s: %s\n", name, why);
        return 77;
    }
    static const uint32_t shapes[][2] = {{320, 50}, {128, 10}, {1024, 1024}};
    static const uint32_t batches[] = {1, 4, 64, 256};
    static const double levels[] = {0.5, 0.75, 0.9, 0.95};
    printf("%5s %5s %5s %6s %12s %12s %9s  %s\n", "batch", "in", "out", "zeros",
           "dense_us", "csr_us", "speedup", "faster");
    if (cell_args) { /* one cell: BACKEND BATCH IN OUT SPARSITY */
        cell(be, (uint32_t)atoi(argv[2]), (uint32_t)atoi(argv[3]),
             (uint32_t)atoi(argv[4]), atof(argv[5]));
        dlb_backend_close(be);
        return 0;
    }
    for (size_t s = 0; s < 3; s++)
        for (size_t nb = 0; nb < 4; nb++)
            for (size_t l = 0; l < 4; l++)
                cell(be, batches[nb], shapes[s][0], shapes[s][1], levels[l]);
    dlb_backend_close(be);
    return 0;
}
