/* One oneDNN API for the cpu backend over oneDNN 2.6+ and 3.x.
 *
 * The backend is written against this header, not against dnnl.h: the two
 * major versions differ where the backend touches them most.
 *
 * - Memory descriptors. 2.x has a plain struct, copied by value, whose
 *   fields (dims, padded_dims, blocking strides and blocks) the backend
 *   reads to find a channel in a blocked layout. 3.x has opaque handles,
 *   created and destroyed, read through dnnl_memory_desc_query. dlb_dnnl_md
 *   is a value in both: in 2.x the struct itself; in 3.x a copy of the
 *   same fields under the same names, plus a handle that the library
 *   reads. Those handles are interned (cpu_dnnl3_md.c): one per distinct
 *   layout for the life of the process, never destroyed, so that a value
 *   can be copied, stored in a buffer and compared like 2.x's struct with
 *   no ownership to track.
 *   Change an md only through these functions: writing a field of a 3.x
 *   value would leave its handle describing the old layout.
 * - Operation descriptors are gone in 3.x: each primitive descriptor is
 *   created in one call. The functions below take that form; in 2.x they
 *   initialise the operation descriptor and create from it.
 * - Output scales (2.x: fixed when the primitive is created) became
 *   per-argument scales passed at execution (3.x), applied before the
 *   bias where 2.x scaled the sum: dlb_dnnl_attr_int8_out.
 * - Smaller renames: pooling_v2 became pooling, eltwise post-ops lost
 *   their scale, zero points are set by mask.
 *
 * Every function returns oneDNN's status; a failed creation leaves NULL.
 * Functions taking an attribute accept NULL for the default one. */
#ifndef DLB_CPU_DNNL_API_H
#define DLB_CPU_DNNL_API_H

#include <stddef.h>

#include <oneapi/dnnl/dnnl.h>

#if DNNL_VERSION_MAJOR >= 3
#define DLB_DNNL3 1
#endif

#ifdef DLB_DNNL3
/* The blocking part of a 3.x memory descriptor, as 2.x's struct has it. */
typedef struct {
    dnnl_dims_t strides;
    int inner_nblks;
    dnnl_dims_t inner_blks;
    dnnl_dims_t inner_idxs;
} dlb_dnnl_blocking;

/* A memory descriptor by value: 2.x's fields, read-only, and the interned
 * handle (NULL for a zeroed md: "none", as for an absent bias). */
typedef struct {
    int ndims;
    dnnl_dims_t dims;
    dnnl_data_type_t data_type;
    dnnl_dims_t padded_dims;
    dnnl_dims_t padded_offsets;
    dnnl_dim_t offset0;
    dnnl_format_kind_t format_kind;
    struct {
        dlb_dnnl_blocking blocking;
    } format_desc;
    const_dnnl_memory_desc_t handle;
} dlb_dnnl_md;

/* dlb_dnnl_attr_int8_out's multipliers: an argument at execution. */
#define DLB_DNNL_RUNTIME_SCALES 1
#define DLB_DNNL_ARG_SCALES (DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1)
/* Batch norm backward with the shift flag: 2.6 checks that DNNL_ARG_SHIFT
 * is passed, though it does not read it; 3.x refuses the call with it
 * ("invalid arguments" both ways). */
#define DLB_DNNL_BN_BWD_TAKES_SHIFT 0
/* The fp16 ISA level of dnnl_get_effective_cpu_isa (3.x only). */
#define DLB_DNNL_ISA_FP16 dnnl_cpu_isa_avx512_core_fp16
#else
typedef dnnl_blocking_desc_t dlb_dnnl_blocking;
typedef dnnl_memory_desc_t dlb_dnnl_md;
#define DLB_DNNL_RUNTIME_SCALES 0
#define DLB_DNNL_ARG_SCALES 0 /* not an argument: fixed in the primitive */
#define DLB_DNNL_BN_BWD_TAKES_SHIFT 1
#endif

/* ---- memory descriptors ------------------------------------------- */

/* md with format tag `tag` (dnnl_format_tag_any lets a primitive choose). */
dnnl_status_t dlb_dnnl_md_tag(dlb_dnnl_md *md, int ndims,
                              const dnnl_dims_t dims, dnnl_data_type_t dt,
                              dnnl_format_tag_t tag);
