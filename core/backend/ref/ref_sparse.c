/* A linear layer with CSR weights (API 1.1): plain loops in double, and a
 * full check of the CSR structure, since this is the oracle the other
 * backends' kernels are tested against. */
#include "ref.h"

#include <stdlib.h>

/* row_ptr starts at 0, never decreases and ends at nnz; every column is
 * below `in` and ascends within its row. */
static dlb_status check_csr(struct dlb_backend *be,
                            const struct dlb_csr_linear_desc *d,
                            const int32_t *rows, const int32_t *cols)
{
    if (rows[0] != 0 || rows[d->out] != (int32_t)d->nnz)
        return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref csr_linear_fwd: "
                                "row_ptr runs from %d to %d, not 0 to %u",
                                (int)rows[0], (int)rows[d->out], d->nnz);
    for (uint32_t o = 0; o < d->out; o++) {
        if (rows[o + 1] < rows[o])
            return dlb_backend_fail(be, DLB_ERR_INTERNAL, "ref csr_linear_fwd: "
                                    "row_ptr decreases at row %u", o);
        for (int32_t k = rows[o]; k < rows[o + 1]; k++)
            if (cols[k] < 0 || (uint32_t)cols[k] >= d->in ||
                (k > rows[o] && cols[k] <= cols[k - 1]))
                return dlb_backend_fail(be, DLB_ERR_INTERNAL,
                                        "ref csr_linear_fwd: column %d of row "
                                        "%u is out of order or not below %u",
                                        (int)cols[k], o, d->in);
    }
    return DLB_OK;
}

dlb_status dlb_ref_csr_linear_fwd(struct dlb_backend *be,
                                  const struct dlb_csr_linear_desc *d,
                                  const struct dlb_buffer *x,
                                  const struct dlb_buffer *row_ptr,
                                  const struct dlb_buffer *col,
                                  const struct dlb_buffer *val,
                                  const struct dlb_buffer *b,
                                  struct dlb_buffer *y)
{
    const char *op = "csr_linear_fwd";
    double *t[4] = { 0 };
    dlb_status s;
    if ((s = dlb_ref_check_s32(be, op, "row_ptr", row_ptr, (size_t)d->out + 1)) ||
        (s = dlb_ref_check_s32(be, op, "col", col, d->nnz)))
        return s;
    const int32_t *rows = row_ptr->data, *cols = col->data;
    if ((s = check_csr(be, d, rows, cols)) ||
        (s = dlb_ref_get(be, op, "x", x, (size_t)d->n * d->in, &t[0])) ||
        (s = dlb_ref_get(be, op, "val", val, d->nnz, &t[1])) ||
        (b && (s = dlb_ref_get(be, op, "b", b, d->out, &t[2]))) ||
        (s = dlb_ref_new(be, op, "y", y, (size_t)d->n * d->out, &t[3])))
        goto out;
    for (uint32_t n = 0; n < d->n; n++)
        for (uint32_t o = 0; o < d->out; o++) {
            double acc = b ? t[2][o] : 0.0;
            for (int32_t k = rows[o]; k < rows[o + 1]; k++)
                acc += t[0][(size_t)n * d->in + (uint32_t)cols[k]] * t[1][k];
            t[3][(size_t)n * d->out + o] = acc;
        }
    dlb_ref_put(y, t[3], (size_t)d->n * d->out);
out:
    dlb_ref_free_all(t, 4);
    return s;
}
