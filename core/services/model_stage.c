/* A pipeline stage (a slice, model_api.h): forward and backward of a run
 * of layers,
 * micro-batch by micro-batch, on the very layer functions the training
 * step runs (model_fwd.c, model_bwd.c). What backward needs (the model's
 * per-step state: activations, pooling indices, batch-norm statistics,
 * labels) is moved out of the model after each forward into the
 * micro-batch's stash and back before its backward, so that several
 * micro-batches can be in flight on one model. */
#include "services/model_stage_impl.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model_prune.h"

size_t dlb_model_stage_act_count(const struct dlb_model *m, unsigned i)
{
    return dlb_model_act_size(m, i);
}

static int param_in_range(const struct dlb_model *m, size_t k, unsigned first,
                          unsigned last)
{
    for (unsigned i = first; i < last; i++)
        if (m->layers[i].weight == (int)k || m->layers[i].bias == (int)k)
            return 1;
    return 0;
}

static void stash_free_bufs(struct dlb_stage *st, struct stash *sh)
{
    struct dlb_model *m = st->m;
    unsigned w = st->last - st->first;
    for (unsigned j = 0; j <= w; j++) {
        if (sh->own[j])
            dlb_model_step_free(m, &sh->act[j]);
        sh->act[j] = NULL;
        sh->own[j] = 0;
    }
    for (unsigned j = 0; j < w; j++) {
        dlb_model_step_free(m, &sh->ws[j]);
        dlb_model_step_free(m, &sh->mean[j]);
        dlb_model_step_free(m, &sh->invstd[j]);
        dlb_model_step_free(m, &sh->x_in[j]);
    }
    dlb_model_step_free(m, &sh->labels);
    sh->live = 0;
}

void dlb_stage_drop_inputs(struct dlb_stage *st, struct stash *sh)
{
    for (unsigned j = 0; j < 2; j++)
        dlb_model_step_free(st->m, &sh->in[j]);
}

void dlb_stage_drop_din(struct dlb_stage *st)
{
    dlb_model_step_free(st->m, &st->din);
}

/* Drop whatever an unfinished step left, in the stashes and the model. */
static void release_all(struct dlb_stage *st)
{
    for (unsigned k = 0; k < st->micro; k++) {
        if (st->stash[k].live)
            stash_free_bufs(st, &st->stash[k]);
        dlb_stage_drop_inputs(st, &st->stash[k]);
        st->stash[k].out_shown = 0;
    }
    dlb_stage_drop_din(st);
    dlb_model_step_release(st->m);
    st->saved = 0;
}

void dlb_model_stage_close(struct dlb_stage *st)
{
    if (!st)
        return;
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(st->m->be);
    if (st->stash) {
        release_all(st);
        for (unsigned k = 0; k < st->micro; k++) {
            struct stash *sh = &st->stash[k];
            free(sh->act);
            free(sh->own);
            free(sh->ws);
            free(sh->mean);
            free(sh->invstd);
            free(sh->x_in);
        }
    }
    for (size_t j = 0; st->tmp && j < st->n_grad; j++)
        ops->buffer_free(st->m->be, st->tmp[j]);
    ops->buffer_free(st->m->be, st->zeros);
    free(st->tmp);
    free(st->grad_of);
    free(st->stash);
    free(st->seed);
    free(st->lo);
    free(st);
}

static dlb_status alloc_grad_sum(struct dlb_stage *st, struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    dlb_status s = DLB_OK;
    st->grad_of = malloc((m->n_params ? m->n_params : 1) * sizeof *st->grad_of);
    st->tmp = calloc(m->n_params ? m->n_params : 1, sizeof *st->tmp);
    if (!st->grad_of || !st->tmp)
        return dlb_errorf(err, DLB_ERR_NOMEM, "%s: out of memory for a "
                          "stage", m->spec->path);
    for (size_t k = 0; k < m->n_params; k++) {
        struct dlb_model_param *p = &m->params[k];
        if (!p->grad || !param_in_range(m, k, st->first, st->last))
            continue;
        st->grad_of[st->n_grad] = k;
        if (p->t.count > st->max_count)
            st->max_count = p->t.count;
        s = ops->buffer_alloc(m->be, m->dtype, p->t.count,
                              &st->tmp[st->n_grad++]);
        if (s != DLB_OK)
            return dlb_model_be_fail(m, s, p->name, "allocating a gradient "
                                     "sum", err);
    }
    if (st->micro > 1 && st->max_count &&
        (s = ops->buffer_alloc(m->be, m->dtype, st->max_count, &st->zeros)))
        return dlb_model_be_fail(m, s, "stage", "allocating a gradient sum",
                                 err);
    return DLB_OK;
}

