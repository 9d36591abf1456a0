/* Operations by the names of the 1.x backend table, with its arguments:
 * DLB_RUN(be, conv2d_fwd, &d, x, w, b, y) runs what conv2d_fwd(be, &d, x,
 * w, b, y) computed. For the backend tests, which drive every operation
 * with its tensors, and callers that read better so; a descriptor
 * argument is a pointer, as it was. */
#ifndef DLB_CORE_OP_CALL_H
#define DLB_CORE_OP_CALL_H

#include "backend.h"

/* The compound literal of operation NAME from its 1.x arguments. */
#define DLB_OP_OF(name, ...) DLB_OPL_##name(__VA_ARGS__)
#define DLB_RUN(be, name, ...) dlb_backend_run((be), &DLB_OP_OF(name, __VA_ARGS__))

#define DLB_OPL_conv2d_fwd(CONV_, X_, W_, B_, Y_) \
    (struct dlb_op){.kind = DLB_OP_CONV2D, .prop = DLB_PROP_FWD_TRAIN, \
        .conv = *(CONV_), .x = (X_), .w = (W_), .b = (B_), \
        .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_conv2d_fwd_infer(CONV_, X_, W_, B_, Y_) \
    (struct dlb_op){.kind = DLB_OP_CONV2D, .prop = DLB_PROP_FWD_INFER, \
        .conv = *(CONV_), .x = (X_), .w = (W_), .b = (B_), \
        .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_conv2d_bwd_data(CONV_, W_, DY_, DX_) \
    (struct dlb_op){.kind = DLB_OP_CONV2D, .prop = DLB_PROP_BWD_DATA, \
        .conv = *(CONV_), .w = (W_), .dy = (DY_), \
        .dx = (struct dlb_buffer *)(DX_)}
#define DLB_OPL_conv2d_bwd_weights(CONV_, X_, DY_, DW_, DB_) \
    (struct dlb_op){.kind = DLB_OP_CONV2D, .prop = DLB_PROP_BWD_WEIGHTS, \
        .conv = *(CONV_), .x = (X_), .dy = (DY_), \
        .dw = (struct dlb_buffer *)(DW_), .db = (struct dlb_buffer *)(DB_)}
#define DLB_OPL_conv2d_pool_fwd(CONV_, POOL_, RELU_, X_, W_, B_, Y_, WS_) \
    (struct dlb_op){.kind = DLB_OP_CONV2D_POOL, .prop = DLB_PROP_FWD_TRAIN, \
        .conv = *(CONV_), .pool = *(POOL_), .relu = (RELU_), .x = (X_), \
        .w = (W_), .b = (B_), .y = (struct dlb_buffer *)(Y_), \
        .ws = (struct dlb_buffer *)(WS_)}
#define DLB_OPL_conv2d_pool_fwd_infer(CONV_, POOL_, RELU_, X_, W_, B_, Y_, WS_) \
    (struct dlb_op){.kind = DLB_OP_CONV2D_POOL, .prop = DLB_PROP_FWD_INFER, \
        .conv = *(CONV_), .pool = *(POOL_), .relu = (RELU_), .x = (X_), \
        .w = (W_), .b = (B_), .y = (struct dlb_buffer *)(Y_), \
        .ws = (struct dlb_buffer *)(WS_)}
#define DLB_OPL_conv2d_pool_bwd_weights(CONV_, POOL_, X_, DY_, WS_, DW_, DB_) \
    (struct dlb_op){.kind = DLB_OP_CONV2D_POOL, \
        .prop = DLB_PROP_BWD_WEIGHTS, .conv = *(CONV_), .pool = *(POOL_), \
        .x = (X_), .dy = (DY_), .ws = (struct dlb_buffer *)(WS_), \
        .dw = (struct dlb_buffer *)(DW_), .db = (struct dlb_buffer *)(DB_)}
#define DLB_OPL_pool_fwd(POOL_, X_, Y_, WS_) \
    (struct dlb_op){.kind = DLB_OP_POOL, .prop = DLB_PROP_FWD_TRAIN, \
        .pool = *(POOL_), .x = (X_), .y = (struct dlb_buffer *)(Y_), \
        .ws = (struct dlb_buffer *)(WS_)}
#define DLB_OPL_pool_bwd(POOL_, DY_, WS_, DX_) \
    (struct dlb_op){.kind = DLB_OP_POOL, .prop = DLB_PROP_BWD, \
        .pool = *(POOL_), .dy = (DY_), .ws = (struct dlb_buffer *)(WS_), \
        .dx = (struct dlb_buffer *)(DX_)}
#define DLB_OPL_relu_fwd(COUNT_, X_, Y_) \
    (struct dlb_op){.kind = DLB_OP_RELU, .prop = DLB_PROP_FWD_TRAIN, \
        .count = (COUNT_), .x = (X_), .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_relu_bwd(COUNT_, Y_, DY_, DX_) \
    (struct dlb_op){.kind = DLB_OP_RELU, .prop = DLB_PROP_BWD, \
        .count = (COUNT_), .y = (struct dlb_buffer *)(Y_), .dy = (DY_), \
        .dx = (struct dlb_buffer *)(DX_)}
#define DLB_OPL_dropout_fwd(DROP_, X_, Y_) \
    (struct dlb_op){.kind = DLB_OP_DROPOUT, .prop = DLB_PROP_FWD_TRAIN, \
        .drop = *(DROP_), .x = (X_), .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_dropout_bwd(DROP_, DY_, DX_) \
    (struct dlb_op){.kind = DLB_OP_DROPOUT, .prop = DLB_PROP_BWD, \
        .drop = *(DROP_), .dy = (DY_), .dx = (struct dlb_buffer *)(DX_)}
#define DLB_OPL_batchnorm_fwd_train(BN_, X_, W_, B_, MEAN_, VAR_, SAVE_MEAN_, SAVE_INVSTD_, Y_) \
    (struct dlb_op){.kind = DLB_OP_BATCHNORM, .prop = DLB_PROP_FWD_TRAIN, \
        .bn = *(BN_), .x = (X_), .w = (W_), .b = (B_), \
        .mean = (struct dlb_buffer *)(MEAN_), \
        .var = (struct dlb_buffer *)(VAR_), \
        .save_mean = (struct dlb_buffer *)(SAVE_MEAN_), \
        .save_invstd = (struct dlb_buffer *)(SAVE_INVSTD_), \
        .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_batchnorm_fwd_infer(BN_, X_, W_, B_, MEAN_, VAR_, Y_) \
    (struct dlb_op){.kind = DLB_OP_BATCHNORM, .prop = DLB_PROP_FWD_INFER, \
        .bn = *(BN_), .x = (X_), .w = (W_), .b = (B_), \
        .mean = (struct dlb_buffer *)(MEAN_), \
        .var = (struct dlb_buffer *)(VAR_), .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_batchnorm_bwd(BN_, X_, DY_, W_, SAVE_MEAN_, SAVE_INVSTD_, DX_, DW_, DB_) \
    (struct dlb_op){.kind = DLB_OP_BATCHNORM, .prop = DLB_PROP_BWD, \
        .bn = *(BN_), .x = (X_), .dy = (DY_), .w = (W_), \
        .save_mean = (struct dlb_buffer *)(SAVE_MEAN_), \
        .save_invstd = (struct dlb_buffer *)(SAVE_INVSTD_), \
        .dx = (struct dlb_buffer *)(DX_), .dw = (struct dlb_buffer *)(DW_), \
        .db = (struct dlb_buffer *)(DB_)}
#define DLB_OPL_batchnorm_relu_fwd_train(BN_, X_, W_, B_, MEAN_, VAR_, SAVE_MEAN_, SAVE_INVSTD_, Y_) \
    (struct dlb_op){.kind = DLB_OP_BATCHNORM_RELU, \
        .prop = DLB_PROP_FWD_TRAIN, .bn = *(BN_), .x = (X_), .w = (W_), \
        .b = (B_), .mean = (struct dlb_buffer *)(MEAN_), \
        .var = (struct dlb_buffer *)(VAR_), \
        .save_mean = (struct dlb_buffer *)(SAVE_MEAN_), \
        .save_invstd = (struct dlb_buffer *)(SAVE_INVSTD_), \
        .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_batchnorm_relu_bwd(BN_, X_, Y_, DY_, W_, B_, SAVE_MEAN_, SAVE_INVSTD_, DX_, DW_, DB_) \
    (struct dlb_op){.kind = DLB_OP_BATCHNORM_RELU, .prop = DLB_PROP_BWD, \
        .bn = *(BN_), .x = (X_), .y = (struct dlb_buffer *)(Y_), \
        .dy = (DY_), .w = (W_), .b = (B_), \
        .save_mean = (struct dlb_buffer *)(SAVE_MEAN_), \
        .save_invstd = (struct dlb_buffer *)(SAVE_INVSTD_), \
        .dx = (struct dlb_buffer *)(DX_), .dw = (struct dlb_buffer *)(DW_), \
        .db = (struct dlb_buffer *)(DB_)}
#define DLB_OPL_linear_fwd(LINEAR_, X_, W_, B_, Y_) \
    (struct dlb_op){.kind = DLB_OP_LINEAR, .prop = DLB_PROP_FWD_TRAIN, \
        .linear = *(LINEAR_), .x = (X_), .w = (W_), .b = (B_), \
        .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_linear_bwd(LINEAR_, X_, W_, DY_, DX_, DW_, DB_) \
    (struct dlb_op){.kind = DLB_OP_LINEAR, .prop = DLB_PROP_BWD, \
        .linear = *(LINEAR_), .x = (X_), .w = (W_), .dy = (DY_), \
        .dx = (struct dlb_buffer *)(DX_), .dw = (struct dlb_buffer *)(DW_), \
        .db = (struct dlb_buffer *)(DB_)}
#define DLB_OPL_logsoftmax_fwd(LOSS_, X_, Y_) \
    (struct dlb_op){.kind = DLB_OP_LOGSOFTMAX, .prop = DLB_PROP_FWD_TRAIN, \
        .loss = *(LOSS_), .x = (X_), .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_nll_loss(LOSS_, X_, LABELS_, Y_) \
    (struct dlb_op){.kind = DLB_OP_NLL_LOSS, .prop = DLB_PROP_FWD_TRAIN, \
        .loss = *(LOSS_), .x = (X_), .labels = (LABELS_), \
        .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_logsoftmax_nll_bwd(LOSS_, X_, LABELS_, ALPHA_, DX_) \
    (struct dlb_op){.kind = DLB_OP_LOGSOFTMAX_NLL, .prop = DLB_PROP_BWD, \
        .loss = *(LOSS_), .x = (X_), .labels = (LABELS_), \
        .alpha = (ALPHA_), .dx = (struct dlb_buffer *)(DX_)}
#define DLB_OPL_sgd_update(SGD_, PARAM_, G_, V_) \
    (struct dlb_op){.kind = DLB_OP_SGD, .sgd = *(SGD_), \
        .param = (struct dlb_buffer *)(PARAM_), .g = (G_), \
        .v = (struct dlb_buffer *)(V_)}
#define DLB_OPL_cast(COUNT_, X_, Y_) \
    (struct dlb_op){.kind = DLB_OP_CAST, .count = (COUNT_), .x = (X_), \
        .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_scale(COUNT_, Y_, ALPHA_) \
    (struct dlb_op){.kind = DLB_OP_SCALE, .count = (COUNT_), \
        .y = (struct dlb_buffer *)(Y_), .alpha = (ALPHA_)}
#define DLB_OPL_add(COUNT_, X_, G_, Y_) \
    (struct dlb_op){.kind = DLB_OP_ADD, .count = (COUNT_), .x = (X_), \
        .g = (G_), .y = (Y_)}
#define DLB_OPL_check_finite(COUNT_, X_, NONFINITE_) \
    (struct dlb_op){.kind = DLB_OP_CHECK_FINITE, .count = (COUNT_), \
        .x = (X_), .nonfinite = (NONFINITE_)}
#define DLB_OPL_fill(COUNT_, Y_, VALUE_) \
    (struct dlb_op){.kind = DLB_OP_FILL, .count = (COUNT_), \
        .y = (struct dlb_buffer *)(Y_), .value = (VALUE_)}
#define DLB_OPL_quantize(COUNT_, X_, Y_, ALPHA_, ZERO_POINT_) \
    (struct dlb_op){.kind = DLB_OP_QUANTIZE, .count = (COUNT_), .x = (X_), \
        .y = (struct dlb_buffer *)(Y_), .alpha = (ALPHA_), \
        .zero_point = (ZERO_POINT_)}
#define DLB_OPL_dequantize(COUNT_, X_, Y_, ALPHA_, ZERO_POINT_) \
    (struct dlb_op){.kind = DLB_OP_DEQUANTIZE, .count = (COUNT_), \
        .x = (X_), .y = (struct dlb_buffer *)(Y_), .alpha = (ALPHA_), \
        .zero_point = (ZERO_POINT_)}
#define DLB_OPL_allreduce_sum(COUNT_, Y_) \
    (struct dlb_op){.kind = DLB_OP_ALLREDUCE_SUM, .count = (COUNT_), \
        .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_conv2d_int8_fwd(CONV_, Q_, X_, W_, W_SCALE_, B_, Y_) \
    (struct dlb_op){.kind = DLB_OP_CONV2D_INT8, .prop = DLB_PROP_FWD_INFER, \
        .conv = *(CONV_), .q = *(Q_), .x = (X_), .w = (W_), \
        .w_scale = (W_SCALE_), .b = (B_), .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_linear_int8_fwd(LINEAR_, Q_, X_, W_, W_SCALE_, B_, Y_) \
    (struct dlb_op){.kind = DLB_OP_LINEAR_INT8, .prop = DLB_PROP_FWD_INFER, \
        .linear = *(LINEAR_), .q = *(Q_), .x = (X_), .w = (W_), \
        .w_scale = (W_SCALE_), .b = (B_), .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_pool_int8_fwd(POOL_, X_, Y_) \
    (struct dlb_op){.kind = DLB_OP_POOL, .prop = DLB_PROP_FWD_INFER, \
        .pool = *(POOL_), .x = (X_), .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_csr_linear_fwd(CSR_, X_, ROW_PTR_, COL_, VAL_, B_, Y_) \
    (struct dlb_op){.kind = DLB_OP_LINEAR_CSR, .prop = DLB_PROP_FWD_INFER, \
        .csr = *(CSR_), .x = (X_), .row_ptr = (ROW_PTR_), .col = (COL_), \
        .val = (VAL_), .b = (B_), .y = (struct dlb_buffer *)(Y_)}
#define DLB_OPL_unscale_check(COUNT_, Y_, ALPHA_, FOUND_) \
    (struct dlb_op){.kind = DLB_OP_UNSCALE_CHECK, .count = (COUNT_), \
        .y = (struct dlb_buffer *)(Y_), .alpha = (ALPHA_), \
        .found = (struct dlb_buffer *)(FOUND_)}
#define DLB_OPL_sgd_update_if_finite(SGD_, PARAM_, G_, V_, FOUND_) \
    (struct dlb_op){.kind = DLB_OP_SGD_IF_FINITE, .sgd = *(SGD_), \
        .param = (struct dlb_buffer *)(PARAM_), .g = (G_), \
        .v = (struct dlb_buffer *)(V_), \
        .found = (struct dlb_buffer *)(FOUND_)}

#endif
