/* A linear layer with CSR weights (API 1.1), an own kernel: Debian's
 * oneDNN 2.6 has no sparse primitives.
 *
 * y = x W^T + b with W [out][in] in CSR rows (one per output unit).
 * - One image: a dot product of each row's nonzeros with the input
 *   values they index, in four partial sums (a single chain of FMAs runs
 *   at their latency, not their rate).
 * - More images: x is transposed to xt [in][ld] (ld = the batch rounded
 *   up to 16), so that a nonzero w[o][c] multiplies a contiguous run of
 *   xt[c][...]: for a block of 16 rows and 64 images the sums stay in
 *   four vector registers per row, one broadcast and four FMAs per
 *   nonzero, no gathers; the block is transposed back in registers into
 *   y. Both transposes are 16 x 16 blocks (cpu_sparse_avx512.c), which
 *   matters: done element by element they cost more than the products at
 *   90% sparsity. One OpenMP region: the transpose, then (image tile,
 *   row block) pairs.
 * The AVX-512 pieces are chosen at run time; other CPUs run the plain
 * loops below. Sums run over each row's nonzeros in column order (the
 * single image: four interleaved partial sums), in fp32: the result
 * differs from the dense kernel's by the order of the sums only. */
#include "cpu.h"
#include "cpu_sparse.h"


static float dot1(const struct dlb_csr_job *a, uint32_t o, const float *x)
{
    const int32_t *c = a->cols;
    const float *v = a->vals;
    int32_t k = a->rows[o], end = a->rows[o + 1];
    float s0 = a->bias ? a->bias[o] : 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (; k + 4 <= end; k += 4) {
        s0 += v[k] * x[c[k]];
        s1 += v[k + 1] * x[c[k + 1]];
        s2 += v[k + 2] * x[c[k + 2]];
        s3 += v[k + 3] * x[c[k + 3]];
    }
    for (; k < end; k++)
        s0 += v[k] * x[c[k]];
    return (s0 + s1) + (s2 + s3);
}

static void one_image(const struct dlb_csr_job *a, const float *x, float *y)
{
    /* An if(0) parallel region still costs about half a microsecond,
     * as much as the whole product of a small layer: branch instead. */
    if ((size_t)a->rows[a->out] <= DLB_CPU_PAR_MIN) {
        for (uint32_t o = 0; o < a->out; o++)
            y[o] = dot1(a, o, x);
        return;
    }
    DLB_OMP("omp parallel for schedule(static)")
    for (uint32_t o = 0; o < a->out; o++)
        y[o] = dot1(a, o, x);
}

void dlb_csr_transpose_c(const struct dlb_csr_job *j, const float *x,
                         float *xt, uint32_t c0, size_t s0)
{
    for (uint32_t c = c0; c < c0 + 16 && c < j->in; c++)
        for (size_t s = s0; s < s0 + 16; s++)
            xt[(size_t)c * j->ld + s] = s < j->n ? x[s * j->in + c] : 0.0f;
}

void dlb_csr_block_c(const struct dlb_csr_job *j, const float *xt, float *y,
                     uint32_t o0, size_t t0, size_t w)
{
    for (uint32_t o = o0; o < o0 + 16 && o < j->out; o++) {
        float acc[DLB_CSR_TILE];
        float b = j->bias ? j->bias[o] : 0.0f;
        for (size_t i = 0; i < w; i++)
            acc[i] = b;
        for (int32_t k = j->rows[o]; k < j->rows[o + 1]; k++) {
            const float *p = xt + (size_t)j->cols[k] * j->ld + t0;
            float v = j->vals[k];
            for (size_t i = 0; i < w; i++)
                acc[i] += v * p[i];
        }
        for (size_t i = 0; i < w && t0 + i < j->n; i++)
            y[(t0 + i) * j->out + o] = acc[i];
    }
}

struct tiled_job {
    const struct dlb_csr_job *a;
    const float *x;
    float *xt, *y;
    dlb_csr_transpose_fn tr;
    dlb_csr_block_fn blk;
    size_t c_blocks, s_blocks, tiles, r_blocks;
};

static void transpose_part(const struct tiled_job *t, size_t k)
{
    size_t cb = k / t->s_blocks, sb = k % t->s_blocks;
    t->tr(t->a, t->x, t->xt, (uint32_t)(cb * 16), sb * 16);
}

