/* cpu_dnnl_api.h over oneDNN 2.x (2.6 and later): memory descriptors are
 * the library's own structs, and each primitive descriptor is created
 * from an operation descriptor initialised just before. */
#include "cpu_dnnl_api.h"

dnnl_status_t dlb_dnnl_md_tag(dlb_dnnl_md *md, int ndims,
                              const dnnl_dims_t dims, dnnl_data_type_t dt,
                              dnnl_format_tag_t tag)
{
    return dnnl_memory_desc_init_by_tag(md, ndims, dims, dt, tag);
}

dnnl_status_t dlb_dnnl_md_retype(dlb_dnnl_md *out, const dlb_dnnl_md *md,
                                 dnnl_data_type_t dt)
{
    /* Strides count elements, not bytes: the layout holds for any type. */
    *out = *md;
    out->data_type = dt;
    return dnnl_success;
}

int dlb_dnnl_md_equal(const dlb_dnnl_md *a, const dlb_dnnl_md *b)
{
    return dnnl_memory_desc_equal(a, b);
}

size_t dlb_dnnl_md_size(const dlb_dnnl_md *md)
{
    return dnnl_memory_desc_get_size(md);
}

size_t dlb_dnnl_memory_size(const_dnnl_memory_t m)
{
    const dnnl_memory_desc_t *md = NULL;
    if (!m || dnnl_memory_get_memory_desc(m, &md) != dnnl_success || !md)
        return 0;
    return dnnl_memory_desc_get_size(md);
}

dnnl_status_t dlb_dnnl_pd_md(dlb_dnnl_md *out, const_dnnl_primitive_desc_t pd,
                             dnnl_query_t what)
{
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, what, 0);
    static const dnnl_memory_desc_t none;
    *out = md ? *md : none;
    return md ? dnnl_success : dnnl_not_required;
}

dnnl_status_t dlb_dnnl_pd_arg_md(dlb_dnnl_md *out, const_dnnl_primitive_desc_t pd,
                                 int arg)
{
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
    static const dnnl_memory_desc_t none;
    *out = md ? *md : none;
    return md && md->ndims ? dnnl_success : dnnl_not_required;
}

dnnl_status_t dlb_dnnl_memory_create(dnnl_memory_t *m, const dlb_dnnl_md *md,
                                     dnnl_engine_t engine, void *handle)
{
    return dnnl_memory_create(m, md, engine, handle);
}

dnnl_status_t dlb_dnnl_reorder_pd(dnnl_primitive_desc_t *pd,
                                  dnnl_engine_t engine,
                                  const dlb_dnnl_md *src,
                                  const dlb_dnnl_md *dst)
{
    return dnnl_reorder_primitive_desc_create(pd, src, engine, dst, engine,
                                              NULL);
}

/* The primitive descriptor of an initialised operation descriptor (a
 * status other than success: the initialisation's, passed on). */
static dnnl_status_t create(dnnl_status_t init, dnnl_primitive_desc_t *pd,
                            const void *op_desc, dnnl_engine_t engine,
                            const_dnnl_primitive_attr_t attr,
                            const_dnnl_primitive_desc_t hint)
{
    dnnl_status_t st = init;
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(pd, op_desc, attr, engine, hint);
    if (st != dnnl_success)
        *pd = NULL;
    return st;
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
    dnnl_convolution_desc_t d;
    return create(dnnl_convolution_forward_desc_init(
                      &d, prop, alg, src, weights, bias,
                      dst, strides, pad_l, pad_r),
                  pd, &d, engine, attr, NULL);
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
    dnnl_convolution_desc_t d;
    return create(dnnl_convolution_backward_data_desc_init(
                      &d, alg, diff_src, weights, diff_dst,
                      strides, pad_l, pad_r),
                  pd, &d, engine, attr, hint);
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
    dnnl_convolution_desc_t d;
    return create(dnnl_convolution_backward_weights_desc_init(
                      &d, alg, src, diff_weights,
                      diff_bias, diff_dst, strides, pad_l, pad_r),
                  pd, &d, engine, attr, hint);
}

dnnl_status_t dlb_dnnl_ip_fwd_pd(dnnl_primitive_desc_t *pd,
                                 dnnl_engine_t engine, dnnl_prop_kind_t prop,
                                 const dlb_dnnl_md *src,
                                 const dlb_dnnl_md *weights,
                                 const dlb_dnnl_md *bias,
                                 const dlb_dnnl_md *dst,
                                 const_dnnl_primitive_attr_t attr)
{
    dnnl_inner_product_desc_t d;
    return create(dnnl_inner_product_forward_desc_init(&d, prop, src, weights,
                                                       bias, dst),
                  pd, &d, engine, attr, NULL);
}

dnnl_status_t dlb_dnnl_ip_bwd_data_pd(dnnl_primitive_desc_t *pd,
                                      dnnl_engine_t engine,
                                      const dlb_dnnl_md *diff_src,
                                      const dlb_dnnl_md *weights,
                                      const dlb_dnnl_md *diff_dst,
                                      const_dnnl_primitive_desc_t hint)
{
    dnnl_inner_product_desc_t d;
    return create(dnnl_inner_product_backward_data_desc_init(
                      &d, diff_src, weights, diff_dst),
                  pd, &d, engine, NULL, hint);
}

dnnl_status_t dlb_dnnl_ip_bwd_weights_pd(dnnl_primitive_desc_t *pd,
                                         dnnl_engine_t engine,
                                         const dlb_dnnl_md *src,
                                         const dlb_dnnl_md *diff_weights,
                                         const dlb_dnnl_md *diff_bias,
                                         const dlb_dnnl_md *diff_dst,
                                         const_dnnl_primitive_desc_t hint)
{
    dnnl_inner_product_desc_t d;
    return create(dnnl_inner_product_backward_weights_desc_init(
                      &d, src, diff_weights, diff_bias, diff_dst),
                  pd, &d, engine, NULL, hint);
}

