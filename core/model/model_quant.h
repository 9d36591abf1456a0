/* int8 inference inside the model (model_quant*.c): conv and linear
 * layers on the backend's int8 kernels, batch normalisation folded into
 * them, ReLU fused, and int8 data handed from one int8 layer to the next
 * through max pooling. The public side is <dlbench/model_api.h>
 * (core/child/host_quant.c), whose comment states what the quantised model
 * computes. */
#ifndef DLB_CORE_MODEL_QUANT_H
#define DLB_CORE_MODEL_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/backend.h>
#include <dlbench/model_api.h>

#include "util/error.h"
#include "model/model.h"

/* What a layer does in the int8 forward pass (ml->q). */
enum dlb_qrole {
    DLB_QROLE_INT8,  /* conv or linear on the int8 kernels */
    DLB_QROLE_POOL,  /* max pooling of int8 data */
    DLB_QROLE_SKIP   /* folded or fused into the int8 layer before it */
};

struct dlb_model_qlayer {
    enum dlb_qrole role;
    /* DLB_QROLE_INT8 */
    struct dlb_int8_desc d;
    enum dlb_dtype in_type;    /* S8 or U8 */
    enum dlb_dtype out_type;   /* F32, or S8 / U8 for the next int8 layer */
    struct dlb_buffer *w;      /* S8, the backend's layout of the weights */
    struct dlb_buffer *w_scale;/* F32 [1] or [out] */
    struct dlb_buffer *b;      /* S32 [out] in accumulator units, or NULL */
};

/* The weights and bias conv or linear layer i computes with in int8 (a
 * batch normalisation right after it folded in); counts must match. */
dlb_status dlb_model_quant_weights(struct dlb_model *m, size_t i, float *w,
                                   size_t w_count, float *b, size_t b_count,
                                   struct dlb_error *err);

/* Run the layers as `layers` (n = layer count) says (model_api.h's
 * DLB_REWRITE_INT8). */
dlb_status dlb_model_quant_apply(struct dlb_model *m,
                                 const struct dlb_quant_layer *layers,
                                 size_t n, struct dlb_quant_summary *out,
                                 struct dlb_error *err);
/* model_quant_plan.c: give each layer its part in the int8 forward pass
 * (ml->q, weights not yet quantised) for the checked `layers`, counting
 * layers, requantised outputs, folds and input quantisations in `sum`.
 * On failure some layers may hold state: dlb_model_quant_clear. */
dlb_status dlb_model_quant_plan(struct dlb_model *m,
                                const struct dlb_quant_layer *layers,
                                struct dlb_quant_summary *sum,
                                struct dlb_error *err);
/* Back to fp32; releases every layer's int8 state (dlb_model_destroy). */
void dlb_model_quant_clear(struct dlb_model *m);

/* The forward of layer i when it has int8 state (ml->q), as
 * dlb_model_layer_fwd. Training through an int8 layer is refused. */
dlb_status dlb_model_quant_fwd(struct dlb_model *m, size_t i, int train,
                               struct dlb_buffer *x, struct dlb_buffer **y,
                               int *owned, struct dlb_error *err);

/* The extra quant.observe: one inference pass, the inputs of conv and linear
 * layers and the output handed to fn as fp32 host arrays. */
dlb_status dlb_model_quant_observe(struct dlb_model *m, const float *images,
                                   uint32_t n, dlb_quant_observe_fn fn,
                                   void *ctx, struct dlb_error *err);

#endif
