/* What plugins may see of the model (model_api.h): layer descriptions and
 * fp32 copies of tensors by name. */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model_impl.h"

unsigned dlb_model_layer_count(const struct dlb_model *m)
{
    return (unsigned)m->spec->n_layers;
}

static void tensor_name(const struct dlb_model *m, int idx, char *dst,
                        size_t len, size_t *count)
{
    dst[0] = '\0';
    *count = 0;
    if (idx < 0)
        return;
    snprintf(dst, len, "%s", m->params[idx].name);
    *count = m->params[idx].t.count;
}

dlb_status dlb_model_layer_info(const struct dlb_model *m, unsigned i,
                                struct dlb_layer_info *out)
{
    if (i >= m->spec->n_layers)
        return DLB_ERR_INPUT;
    const struct dlb_layer_spec *L = &m->spec->layers[i];
    const struct dlb_model_layer *ml = &m->layers[i];
    memset(out, 0, sizeof *out);
    out->kind = L->kind;
    snprintf(out->name, sizeof out->name, "%s", L->name);
    out->in_c = L->in_c, out->in_h = L->in_h, out->in_w = L->in_w;
    out->out_c = L->out_c, out->out_h = L->out_h, out->out_w = L->out_w;
    if (L->kind == DLB_LAYER_CONV || L->kind == DLB_LAYER_MAXPOOL ||
        L->kind == DLB_LAYER_AVGPOOL) {
        out->size = L->size;
        out->stride = L->stride;
        out->pad = L->pad;
    }
    if (L->kind == DLB_LAYER_CONV)
        out->groups = L->groups ? L->groups : 1;
    if (L->kind == DLB_LAYER_RELU)
        out->relu_max = L->relu_max;
    _Static_assert(DLB_LAYER_MAX_INPUTS <= sizeof out->inputs /
                   sizeof out->inputs[0], "dlb_layer_info holds every input");
    out->n_inputs = L->n_inputs;
    for (uint32_t k = 0; k < L->n_inputs; k++)
        out->inputs[k] = L->inputs[k];
    tensor_name(m, ml->weight, out->weight, sizeof out->weight,
                &out->weight_count);
    tensor_name(m, ml->bias, out->bias, sizeof out->bias, &out->bias_count);
    out->params = L->params;
    out->flops_fwd = L->flops_fwd;
    return DLB_OK;
}

static struct dlb_model_param *find(const struct dlb_model *m, const char *name)
{
    for (size_t i = 0; name && i < m->n_params; i++)
        if (!strcmp(m->params[i].name, name))
            return &m->params[i];
    return NULL;
}

dlb_status dlb_model_tensor_count(const struct dlb_model *m, const char *name,
                                  size_t *count, struct dlb_error *err)
{
    const struct dlb_model_param *p = find(m, name);
    if (!p)
        return dlb_errorf(err, DLB_ERR_INPUT, "the model has no tensor '%s'",
                          name ? name : "(null)");
    *count = p->t.count;
    return DLB_OK;
}

/* Copy tensor `name` out (write = 0) or in (write = 1) as fp32. The
 * model's tensors are fp32 except in gradient checks (fp64), which do not
 * go through plugins. */
dlb_status dlb_model_tensor_io(struct dlb_model *m, const char *name,
                               float *host, size_t count, int write,
                               struct dlb_error *err)
{
    struct dlb_model_param *p = find(m, name);
    dlb_status s;
    if (!p)
        return dlb_errorf(err, DLB_ERR_INPUT, "the model has no tensor '%s'",
                          name ? name : "(null)");
    if (count != p->t.count)
        return dlb_errorf(err, DLB_ERR_INPUT, "tensor '%s' has %zu elements, "
                          "not %zu", name, p->t.count, count);
    if (m->dtype != DLB_F32)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "tensor '%s': only fp32 "
                          "models can be read or written as fp32", name);
    if (write) {
        s = DLB_BE_CALL(m->be, copy_from_host, p->t.buf, 0, host,
                        count * sizeof *host);
        dlb_model_weights_changed(m);
    } else {
        s = DLB_BE_CALL(m->be, copy_to_host, host, p->t.buf, 0,
                        count * sizeof *host);
        if (s == DLB_OK)
            s = DLB_BE_CALL0(m->be, synchronize);
    }
    return s == DLB_OK ? s : dlb_model_be_fail(m, s, name,
                                               write ? "write" : "read", err);
}