dlb_status dlb_model_stage_open(struct dlb_model *m,
                                const struct dlb_stage_spec *spec,
                                struct dlb_stage **out, struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    *out = NULL;
    if (!spec || spec->first >= spec->last || spec->last > nl ||
        spec->micro < 1)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: a stage needs layers "
                          "[first, last) inside the network's %zu and at "
                          "least one micro-batch", m->spec->path, nl);
    if (m->dtype != DLB_F32 || m->lowp)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: pipeline stages run "
                          "fp32 models without a precision policy",
                          m->spec->path);
    if (m->spec->layers[nl - 1].kind != DLB_LAYER_LOGSOFTMAX)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: training needs a "
                          "logsoftmax last layer", m->spec->path);
    /* A stage takes one tensor in and hands one on. */
    for (unsigned k = spec->first; k <= spec->last; k += spec->last - spec->first) {
        size_t r = k > 0 && k < nl ? dlb_model_spec_cut_reader(m->spec, k) : nl;
        if (r < nl)
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: a stage cannot begin "
                              "or end before layer '%s': layer '%s' reads an "
                              "output from before it; cut where only one "
                              "tensor crosses", m->spec->path,
                              m->spec->layers[k].name, m->spec->layers[r].name);
    }
    struct dlb_stage *st = calloc(1, sizeof *st);
    unsigned w = spec->last - spec->first;
    if (!st)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory for a stage");
    st->m = m;
    st->first = spec->first;
    st->last = spec->last;
    st->micro = spec->micro;
    st->loss_scale = spec->loss_scale;
    st->lo = calloc(spec->micro + 1, sizeof *st->lo);
    st->seed = calloc(w, sizeof *st->seed);
    st->stash = calloc(spec->micro, sizeof *st->stash);
    int ok = st->lo && st->seed && st->stash;
    for (unsigned k = 0; ok && k < spec->micro; k++) {
        struct stash *sh = &st->stash[k];
        sh->act = calloc(w + 1, sizeof *sh->act);
        sh->own = calloc(w + 1, 1);
        sh->ws = calloc(w, sizeof *sh->ws);
        sh->mean = calloc(w, sizeof *sh->mean);
        sh->invstd = calloc(w, sizeof *sh->invstd);
        sh->x_in = calloc(w, sizeof *sh->x_in);
        ok = sh->act && sh->own && sh->ws && sh->mean && sh->invstd && sh->x_in;
    }
    dlb_status s = ok ? alloc_grad_sum(st, err)
                      : dlb_errorf(err, DLB_ERR_NOMEM, "out of memory for a "
                                   "stage");
    if (s != DLB_OK) {
        dlb_model_stage_close(st);
        return s;
    }
    *out = st;
    return DLB_OK;
}

/* Begin a step of n images; `seeds` (per layer of the model, NULL: draw
 * them from the model's stream) the dropout seeds of the step. */
static dlb_status begin(struct dlb_stage *st, uint32_t n, uint32_t *lo,
                        const uint64_t *seeds, struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    if (n < st->micro)
        return dlb_errorf(err, DLB_ERR_INPUT, "a step of %u images cannot "
                          "make %u micro-batches: each needs at least one",
                          n, st->micro);
    release_all(st);
    dlb_status s = dlb_model_prec_begin(m, err);
    if (s != DLB_OK)
        return s;
    st->n = n;
    st->done = 0;
    for (unsigned k = 0; k <= st->micro; k++)
        st->lo[k] = (uint32_t)((uint64_t)n * k / st->micro);
    if (lo)
        memcpy(lo, st->lo, (st->micro + 1) * sizeof *lo);
    /* Every dropout layer draws, in the stage or not, so that the model's
     * stream moves as one worker's does and the next step's seeds agree. */
    for (size_t i = 0; i < m->spec->n_layers; i++)
        if (m->layers[i].spec->kind == DLB_LAYER_DROPOUT) {
            uint64_t v = seeds ? seeds[i] : dlb_rng_u64(&m->drop_rng);
            if (i >= st->first && i < st->last)
                st->seed[i - st->first] = v;
        }
    return DLB_OK;
}

