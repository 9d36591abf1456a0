/* Sparse execution of pruned linear layers: the weights in CSR form on
 * the device, built from the weights as they are (again after they
 * change), and the inference forward that runs the backend's CSR kernel
 * or the dense one. Whether sparse pays depends on the sparsity, the
 * layer's shape, the batch size and the machine, so mode auto times both
 * kernels on the first input of each batch size and keeps the faster;
 * that happens during the harness's warm-up, not in measured steps. */
#include "model/model_prune.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "model/model_impl.h"

/* Timed calls per kernel in auto mode; the minimum counts (the machines
 * are shared: the minimum is the least disturbed). */
#define AUTO_REPS 5

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static dlb_status linear_layer(const struct dlb_model *m, unsigned layer,
                               struct dlb_error *err)
{
    if (layer >= m->spec->n_layers)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer %u does not exist "
                          "(the model has %zu)", m->spec->path, layer,
                          m->spec->n_layers);
    const struct dlb_layer_spec *L = &m->spec->layers[layer];
    if (L->kind != DLB_LAYER_LINEAR)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s' is a %s; only "
                          "linear layers run sparse", m->spec->path, L->name,
                          dlb_layer_kind_name(L->kind));
    return DLB_OK;
}

static dlb_status upload(struct dlb_model *m, struct dlb_buffer **b,
                         enum dlb_dtype t, size_t count, const void *host,
                         size_t esz, const char *layer, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    ops->buffer_free(m->be, *b);
    *b = NULL;
    dlb_status s = ops->buffer_alloc(m->be, t, count ? count : 1, b);
    if (s == DLB_OK && count)
        s = ops->copy_from_host(m->be, *b, 0, host, count * esz);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, layer, "CSR upload", err);
}

/* The CSR form of layer i's weights (fp32), rows = output units. */
static dlb_status build_csr(struct dlb_model *m, size_t i,
                            struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    struct dlb_model_layer *ml = &m->layers[i];
    struct dlb_model_pruned *pr = ml->pr;
    const struct dlb_layer_spec *L = ml->spec;
    const struct dlb_model_param *w = &m->params[ml->weight];
    float *dense = malloc(w->t.count * sizeof *dense + 1);
    int32_t *rows = malloc(((size_t)L->out + 1) * sizeof *rows);
    int32_t *cols = NULL;
    float *vals = NULL;
    size_t nnz = 0;
    dlb_status s = dense && rows ? DLB_OK : DLB_ERR_NOMEM;
    if (s == DLB_OK)
        s = ops->copy_to_host(m->be, dense, w->t.buf, 0,
                              w->t.count * sizeof *dense);
    if (s != DLB_OK) {
        free(dense);
        free(rows);
        return s == DLB_ERR_NOMEM ? dlb_errorf(err, s, "out of memory")
                                  : dlb_model_be_fail(m, s, L->name, "read", err);
    }
    for (size_t k = 0; k < w->t.count; k++)
        nnz += dense[k] != 0.0f;
    cols = malloc((nnz ? nnz : 1) * sizeof *cols);
    vals = malloc((nnz ? nnz : 1) * sizeof *vals);
    if (!cols || !vals)
        s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    nnz = 0;
    for (uint32_t o = 0; s == DLB_OK && o < L->out; o++) {
        rows[o] = (int32_t)nnz;
        for (uint32_t c = 0; c < L->in_c; c++) {
            float v = dense[(size_t)o * L->in_c + c];
            if (v != 0.0f) {
                cols[nnz] = (int32_t)c;
                vals[nnz++] = v;
            }
        }
    }
    rows[L->out] = (int32_t)nnz;
    if (s == DLB_OK &&
        (s = upload(m, &pr->row_ptr, DLB_S32, (size_t)L->out + 1, rows, 4,
                    L->name, err)) == DLB_OK &&
        (s = upload(m, &pr->col, DLB_S32, nnz, cols, 4, L->name, err)) ==
            DLB_OK &&
        (s = upload(m, &pr->val, DLB_F32, nnz, vals, 4, L->name, err)) ==
            DLB_OK)
        s = ops->synchronize(m->be); /* before the host arrays go */
    free(dense);
    free(rows);
    free(cols);
    free(vals);
    if (s == DLB_OK) {
        pr->nnz = nnz;
        pr->csr_stale = 0;
    }
    return s;
}

