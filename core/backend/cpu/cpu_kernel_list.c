/* The cpu backend's table, and its kernels in order of preference: for each kind, the
 * own AVX-512 kernels for the shapes they were written for, then the
 * layout-specific ones, then oneDNN's (or the host view's loops), which
 * take everything. A profile (profile = ops) names the one that ran. */
#include "cpu.h"

DLB_CPU_KFN(DLB_KFN_RUN)

/* Whether every float tensor of a convolution is F32: the own fused
 * kernel's only type. */
static int all_f32(const struct dlb_op *o)
{
    const struct dlb_buffer *t[] = {o->x, o->w, o->b, o->y, o->dy, o->dw,
                                    o->db, o->dx};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i] && t[i]->dtype != DLB_F32)
            return 0;
    return 1;
}

static int conv1_fwd_applies(struct dlb_backend *be, const struct dlb_op *o)
{
    (void)be;
    return dlb_cpu_conv1_fwd_fits(&o->conv, o->x, o->w, o->b, o->y);
}

static dlb_status conv1_fwd(struct dlb_backend *be, const struct dlb_op *o)
{
    return dlb_cpu_conv1_fwd(be, &o->conv, o->x, o->w, o->b, o->y);
}

static int conv1_bwdw_applies(struct dlb_backend *be, const struct dlb_op *o)
{
    (void)be;
    return dlb_cpu_conv1_bwd_weights_fits(&o->conv, o->x, o->dy, o->dw, o->db);
}

static dlb_status conv1_bwdw(struct dlb_backend *be, const struct dlb_op *o)
{
    return dlb_cpu_conv1_bwd_weights(be, &o->conv, o->x, o->dy, o->dw, o->db);
}

static int quads_applies(struct dlb_backend *be, const struct dlb_op *o)
{
    (void)be;
    return dlb_cpu_conv_quads_fits(&o->conv, o->x, o->w, o->b, o->y);
}

static dlb_status quads_fwd(struct dlb_backend *be, const struct dlb_op *o)
{
    return dlb_cpu_conv_quads_fwd(be, &o->conv, o->x, o->w, o->b, o->y);
}

/* The fused pass takes a workspace only without the ReLU (training). */
static int conv_pool_applies(struct dlb_backend *be, const struct dlb_op *o)
{
    (void)be;
    return all_f32(o) && dlb_cpu_conv_pool_applies(&o->conv, &o->pool, DLB_F32) &&
           (!o->ws || (!o->relu && o->ws->dtype == DLB_S32));
}

static dlb_status conv_pool_fwd(struct dlb_backend *be, const struct dlb_op *o)
{
    return dlb_cpu_conv_pool_fwd(be, &o->conv, &o->pool, o->relu, o->x, o->w,
                                 o->b, o->y, o->ws);
}

static dlb_status conv_pool_bwdw(struct dlb_backend *be, const struct dlb_op *o)
{
    return dlb_cpu_conv_pool_bwd_weights(be, &o->conv, &o->pool, o->x, o->dy,
                                         o->ws, o->dw, o->db);
}

#define FWD DLB_PROPS_FWD
#define INFER DLB_PROPS(DLB_PROP_FWD_INFER)

static const struct dlb_kernel cpu_kernels[] = {
    /* LeNet's conv1 (one input channel) and conv2 in inference (a few
     * channels on the host view), then oneDNN */
    {"conv1_avx512", DLB_OP_CONV2D, FWD, conv1_fwd_applies, conv1_fwd},
    {"conv_quads", DLB_OP_CONV2D, INFER, quads_applies, quads_fwd},
    {"conv1_avx512", DLB_OP_CONV2D, DLB_PROPS(DLB_PROP_BWD_WEIGHTS),
     conv1_bwdw_applies, conv1_bwdw},
    {"conv1_pool_avx512", DLB_OP_CONV2D_POOL, FWD, conv_pool_applies,
     conv_pool_fwd},
    {"conv1_pool_avx512", DLB_OP_CONV2D_POOL, DLB_PROPS(DLB_PROP_BWD_WEIGHTS),
     conv_pool_applies, conv_pool_bwdw},
    /* pooling on a convolution's blocked output: oneDNN's inference
     * primitive, the own loops over blocks; else the host view's loops */
    {"onednn", DLB_OP_POOL, FWD, dlb_cpu_pool_onednn_applies,
     dlb_cpu_pool_onednn_fwd},
    {"blocked_loops", DLB_OP_POOL, FWD, dlb_cpu_pool_blocked_fwd_applies,
     dlb_cpu_pool_blocked_fwd},
    {"blocked_loops", DLB_OP_POOL, DLB_PROPS(DLB_PROP_BWD),
     dlb_cpu_pool_blocked_bwd_applies, dlb_cpu_pool_blocked_bwd},
    /* f32 3x3 stride-1 convolutions: oneDNN's Winograd kernels where the
     * library has them (cpu.winograd), every pass */
    {"onednn_winograd", DLB_OP_CONV2D,
     DLB_PROPS_FWD | DLB_PROPS(DLB_PROP_BWD_DATA) |
         DLB_PROPS(DLB_PROP_BWD_WEIGHTS),
     dlb_cpu_conv2d_wino_applies, dlb_cpu_conv2d_wino},
    {"onednn_winograd", DLB_OP_CONV2D_RELU, INFER, dlb_cpu_conv2d_wino_applies,
     dlb_cpu_conv2d_wino},
    {"onednn_winograd", DLB_OP_CONV2D_ADD, INFER, dlb_cpu_conv2d_wino_applies,
     dlb_cpu_conv2d_wino},
    DLB_CPU_KFN(DLB_KFN_KERNEL)
    {"cpu", DLB_OP_ADD, DLB_PROPS(DLB_PROP_NONE), NULL, dlb_cpu_add},
    {"cpu", DLB_OP_CONCAT, DLB_PROPS_FWD | DLB_PROPS(DLB_PROP_BWD), NULL,
     dlb_cpu_concat},
    {"onednn", DLB_OP_CONV2D_RELU, INFER, NULL, dlb_cpu_conv2d_post},
    {"onednn", DLB_OP_CONV2D_ADD, INFER, NULL, dlb_cpu_conv2d_post},
    {"dw_avx512", DLB_OP_CONV2D_DW, INFER, dlb_cpu_conv2d_dw_own_applies,
     dlb_cpu_conv2d_dw_own},
    {"onednn", DLB_OP_CONV2D_DW, INFER, dlb_cpu_conv2d_dw_applies,
     dlb_cpu_conv2d_dw},
    {"cpu", DLB_OP_ADD_RELU, DLB_PROPS(DLB_PROP_NONE), NULL, dlb_cpu_add},
    {"cpu", DLB_OP_CONV2D_INT8_ADD, INFER, dlb_cpu_conv2d_int8_add_applies,
     dlb_cpu_conv2d_int8_add},
};

const struct dlb_backend_ops dlb_cpu_ops = {
    DLB_OPS_HEAD(cpu),
    DLB_CPU_DEVICE(DLB_OP_ENTRY)
    .kernels = cpu_kernels,
    .n_kernels = sizeof cpu_kernels / sizeof cpu_kernels[0],
};