dlb_status dlb_model_stage_begin(struct dlb_stage *st, uint32_t n,
                                 uint32_t *lo, struct dlb_error *err)
{
    return begin(st, n, lo, NULL, err);
}

dlb_status dlb_model_stage_begin_seeded(struct dlb_stage *st, uint32_t n,
                                        const uint64_t *seeds,
                                        struct dlb_error *err)
{
    return begin(st, n, NULL, seeds, err);
}

/* dlb_dropout_keep (backend.h) hashes seed + (index + 1) * this constant:
 * moving the seed by `offset` of them gives element `offset + j` of the
 * full batch's mask to element j of a micro-batch. */
#define DROP_GOLDEN 0x9e3779b97f4a7c15ull

static void set_drop_seeds(struct dlb_stage *st, unsigned k)
{
    for (unsigned i = st->first; i < st->last; i++) {
        struct dlb_model_layer *ml = &st->m->layers[i];
        const struct dlb_layer_spec *L = ml->spec;
        if (L->kind != DLB_LAYER_DROPOUT)
            continue;
        uint64_t per = L->mode == DLB_DROPOUT_CHANNEL
                           ? L->in_c : (uint64_t)L->in_c * L->in_h * L->in_w;
        ml->drop_seed = st->seed[i - st->first] +
                        (uint64_t)st->lo[k] * per * DROP_GOLDEN;
    }
}

static uint64_t stash_bytes(const struct dlb_stage *st, const struct stash *sh)
{
    unsigned w = st->last - st->first;
    uint64_t b = sh->labels ? dlb_buffer_bytes(sh->labels) : 0;
    for (unsigned j = 0; j <= w; j++)
        if (sh->own[j] && sh->act[j])
            b += dlb_buffer_bytes(sh->act[j]);
    for (unsigned j = 0; j < w; j++) {
        const struct dlb_buffer *v[] = {sh->ws[j], sh->mean[j], sh->invstd[j],
                                        sh->x_in[j]};
        for (unsigned q = 0; q < 4; q++)
            b += v[q] ? dlb_buffer_bytes(v[q]) : 0;
    }
    return b;
}

/* Move the model's per-step state of the stage's layers into sh (save) or
 * back (restore). */
static void stash_move(struct dlb_stage *st, struct stash *sh, int save)
{
    struct dlb_model *m = st->m;
    unsigned w = st->last - st->first;
#define MOVE(a, b)                                                          \
    do {                                                                    \
        if (save) {                                                         \
            (a) = (b);                                                      \
            (b) = NULL;                                                     \
        } else {                                                            \
            (b) = (a);                                                      \
            (a) = NULL;                                                     \
        }                                                                   \
    } while (0)
    for (unsigned j = 0; j <= w; j++) {
        MOVE(sh->act[j], m->act[st->first + j]);
        if (save) {
            sh->own[j] = m->own[st->first + j];
            m->own[st->first + j] = 0;
        } else {
            m->own[st->first + j] = sh->own[j];
            sh->own[j] = 0;
        }
    }
    for (unsigned j = 0; j < w; j++) {
        struct dlb_model_layer *ml = &m->layers[st->first + j];
        MOVE(sh->ws[j], ml->ws);
        MOVE(sh->mean[j], ml->save_mean);
        MOVE(sh->invstd[j], ml->save_invstd);
        MOVE(sh->x_in[j], ml->x_in);
    }
    MOVE(sh->labels, m->labels);
#undef MOVE
    sh->live = save;
}

int dlb_stage_is_last(const struct dlb_stage *st)
{
    return st->last == st->m->spec->n_layers;
}

dlb_status dlb_stage_upload(struct dlb_model *m, const float *src,
                            size_t count, const char *what,
                            struct dlb_buffer **out, struct dlb_error *err)
{
    dlb_status s = dlb_model_step_alloc(m, DLB_F32, count, what, out, err);
    if (s == DLB_OK &&
        (s = dlb_backend_ops_of(m->be)->copy_from_host(m->be, *out, 0, src,
                                                       count * sizeof *src))) {
        dlb_model_step_free(m, out);
        return dlb_model_be_fail(m, s, what, "upload", err);
    }
    return s;
}

static dlb_status download(struct dlb_model *m, float *dst,
                           const struct dlb_buffer *b, size_t count,
                           const char *what, struct dlb_error *err)
{
    dlb_status s = dlb_backend_ops_of(m->be)->copy_to_host(m->be, dst, b, 0,
                                                           count * sizeof *dst);
    if (s == DLB_OK)
        s = DLB_BE_CALL0(m->be, synchronize);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, what, "download", err);
}