dlb_status dlb_model_prune_set_sparse(struct dlb_model *m, unsigned layer,
                                      enum dlb_prune_sparse_mode mode,
                                      struct dlb_error *err)
{
    struct dlb_model_pruned *pr = NULL;
    dlb_status s = linear_layer(m, layer, err);
    if (s == DLB_OK)
        s = dlb_model_prune_layer(m, layer, &pr, err);
    if (s != DLB_OK)
        return s;
    const char *name = m->spec->layers[layer].name;
    if (mode == DLB_PRUNE_SPARSE_ON && m->dtype != DLB_F32)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "layer '%s': sparse "
                          "layers compute in fp32 only", name);
    if (mode == DLB_PRUNE_SPARSE_ON &&
        !dlb_backend_has_kind(m->be, DLB_OP_LINEAR_CSR))
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "layer '%s': backend %s "
                          "has no sparse (CSR) linear kernel", name,
                          dlb_backend_name(m->be));
    pr->mode = mode;
    pr->n_choice = 0;
    pr->csr_stale = 1;
    if (mode == DLB_PRUNE_SPARSE_OFF || m->dtype != DLB_F32)
        return DLB_OK;
    return build_csr(m, layer, err);
}

static struct dlb_prune_choice *find_choice(struct dlb_model_pruned *pr,
                                            uint32_t n)
{
    for (unsigned k = 0; k < pr->n_choice; k++)
        if (pr->choice[k].n == n)
            return &pr->choice[k];
    return NULL;
}

/* The entry that ran most often: the measured steps' batch size. */
static const struct dlb_prune_choice *main_choice(const struct dlb_model_pruned *pr)
{
    const struct dlb_prune_choice *best = NULL;
    for (unsigned k = 0; k < pr->n_choice; k++)
        if (!best || pr->choice[k].calls > best->calls)
            best = &pr->choice[k];
    return best;
}

/* A new entry for batch size n, replacing the least used when full. */
static struct dlb_prune_choice *new_choice(struct dlb_model_pruned *pr,
                                           uint32_t n)
{
    struct dlb_prune_choice *c = &pr->choice[0];
    if (pr->n_choice < DLB_PRUNE_CHOICES)
        c = &pr->choice[pr->n_choice++];
    else
        for (unsigned k = 1; k < DLB_PRUNE_CHOICES; k++)
            if (pr->choice[k].calls < c->calls)
                c = &pr->choice[k];
    *c = (struct dlb_prune_choice){n, 0, 0.0, 0.0, 0};
    return c;
}

dlb_status dlb_model_prune_sparse_info(const struct dlb_model *m,
                                       unsigned layer,
                                       struct dlb_prune_sparse_info *out,
                                       struct dlb_error *err)
{
    dlb_status s = linear_layer(m, layer, err);
    if (s != DLB_OK)
        return s;
    const struct dlb_model_layer *ml = &m->layers[layer];
    const struct dlb_model_pruned *pr = ml->pr;
    memset(out, 0, sizeof *out);
    out->count = m->params[ml->weight].t.count;
    if (!pr)
        return DLB_OK;
    out->mode = pr->mode;
    out->nnz = pr->mode == DLB_PRUNE_SPARSE_OFF ? 0 : pr->nnz;
    const struct dlb_prune_choice *c = main_choice(pr);
    if (c) {
        out->batch = c->n;
        out->calls = c->calls;
        out->sparse = c->sparse;
        out->dense_s = c->dense_s;
        out->sparse_s = c->sparse_s;
    }
    return DLB_OK;
}

struct fwd_args {
    struct dlb_model *m;
    size_t i;
    struct dlb_buffer *x, *y;
};

