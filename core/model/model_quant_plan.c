/* Where int8 data flows: each int8 layer absorbs a batch normalisation
 * right after it (folded into its weights) and every ReLU up to the next
 * layer that is not max pooling, dropout or flatten (ReLU commutes with
 * all three, and dropout does nothing in inference). When that next layer
 * runs in int8 too, the layer writes int8 data with the next layer's
 * input scale, the max poolings between run on int8 (the maximum commutes
 * with monotone quantisation), and no fp32 tensor exists between the two;
 * otherwise it writes fp32. This is what makes int8 inference pay: the
 * quantise and dequantise passes cost as much as a small convolution. */
#include "model/model_quant.h"

#include <stdlib.h>

#include "model/model_impl.h"

static dlb_status mark(struct dlb_model *m, size_t i, enum dlb_qrole role,
                       struct dlb_error *err)
{
    struct dlb_model_qlayer *q = calloc(1, sizeof *q);
    if (!q)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory planning int8 "
                          "layers");
    q->role = role;
    m->layers[i].q = q;
    return DLB_OK;
}

/* Plan int8 layer i and the layers its output passes through. */
static dlb_status plan_one(struct dlb_model *m, size_t i,
                           const struct dlb_quant_layer *ql,
                           struct dlb_quant_summary *sum, struct dlb_error *err)
{
    const struct dlb_model_spec *sp = m->spec;
    size_t n = sp->n_layers, j = i + 1, stop;
    int relu = 0, branch = 0;
    dlb_status s = mark(m, i, DLB_QROLE_INT8, err);
    if (s != DLB_OK)
        return s;
    if (dlb_model_spec_feeds_next(sp, i) &&
        sp->layers[j].kind == DLB_LAYER_BATCHNORM) {
        if ((s = mark(m, j++, DLB_QROLE_SKIP, err)))
            return s;
        sum->folded++;
    }
    /* Along the chain only: where the output is read twice or the next
     * layer reads another, the data leaves in fp32. */
    for (stop = j; stop < n; stop++) {
        enum dlb_layer_kind k = sp->layers[stop].kind;
        if (!dlb_model_spec_feeds_next(sp, stop - 1)) {
            branch = 1;
            break;
        }
        if (k == DLB_LAYER_RELU && sp->layers[stop].relu_max == 0)
            relu = 1;
        else if (k != DLB_LAYER_MAXPOOL && k != DLB_LAYER_DROPOUT &&
                 k != DLB_LAYER_FLATTEN)
            break;
    }
    int int8_out = !branch && stop < n && ql[stop].act_type != DLB_F32;
    struct dlb_model_qlayer *q = m->layers[i].q;
    q->in_type = ql[i].act_type;
    q->out_type = int8_out ? ql[stop].act_type : DLB_F32;
    q->d = (struct dlb_int8_desc){
        .x_type = ql[i].act_type,
        .x_scale = ql[i].act_scale, .x_zero_point = ql[i].act_zero_point,
        .y_scale = int8_out ? ql[stop].act_scale : 1.0f,
        .y_zero_point = int8_out ? ql[stop].act_zero_point : 0,
        .relu = relu};
    sum->int8_layers++;
    sum->int8_outputs += int8_out;
    for (; j < stop && s == DLB_OK; j++) {
        enum dlb_layer_kind k = sp->layers[j].kind;
        if (k == DLB_LAYER_RELU)
            s = mark(m, j, DLB_QROLE_SKIP, err);
        else if (k == DLB_LAYER_MAXPOOL && int8_out)
            s = mark(m, j, DLB_QROLE_POOL, err);
    }
    return s;
}

dlb_status dlb_model_quant_plan(struct dlb_model *m,
                                const struct dlb_quant_layer *layers,
                                struct dlb_quant_summary *sum,
                                struct dlb_error *err)
{
    dlb_status s = DLB_OK;
    for (size_t i = 0; i < m->spec->n_layers && s == DLB_OK; i++)
        if (layers[i].act_type != DLB_F32)
            s = plan_one(m, i, layers, sum, err);
    sum->input_quantize = sum->int8_layers - sum->int8_outputs;
    return s;
}
