/* Mixed precision: per-layer compute types, low-precision weight copies
 * cast from the master weights, and the timed casts between types. */
#include "model/model_impl.h"

#include <stdlib.h>

#include "backend/backend.h"
#include "backend/dtype.h"
#include "model/model_prune.h"

static int has_weights(const struct dlb_layer_spec *L)
{
    return L->kind == DLB_LAYER_CONV || L->kind == DLB_LAYER_LINEAR;
}

enum dlb_dtype dlb_model_layer_type(const struct dlb_model *m, size_t i)
{
    return m->lowp ? m->layers[i].ctype : m->dtype;
}

enum dlb_dtype dlb_model_out_type(const struct dlb_model *m, size_t i)
{
    enum dlb_dtype t = dlb_model_layer_type(m, i);
    /* A convolution writes its output in any float type from its fp32
     * accumulators (backend.h, conv2d_fwd): in the next layer's type it
     * saves that layer a cast pass. A flatten hands its input on to a
     * layer of unknown layout: the convolution's own type there, as for
     * an output that several layers read. */
    if (m->layers[i].spec->kind != DLB_LAYER_CONV ||
        !dlb_model_spec_feeds_next(m->spec, i) ||
        m->layers[i + 1].spec->kind == DLB_LAYER_FLATTEN)
        return t;
    return dlb_model_layer_type(m, i + 1);
}

struct dlb_buffer *dlb_model_layer_weights(const struct dlb_model *m, size_t i)
{
    const struct dlb_model_layer *ml = &m->layers[i];
    return ml->w_lp ? ml->w_lp : m->params[ml->weight].t.buf;
}

/* Completed timer marks into cast_s. A mark still in flight (an
 * asynchronous backend between steps) is waited for: the figure must count
 * every cast, and this runs between steps, not inside one. */
static void harvest(struct dlb_model *m)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    for (size_t k = 0; k < m->timers_used; k++) {
        double secs = 0.0;
        if (ops->timer_elapsed(m->be, m->timers[k], &secs) != DLB_OK &&
            (ops->synchronize(m->be) != DLB_OK ||
             ops->timer_elapsed(m->be, m->timers[k], &secs) != DLB_OK))
            secs = 0.0;
        m->cast_s += secs;
    }
    m->timers_used = 0;
}

static dlb_status next_timer(struct dlb_model *m, struct dlb_timer **out)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    if (m->timers_used == m->n_timers) {
        size_t n = m->n_timers ? 2 * m->n_timers : 32;
        struct dlb_timer **t = realloc(m->timers, n * sizeof *t);
        if (!t)
            return DLB_ERR_NOMEM;
        m->timers = t;
        for (size_t k = m->n_timers; k < n; k++) {
            dlb_status s = ops->timer_create(m->be, &t[k]);
            if (s != DLB_OK)
                return s;
            m->n_timers = k + 1;
        }
    }
    *out = m->timers[m->timers_used++];
    return DLB_OK;
}

dlb_status dlb_model_cast(struct dlb_model *m, size_t count,
                          const struct dlb_buffer *src, struct dlb_buffer *dst,
                          const char *what, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    struct dlb_timer *t = NULL;
    dlb_status s;
    if (m->untimed_casts) {
        s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_CAST,
                .count = count, .x = src, .y = dst});
        return s == DLB_OK ? s : dlb_model_be_fail(m, s, what, "cast", err);
    }
    s = next_timer(m, &t);
    if (s == DLB_OK)
        s = ops->timer_start(m->be, t);
    if (s == DLB_OK)
        s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_CAST,
                .count = count, .x = src, .y = dst});
    if (s == DLB_OK)
        s = ops->timer_stop(m->be, t);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, what, "cast", err);
}

dlb_status dlb_model_cast_new(struct dlb_model *m, const struct dlb_buffer *src,
                              enum dlb_dtype t, size_t count, const char *what,
                              struct dlb_buffer **out, struct dlb_error *err)
{
    dlb_status s = dlb_model_step_alloc(m, t, count, what, out, err);
    if (s == DLB_OK && (s = dlb_model_cast(m, count, src, *out, what, err)))
        dlb_model_step_free(m, out);
    return s;
}

