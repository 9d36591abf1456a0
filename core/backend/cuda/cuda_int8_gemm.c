/* The int8 GEMM of the cuda backend: cuBLASLt with s8 inputs, int32
 * accumulation (CUBLAS_COMPUTE_32I) and an int32 result, so that the
 * requantisation stays the module's own (cuda_int8.cu) and matches ref's
 * float steps; the dp4a kernel where cuBLASLt cannot.
 *
 * cuBLASLt's IMMA kernels on plain (not COL32) layouts take only the "TN"
 * form: A transposed, B not, m, k and every leading dimension a multiple
 * of 4, pointers 4-byte aligned. The callers' operands have that form by
 * construction: the weights [out][in] row-major are A (k x m, column-
 * major) transposed, and the activations [n][in] are B (k x n). A shape
 * outside those rules, a heuristic that finds no algorithm, or a matmul
 * that answers NOT_SUPPORTED goes to the dp4a kernel, once decided per
 * shape; an int8 layer never fails for its shape. */
#include "cuda_int8.h"
#include "cuda_int8_kernels.h"

#include <stdlib.h>

struct dlb_cuda_igemm {
    uint32_t m, k, lda, ldb, ldc;
    size_t n;
    int lt;                      /* 1: cuBLASLt; 0: dp4a */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    struct dlb_cuda_igemm *next;
};

static void plan_free(struct dlb_cuda_igemm *g)
{
    if (g->a) cublasLtMatrixLayoutDestroy(g->a);
    if (g->b) cublasLtMatrixLayoutDestroy(g->b);
    if (g->c) cublasLtMatrixLayoutDestroy(g->c);
    if (g->desc) cublasLtMatmulDescDestroy(g->desc);
    free(g);
}

void dlb_cuda_int8_cache_free(struct dlb_cuda *cu)
{
    for (struct dlb_cuda_igemm *g = cu->igemms, *next; g; g = next) {
        next = g->next;
        plan_free(g);
    }
    cu->igemms = NULL;
}

static int imma_form(uint32_t m, uint32_t k, uint32_t lda, uint32_t ldb,
                     uint32_t ldc)
{
    return m % 4 == 0 && k % 4 == 0 && lda % 4 == 0 && ldb % 4 == 0 &&
           ldc % 4 == 0;
}

/* Descriptors and the heuristic's first algorithm; *found 0 when it has
 * none. Statuses other than success are the caller's to report. */
static cublasStatus_t lt_plan(struct dlb_cuda *cu, struct dlb_cuda_igemm *g,
                              int *found)
{
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    uint64_t ws = DLB_CUDA_LT_WORKSPACE;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res;
    cublasStatus_t st;
    *found = 0;
    if ((st = cublasLtMatmulDescCreate(&g->desc, CUBLAS_COMPUTE_32I,
                                       CUDA_R_32I)) ||
        (st = cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                             &ta, sizeof ta)) ||
        (st = cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                             &tb, sizeof tb)) ||
        /* stored: A k x m (op T: m x k), B k x n, C m x n */
        (st = cublasLtMatrixLayoutCreate(&g->a, CUDA_R_8I, g->k, g->m,
                                         (int64_t)g->lda)) ||
        (st = cublasLtMatrixLayoutCreate(&g->b, CUDA_R_8I, g->k, g->n,
                                         (int64_t)g->ldb)) ||
        (st = cublasLtMatrixLayoutCreate(&g->c, CUDA_R_32I, g->m, g->n,
                                         (int64_t)g->ldc)) ||
        (st = cublasLtMatmulPreferenceCreate(&pref)) ||
        (st = cublasLtMatmulPreferenceSetAttribute(
             pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) ||
        (st = cublasLtMatmulAlgoGetHeuristic(cu->lt, g->desc, g->a, g->b, g->c,
                                             g->c, pref, 1, &res, found)))
        goto out;
    if (*found > 0)
        g->algo = res.algo;
out:
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    return st;
}

static dlb_status find_plan(struct dlb_backend *be, const char *op, uint32_t m,
                            size_t n, uint32_t k, uint32_t lda, uint32_t ldb,
                            uint32_t ldc, struct dlb_cuda_igemm **out)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    struct dlb_cuda_igemm *g;
    for (g = cu->igemms; g; g = g->next)
        if (g->m == m && g->n == n && g->k == k && g->lda == lda &&
            g->ldb == ldb && g->ldc == ldc) {
            *out = g;
            return DLB_OK;
        }
    if (!(g = calloc(1, sizeof *g)))
        return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda %s: out of host memory",
                             op);
    *g = (struct dlb_cuda_igemm){ .m = m, .n = n, .k = k, .lda = lda,
                                  .ldb = ldb, .ldc = ldc };
    if (imma_form(m, k, lda, ldb, ldc)) {
        int found = 0;
        cublasStatus_t st = lt_plan(cu, g, &found);
        /* NOT_SUPPORTED from the heuristic is an answer, not a failure */
        if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED) {
            plan_free(g);
            return dlb_cuda_lt_check(be, st, op, "int8 matmul plan");
        }
        g->lt = st == CUBLAS_STATUS_SUCCESS && found > 0;
    }
    g->next = cu->igemms;
    cu->igemms = g;
    *out = g;
    return DLB_OK;
}

static int aligned4(const void *p)
{
    return ((uintptr_t)p & 3u) == 0;
}

dlb_status dlb_cuda_int8_gemm(struct dlb_backend *be, const char *op,
                              uint32_t m, size_t n, uint32_t k,
                              const int8_t *a, uint32_t lda, const int8_t *b,
                              uint32_t ldb, int32_t *c, uint32_t ldc)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    const int32_t one = 1, zero = 0;
    struct dlb_cuda_igemm *g = NULL;
    dlb_status s = find_plan(be, op, m, n, k, lda, ldb, ldc, &g);
    if (s != DLB_OK)
        return s;
    if (g->lt && aligned4(a) && aligned4(b) && aligned4(c)) {
        cublasStatus_t st = cublasLtMatmul(cu->lt, g->desc, &one, a, g->a, b,
                                           g->b, &zero, c, g->c, c, g->c,
                                           &g->algo, cu->lt_ws,
                                           DLB_CUDA_LT_WORKSPACE, cu->stream);
        if (st != CUBLAS_STATUS_NOT_SUPPORTED)
            return dlb_cuda_lt_check(be, st, op, "int8 cublasLtMatmul");
        g->lt = 0; /* checked before any work is enqueued: fall back */
    }
    return dlb_cuda_check(be, dlb_cuda_k_int8_gemm_dp4a(cu->stream, m, n, k, a,
                                                        lda, b, ldb, c, ldc),
                          op, "int8 dp4a GEMM");
}