/* *out = md's layout with elements of type dt. 3.x can build it for
 * strided layouts and the channel-blocked activation tags only:
 * dnnl_unimplemented otherwise. */
dnnl_status_t dlb_dnnl_md_retype(dlb_dnnl_md *out, const dlb_dnnl_md *md,
                                 dnnl_data_type_t dt);
/* 1 when a and b describe the same layout and type. */
int dlb_dnnl_md_equal(const dlb_dnnl_md *a, const dlb_dnnl_md *b);
/* Bytes of the storage md describes, padding included; 0 for none. */
size_t dlb_dnnl_md_size(const dlb_dnnl_md *md);
/* Bytes of the storage memory object m holds; 0 when it cannot say. */
size_t dlb_dnnl_memory_size(const_dnnl_memory_t m);
/* *out = the md that pd has for `what` (index 0); dnnl_not_required when
 * pd has none (a zeroed md is stored). */
dnnl_status_t dlb_dnnl_pd_md(dlb_dnnl_md *out, const_dnnl_primitive_desc_t pd,
                             dnnl_query_t what);
/* *out = the md pd has for execution argument `arg` (a post-op's, as
 * DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS); dnnl_not_required when
 * it has none. */
dnnl_status_t dlb_dnnl_pd_arg_md(dlb_dnnl_md *out, const_dnnl_primitive_desc_t pd,
                                 int arg);
dnnl_status_t dlb_dnnl_memory_create(dnnl_memory_t *m, const dlb_dnnl_md *md,
                                     dnnl_engine_t engine, void *handle);

/* ---- primitive descriptors (one engine, the default attribute unless
 * one is given; hint: the forward pd a backward one needs) ------------ */

dnnl_status_t dlb_dnnl_reorder_pd(dnnl_primitive_desc_t *pd,
                                  dnnl_engine_t engine,
                                  const dlb_dnnl_md *src,
                                  const dlb_dnnl_md *dst);
/* bias may be NULL; no dilation. alg: dnnl_convolution_direct, or
 * dnnl_convolution_winograd, which fails (dnnl_unimplemented) where the
 * library has no Winograd kernel for the descriptor (oneDNN 3.x on CPUs,
 * 2.x off AVX-512 or off 3x3 stride 1). */
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
                                   const_dnnl_primitive_attr_t attr);
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
                                        const_dnnl_primitive_attr_t attr);
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
                                           const_dnnl_primitive_attr_t attr);
dnnl_status_t dlb_dnnl_ip_fwd_pd(dnnl_primitive_desc_t *pd,
                                 dnnl_engine_t engine, dnnl_prop_kind_t prop,
                                 const dlb_dnnl_md *src,
                                 const dlb_dnnl_md *weights,
                                 const dlb_dnnl_md *bias,
                                 const dlb_dnnl_md *dst,
                                 const_dnnl_primitive_attr_t attr);
dnnl_status_t dlb_dnnl_ip_bwd_data_pd(dnnl_primitive_desc_t *pd,
                                      dnnl_engine_t engine,
                                      const dlb_dnnl_md *diff_src,
                                      const dlb_dnnl_md *weights,
                                      const dlb_dnnl_md *diff_dst,
                                      const_dnnl_primitive_desc_t hint);
dnnl_status_t dlb_dnnl_ip_bwd_weights_pd(dnnl_primitive_desc_t *pd,
                                         dnnl_engine_t engine,
                                         const dlb_dnnl_md *src,
                                         const dlb_dnnl_md *diff_weights,
                                         const dlb_dnnl_md *diff_bias,
                                         const dlb_dnnl_md *diff_dst,
                                         const_dnnl_primitive_desc_t hint);
/* Element-wise on `data` in place of src and dst (forward) or diff_src,
 * diff_dst and data (backward): one layout for all. */
dnnl_status_t dlb_dnnl_eltwise_fwd_pd(dnnl_primitive_desc_t *pd,
                                      dnnl_engine_t engine,
                                      dnnl_prop_kind_t prop,
                                      dnnl_alg_kind_t alg,
                                      const dlb_dnnl_md *data, float alpha,
                                      float beta);