dnnl_status_t dlb_dnnl_eltwise_fwd_pd(dnnl_primitive_desc_t *pd,
                                      dnnl_engine_t engine,
                                      dnnl_prop_kind_t prop,
                                      dnnl_alg_kind_t alg,
                                      const dlb_dnnl_md *data, float alpha,
                                      float beta)
{
    dnnl_eltwise_desc_t d;
    return create(dnnl_eltwise_forward_desc_init(&d, prop, alg, data, alpha,
                                                 beta),
                  pd, &d, engine, NULL, NULL);
}

dnnl_status_t dlb_dnnl_eltwise_bwd_pd(dnnl_primitive_desc_t *pd,
                                      dnnl_engine_t engine,
                                      dnnl_alg_kind_t alg,
                                      const dlb_dnnl_md *data, float alpha,
                                      float beta,
                                      const_dnnl_primitive_desc_t hint)
{
    dnnl_eltwise_desc_t d;
    return create(dnnl_eltwise_backward_desc_init(&d, alg, data, data, alpha,
                                                  beta),
                  pd, &d, engine, NULL, hint);
}

dnnl_status_t dlb_dnnl_bnorm_fwd_pd(dnnl_primitive_desc_t *pd,
                                    dnnl_engine_t engine,
                                    dnnl_prop_kind_t prop,
                                    const dlb_dnnl_md *data, float eps,
                                    unsigned flags)
{
    dnnl_batch_normalization_desc_t d;
    return create(dnnl_batch_normalization_forward_desc_init(&d, prop, data,
                                                             eps, flags),
                  pd, &d, engine, NULL, NULL);
}

dnnl_status_t dlb_dnnl_bnorm_bwd_pd(dnnl_primitive_desc_t *pd,
                                    dnnl_engine_t engine,
                                    dnnl_prop_kind_t prop,
                                    const dlb_dnnl_md *data, float eps,
                                    unsigned flags,
                                    const_dnnl_primitive_desc_t hint)
{
    dnnl_batch_normalization_desc_t d;
    return create(dnnl_batch_normalization_backward_desc_init(
                      &d, prop, data, data, eps, flags),
                  pd, &d, engine, NULL, hint);
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
    /* pooling_v2: the one with dilation, 0 here; 2.x's plain pooling
     * descriptor is deprecated. */
    dnnl_pooling_v2_desc_t d;
    dnnl_dims_t dil = { 0, 0, 0 };
    return create(dnnl_pooling_v2_forward_desc_init(&d, prop, alg, src, dst,
                                                    strides, kernel, dil,
                                                    pad_l, pad_r),
                  pd, &d, engine, NULL, NULL);
}

static dnnl_status_t int8_attr(dnnl_primitive_attr_t attr, dnnl_dim_t n,
                               const float *scales, int relu, int sum,
                               int sum_relu, float sum_relu_max)
{
    dnnl_post_ops_t po = NULL;
    dnnl_status_t st;
    /* Mask 1 << 1: the output's dim 1, the channel of both operations. */
    if ((st = dnnl_primitive_attr_set_output_scales(attr, n, n > 1 ? 1 << 1
                                                                    : 0,
                                                    scales)) ||
        (!relu && !sum))
        return st;
    if ((st = dnnl_post_ops_create(&po)) ||
        (relu && (st = dnnl_post_ops_append_eltwise(po, 1.0f,
                                                    dnnl_eltwise_relu, 0.0f,
                                                    0.0f))) ||
        (sum && (st = dnnl_post_ops_append_sum(po, 1.0f))) ||
        (sum_relu && (st = dnnl_post_ops_append_eltwise(
                          po, 1.0f,
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
    (void)ndims, (void)channels;
    return int8_attr(attr, n, scales, relu, 0, 0, 0.0f);
}

dnnl_status_t dlb_dnnl_attr_int8_sum(dnnl_primitive_attr_t attr, int ndims,
                                     dnnl_dim_t channels, dnnl_dim_t n,
                                     const float *scales, int relu,
                                     int sum_relu, float sum_relu_max)
{
    (void)ndims, (void)channels;
    return int8_attr(attr, n, scales, relu, 1, sum_relu, sum_relu_max);
}

dnnl_status_t dlb_dnnl_attr_post(dnnl_primitive_attr_t attr, int sum, int relu,
                                 float relu_max)
{
    dnnl_post_ops_t po = NULL;
    dnnl_status_t st;
    if ((st = dnnl_post_ops_create(&po)) ||
        (sum && (st = dnnl_post_ops_append_sum(po, 1.0f))) ||
        (relu && (st = dnnl_post_ops_append_eltwise(
                      po, 1.0f,
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
    static const int32_t runtime = DNNL_RUNTIME_S32_VAL;
    return dnnl_primitive_attr_set_zero_points(attr, arg, 1, 0, &runtime);
}

static dnnl_status_t post_relu(dnnl_post_ops_t po, float relu_max)
{
    dnnl_alg_kind_t alg = relu_max > 0.0f ? dnnl_eltwise_clip_v2
                                          : dnnl_eltwise_relu;
    float beta = relu_max > 0.0f ? relu_max : 0.0f;
    return dnnl_post_ops_append_eltwise(po, 1.0f, alg, 0.0f, beta);
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
                                        stride, 1, 0, 0, NULL)) ||
        (relu2 && (st = post_relu(po, relu2_max))) ||
        (st = dnnl_primitive_attr_set_post_ops(attr, po))) {
        if (po)
            dnnl_post_ops_destroy(po);
        return st;
    }
    return dnnl_post_ops_destroy(po);
}
