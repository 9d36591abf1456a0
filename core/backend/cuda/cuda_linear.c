/* Linear layers through cuBLASLt, f32 accumulation for every storage type
 * (TF32 for f32 only when DLBENCH_CUDA_TF32=1). One plan per GEMM shape
 * and type: the descriptors and the heuristic's algorithm, kept for the
 * backend's life. The bias is added and reduced by the module's own
 * kernels, so a bias of any type needs no staging.
 *
 * cuBLASLt is column-major; a row-major [r][c] matrix is its c x r
 * transpose with leading dimension c. With that, for x [n][in],
 * w [out][in], y [n][out]:
 *   y^T  (out x n)  = op_T(w: in x out) * x: in x n
 *   dx^T (in x n)   = w: in x out * dy: out x n
 *   dw^T (in x out) = x: in x n * op_T(dy: out x n)  */
#include "cuda.h"
#include "cuda_kernels.h"

#include <stdlib.h>

struct dlb_cuda_gemm {
    enum dlb_dtype t;
    int ta, tb;
    uint64_t m, n, k;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, d;
    cublasLtMatmulAlgo_t algo;
    struct dlb_cuda_gemm *next;
};

static void gemm_free(struct dlb_cuda_gemm *g)
{
    if (g->a) cublasLtMatrixLayoutDestroy(g->a);
    if (g->b) cublasLtMatrixLayoutDestroy(g->b);
    if (g->d) cublasLtMatrixLayoutDestroy(g->d);
    if (g->desc) cublasLtMatmulDescDestroy(g->desc);
    free(g);
}

void dlb_cuda_gemm_cache_free(struct dlb_cuda *cu)
{
    for (struct dlb_cuda_gemm *g = cu->gemms, *next; g; g = next) {
        next = g->next;
        gemm_free(g);
    }
    cu->gemms = NULL;
}

static cudaDataType_t lt_type(enum dlb_dtype t)
{
    return t == DLB_F16 ? CUDA_R_16F : t == DLB_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

static cublasStatus_t plan(struct dlb_cuda *cu, struct dlb_cuda_gemm *g,
                           int *found)
{
    cublasComputeType_t ct = g->t == DLB_F32 && cu->tf32
                                 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                 : CUBLAS_COMPUTE_32F;
    cudaDataType_t dt = lt_type(g->t);
    cublasOperation_t ta = g->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = g->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    uint64_t ws = DLB_CUDA_LT_WORKSPACE;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res;
    cublasStatus_t st;
    *found = 0;
    if ((st = cublasLtMatmulDescCreate(&g->desc, ct, CUDA_R_32F)) ||
        (st = cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                             &ta, sizeof ta)) ||
        (st = cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                             &tb, sizeof tb)) ||
        /* stored shapes: A is m x k (k x m transposed), B k x n (n x k) */
        (st = cublasLtMatrixLayoutCreate(&g->a, dt, g->ta ? g->k : g->m,
                                         g->ta ? g->m : g->k,
                                         (int64_t)(g->ta ? g->k : g->m))) ||
        (st = cublasLtMatrixLayoutCreate(&g->b, dt, g->tb ? g->n : g->k,
                                         g->tb ? g->k : g->n,
                                         (int64_t)(g->tb ? g->n : g->k))) ||
        (st = cublasLtMatrixLayoutCreate(&g->d, dt, g->m, g->n, (int64_t)g->m)) ||
        (st = cublasLtMatmulPreferenceCreate(&pref)) ||
        (st = cublasLtMatmulPreferenceSetAttribute(
             pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) ||
        (st = cublasLtMatmulAlgoGetHeuristic(cu->lt, g->desc, g->a, g->b, g->d,
                                             g->d, pref, 1, &res, found)))
        goto out;
    if (*found > 0)
        g->algo = res.algo;
out:
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    return st;
}

/* D (m x n) = op(A) * op(B), column-major, all in type t. */
static dlb_status gemm(struct dlb_backend *be, const char *op, enum dlb_dtype t,
                       int ta, int tb, uint64_t m, uint64_t n, uint64_t k,
                       const void *a, const void *b, void *d)
{
    struct dlb_cuda *cu = dlb_cuda_of(be);
    const float one = 1.0f, zero = 0.0f;
    struct dlb_cuda_gemm *g;
    dlb_status s;
    for (g = cu->gemms; g; g = g->next)
        if (g->t == t && g->ta == ta && g->tb == tb && g->m == m && g->n == n &&
            g->k == k)
            break;
    if (!g) {
        int found = 0;
        if (!(g = calloc(1, sizeof *g)))
            return dlb_cuda_fail(be, DLB_ERR_NOMEM, "cuda %s: out of host "
                                 "memory", op);
        *g = (struct dlb_cuda_gemm){ .t = t, .ta = ta, .tb = tb, .m = m,
                                     .n = n, .k = k };
        s = dlb_cuda_lt_check(be, plan(cu, g, &found), op, "matmul plan");
        if (s == DLB_OK && found < 1)
            s = dlb_cuda_fail(be, DLB_ERR_UNSUPPORTED, "cuda %s: cuBLASLt has "
                              "no algorithm for a %llux%llux%llu GEMM in %s",
                              op, (unsigned long long)m, (unsigned long long)n,
                              (unsigned long long)k,
                              t == DLB_F32 ? "f32" : t == DLB_F16 ? "f16" : "bf16");
        if (s != DLB_OK) {
            gemm_free(g);
            return s;
        }
        g->next = cu->gemms;
        cu->gemms = g;
    }
    return dlb_cuda_lt_check(be, cublasLtMatmul(cu->lt, g->desc, &one, a, g->a,
                                                b, g->b, &zero, d, g->d, d,
                                                g->d, &g->algo, cu->lt_ws,
                                                DLB_CUDA_LT_WORKSPACE,
                                                cu->stream),
                             op, "cublasLtMatmul");
}

