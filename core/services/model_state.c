/* A model's state as one flat fp32 array (weights, batch-norm running
 * statistics, momentum), and its gradients in place or as copies: what a
 * data-parallel executor moves between replicas and ranks. */
#include "services/model_replica.h"

#include <stddef.h>

#include "backend/backend.h"
#include "model/model_impl.h"

/* The buffer of params[k] that belongs to `part`, or NULL. */
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

size_t dlb_model_state_count(const struct dlb_model *m, unsigned parts)
{
    size_t n = 0;
    for (unsigned part = 1; part <= DLB_STATE_MOMENTUM; part <<= 1)
        for (size_t k = 0; (parts & part) && k < m->n_params; k++)
            if (part_buf(&m->params[k], part))
                n += m->params[k].t.count;
    return n;
}

dlb_status dlb_model_state_io(struct dlb_model *m, unsigned parts, float *flat,
                              size_t count, int write, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    size_t want = dlb_model_state_count(m, parts), off = 0;
    dlb_status s = DLB_OK;
    if (m->dtype != DLB_F32)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: only fp32 models can "
                          "be copied as fp32 state", m->spec->path);
    if (count != want)
        return dlb_errorf(err, DLB_ERR_INPUT,
                          "%s: the state has %zu elements, "
                          "not %zu", m->spec->path, want, count);
    for (unsigned part = 1; part <= DLB_STATE_MOMENTUM; part <<= 1)
        for (size_t k = 0; (parts & part) && k < m->n_params; k++) {
            struct dlb_model_param *p = &m->params[k];
            struct dlb_buffer *b = part_buf(p, part);
            size_t bytes = p->t.count * sizeof *flat;
            if (!b)
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

static struct dlb_model_param *grad_param(struct dlb_model *m, unsigned i,
                                          struct dlb_error *err)
{
    unsigned left = i;
    for (size_t k = 0; k < m->n_params; k++)
        if (m->params[k].grad && left-- == 0)
            return &m->params[k];
    dlb_errorf(err, DLB_ERR_INPUT, "%s: no learnable tensor %u (the model has "
               "%u)", m->spec->path, i, dlb_model_n_learnable(m));
    return NULL;
}

/* map and unmap are API 1.1 entries: a backend module built before them
 * has a shorter table. */
static int has_map(const struct dlb_backend *be)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(be);
    return ops->struct_size >= offsetof(struct dlb_backend_ops, unmap) +
                                   sizeof ops->unmap &&
           ops->map && ops->unmap;
}

dlb_status dlb_model_grad_map(struct dlb_model *m, unsigned i,
                              struct dlb_act_view *out, struct dlb_error *err)
{
    struct dlb_model_param *p = grad_param(m, i, err);
    void *ptr = NULL;
    int device = 0;
    if (!p)
        return DLB_ERR_INPUT;
    if (m->dtype != DLB_F32 || !has_map(m->be))
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "backend %s cannot show "
                          "%s gradients in place", dlb_backend_name(m->be),
                          m->dtype != DLB_F32 ? "non-fp32" : "its");
    dlb_status s = dlb_backend_ops_of(m->be)->map(m->be, p->grad, &ptr,
                                                  &device);
    if (s != DLB_OK)
        return dlb_model_be_fail(m, s, p->name, "map gradient", err);
    *out = (struct dlb_act_view){ptr, p->t.count, device};
    return DLB_OK;
}

dlb_status dlb_model_grad_unmap(struct dlb_model *m, unsigned i, int written,
                                struct dlb_error *err)
{
    struct dlb_model_param *p = grad_param(m, i, err);
    if (!p)
        return DLB_ERR_INPUT;
    if (!has_map(m->be))
        return DLB_OK;
    dlb_status s = dlb_backend_ops_of(m->be)->unmap(m->be, p->grad, written);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, p->name, "unmap gradient",
                                               err);
}

dlb_status dlb_model_grad_io(struct dlb_model *m, unsigned i, float *host,
                             size_t count, int write, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    struct dlb_model_param *p = grad_param(m, i, err);
    dlb_status s;
    if (!p)
        return DLB_ERR_INPUT;
    if (m->dtype != DLB_F32)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: only fp32 gradients "
                          "can be copied as fp32", p->name);
    if (count != p->t.count)
        return dlb_errorf(err, DLB_ERR_INPUT, "gradient of '%s' has %zu "
                          "elements, not %zu", p->name, p->t.count, count);
    s = write ? ops->copy_from_host(m->be, p->grad, 0, host,
                                    count * sizeof *host)
              : ops->copy_to_host(m->be, host, p->grad, 0,
                                  count * sizeof *host);
    if (s == DLB_OK && !write)
        s = DLB_BE_CALL0(m->be, synchronize);
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, p->name, write
                                               ? "gradient write"
                                               : "gradient read", err);
}
