/* A linear layer with CSR weights (backend.h, API 1.1) through cuSPARSE:
 * y [n][out] = x [n][in] W^T + b is, column-major, y^T (out x n) =
 * W (out x in, CSR) * x^T (in x n, leading dimension in), which is
 * cusparseSpMM with neither operand transposed: deterministic (cuSPARSE
 * says results may vary from run to run only with A transposed), f32 in
 * and out with f32 sums, so it equals linear_fwd's result up to the order
 * of the sums. The bias is added by the module's own kernel.
 *
 * The weights of an inference layer do not change between calls, so the
 * sparse matrix descriptor is kept per weight (the three buffers, their
 * addresses and the shape), with the workspace size of the last batch
 * size; a descriptor holds pointers only, so one whose buffers were
 * replaced by others at the same addresses is still right. The structure
 * is checked on the device the first time a descriptor is made (the
 * core builds its CSR forms itself; ref checks every call): a broken one
 * is reported at the next wait. The cuSPARSE handle is made on the first
 * call, on the backend's stream. */
#include "cuda.h"
#include "cuda_kernels.h"
#include "cuda_sparse.h"
#include "../dtype.h"

#include <cusparse.h>
#include <stdlib.h>

/* Descriptors kept at most; the oldest goes first beyond that (a model
 * has a few sparse layers). */
#define DLB_CUDA_CSR_KEEP 32

struct dlb_cuda_csr {
    const struct dlb_buffer *row_ptr, *col, *val;
    const void *rows, *cols, *vals;
    uint32_t in, out, nnz;
    cusparseConstSpMatDescr_t a;
    uint32_t ws_n;      /* the batch size ws_bytes is for; 0 = none yet */
    size_t ws_bytes;
    struct dlb_cuda_csr *next;
};

struct dlb_cuda_sparse {
    cusparseHandle_t h;
    struct dlb_cuda_csr *list; /* newest first */
    unsigned count;
};

static void csr_free(struct dlb_cuda_csr *c)
{
    if (c->a)
        cusparseDestroySpMat(c->a);
    free(c);
}

void dlb_cuda_sparse_free(struct dlb_cuda *cu)
{
    struct dlb_cuda_sparse *sp = cu->sparse;
    if (!sp)
        return;
    for (struct dlb_cuda_csr *c = sp->list, *next; c; c = next) {
        next = c->next;
        csr_free(c);
    }
    if (sp->h)
        cusparseDestroy(sp->h);
    free(sp);
    cu->sparse = NULL;
}

static dlb_status sp_check(struct dlb_backend *be, cusparseStatus_t st,
                           const char *what)
{
    if (st == CUSPARSE_STATUS_SUCCESS)
        return DLB_OK;
    return dlb_cuda_fail(be, st == CUSPARSE_STATUS_ALLOC_FAILED
                                 ? DLB_ERR_NOMEM
                                 : st == CUSPARSE_STATUS_NOT_SUPPORTED
                                       ? DLB_ERR_UNSUPPORTED
                                       : DLB_ERR_RUNTIME,
                         "cuda csr_linear_fwd: %s: %s", what,
                         cusparseGetErrorString(st));
}

static dlb_status handle(struct dlb_backend *be, struct dlb_cuda_sparse **out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    dlb_status s;
    if (cu->sparse) {
        *out = cu->sparse;
        return DLB_OK;
    }
    struct dlb_cuda_sparse *sp = calloc(1, sizeof *sp);
    if (!sp)
        return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda csr_linear_fwd: out of "
                             "host memory");
    if ((s = sp_check(be, cusparseCreate(&sp->h), "cusparseCreate")) ||
        (s = sp_check(be, cusparseSetStream(sp->h, cu->stream),
                      "cusparseSetStream"))) {
        if (sp->h)
            cusparseDestroy(sp->h);
        free(sp);
        return s;
    }
    cu->sparse = sp;
    *out = sp;
    return DLB_OK;
}

/* The kept descriptor of these weights, or a new one (checked). */
static dlb_status find_csr(struct dlb_backend *be, struct dlb_cuda_sparse *sp,
                           const struct dlb_csr_linear_desc *d,
                           const struct dlb_buffer *row_ptr,
                           const struct dlb_buffer *col,
                           const struct dlb_buffer *val,
                           struct dlb_cuda_csr **out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct dlb_cuda_csr *c, **prev;
    dlb_status s;
    for (c = sp->list; c; c = c->next)
        if (c->row_ptr == row_ptr && c->col == col && c->val == val &&
            c->rows == row_ptr->data && c->cols == col->data &&
            c->vals == val->data && c->in == d->in && c->out == d->out &&
            c->nnz == d->nnz) {
            *out = c;
            return DLB_OK;
        }
    if (sp->count >= DLB_CUDA_CSR_KEEP) { /* drop the oldest (the last) */
        for (prev = &sp->list; (*prev)->next; prev = &(*prev)->next)
            ;
        csr_free(*prev);
        *prev = NULL;
        sp->count--;
    }
    if (!(c = calloc(1, sizeof *c)))
        return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda csr_linear_fwd: out of "
                             "host memory");
    *c = (struct dlb_cuda_csr){ row_ptr, col, val, row_ptr->data, col->data,
                                val->data, d->in, d->out, d->nnz, NULL, 0, 0,
                                NULL };
    if ((s = dlb_cuda_check(be, dlb_cuda_k_csr_check(cu->stream, d->out, d->in,
                                                     d->nnz, row_ptr->data,
                                                     col->data, cu->kerr_dev),
                            "csr_linear_fwd", "CSR check")) ||
        (s = sp_check(be, cusparseCreateConstCsr(
                              &c->a, d->out, d->in, d->nnz, row_ptr->data,
                              col->data, val->data, CUSPARSE_INDEX_32I,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                              CUDA_R_32F),
                      "cusparseCreateConstCsr"))) {
        csr_free(c);
        return s;
    }
    c->next = sp->list;
    sp->list = c;
    sp->count++;
    *out = c;
    return DLB_OK;
}