static void block_part(const struct tiled_job *t, size_t k)
{
    size_t t0 = k / t->r_blocks * DLB_CSR_TILE, rb = k % t->r_blocks;
    size_t w = t->a->ld - t0 < DLB_CSR_TILE ? t->a->ld - t0 : DLB_CSR_TILE;
    t->blk(t->a, t->xt, t->y, (uint32_t)(rb * 16), t0, w);
}

static void tiled(const struct dlb_csr_job *a, const float *x, float *xt,
                  float *y)
{
    int avx = dlb_csr_have_avx512();
    struct tiled_job t = {
        a, x, xt, y, avx ? dlb_csr_transpose_avx512 : dlb_csr_transpose_c,
        avx ? dlb_csr_block_avx512 : dlb_csr_block_c, (a->in + 15) / 16,
        a->ld / 16, (a->ld + DLB_CSR_TILE - 1) / DLB_CSR_TILE,
        (a->out + 15) / 16};
    size_t n_tr = t.c_blocks * t.s_blocks, n_blk = t.tiles * t.r_blocks;
    /* Below this many multiply-adds one thread beats a parallel region
     * (and an if(0) region costs as much as the work: branch instead). */
    if ((size_t)a->rows[a->out] * a->n <= DLB_CPU_PAR_MIN) {
        for (size_t k = 0; k < n_tr; k++)
            transpose_part(&t, k);
        for (size_t k = 0; k < n_blk; k++)
            block_part(&t, k);
        return;
    }
    DLB_OMP("omp parallel")
    {
        DLB_OMP("omp for schedule(static)")
        for (size_t k = 0; k < n_tr; k++)
            transpose_part(&t, k);
        DLB_OMP("omp for schedule(static)")
        for (size_t k = 0; k < n_blk; k++)
            block_part(&t, k);
    }
}

static dlb_status check_f32(struct dlb_backend *be, const char *arg,
                            const struct dlb_buffer *b, size_t count)
{
    dlb_status s = dlb_cpu_check_float(be, "csr_linear_fwd", arg, b, count);
    if (s == DLB_OK && b->dtype != DLB_F32)
        return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED, "cpu csr_linear_fwd: "
                                "%s is bf16; the sparse kernel computes in "
                                "f32", arg);
    return s;
}

dlb_status dlb_cpu_csr_linear_fwd(struct dlb_backend *be,
                                  const struct dlb_csr_linear_desc *d,
                                  const struct dlb_buffer *x,
                                  const struct dlb_buffer *row_ptr,
                                  const struct dlb_buffer *col,
                                  const struct dlb_buffer *val,
                                  const struct dlb_buffer *b,
                                  struct dlb_buffer *y)
{
    const char *op = "csr_linear_fwd";
    dlb_status s;
    if ((s = check_f32(be, "x", x, (size_t)d->n * d->in)) ||
        (s = check_f32(be, "val", val, d->nnz)) ||
        (b && (s = check_f32(be, "b", b, d->out))) ||
        (s = check_f32(be, "y", y, (size_t)d->n * d->out)) ||
        (s = dlb_cpu_check_s32(be, op, "row_ptr", row_ptr, (size_t)d->out + 1)) ||
        (s = dlb_cpu_check_s32(be, op, "col", col, d->nnz)) ||
        (s = DLB_CPU_PLAIN(be, x, row_ptr, col, val, b)) ||
        (s = dlb_cpu_set_layout(be, y, NULL)))
        return s;
    struct dlb_csr_job a = {row_ptr->data, col->data, val->data,
                            b ? b->data : NULL, d->n, d->in, d->out,
                            ((size_t)d->n + 15) / 16 * 16};
    /* The core builds its CSR forms itself; the ends are checked here
     * since a wrong count would read past val (ref checks every entry). */
    if (a.rows[0] != 0 || a.rows[d->out] != (int32_t)d->nnz)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "cpu %s: row_ptr runs "
                                "from %d to %d, not 0 to %u", op,
                                (int)a.rows[0], (int)a.rows[d->out], d->nnz);
    if (d->n == 1) {
        one_image(&a, x->data, y->data);
    } else if (d->n > 1) {
        /* Slot 0 is dlb_cpu_io_run's, which this op never calls. */
        float *xt = dlb_cpu_scratch(be, 0, d->in * a.ld * sizeof *xt);
        if (!xt)
            return DLB_ERR_NOMEM;
        tiled(&a, x->data, xt, y->data);
    }
    dlb_cpu_written(y);
    return DLB_OK;
}