dlb_status dlb_stage_run_forward(struct dlb_stage *st, unsigned k,
                                 struct dlb_buffer *x, const int32_t *labels,
                                 double *loss, struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    uint32_t nk = st->lo[k + 1] - st->lo[k];
    dlb_status s;
    m->n = nk;
    set_drop_seeds(st, k);
    m->act[st->first] = x;
    m->own[st->first] = 1;
    if (dlb_stage_is_last(st)) {
        if ((s = dlb_model_step_alloc(m, DLB_S32, nk, "labels", &m->labels,
                                      err)))
            return s;
        if ((s = dlb_backend_ops_of(m->be)->copy_from_host(
                 m->be, m->labels, 0, labels, (size_t)nk * sizeof *labels)))
            return dlb_model_be_fail(m, s, "labels", "upload", err);
    }
    for (unsigned i = st->first; i < st->last; i++)
        if ((s = dlb_model_node_fwd(m, i, 1, err)) != DLB_OK)
            return s;
    return dlb_stage_is_last(st) && loss ? dlb_model_read_loss(m, loss, err)
                                         : DLB_OK;
}

dlb_status dlb_stage_forward_done(struct dlb_stage *st, unsigned k,
                                  dlb_status s)
{
    /* The model holds no other micro-batch between calls. */
    if (s != DLB_OK) {
        dlb_model_step_release(st->m);
        return s;
    }
    stash_move(st, &st->stash[k], 1);
    st->saved += stash_bytes(st, &st->stash[k]);
    if (st->saved > st->saved_peak)
        st->saved_peak = st->saved;
    return DLB_OK;
}

dlb_status dlb_model_stage_forward(struct dlb_stage *st, unsigned k,
                                   const float *in, const int32_t *labels,
                                   float *out, double *loss,
                                   struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    int last = dlb_stage_is_last(st);
    struct dlb_buffer *x = NULL;
    if (k >= st->micro || st->stash[k].live || !st->n || !in ||
        (last ? !labels : !out))
        return dlb_errorf(err, DLB_ERR_INTERNAL, "stage forward of "
                          "micro-batch %u of %u: not begun, run twice, or "
                          "without its input, labels or output", k, st->micro);
    uint32_t nk = st->lo[k + 1] - st->lo[k];
    dlb_status s = dlb_stage_upload(m, in,
                                    (size_t)nk * dlb_model_act_size(m, st->first),
                                    m->spec->layers[st->first].name, &x, err);
    if (s == DLB_OK)
        s = dlb_stage_run_forward(st, k, x, labels, loss, err);
    if (s == DLB_OK && !last)
        s = download(m, out, m->act[st->last],
                     (size_t)nk * dlb_model_act_size(m, st->last),
                     m->spec->layers[st->last - 1].name, err);
    return dlb_stage_forward_done(st, k, s);
}

/* Point the range's gradients at tmp (swap = 1) or back (swap again). */
static void swap_grads(struct dlb_stage *st)
{
    for (size_t j = 0; j < st->n_grad; j++) {
        struct dlb_model_param *p = &st->m->params[st->grad_of[j]];
        struct dlb_buffer *t = p->grad;
        p->grad = st->tmp[j];
        st->tmp[j] = t;
    }
}

/* grad += tmp for the range's tensors. The backend has no addition; its
 * SGD update with learning rate -1 and no momentum is one:
 * v = 0 * v + g, w = w - (-1) * v, in double and rounded once (zeroed v,
 * so that no leftover NaN survives the 0 *). */
static dlb_status add_grads(struct dlb_stage *st, struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    dlb_status s = DLB_OK;
    for (size_t j = 0; j < st->n_grad && s == DLB_OK; j++) {
        struct dlb_model_param *p = &m->params[st->grad_of[j]];
        struct dlb_sgd_desc d = {p->t.count, -1.0f, 0.0f, 0.0f};
        s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_FILL,
                .count = p->t.count, .y = st->zeros, .value = 0.0});
        if (s == DLB_OK)
            s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_SGD,
                    .sgd = d, .param = p->grad, .g = st->tmp[j],
                    .v = st->zeros});
        if (s != DLB_OK)
            return dlb_model_be_fail(m, s, p->name, "gradient sum", err);
    }
    return s;
}