static dlb_status check_f32(struct dlb_backend *be, const char *arg,
                            const struct dlb_buffer *b, size_t count)
{
    if (!b || b->count < count)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda csr_linear_fwd: %s "
                             "must hold %zu elements", arg, count);
    if (b->dtype != DLB_F32)
        return dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda csr_linear_fwd: "
                             "%s is %s; sparse layers compute in f32", arg,
                             dlb_dtype_name(b->dtype));
    return DLB_OK;
}

/* y^T = W x^T on cuSPARSE, beta 0 (y is overwritten). */
static dlb_status spmm(struct dlb_backend *be, struct dlb_cuda_sparse *sp,
                       struct dlb_cuda_csr *c, uint32_t n,
                       const struct dlb_buffer *x, struct dlb_buffer *y)
{
    const float one = 1.0f, zero = 0.0f;
    const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseSpMMAlg_t alg = CUSPARSE_SPMM_ALG_DEFAULT;
    cusparseConstDnMatDescr_t b = NULL;
    cusparseDnMatDescr_t yd = NULL;
    void *ws = NULL;
    dlb_status s;
    if ((s = sp_check(be, cusparseCreateConstDnMat(&b, c->in, n, c->in,
                                                   x->data, CUDA_R_32F,
                                                   CUSPARSE_ORDER_COL),
                      "cusparseCreateConstDnMat")) ||
        (s = sp_check(be, cusparseCreateDnMat(&yd, c->out, n, c->out, y->data,
                                              CUDA_R_32F, CUSPARSE_ORDER_COL),
                      "cusparseCreateDnMat")))
        goto out;
    if (c->ws_n != n) {
        if ((s = sp_check(be, cusparseSpMM_bufferSize(sp->h, nt, nt, &one,
                                                      c->a, b, &zero, yd,
                                                      CUDA_R_32F, alg,
                                                      &c->ws_bytes),
                          "cusparseSpMM_bufferSize")))
            goto out;
        c->ws_n = n;
    }
    if (c->ws_bytes && (s = dlb_cuda_scratch(be, 0, c->ws_bytes, &ws)))
        goto out;
    s = sp_check(be, cusparseSpMM(sp->h, nt, nt, &one, c->a, b, &zero, yd,
                                  CUDA_R_32F, alg, ws),
                 "cusparseSpMM");
out:
    if (b)
        cusparseDestroyDnMat(b);
    if (yd)
        cusparseDestroyDnMat(yd);
    return s;
}

dlb_status dlb_cuda_csr_linear_fwd(struct dlb_backend *be,
                                   const struct dlb_csr_linear_desc *d,
                                   const struct dlb_buffer *x,
                                   const struct dlb_buffer *row_ptr,
                                   const struct dlb_buffer *col,
                                   const struct dlb_buffer *val,
                                   const struct dlb_buffer *b,
                                   struct dlb_buffer *y)
{
    const char *op = "csr_linear_fwd";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    size_t yn = (size_t)d->n * d->out;
    struct dlb_cuda_sparse *sp = NULL;
    struct dlb_cuda_csr *c = NULL;
    dlb_status s;
    if ((s = check_f32(be, "x", x, (size_t)d->n * d->in)) ||
        (s = check_f32(be, "val", val, d->nnz)) ||
        (b && (s = check_f32(be, "b", b, d->out))) ||
        (s = check_f32(be, "y", y, yn)) ||
        (s = dlb_cuda_check_s32(be, op, "row_ptr", row_ptr,
                                (size_t)d->out + 1)) ||
        (s = dlb_cuda_check_s32(be, op, "col", col, d->nnz)))
        return s;
    if (!d->n || !d->out)
        return DLB_OK;
    if (d->nnz == 0 || d->in == 0) {
        /* No products: cuSPARSE is not asked about an empty matrix. */
        s = dlb_cuda_check(be, cudaMemsetAsync(y->data, 0, yn * sizeof(float),
                                               cu->stream),
                           op, "cudaMemsetAsync");
    } else if ((s = handle(be, &sp)) == DLB_OK &&
               (s = find_csr(be, sp, d, row_ptr, col, val, &c)) == DLB_OK) {
        s = spmm(be, sp, c, d->n, x, y);
    }
    if (s != DLB_OK || !b)
        return s;
    return dlb_cuda_check(be, dlb_cuda_k_add_bias(cu->stream, d->n, d->out, 1,
                                                  y->data, DLB_F32, b->data,
                                                  DLB_F32),
                          op, "bias");
}