dlb_status dlb_model_cast_to(struct dlb_model *m, struct dlb_buffer **b,
                             int *owned, enum dlb_dtype t, size_t count,
                             const char *what, struct dlb_error *err)
{
    struct dlb_buffer *c = NULL;
    if (dlb_buffer_dtype(*b) == t)
        return DLB_OK;
    dlb_status s = dlb_model_cast_new(m, *b, t, count, what, &c, err);
    if (s != DLB_OK)
        return s;
    if (*owned)
        dlb_model_step_free(m, b);
    *b = c;
    *owned = 1;
    return DLB_OK;
}

static void free_copies(struct dlb_model *m)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    for (size_t i = 0; m->layers && i < m->spec->n_layers; i++) {
        ops->buffer_free(m->be, m->layers[i].w_lp);
        m->layers[i].w_lp = NULL;
    }
}

dlb_status dlb_model_set_precision(struct dlb_model *m,
                                   const enum dlb_dtype *types,
                                   int master_weights, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    dlb_model_step_release(m);
    free_copies(m);
    m->lowp = 0;
    m->master = 1;
    for (size_t i = 0; i < m->spec->n_layers; i++)
        m->layers[i].ctype = m->dtype;
    if (!types)
        return DLB_OK;
    for (size_t i = 0; i < m->spec->n_layers; i++) {
        struct dlb_model_layer *ml = &m->layers[i];
        enum dlb_dtype t = types[ml->spec->kind];
        if (!dlb_dtype_is_float(t))
            return dlb_errorf(err, DLB_ERR_INPUT, "%s: layer '%s': the "
                              "precision policy asks for %s; layers compute "
                              "in float types", m->spec->path, ml->spec->name,
                              dlb_dtype_name(t));
        ml->ctype = t;
        m->lowp |= t != m->dtype;
        if (t == m->dtype || !has_weights(ml->spec))
            continue;
        dlb_status s = ops->buffer_alloc(m->be, t, m->params[ml->weight].t.count,
                                         &ml->w_lp);
        if (s != DLB_OK) {
            free_copies(m);
            return dlb_model_be_fail(m, s, ml->spec->name,
                                     "allocating the low-precision weights", err);
        }
    }
    m->master = master_weights;
    m->lp_stale = 1;
    return DLB_OK;
}

void dlb_model_weights_changed(struct dlb_model *m)
{
    m->lp_stale = 1;
    m->weights_version++;
    dlb_model_params_moved(m);
    dlb_model_prune_weights_changed(m); /* sparse forms are rebuilt */
}

static dlb_status cast_weights(struct dlb_model *m, int round_master,
                               struct dlb_error *err)
{
    for (size_t i = 0; i < m->spec->n_layers; i++) {
        struct dlb_model_layer *ml = &m->layers[i];
        if (!ml->w_lp)
            continue;
        struct dlb_buffer *w = m->params[ml->weight].t.buf;
        size_t n = m->params[ml->weight].t.count;
        dlb_status s = dlb_model_cast(m, n, w, ml->w_lp, ml->spec->name, err);
        if (s == DLB_OK && round_master)
            s = dlb_model_cast(m, n, ml->w_lp, w, ml->spec->name, err);
        if (s != DLB_OK)
            return s;
    }
    m->lp_stale = 0;
    return DLB_OK;
}

dlb_status dlb_model_prec_begin(struct dlb_model *m, struct dlb_error *err)
{
    harvest(m);
    if (!m->lowp || !m->lp_stale)
        return DLB_OK;
    return cast_weights(m, 0, err);
}

dlb_status dlb_model_prec_updated(struct dlb_model *m, struct dlb_error *err)
{
    dlb_model_params_moved(m); /* every update path ends here */
    if (!m->lowp)
        return DLB_OK;
    if (m->master) {
        m->lp_stale = 1;
        return DLB_OK;
    }
    /* Without a master copy the weights are what the copy holds: the
     * update's fp32 result is rounded once, as a low-precision store. */
    return cast_weights(m, 1, err);
}

double dlb_model_cast_seconds(struct dlb_model *m)
{
    DLB_BE_CALL0(m->be, synchronize);
    harvest(m);
    return m->cast_s;
}

void dlb_model_prec_free(struct dlb_model *m)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    free_copies(m);
    for (size_t k = 0; k < m->n_timers; k++)
        ops->timer_destroy(m->be, m->timers[k]);
    free(m->timers);
    m->timers = NULL;
    m->n_timers = m->timers_used = 0;
}
