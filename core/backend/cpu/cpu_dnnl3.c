/* cpu_dnnl_api.h's primitive descriptors and attributes over oneDNN 3.x:
 * each a direct call with the values' interned handles (cpu_dnnl3_md.c). */
#include "cpu_dnnl_api.h"

/* The library's handle of an md, NULL standing for "none". */
static const_dnnl_memory_desc_t H(const dlb_dnnl_md *md)
{
    return md ? md->handle : NULL;
}

/* No dilation: zeros (3.x's argument, which 2.x's calls lack). */
static const dnnl_dims_t no_dilation;

/* 3.x leaves *pd unspecified on failure; the backend frees what is set. */
static dnnl_status_t done(dnnl_status_t st, dnnl_primitive_desc_t *pd)
{
    if (st != dnnl_success)
        *pd = NULL;
    return st;
}

dnnl_status_t dlb_dnnl_reorder_pd(dnnl_primitive_desc_t *pd,
                                  dnnl_engine_t engine,
                                  const dlb_dnnl_md *src,
                                  const dlb_dnnl_md *dst)
{
    return done(dnnl_reorder_primitive_desc_create(pd, H(src), engine, H(dst),
                                                   engine, NULL),
                pd);
}

dnnl_status_t dlb_dnnl_conv_fwd_pd(dnnl_primitive_desc_t *pd,
                                   dnnl_engine_t engine, dnnl_prop_kind_t prop,
                                   dnnl_alg_kind_t alg,
                                   const dlb_dnnl_md *src,
                                   const dlb_dnnl_md *weights,
                                   const dlb_dnnl_md *bias,
                                   const dlb_dnnl_md *dst,
                                   const dnnl_dims_t strides,
                                   const dnnl_dims_t pad_l,
                                   const dnnl_dims_t pad_r,
                                   const_dnnl_primitive_attr_t attr)
{
    return done(dnnl_convolution_forward_primitive_desc_create(
                    pd, engine, prop, alg, H(src),
                    H(weights), H(bias), H(dst), strides, no_dilation, pad_l,
                    pad_r, attr),
                pd);
}

dnnl_status_t dlb_dnnl_conv_bwd_data_pd(dnnl_primitive_desc_t *pd,
                                        dnnl_engine_t engine,
                                        dnnl_alg_kind_t alg,
                                        const dlb_dnnl_md *diff_src,
                                        const dlb_dnnl_md *weights,
                                        const dlb_dnnl_md *diff_dst,
                                        const dnnl_dims_t strides,
                                        const dnnl_dims_t pad_l,
                                        const dnnl_dims_t pad_r,
                                        const_dnnl_primitive_desc_t hint,
                                        const_dnnl_primitive_attr_t attr)
{
    return done(dnnl_convolution_backward_data_primitive_desc_create(
                    pd, engine, alg, H(diff_src),
                    H(weights), H(diff_dst), strides, no_dilation, pad_l,
                    pad_r, hint, attr),
                pd);
}

dnnl_status_t dlb_dnnl_conv_bwd_weights_pd(dnnl_primitive_desc_t *pd,
                                           dnnl_engine_t engine,
                                           dnnl_alg_kind_t alg,
                                           const dlb_dnnl_md *src,
                                           const dlb_dnnl_md *diff_weights,
                                           const dlb_dnnl_md *diff_bias,
                                           const dlb_dnnl_md *diff_dst,
                                           const dnnl_dims_t strides,
                                           const dnnl_dims_t pad_l,
                                           const dnnl_dims_t pad_r,
                                           const_dnnl_primitive_desc_t hint,
                                           const_dnnl_primitive_attr_t attr)
{
    return done(dnnl_convolution_backward_weights_primitive_desc_create(
                    pd, engine, alg, H(src),
                    H(diff_weights), H(diff_bias), H(diff_dst), strides,
                    no_dilation, pad_l, pad_r, hint, attr),
                pd);
}

dnnl_status_t dlb_dnnl_ip_fwd_pd(dnnl_primitive_desc_t *pd,
                                 dnnl_engine_t engine, dnnl_prop_kind_t prop,
                                 const dlb_dnnl_md *src,
                                 const dlb_dnnl_md *weights,
                                 const dlb_dnnl_md *bias,
                                 const dlb_dnnl_md *dst,
                                 const_dnnl_primitive_attr_t attr)
{
    return done(dnnl_inner_product_forward_primitive_desc_create(
                    pd, engine, prop, H(src), H(weights), H(bias), H(dst),
                    attr),
                pd);
}

