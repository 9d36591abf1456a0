/* dlbench public SDK: int8 execution of conv and linear layers, for the
 * quant plugin (ABI 1.2, h->quant_ops). See model_ops.h.
 *
 * Post-training static quantisation in three calls:
 *
 *   1. observe   run the fp32 model over calibration images and receive
 *                the input of every conv and linear layer as an fp32 host
 *                array (the plugin's calibrators turn them into ranges);
 *   2. layer_weights  read the fp32 weights and bias each int8 layer will
 *                compute with, to choose the weight scales;
 *   3. apply     hand the core one struct dlb_quant_layer per layer: the
 *                core quantises the weights, folds batch normalisation,
 *                fuses ReLU and requantisation, and from then on infer,
 *                evaluate and the measured steps run those layers on the
 *                backend's int8 kernels (backend.h, API 1.1).
 *
 * The quantised model means, for a conv or linear layer i with input
 * scale s_x and zero point z_x, weight scales s_w[o]:
 *   qx   = clamp(round_half_even(x / s_x) + z_x) to the type's range
 *          (U8 [0, 255], S8 [-128, 127]; the backend's quantize)
 *   qw   = clamp(round_half_even(w / s_w[o]), -127, 127)
 *   qb   = round_half_even(b / (s_x * s_w[o]))      (int32)
 *   y    = s_x * s_w[o] * (sum (qx - z_x) * qw + qb), then ReLU when
 *          one follows (through max pooling, dropout and flatten, which
 *          commute with it), and requantised with the next int8 layer's
 *          input scale when int8 data flows straight on (backend.h gives
 *          the float steps exactly).
 * where w and b are layer_weights' values. Data stays int8 between two
 * int8 layers when only ReLU, max pooling, dropout (inference: none),
 * flatten and a batch normalisation folded into the layer before lie
 * between them; elsewhere the int8 layer writes fp32 and the next int8
 * layer quantises its input. */
#ifndef DLBENCH_QUANT_OPS_H
#define DLBENCH_QUANT_OPS_H

#include <dlbench/model_ops.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How one layer runs. act_type DLB_F32 leaves the layer in fp32 (every
 * layer that is not conv or linear must say so). */
struct dlb_quant_layer {
    enum dlb_dtype act_type;   /* DLB_F32, or DLB_U8 / DLB_S8: the input */
    float act_scale;           /* > 0 */
    int32_t act_zero_point;    /* U8: [0, 255]; S8: 0 (symmetric) */
    const float *w_scale;      /* n_w_scale scales > 0 of the S8 weights */
    uint32_t n_w_scale;        /* 1: per tensor; out channels: per channel */
};

/* What apply built. Sizes count every tensor of the model (learnable and
 * batch-norm statistics): fp32 as the model holds them, and as the
 * quantised model runs: int8 weights, int32 biases, fp32 scales and zero
 * points, folded batch normalisations gone, other tensors fp32. */
struct dlb_quant_summary {
    unsigned int8_layers;     /* conv and linear layers in int8 */
    unsigned int8_outputs;    /* of which requantise for the next int8 layer */
    unsigned folded;          /* batch normalisations folded away */
    unsigned input_quantize;  /* fp32 -> int8 conversions per forward pass */
    uint64_t fp32_bytes, int8_bytes;
};

/* Called by observe with the input of conv or linear layer `layer` for
 * the n images, per_image values each (NCHW, or [n][features]), and once
 * with layer = layer_count and the model's output (log-probabilities).
 * Values are fp32 (dequantised where the model runs int8). A status other
 * than DLB_OK stops the pass and is returned. */
typedef dlb_status (*dlb_quant_observe_fn)(void *ctx, unsigned layer,
                                           const float *x, uint32_t n,
                                           size_t per_image);

struct dlb_quant_ops {
    uint32_t struct_size;
    /* One inference pass over n images (NCHW fp32, normalised as the data
     * set is) as the model runs now: fp32 before apply, int8 after. */
    dlb_status (*observe)(const struct dlb_host *h, struct dlb_model *m,
                          const float *images, uint32_t n,
                          dlb_quant_observe_fn fn, void *ctx);
    /* The fp32 weights w (weight_count of layer_info) and bias b (out
     * channels; zeros for a layer without bias) conv or linear layer i
     * computes with in int8: the model's, with a batch normalisation that
     * directly follows it folded in (w * gamma / sqrt(var + eps), ...). */
    dlb_status (*layer_weights)(const struct dlb_host *h, struct dlb_model *m,
                                unsigned i, float *w, size_t w_count,
                                float *b, size_t b_count);
    /* Run the model in int8 as `layers` (n = layer_count entries) says;
     * replaces an earlier apply. DLB_ERR_INPUT names the layer and the
     * setting at fault; DLB_ERR_UNSUPPORTED when the backend has no int8
     * kernels. The weights are read now: writing tensors afterwards does
     * not change the int8 layers (apply again). `out` may be NULL. */
    dlb_status (*apply)(const struct dlb_host *h, struct dlb_model *m,
                        const struct dlb_quant_layer *layers, unsigned n,
                        struct dlb_quant_summary *out);
    /* Back to fp32 everywhere. */
    void (*clear)(const struct dlb_host *h, struct dlb_model *m);
};

#ifdef __cplusplus
}
#endif
#endif
