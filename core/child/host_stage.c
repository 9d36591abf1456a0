/* stage_ops (ABI 1.3): pipeline stages of a model, for the mp plugin. */
#include <dlbench/stage_ops.h>

#include "util/error.h"
#include "child/host.h"
#include "services/model_stage.h"

static dlb_status so_act_count(const struct dlb_host *h,
                               const struct dlb_model *m, unsigned i,
                               size_t *count)
{
    struct dlb_error err = {""};
    if (!m || !count)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    if (i > dlb_model_layer_count(m))
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INPUT, "act_count: "
                             "layer %u of a network of %u", i,
                             dlb_model_layer_count(m)), &err);
    *count = dlb_model_stage_act_count(m, i);
    return DLB_OK;
}

static dlb_status so_open(const struct dlb_host *h, struct dlb_model *m,
                          const struct dlb_stage_spec *spec,
                          struct dlb_stage **out)
{
    struct dlb_error err = {""};
    if (!m || !out)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    return dlb_host_fail(h, dlb_model_stage_open(m, spec, out, &err), &err);
}

static void so_close(const struct dlb_host *h, struct dlb_stage *st)
{
    (void)h;
    dlb_model_stage_close(st);
}

static dlb_status so_begin(const struct dlb_host *h, struct dlb_stage *st,
                           uint32_t n, uint32_t *lo)
{
    struct dlb_error err = {""};
    if (!st)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    return dlb_host_fail(h, dlb_model_stage_begin(st, n, lo, &err), &err);
}

static dlb_status so_forward(const struct dlb_host *h, struct dlb_stage *st,
                             unsigned k, const float *in,
                             const int32_t *labels, float *out, double *loss)
{
    struct dlb_error err = {""};
    if (!st)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    return dlb_host_fail(h, dlb_model_stage_forward(st, k, in, labels, out,
                                                    loss, &err), &err);
}

static dlb_status so_backward(const struct dlb_host *h, struct dlb_stage *st,
                              unsigned k, const float *dout, float *din)
{
    struct dlb_error err = {""};
    if (!st)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    return dlb_host_fail(h, dlb_model_stage_backward(st, k, dout, din, &err),
                         &err);
}

static dlb_status so_update(const struct dlb_host *h, struct dlb_stage *st)
{
    struct dlb_error err = {""};
    if (!st)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    return dlb_host_fail(h, dlb_model_stage_update(st, &err), &err);
}

static void so_memory(const struct dlb_host *h, const struct dlb_stage *st,
                      struct dlb_stage_memory *out)
{
    (void)h;
    if (st && out)
        dlb_model_stage_memory(st, out);
}

static dlb_status so_layers_count(const struct dlb_host *h,
                                  const struct dlb_model *m, unsigned first,
                                  unsigned last, unsigned parts, size_t *count)
{
    (void)h;
    if (!m || !count)
        return DLB_ERR_INTERNAL;
    *count = dlb_model_layers_count(m, first, last, parts);
    return DLB_OK;
}

static dlb_status so_layers_io(const struct dlb_host *h, struct dlb_model *m,
                               unsigned first, unsigned last, unsigned parts,
                               float *flat, size_t count, int write)
{
    struct dlb_error err = {""};
    if (!m || (!flat && count))
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    return dlb_host_fail(h, dlb_model_layers_io(m, first, last, parts, flat,
                                                count, write, &err), &err);
}

static dlb_status so_input_view(const struct dlb_host *h, struct dlb_stage *st,
                                unsigned k, enum dlb_stage_input which,
                                struct dlb_act_view *out)
{
    struct dlb_error err = {""};
    if (!st || !out)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    return dlb_host_fail(h, dlb_model_stage_input_view(st, k, which, out,
                                                       &err), &err);
}

static dlb_status so_forward_view(const struct dlb_host *h,
                                  struct dlb_stage *st, unsigned k,
                                  const float *in, const int32_t *labels,
                                  struct dlb_act_view *out, double *loss)
{
    struct dlb_error err = {""};
    if (!st)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    return dlb_host_fail(h, dlb_model_stage_forward_view(st, k, in, labels,
                                                         out, loss, &err),
                         &err);
}

static dlb_status so_backward_view(const struct dlb_host *h,
                                   struct dlb_stage *st, unsigned k,
                                   struct dlb_act_view *din)
{
    struct dlb_error err = {""};
    if (!st)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    return dlb_host_fail(h, dlb_model_stage_backward_view(st, k, din, &err),
                         &err);
}

const struct dlb_stage_ops dlb_host_stage_ops = {
    .struct_size = sizeof(struct dlb_stage_ops),
    .act_count = so_act_count,
    .open = so_open,
    .close = so_close,
    .begin = so_begin,
    .forward = so_forward,
    .backward = so_backward,
    .update = so_update,
    .memory = so_memory,
    .layers_count = so_layers_count,
    .layers_io = so_layers_io,
    .input_view = so_input_view,
    .forward_view = so_forward_view,
    .backward_view = so_backward_view,
};
