/* h->model_api's 2.1 entries: every tensor by id (statistics and
 * optimizer state beside the learnable tensors), and forward / backward
 * over a range of nodes of a model, over core/model/model_tensors.c
 * and model_range.c. */
#include "child/host.h"
#include "child/host_api.h"

#include <string.h>

#include "services/model_range.h"
#include "model/model_tensors.h"

static unsigned r_tensor_count_all(const struct dlb_host *h,
                                   const struct dlb_model *m)
{
    (void)h;
    return m ? dlb_model_tensor_count_all(m) : 0;
}

/* No more than the caller's struct holds: a later minor may grow it. */
static dlb_status r_tensor_desc(const struct dlb_host *h,
                                const struct dlb_model *m, unsigned id,
                                struct dlb_tensor_desc *out)
{
    struct dlb_error err = {""};
    struct dlb_tensor_desc d;
    if (!m || !out)
        return dlb_host_null(h, "tensor_desc");
    uint32_t size = out->struct_size;
    if (size < sizeof size)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INPUT, "tensor_desc: "
                             "set out->struct_size = sizeof(struct "
                             "dlb_tensor_desc) before the call"), &err);
    dlb_status s = dlb_model_tensor_desc(m, id, &d, &err);
    if (s != DLB_OK)
        return dlb_host_fail(h, s, &err);
    memcpy(out, &d, size < sizeof d ? size : sizeof d);
    out->struct_size = size;
    return DLB_OK;
}

static dlb_status r_forward_range(const struct dlb_host *h,
                                  struct dlb_model *m, unsigned first,
                                  unsigned last, uint32_t n, const float *in,
                                  const int32_t *labels, float *out,
                                  double *loss)
{
    DLB_HOST_CALL("forward_range", m,
                  dlb_model_range_forward(m, first, last, n, in, labels, out,
                                          loss, &err));
}

static dlb_status r_backward_range(const struct dlb_host *h,
                                   struct dlb_model *m, unsigned first,
                                   unsigned last, float loss_scale,
                                   const float *dout, float *din)
{
    DLB_HOST_CALL("backward_range", m,
                  dlb_model_range_backward(m, first, last, loss_scale, dout,
                                           din, &err));
}

void dlb_host_range_entries(struct dlb_model_api *api)
{
    api->tensor_count_all = r_tensor_count_all;
    api->tensor_desc = r_tensor_desc;
    api->forward_range = r_forward_range;
    api->backward_range = r_backward_range;
}