dnnl_status_t dlb_dnnl_eltwise_bwd_pd(dnnl_primitive_desc_t *pd,
                                      dnnl_engine_t engine,
                                      dnnl_alg_kind_t alg,
                                      const dlb_dnnl_md *data, float alpha,
                                      float beta,
                                      const_dnnl_primitive_desc_t hint);
/* Batch normalisation on `data` (src and dst alike; backward: diff_src,
 * diff_dst and src alike), flags dnnl_use_scale ... */
dnnl_status_t dlb_dnnl_bnorm_fwd_pd(dnnl_primitive_desc_t *pd,
                                    dnnl_engine_t engine,
                                    dnnl_prop_kind_t prop,
                                    const dlb_dnnl_md *data, float eps,
                                    unsigned flags);
dnnl_status_t dlb_dnnl_bnorm_bwd_pd(dnnl_primitive_desc_t *pd,
                                    dnnl_engine_t engine,
                                    dnnl_prop_kind_t prop,
                                    const dlb_dnnl_md *data, float eps,
                                    unsigned flags,
                                    const_dnnl_primitive_desc_t hint);
/* Pooling without dilation. */
dnnl_status_t dlb_dnnl_pool_fwd_pd(dnnl_primitive_desc_t *pd,
                                   dnnl_engine_t engine, dnnl_prop_kind_t prop,
                                   dnnl_alg_kind_t alg, const dlb_dnnl_md *src,
                                   const dlb_dnnl_md *dst,
                                   const dnnl_dims_t strides,
                                   const dnnl_dims_t kernel,
                                   const dnnl_dims_t pad_l,
                                   const dnnl_dims_t pad_r);

/* ---- attributes ----------------------------------------------------- */

/* An int8 convolution's or inner product's output: the s32 accumulator
 * plus the s32 bias, times `scales` (n values, one per output channel of
 * the `ndims`-D output with `channels` channels, or one for all), then a
 * ReLU when `relu`. 2.x has this as output scales fixed in the
 * primitive, and a ReLU post-op. 3.x's scales apply to the accumulator
 * before the bias is added (in f32, so a scaled bias would round apart
 * from 2.x's result); a per-channel multiplication post-op gives 2.x's
 * arithmetic, with the values passed at execution as
 * DLB_DNNL_ARG_SCALES (an f32 memory of n values). */
dnnl_status_t dlb_dnnl_attr_int8_out(dnnl_primitive_attr_t attr, int ndims,
                                     dnnl_dim_t channels, dnnl_dim_t n,
                                     const float *scales, int relu);
/* The same followed by a sum onto what dst holds (an f32 dst) and, with
 * sum_relu, a ReLU of the sum, clipped at sum_relu_max when positive. */
dnnl_status_t dlb_dnnl_attr_int8_sum(dnnl_primitive_attr_t attr, int ndims,
                                     dnnl_dim_t channels, dnnl_dim_t n,
                                     const float *scales, int relu,
                                     int sum_relu, float sum_relu_max);
/* Post-ops: with sum, the result added onto what dst holds (in dst's
 * type, scale 1); then with relu a ReLU, max(v, 0), or with relu_max > 0
 * clipped to [0, relu_max] (oneDNN's clip_v2, which keeps 0 at 0 as the
 * ReLU does). */
dnnl_status_t dlb_dnnl_attr_post(dnnl_primitive_attr_t attr, int sum, int relu,
                                 float relu_max);
/* Post-ops of a 1x1 convolution followed by a depthwise 3x3 one (padding
 * 1, `stride`), its weights and output of type t (f32 or bf16; its bias
 * f32): the 1x1's ReLU as above, the depthwise
 * convolution (its weights and, with bias2, its bias given at execution
 * as DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS, | DNNL_ARG_BIAS), then
 * its own ReLU (relu2, relu2_max). */
dnnl_status_t dlb_dnnl_attr_post_dw(dnnl_primitive_attr_t attr,
                                    dnnl_data_type_t t, int relu,
                                    float relu_max, int stride, int bias2,
                                    int relu2, float relu2_max);
/* One zero point for argument `arg`, given at execution as
 * DNNL_ARG_ATTR_ZERO_POINTS | arg (an s32 memory of one value). */
dnnl_status_t dlb_dnnl_attr_zero_point(dnnl_primitive_attr_t attr, int arg);

#endif