dnnl_status_t dlb_dnnl_ip_bwd_data_pd(dnnl_primitive_desc_t *pd,
                                      dnnl_engine_t engine,
                                      const dlb_dnnl_md *diff_src,
                                      const dlb_dnnl_md *weights,
                                      const dlb_dnnl_md *diff_dst,
                                      const_dnnl_primitive_desc_t hint)
{
    return done(dnnl_inner_product_backward_data_primitive_desc_create(
                    pd, engine, H(diff_src), H(weights), H(diff_dst), hint,
                    NULL),
                pd);
}

dnnl_status_t dlb_dnnl_ip_bwd_weights_pd(dnnl_primitive_desc_t *pd,
                                         dnnl_engine_t engine,
                                         const dlb_dnnl_md *src,
                                         const dlb_dnnl_md *diff_weights,
                                         const dlb_dnnl_md *diff_bias,
                                         const dlb_dnnl_md *diff_dst,
                                         const_dnnl_primitive_desc_t hint)
{
    return done(dnnl_inner_product_backward_weights_primitive_desc_create(
                    pd, engine, H(src), H(diff_weights), H(diff_bias),
                    H(diff_dst), hint, NULL),
                pd);
}

dnnl_status_t dlb_dnnl_eltwise_fwd_pd(dnnl_primitive_desc_t *pd,
                                      dnnl_engine_t engine,
                                      dnnl_prop_kind_t prop,
                                      dnnl_alg_kind_t alg,
                                      const dlb_dnnl_md *data, float alpha,
                                      float beta)
{
    return done(dnnl_eltwise_forward_primitive_desc_create(
                    pd, engine, prop, alg, H(data), H(data), alpha, beta,
                    NULL),
                pd);
}

dnnl_status_t dlb_dnnl_eltwise_bwd_pd(dnnl_primitive_desc_t *pd,
                                      dnnl_engine_t engine,
                                      dnnl_alg_kind_t alg,
                                      const dlb_dnnl_md *data, float alpha,
                                      float beta,
                                      const_dnnl_primitive_desc_t hint)
{
    return done(dnnl_eltwise_backward_primitive_desc_create(
                    pd, engine, alg, H(data), H(data), H(data), alpha, beta,
                    hint, NULL),
                pd);
}

dnnl_status_t dlb_dnnl_bnorm_fwd_pd(dnnl_primitive_desc_t *pd,
                                    dnnl_engine_t engine,
                                    dnnl_prop_kind_t prop,
                                    const dlb_dnnl_md *data, float eps,
                                    unsigned flags)
{
    return done(dnnl_batch_normalization_forward_primitive_desc_create(
                    pd, engine, prop, H(data), H(data), eps, flags, NULL),
                pd);
}

dnnl_status_t dlb_dnnl_bnorm_bwd_pd(dnnl_primitive_desc_t *pd,
                                    dnnl_engine_t engine,
                                    dnnl_prop_kind_t prop,
                                    const dlb_dnnl_md *data, float eps,
                                    unsigned flags,
                                    const_dnnl_primitive_desc_t hint)
{
    return done(dnnl_batch_normalization_backward_primitive_desc_create(
                    pd, engine, prop, H(data), H(data), H(data), eps, flags,
                    hint, NULL),
                pd);
}

dnnl_status_t dlb_dnnl_pool_fwd_pd(dnnl_primitive_desc_t *pd,
                                   dnnl_engine_t engine, dnnl_prop_kind_t prop,
                                   dnnl_alg_kind_t alg, const dlb_dnnl_md *src,
                                   const dlb_dnnl_md *dst,
                                   const dnnl_dims_t strides,
                                   const dnnl_dims_t kernel,
                                   const dnnl_dims_t pad_l,
                                   const dnnl_dims_t pad_r)
{
    return done(dnnl_pooling_forward_primitive_desc_create(
                    pd, engine, prop, alg, H(src), H(dst), strides, kernel,
                    no_dilation, pad_l, pad_r, NULL),
                pd);
}

