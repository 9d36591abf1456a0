/* h->model_api's slices (ABI 2.1): a range of a model's nodes run as a
 * pipeline stage, over core/services/model_stage*.c. */
#include "child/host.h"
#include "child/host_api.h"
#include "services/model_stage.h"

static dlb_status s_act_count(const struct dlb_host *h,
                              const struct dlb_model *m, unsigned i,
                              size_t *count)
{
    struct dlb_error err = {""};
    if (!m || !count)
        return dlb_host_null(h, "act_count");
    if (i > dlb_model_layer_count(m))
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INPUT, "act_count: "
                             "node %u of a network of %u", i,
                             dlb_model_layer_count(m)), &err);
    *count = dlb_model_stage_act_count(m, i);
    return DLB_OK;
}

static dlb_status s_slice(const struct dlb_host *h, struct dlb_model *m,
                          const struct dlb_stage_spec *spec,
                          struct dlb_stage **out)
{
    DLB_HOST_CALL("slice", m && out, dlb_model_stage_open(m, spec, out, &err));
}

static void s_slice_close(const struct dlb_host *h, struct dlb_stage *st)
{
    (void)h;
    dlb_model_stage_close(st);
}

static dlb_status s_slice_begin(const struct dlb_host *h, struct dlb_stage *st,
                                uint32_t n, uint32_t *lo)
{
    DLB_HOST_CALL("slice_begin", st, dlb_model_stage_begin(st, n, lo, &err));
}

static dlb_status s_slice_forward(const struct dlb_host *h,
                                  struct dlb_stage *st, unsigned k,
                                  const float *in, const int32_t *labels,
                                  float *out, double *loss)
{
    DLB_HOST_CALL("slice_forward", st,
               dlb_model_stage_forward(st, k, in, labels, out, loss, &err));
}

static dlb_status s_slice_backward(const struct dlb_host *h,
                                   struct dlb_stage *st, unsigned k,
                                   const float *dout, float *din)
{
    DLB_HOST_CALL("slice_backward", st,
               dlb_model_stage_backward(st, k, dout, din, &err));
}

static dlb_status s_slice_step(const struct dlb_host *h, struct dlb_stage *st)
{
    DLB_HOST_CALL("slice_step", st, dlb_model_stage_update(st, &err));
}

static void s_slice_memory(const struct dlb_host *h,
                           const struct dlb_stage *st,
                           struct dlb_stage_memory *out)
{
    (void)h;
    if (st && out)
        dlb_model_stage_memory(st, out);
}

static dlb_status s_slice_input(const struct dlb_host *h, struct dlb_stage *st,
                                unsigned k, enum dlb_stage_input which,
                                struct dlb_act_view *out)
{
    DLB_HOST_CALL("slice_input", st && out,
               dlb_model_stage_input_view(st, k, which, out, &err));
}

static dlb_status s_slice_forward_view(const struct dlb_host *h,
                                       struct dlb_stage *st, unsigned k,
                                       const float *in, const int32_t *labels,
                                       struct dlb_act_view *out, double *loss)
{
    DLB_HOST_CALL("slice_forward_view", st,
               dlb_model_stage_forward_view(st, k, in, labels, out, loss,
                                            &err));
}

static dlb_status s_slice_backward_view(const struct dlb_host *h,
                                        struct dlb_stage *st, unsigned k,
                                        struct dlb_act_view *din)
{
    DLB_HOST_CALL("slice_backward_view", st,
               dlb_model_stage_backward_view(st, k, din, &err));
}

void dlb_host_slice_entries(struct dlb_model_api *api)
{
    api->act_count = s_act_count;
    api->slice = s_slice;
    api->slice_close = s_slice_close;
    api->slice_begin = s_slice_begin;
    api->slice_forward = s_slice_forward;
    api->slice_backward = s_slice_backward;
    api->slice_step = s_slice_step;
    api->slice_memory = s_slice_memory;
    api->slice_input = s_slice_input;
    api->slice_forward_view = s_slice_forward_view;
    api->slice_backward_view = s_slice_backward_view;
}
