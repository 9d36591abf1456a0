/* Forward and backward over a range of nodes of a model itself
 * (model_api.h's forward_range, backward_range): each range is a
 * one-micro-batch stage on the model (model_stage.c), kept with the model
 * from its forward to its backward, and the ranges of one pass share the
 * pass's dropout seeds, so that cutting a pass into ranges changes no
 * bit of what it computes. */
#include "services/model_range.h"

#include <stdlib.h>

#include "backend/backend.h"
#include "services/model_stage_impl.h"

struct range {
    unsigned first, last;
    struct dlb_stage *st;
    int pending;            /* forward done, backward not yet */
    struct range *next;
};

struct dlb_model_ranges {
    uint64_t *seed;         /* per layer: the pass's dropout seeds */
    struct range *list;
};

void dlb_model_ranges_drop(struct dlb_model *m)
{
    struct dlb_model_ranges *r = m ? m->ranges : NULL;
    if (!r)
        return;
    while (r->list) {
        struct range *g = r->list;
        r->list = g->next;
        dlb_model_stage_close(g->st);
        free(g);
    }
    free(r->seed);
    free(r);
    m->ranges = NULL;
    m->ranges_free = NULL;
}

static dlb_status check_range(const struct dlb_model *m, unsigned first,
                              unsigned last, const char *what,
                              struct dlb_error *err)
{
    size_t nl = m->spec->n_layers;
    if (first >= last || last > nl)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: nodes [%u, %u) are not a "
                          "range of %s's %zu nodes: 0 <= first < last <= %zu",
                          what, first, last, m->spec->path, nl, nl);
    return DLB_OK;
}

static struct range *find(const struct dlb_model *m, unsigned first,
                          unsigned last)
{
    for (struct range *g = m->ranges ? m->ranges->list : NULL; g; g = g->next)
        if (g->first == first && g->last == last)
            return g;
    return NULL;
}

/* The range's stage, opened on first use. */
static dlb_status range_of(struct dlb_model *m, unsigned first, unsigned last,
                           struct range **out, struct dlb_error *err)
{
    struct dlb_model_ranges *r = m->ranges;
    if (!r) {
        if (!(r = calloc(1, sizeof *r)) ||
            !(r->seed = calloc(m->spec->n_layers, sizeof *r->seed))) {
            free(r);
            return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory for a range");
        }
        m->ranges = r;
        m->ranges_free = dlb_model_ranges_drop;
    }
    if ((*out = find(m, first, last)))
        return DLB_OK;
    struct range *g = calloc(1, sizeof *g);
    struct dlb_stage_spec spec = {first, last, 1, 1.0f};
    if (!g)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory for a range");
    dlb_status s = dlb_model_stage_open(m, &spec, &g->st, err);
    if (s != DLB_OK) {
        free(g);
        return s;
    }
    g->first = first;
    g->last = last;
    g->next = r->list;
    r->list = g;
    *out = g;
    return DLB_OK;
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

dlb_status dlb_model_range_forward(struct dlb_model *m, unsigned first,
                                   unsigned last, uint32_t n, const float *in,
                                   const int32_t *labels, float *out,
                                   double *loss, struct dlb_error *err)
{
    struct range *g = NULL;
    struct dlb_buffer *x = NULL;
    dlb_status s = check_range(m, first, last, "forward_range", err);
    if (s != DLB_OK)
        return s;
    int end = last == m->spec->n_layers;
    if (n == 0 || !in || (end ? !labels : !out))
        return dlb_errorf(err, DLB_ERR_INPUT, "forward_range [%u, %u) of %s: "
                          "%s", first, last, m->spec->path,
                          n == 0 ? "no images (n = 0)"
                          : !in ? "no input activations"
                          : end ? "a range ending at the network's end needs "
                                  "the labels"
                                : "no output array");
    if (m->dtype != DLB_F32 || m->lowp)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "forward_range of %s: "
                          "ranges run fp32 models without a precision policy",
                          m->spec->path);
    if ((s = range_of(m, first, last, &g, err)) != DLB_OK)
        return s;
    /* A pass starts at node 0: its dropout seeds, drawn as the training
     * step draws them (one per dropout layer, in node order). */
    for (size_t i = 0; first == 0 && i < m->spec->n_layers; i++)
        if (m->layers[i].spec->kind == DLB_LAYER_DROPOUT)
            m->ranges->seed[i] = dlb_rng_u64(&m->drop_rng);
    g->pending = 0;
    if ((s = dlb_model_stage_begin_seeded(g->st, n, m->ranges->seed, err)))
        return s;
    s = dlb_stage_upload(m, in, (size_t)n * dlb_model_act_size(m, first),
                         m->spec->layers[first].name, &x, err);
    if (s == DLB_OK)
        s = dlb_stage_run_forward(g->st, 0, x, labels, loss, err);
    if (s == DLB_OK && out)
        s = download(m, out, m->act[last],
                     (size_t)n * dlb_model_act_size(m, last),
                     m->spec->layers[last - 1].name, err);
    s = dlb_stage_forward_done(g->st, 0, s);
    g->pending = s == DLB_OK;
    return s;
}

dlb_status dlb_model_range_backward(struct dlb_model *m, unsigned first,
                                    unsigned last, float loss_scale,
                                    const float *dout, float *din,
                                    struct dlb_error *err)
{
    struct dlb_buffer *dy = NULL, *dx = NULL;
    int dx_owned = 0;
    dlb_status s = check_range(m, first, last, "backward_range", err);
    if (s != DLB_OK)
        return s;
    struct range *g = find(m, first, last);
    int end = last == m->spec->n_layers;
    if (!g || !g->pending)
        return dlb_errorf(err, DLB_ERR_INPUT, "backward_range [%u, %u) of %s "
                          "without its forward: run forward_range of the same "
                          "range first (once per backward)", first, last,
                          m->spec->path);
    if (!end && !dout)
        return dlb_errorf(err, DLB_ERR_INPUT, "backward_range [%u, %u) of %s: "
                          "no gradient at node %u (dout)", first, last,
                          m->spec->path, last);
    struct dlb_stage *st = g->st;
    uint32_t n = st->n;
    st->loss_scale = loss_scale;
    if ((s = dlb_stage_backward_begin(st, 0, !end, 1, err)) != DLB_OK)
        return s;
    g->pending = 0;
    if (!end)
        s = dlb_stage_upload(m, dout, (size_t)n * dlb_model_act_size(m, last),
                             m->spec->layers[last - 1].name, &dy, err);
    if (s == DLB_OK)
        s = dlb_stage_run_backward(st, 0, dy, din ? &dx : NULL, &dx_owned,
                                   err);
    if (s == DLB_OK && dx)
        s = download(m, din, dx, (size_t)n * dlb_model_act_size(m, first),
                     m->spec->layers[first].name, err);
    if (dx_owned)
        dlb_model_step_free(m, &dx);
    return dlb_stage_backward_done(st, s);
}