dlb_status dlb_stage_run_backward(struct dlb_stage *st, unsigned k,
                                  struct dlb_buffer *dy, struct dlb_buffer **dx,
                                  int *dx_owned, struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    uint32_t nk = st->lo[k + 1] - st->lo[k];
    int dy_owned = 1;
    dlb_status s = DLB_OK;
    if (dlb_stage_is_last(st)) {
        /* n_k / n of the batch mean: the micro-batches sum to it. */
        float scale = st->loss_scale * ((float)nk / (float)st->n);
        s = dlb_model_loss_grad(m, scale, &dy, &dy_owned, err);
    }
    if (s != DLB_OK)
        return s;
    if (k > 0)
        swap_grads(st);
    /* On the last stage dy is at the logits, the logsoftmax's input. */
    size_t top = dlb_stage_is_last(st) ? st->last - 1 : st->last;
    s = dlb_model_backward_range(m, st->first, top, dy, dy_owned,
                                 dx && st->first > 0 ? dx : NULL, dx_owned,
                                 err);
    if (k > 0) {
        swap_grads(st);
        if (s == DLB_OK)
            s = add_grads(st, err);
    }
    return s;
}

dlb_status dlb_stage_backward_begin(struct dlb_stage *st, unsigned k,
                                    int with_dout, int with_din,
                                    struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    /* In micro-batch order: that fixes the order of the gradient sum. */
    if (k != st->done || k >= st->micro || !st->stash[k].live ||
        (!dlb_stage_is_last(st) && !with_dout) || (st->first > 0 && !with_din))
        return dlb_errorf(err, DLB_ERR_INTERNAL, "stage backward of "
                          "micro-batch %u: the next is %u, after its forward, "
                          "with the gradients in and out", k, st->done);
    st->saved -= stash_bytes(st, &st->stash[k]);
    stash_move(st, &st->stash[k], 0);
    m->n = st->lo[k + 1] - st->lo[k];
    set_drop_seeds(st, k);
    return DLB_OK;
}

dlb_status dlb_stage_backward_done(struct dlb_stage *st, dlb_status s)
{
    dlb_model_step_release(st->m);
    if (s == DLB_OK)
        st->done++;
    return s;
}

dlb_status dlb_model_stage_backward(struct dlb_stage *st, unsigned k,
                                    const float *dout, float *din,
                                    struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    struct dlb_buffer *dy = NULL, *dx = NULL;
    int dx_owned = 0;
    dlb_status s = dlb_stage_backward_begin(st, k, dout != NULL, din != NULL,
                                            err);
    if (s != DLB_OK)
        return s;
    uint32_t nk = st->lo[k + 1] - st->lo[k];
    if (!dlb_stage_is_last(st))
        s = dlb_stage_upload(m, dout,
                             (size_t)nk * dlb_model_act_size(m, st->last),
                             m->spec->layers[st->last - 1].name, &dy, err);
    if (s == DLB_OK)
        s = dlb_stage_run_backward(st, k, dy, din ? &dx : NULL, &dx_owned, err);
    if (s == DLB_OK && dx)
        s = download(m, din, dx, (size_t)nk * dlb_model_act_size(m, st->first),
                     m->spec->layers[st->first].name, err);
    if (dx_owned)
        dlb_model_step_free(m, &dx);
    return dlb_stage_backward_done(st, s);
}

dlb_status dlb_model_stage_update(struct dlb_stage *st, struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    if (st->done != st->micro)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "stage update after %u of %u "
                          "micro-batches' backward", st->done, st->micro);
    for (size_t j = 0; j < st->n_grad; j++) {
        struct dlb_model_param *p = &m->params[st->grad_of[j]];
        struct dlb_sgd_desc d = {p->t.count, m->lr, m->momentum, 0.0f};
        dlb_status s = dlb_backend_run(m->be, &(struct dlb_op){
                           .kind = DLB_OP_SGD, .sgd = d, .param = p->t.buf,
                           .g = p->grad, .v = p->mom});
        if (s != DLB_OK)
            return dlb_model_be_fail(m, s, p->name, "sgd_update", err);
    }
    st->done = 0;
    st->n = 0;
    dlb_stage_drop_din(st);
    dlb_status s = dlb_model_prune_after_update(m, err); /* masks kept */
    return s == DLB_OK ? dlb_model_prec_updated(m, err) : s;
}

void dlb_model_stage_memory(const struct dlb_stage *st,
                            struct dlb_stage_memory *out)
{
    out->saved_bytes = st->saved;
    out->saved_peak = st->saved_peak;
}