static dlb_status check_sizes(struct dlb_backend *be, const char *op,
                              const struct dlb_linear_desc *d)
{
    dlb_status s;
    if ((s = dlb_cuda_check_int(be, op, (size_t)d->n * d->in)) ||
        (s = dlb_cuda_check_int(be, op, (size_t)d->n * d->out)) ||
        (s = dlb_cuda_check_int(be, op, (size_t)d->out * d->in)))
        return s;
    if (!d->n || !d->in || !d->out)
        return dlb_cuda_fail(be, DLB_ERR_INTERNAL, "cuda %s: empty shape "
                             "%ux%u -> %u", op, d->n, d->in, d->out);
    return DLB_OK;
}

dlb_status dlb_cuda_linear_fwd(struct dlb_backend *be,
                               const struct dlb_linear_desc *d,
                               const struct dlb_buffer *x,
                               const struct dlb_buffer *w,
                               const struct dlb_buffer *b, struct dlb_buffer *y)
{
    const char *op = "linear_fwd";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    size_t xn = (size_t)d->n * d->in, yn = (size_t)d->n * d->out;
    struct dlb_cuda_view vx, vy;
    dlb_status s;
    if ((s = check_sizes(be, op, d)) ||
        (s = dlb_cuda_check_float(be, op, "x", x, xn)) ||
        (s = dlb_cuda_check_float(be, op, "w", w, (size_t)d->out * d->in)) ||
        (s = dlb_cuda_check_float(be, op, "y", y, yn)) ||
        (b && (s = dlb_cuda_check_float(be, op, "b", b, d->out))))
        return s;
    enum dlb_dtype t = w->dtype;
    if ((s = dlb_cuda_view_in(be, x, xn, t, 0, &vx)) ||
        (s = dlb_cuda_view_out(be, y, yn, t, 1, &vy)) ||
        (s = gemm(be, op, t, 1, 0, d->out, d->n, d->in, w->data, vx.p, vy.p)) ||
        (s = dlb_cuda_view_done(be, &vy)))
        return s;
    if (!b)
        return DLB_OK;
    return dlb_cuda_check(be, dlb_cuda_k_add_bias(cu->stream, d->n, d->out, 1,
                                                  y->data, (int)y->dtype,
                                                  b->data, (int)b->dtype),
                          op, "bias");
}

dlb_status dlb_cuda_linear_bwd(struct dlb_backend *be,
                               const struct dlb_linear_desc *d,
                               const struct dlb_buffer *x,
                               const struct dlb_buffer *w,
                               const struct dlb_buffer *dy,
                               struct dlb_buffer *dx, struct dlb_buffer *dw,
                               struct dlb_buffer *db)
{
    const char *op = "linear_bwd";
    struct dlb_cuda *cu = dlb_cuda_of(be);
    size_t xn = (size_t)d->n * d->in, yn = (size_t)d->n * d->out;
    size_t wn = (size_t)d->out * d->in;
    struct dlb_cuda_view v[5];
    enum dlb_dtype t;
    dlb_status s;
    if ((s = check_sizes(be, op, d)) ||
        (s = dlb_cuda_check_float(be, op, "x", x, xn)) ||
        (s = dlb_cuda_check_float(be, op, "w", w, wn)) ||
        (s = dlb_cuda_check_float(be, op, "dy", dy, yn)) ||
        (dx && (s = dlb_cuda_check_float(be, op, "dx", dx, xn))) ||
        (s = dlb_cuda_check_float(be, op, "dw", dw, wn)) ||
        (db && (s = dlb_cuda_check_float(be, op, "db", db, d->out))))
        return s;
    /* dx in w's type, as conv2d_bwd_data */
    if (dx && ((s = dlb_cuda_view_in(be, dy, yn, w->dtype, 0, &v[0])) ||
               (s = dlb_cuda_view_out(be, dx, xn, w->dtype, 1, &v[1])) ||
               (s = gemm(be, op, w->dtype, 0, 0, d->in, d->n, d->out, w->data,
                         v[0].p, v[1].p)) ||
               (s = dlb_cuda_view_done(be, &v[1]))))
        return s;
    /* dw in the 16-bit type when any operand has it, as conv2d_bwd_weights */
    enum dlb_dtype types[3] = { x->dtype, dy->dtype, dw->dtype };
    if ((s = dlb_cuda_common_type(be, op, types, 3, &t)) ||
        (s = dlb_cuda_view_in(be, x, xn, t, 2, &v[2])) ||
        (s = dlb_cuda_view_in(be, dy, yn, t, 3, &v[3])) ||
        (s = dlb_cuda_view_out(be, dw, wn, t, 4, &v[4])) ||
        (s = gemm(be, op, t, 0, 1, d->in, d->out, d->n, v[2].p, v[3].p,
                  v[4].p)) ||
        (s = dlb_cuda_view_done(be, &v[4])))
        return s;
    if (!db)
        return DLB_OK;
    return dlb_cuda_check(be, dlb_cuda_k_channel_sum(cu->stream, d->n, d->out, 1,
                                                     dy->data, (int)dy->dtype,
                                                     db->data, (int)db->dtype),
                          op, "bias gradient");
}
