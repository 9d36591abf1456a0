/* model_ops (ABI 1.2): plugins' view of the network, over model_info.c
 * and the workload's data. */
#include <dlbench/model_ops.h>

#include "util/error.h"
#include "child/host.h"
#include "model/model.h"

static const struct dlb_host_data *data_of(const struct dlb_host *h)
{
    return ((const struct dlb_host_priv *)h)->shared->data;
}

dlb_status dlb_host_fail(const struct dlb_host *h, dlb_status s,
                         const struct dlb_error *err)
{
    if (s != DLB_OK)
        h->log(h, DLB_LOG_ERROR, "%s", err->msg[0] ? err->msg
                                                   : dlb_status_name(s));
    return s;
}

static unsigned mo_layer_count(const struct dlb_host *h,
                               const struct dlb_model *m)
{
    (void)h;
    return m ? dlb_model_layer_count(m) : 0;
}

static dlb_status mo_layer_info(const struct dlb_host *h,
                                const struct dlb_model *m, unsigned i,
                                struct dlb_layer_info *out)
{
    struct dlb_error err = {""};
    if (!m || !out)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    dlb_status s = dlb_model_layer_info(m, i, out);
    if (s != DLB_OK)
        dlb_errorf(&err, s, "layer %u does not exist (the model has %u)", i,
                   dlb_model_layer_count(m));
    return dlb_host_fail(h, s, &err);
}

static dlb_status mo_tensor_count(const struct dlb_host *h,
                                  const struct dlb_model *m, const char *name,
                                  size_t *count)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_model_tensor_count(m, name, count, &err), &err);
}

static dlb_status mo_tensor_read(const struct dlb_host *h, struct dlb_model *m,
                                 const char *name, float *dst, size_t count)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_model_tensor_io(m, name, dst, count, 0, &err),
                         &err);
}

static dlb_status mo_tensor_write(const struct dlb_host *h, struct dlb_model *m,
                                  const char *name, const float *src,
                                  size_t count)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_model_tensor_io(m, name, (float *)src, count,
                                                1, &err), &err);
}

static dlb_status mo_infer(const struct dlb_host *h, struct dlb_model *m,
                           const float *images, uint32_t n, float *logprobs)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_model_infer(m, images, n, logprobs, &err), &err);
}

static dlb_status mo_evaluate(const struct dlb_host *h, struct dlb_model *m,
                              double *loss, double *accuracy)
{
    struct dlb_error err = {""};
    const struct dlb_host_data *d = data_of(h);
    dlb_status s = d && d->evaluate
        ? d->evaluate(d->ctx, m, loss, accuracy, &err)
        : dlb_errorf(&err, DLB_ERR_UNSUPPORTED, "this workload has no test set "
                     "to evaluate on");
    return dlb_host_fail(h, s, &err);
}

static dlb_status mo_dataset(const struct dlb_host *h, int train,
                             const struct dlb_dataset **out)
{
    struct dlb_error err = {""};
    const struct dlb_host_data *d = data_of(h);
    dlb_status s = d && d->dataset
        ? d->dataset(d->ctx, train, out, &err)
        : dlb_errorf(&err, DLB_ERR_UNSUPPORTED, "this workload lends no data "
                     "set to plugins");
    return dlb_host_fail(h, s, &err);
}

const struct dlb_model_ops dlb_host_model_ops = {
    .struct_size = sizeof(struct dlb_model_ops),
    .layer_count = mo_layer_count,
    .layer_info = mo_layer_info,
    .tensor_count = mo_tensor_count,
    .tensor_read = mo_tensor_read,
    .tensor_write = mo_tensor_write,
    .infer = mo_infer,
    .evaluate = mo_evaluate,
    .dataset = mo_dataset,
};