static dnnl_status_t int8_attr(dnnl_primitive_attr_t attr, int ndims,
                               dnnl_dim_t channels, dnnl_dim_t n, int relu,
                               int sum, int sum_relu, float sum_relu_max)
{
    /* The multipliers broadcast over all but the channel (dim 1). */
    dnnl_dims_t dims = { 1, n > 1 ? channels : 1, 1, 1 };
    dnnl_post_ops_t po = NULL;
    dlb_dnnl_md m;
    dnnl_status_t st;
    if ((st = dlb_dnnl_md_tag(&m, ndims, dims, dnnl_f32,
                              ndims == 4 ? dnnl_abcd : dnnl_ab)) ||
        (st = dnnl_post_ops_create(&po)) ||
        (st = dnnl_post_ops_append_binary(po, dnnl_binary_mul, m.handle)) ||
        (relu && (st = dnnl_post_ops_append_eltwise(po, dnnl_eltwise_relu,
                                                    0.0f, 0.0f))) ||
        (sum && (st = dnnl_post_ops_append_sum(po, 1.0f, 0,
                                               dnnl_data_type_undef))) ||
        (sum_relu && (st = dnnl_post_ops_append_eltwise(
                          po,
                          sum_relu_max > 0.0f ? dnnl_eltwise_clip_v2
                                              : dnnl_eltwise_relu,
                          0.0f, sum_relu_max > 0.0f ? sum_relu_max : 0.0f))) ||
        (st = dnnl_primitive_attr_set_post_ops(attr, po))) {
        if (po)
            dnnl_post_ops_destroy(po);
        return st;
    }
    return dnnl_post_ops_destroy(po); /* the attribute keeps a copy */
}

dnnl_status_t dlb_dnnl_attr_int8_out(dnnl_primitive_attr_t attr, int ndims,
                                     dnnl_dim_t channels, dnnl_dim_t n,
                                     const float *scales, int relu)
{
    (void)scales; /* they come at execution */
    return int8_attr(attr, ndims, channels, n, relu, 0, 0, 0.0f);
}

dnnl_status_t dlb_dnnl_attr_int8_sum(dnnl_primitive_attr_t attr, int ndims,
                                     dnnl_dim_t channels, dnnl_dim_t n,
                                     const float *scales, int relu,
                                     int sum_relu, float sum_relu_max)
{
    (void)scales; /* they come at execution */
    return int8_attr(attr, ndims, channels, n, relu, 1, sum_relu,
                     sum_relu_max);
}

dnnl_status_t dlb_dnnl_attr_post(dnnl_primitive_attr_t attr, int sum, int relu,
                                 float relu_max)
{
    dnnl_post_ops_t po = NULL;
    dnnl_status_t st;
    if ((st = dnnl_post_ops_create(&po)) ||
        (sum && (st = dnnl_post_ops_append_sum(po, 1.0f, 0,
                                               dnnl_data_type_undef))) ||
        (relu && (st = dnnl_post_ops_append_eltwise(
                      po,
                      relu_max > 0.0f ? dnnl_eltwise_clip_v2 : dnnl_eltwise_relu,
                      0.0f, relu_max > 0.0f ? relu_max : 0.0f))) ||
        (st = dnnl_primitive_attr_set_post_ops(attr, po))) {
        if (po)
            dnnl_post_ops_destroy(po);
        return st;
    }
    return dnnl_post_ops_destroy(po); /* the attribute keeps a copy */
}

dnnl_status_t dlb_dnnl_attr_zero_point(dnnl_primitive_attr_t attr, int arg)
{
    return dnnl_primitive_attr_set_zero_points_mask(attr, arg, 0);
}

static dnnl_status_t post_relu(dnnl_post_ops_t po, float relu_max)
{
    dnnl_alg_kind_t alg = relu_max > 0.0f ? dnnl_eltwise_clip_v2
                                          : dnnl_eltwise_relu;
    float beta = relu_max > 0.0f ? relu_max : 0.0f;
    return dnnl_post_ops_append_eltwise(po, alg, 0.0f, beta);
}

dnnl_status_t dlb_dnnl_attr_post_dw(dnnl_primitive_attr_t attr,
                                    dnnl_data_type_t t, int relu,
                                    float relu_max, int stride, int bias2,
                                    int relu2, float relu2_max)
{
    dnnl_post_ops_t po = NULL;
    dnnl_status_t st;
    if ((st = dnnl_post_ops_create(&po)) ||
        (relu && (st = post_relu(po, relu_max))) ||
        (st = dnnl_post_ops_append_dw(po, t,
                                        bias2 ? dnnl_f32 : dnnl_data_type_undef,
                                        t, 3,
                                        stride, 1)) ||
        (relu2 && (st = post_relu(po, relu2_max))) ||
        (st = dnnl_primitive_attr_set_post_ops(attr, po))) {
        if (po)
            dnnl_post_ops_destroy(po);
        return st;
    }
    return dnnl_post_ops_destroy(po);
}
