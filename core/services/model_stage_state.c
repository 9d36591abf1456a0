/* The state of a run of layers as one flat fp32 array: what a pipeline
 * stage hands back to the model the harness evaluates. */
#include "services/model_stage.h"

#include "backend/backend.h"
#include "model/model_impl.h"

/* Is params[k] a tensor of layers [first, last)? */
static int in_range(const struct dlb_model *m, size_t k, unsigned first,
                    unsigned last)
{
    for (unsigned i = first; i < last && i < m->spec->n_layers; i++) {
        const struct dlb_model_layer *ml = &m->layers[i];
        if (ml->weight == (int)k || ml->bias == (int)k ||
            ml->run_mean == (int)k || ml->run_var == (int)k)
            return 1;
    }
    return 0;
}

/* The buffer of p that belongs to state part `part`, or NULL. */
static struct dlb_buffer *part_buf(const struct dlb_model_param *p,
                                   unsigned part)
{
    switch (part) {
    case DLB_STATE_WEIGHTS: return p->grad ? p->t.buf : NULL;
    case DLB_STATE_STATS: return p->grad ? NULL : p->t.buf;
    case DLB_STATE_MOMENTUM: return p->mom;
    default: return NULL;
    }
}

size_t dlb_model_layers_count(const struct dlb_model *m, unsigned first,
                              unsigned last, unsigned parts)
{
    size_t n = 0;
    for (unsigned part = 1; part <= DLB_STATE_MOMENTUM; part <<= 1)
        for (size_t k = 0; (parts & part) && k < m->n_params; k++)
            if (part_buf(&m->params[k], part) && in_range(m, k, first, last))
                n += m->params[k].t.count;
    return n;
}

dlb_status dlb_model_layers_io(struct dlb_model *m, unsigned first,
                               unsigned last, unsigned parts, float *flat,
                               size_t count, int write, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    size_t want = dlb_model_layers_count(m, first, last, parts), off = 0;
    dlb_status s;
    if (m->dtype != DLB_F32)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: only fp32 models can "
                          "be copied as fp32 state", m->spec->path);
    if (first >= last || last > m->spec->n_layers)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layers [%u, %u) are not a "
                          "run of the network's %zu", m->spec->path, first,
                          last, m->spec->n_layers);
    if (count != want)
        return dlb_errorf(err, DLB_ERR_INPUT, "%s: layers [%u, %u) hold %zu "
                          "elements, not %zu", m->spec->path, first, last,
                          want, count);
    for (unsigned part = 1; part <= DLB_STATE_MOMENTUM; part <<= 1)
        for (size_t k = 0; (parts & part) && k < m->n_params; k++) {
            struct dlb_model_param *p = &m->params[k];
            struct dlb_buffer *b = part_buf(p, part);
            size_t bytes = p->t.count * sizeof *flat;
            if (!b || !in_range(m, k, first, last))
                continue;
            s = write ? ops->copy_from_host(m->be, b, 0, flat + off, bytes)
                      : ops->copy_to_host(m->be, flat + off, b, 0, bytes);
            if (s != DLB_OK)
                return dlb_model_be_fail(m, s, p->name, write ? "state write"
                                                              : "state read",
                                         err);
            off += p->t.count;
        }
    if (!write && (s = DLB_BE_CALL0(m->be, synchronize)) != DLB_OK)
        return dlb_model_be_fail(m, s, "state", "synchronize", err);
    if (write && (parts & (DLB_STATE_WEIGHTS | DLB_STATE_STATS)))
        dlb_model_weights_changed(m);
    return DLB_OK;
}