static dlb_status run_dense(const struct fwd_args *a)
{
    const struct dlb_model_layer *ml = &a->m->layers[a->i];
    struct dlb_linear_desc d = dlb_model_linear_desc(ml->spec, a->m->n);
    return dlb_backend_run(a->m->be, &(struct dlb_op){.kind = DLB_OP_LINEAR,
               .prop = DLB_PROP_FWD_TRAIN, .linear = d, .x = a->x,
               .w = dlb_model_layer_weights(a->m, a->i),
               .b = ml->bias >= 0 ? a->m->params[ml->bias].t.buf : NULL,
               .y = a->y});
}

static dlb_status run_csr(const struct fwd_args *a)
{
    const struct dlb_model_layer *ml = &a->m->layers[a->i];
    const struct dlb_model_pruned *pr = ml->pr;
    struct dlb_csr_linear_desc d = {a->m->n, ml->spec->in_c, ml->spec->out,
                                    (uint32_t)pr->nnz};
    return dlb_backend_run(a->m->be, &(struct dlb_op){
               .kind = DLB_OP_LINEAR_CSR, .prop = DLB_PROP_FWD_INFER,
               .csr = d, .x = a->x, .row_ptr = pr->row_ptr, .col = pr->col,
               .val = pr->val,
               .b = ml->bias >= 0 ? a->m->params[ml->bias].t.buf : NULL,
               .y = a->y});
}

/* One call of `run`, timed to its end on the device. */
static dlb_status timed(dlb_status (*run)(const struct fwd_args *),
                        const struct fwd_args *a, double *best)
{
    double t0 = now_s();
    dlb_status s = run(a);
    if (s == DLB_OK)
        s = DLB_BE_CALL0(a->m->be, synchronize);
    double t = now_s() - t0;
    *best = t < *best ? t : *best;
    return s;
}

/* Auto: the faster kernel at this batch size, each timed AUTO_REPS times
 * in turns (so that a disturbance hits both alike), after one untimed call
 * each (primitive creation, caches); the minimum counts. */
static dlb_status choose(struct dlb_prune_choice *c, const struct fwd_args *a)
{
    dlb_status s = DLB_BE_CALL0(a->m->be, synchronize);
    double d = 1e30, sp = 1e30, skip = 0;
    if (s == DLB_OK && (s = timed(run_dense, a, &skip)) == DLB_OK)
        s = timed(run_csr, a, &skip);
    for (int r = 0; r < AUTO_REPS && s == DLB_OK; r++)
        if ((s = timed(run_dense, a, &d)) == DLB_OK)
            s = timed(run_csr, a, &sp);
    if (s == DLB_OK) {
        c->dense_s = d;
        c->sparse_s = sp;
        c->sparse = sp < d;
    }
    return s;
}

dlb_status dlb_model_prune_linear_fwd(struct dlb_model *m, size_t i,
                                      struct dlb_buffer *x, struct dlb_buffer *y,
                                      struct dlb_error *err)
{
    struct dlb_model_layer *ml = &m->layers[i];
    struct dlb_model_pruned *pr = ml->pr;
    struct fwd_args a = {m, i, x, y};
    struct dlb_prune_choice *c = NULL;
    int sparse = 0;
    dlb_status s = DLB_OK;
    /* The CSR kernel computes in fp32: a layer in another type (a
     * low-precision policy) runs dense. */
    if (pr->mode != DLB_PRUNE_SPARSE_OFF && m->dtype == DLB_F32 && !ml->w_lp &&
        dlb_buffer_dtype(x) == DLB_F32 && dlb_buffer_dtype(y) == DLB_F32 &&
        dlb_backend_has_kind(m->be, DLB_OP_LINEAR_CSR)) {
        if (pr->csr_stale && (s = build_csr(m, i, err)) != DLB_OK)
            return s;
        if (!(c = find_choice(pr, m->n))) {
            c = new_choice(pr, m->n);
            c->sparse = pr->mode == DLB_PRUNE_SPARSE_ON;
            if (pr->mode == DLB_PRUNE_SPARSE_AUTO && (s = choose(c, &a)))
                return dlb_model_be_fail(m, s, ml->spec->name,
                                         "timing kernels", err);
        }
        c->calls++;
        sparse = c->sparse;
    }
    s = sparse ? run_csr(&a) : run_dense(&a);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, ml->spec->name,
                                               sparse ? "CSR forward"
                                                      : "forward", err);
}
