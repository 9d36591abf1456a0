/* Where int8 data flows: each int8 layer absorbs a batch normalisation
 * right after it (folded into its weights) and every ReLU up to the next
 * layer that is not max pooling, dropout or flatten (ReLU commutes with
 * all three, and dropout does nothing in inference); a ReLU6 only where
 * the next int8 layer's quantisation clips there anyway (clip_is_exact).
 * When that next layer runs in int8 too, the layer writes int8 data with
 * the next layer's input scale, the max poolings between run on int8 (the
 * maximum commutes with monotone quantisation), and no fp32 tensor exists
 * between the two; otherwise it writes fp32. This is what makes int8
 * inference pay: the quantise and dequantise passes cost as much as a
 * small convolution. A residual add is never on such a chain (its inputs
 * are two outputs): the int8 layers before it write fp32, the add sums in
 * fp32, and the next int8 layer quantises the sum with its own scale. */
#include "model/model_quant.h"

#include <math.h>
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

/* A ReLU clipped at `max` (ReLU6) before an int8 layer with input
 * settings q is what the requantisation does anyway when its highest
 * level is at or below max: every value from max up lands on that level
 * with or without the clip, and the values below max are untouched. Then
 * the ReLU fuses as a plain one (the lower clip) and the data stays int8;
 * calibrating the next layer's input, which is the clipped output, gives
 * such a range. Otherwise the clip runs in fp32. */
static int clip_is_exact(const struct dlb_quant_layer *q, float max)
{
    double top = nearbyint((double)max / q->act_scale) + q->act_zero_point;
    return top >= (q->act_type == DLB_U8 ? 255.0 : 127.0);
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
     * layer reads another, the data leaves in fp32. A clipped ReLU (the
     * first one) is passed tentatively: see clip_is_exact. */
    size_t clip_at = n;
    int relu_before_clip = 0;
    for (stop = j; stop < n; stop++) {
        const struct dlb_layer_spec *S = &sp->layers[stop];
        if (!dlb_model_spec_feeds_next(sp, stop - 1)) {
            branch = 1;
            break;
        }
        if (S->kind == DLB_LAYER_RELU && S->relu_max == 0)
            relu = 1;
        else if (S->kind == DLB_LAYER_RELU && clip_at == n) {
            clip_at = stop;
            relu_before_clip = relu;
            relu = 1;
        } else if (S->kind != DLB_LAYER_MAXPOOL &&
                   S->kind != DLB_LAYER_DROPOUT &&
                   S->kind != DLB_LAYER_FLATTEN)
            break;
    }
    int int8_out = !branch && stop < n && ql[stop].act_type != DLB_F32;
    if (clip_at < n &&
        !(int8_out &&
          clip_is_exact(&ql[stop], sp->layers[clip_at].relu_max))) {
        /* the clipped ReLU runs in fp32 on this layer's output */
        stop = clip_at;
        relu = relu_before_clip;
        int8_out = 0;
    }
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
