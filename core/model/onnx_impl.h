/* Shared by the ONNX importer's files (onnx_map.c: the graph; onnx_ops.c:
 * one mapping per operator; onnx_weights.c: initializers into weights). */
#ifndef DLB_CORE_MODEL_ONNX_IMPL_H
#define DLB_CORE_MODEL_ONNX_IMPL_H

#include "model/model_file.h"
#include "model/model_weights.h"
#include "model/onnx_read.h"

/* What an ONNX value name stands for. */
enum onnx_value_kind {
    OV_INPUT,    /* the network's input image */
    OV_LAYER,    /* a layer's output */
    OV_CONST,    /* an initializer or a Constant node's tensor */
    OV_SOFTMAX,  /* a dropped Softmax/LogSoftmax of a layer: output only */
    OV_QUANT,    /* QuantizeLinear of a computed value (layer, q_*): read
                    by DequantizeLinear only (onnx_qdq.c) */
    OV_FQ        /* that value quantised and dequantised again: layer's
                    output (DLB_LAYER_INPUT: the image) as the next Conv
                    or Gemm reads it, simulated in fp32 */
};

struct onnx_value {
    const char *name;
    enum onnx_value_kind kind;
    int32_t layer;                  /* OV_LAYER, OV_SOFTMAX */
    const Onnx__TensorProto *t;     /* OV_CONST */
    float q_scale;                  /* OV_QUANT, OV_FQ */
    int32_t q_zero;
    enum dlb_dtype q_type;          /* DLB_U8 or DLB_S8 */
};

struct onnx_map {
    struct dlb_onnx o;
    struct dlb_model_spec *spec;
    size_t cap_layers;
    struct dlb_model_weights *w;
    struct onnx_value *vals;
    size_t n_vals, cap_vals;
    const Onnx__NodeProto *node;    /* the node being mapped, for messages */
    size_t node_index;
    struct dlb_error *err;
    /* Constants the mapping made (a DequantizeLinear of an initializer,
     * folded to floats): freed with the map. */
    Onnx__TensorProto **made;
    size_t n_made;
};

/* "FILE: node 'NAME' (OP): what" for the current node. */
dlb_status onnx_fail(struct onnx_map *m, dlb_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for an unsupported operator or attribute value, followed by
 * the list of supported operators. */
dlb_status onnx_unsupported(struct onnx_map *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
extern const char dlb_onnx_supported_ops[];

/* A reader's message without its leading "FILE: ". */
const char *onnx_why(const struct onnx_map *m, const char *msg);
/* The value of the current node's input k; NULL (with the error set) when
 * it is missing or unknown. A dropped Softmax's output is refused. */
const struct onnx_value *onnx_input(struct onnx_map *m, size_t k);
/* Input k as data the graph computes (the image or a layer's output, as
 * onnx_input takes it); NULL with the error set for a constant, which
 * has no layer and no shape of an activation. */
const struct onnx_value *onnx_data_input(struct onnx_map *m, size_t k);
/* Input k as a constant tensor; NULL with the error set otherwise. */
const Onnx__TensorProto *onnx_const_input(struct onnx_map *m, size_t k,
                                          const char *role);
/* The current node's output k now stands for `v`. */
dlb_status onnx_bind(struct onnx_map *m, size_t k, enum onnx_value_kind kind,
                     int32_t layer, const Onnx__TensorProto *t);
/* Shape of what a value carries: c x h x w, flat when a feature vector. */
void onnx_value_shape(const struct onnx_map *m, const struct onnx_value *v,
                      uint32_t *c, uint32_t *h, uint32_t *w, int *flat);
int32_t onnx_value_layer(const struct onnx_value *v);

/* A new layer for the current node (its name from the node's, with
 * `suffix`), reading `from`; NULL with the error set. */
struct dlb_layer_spec *onnx_layer(struct onnx_map *m, enum dlb_layer_kind kind,
                                  const char *suffix, int32_t from);
/* Shapes, parameters and FLOPs of the layer just made, errors in the
 * node's words. */
dlb_status onnx_finish(struct onnx_map *m, struct dlb_layer_spec *L);

/* onnx_attr.c: the current node's attributes. */
#define A_INT ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
#define A_INTS ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS
#define A_FLOAT ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
#define A_STRING ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
#define A_TENSOR ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR
const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *n,
                                      const char *name);
int64_t onnx_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def);
float onnx_attr_float(const Onnx__NodeProto *n, const char *name, float def);
/* 1 when the STRING attribute (or `def` when absent) is `value`. */
int onnx_attr_is(const Onnx__NodeProto *n, const char *name, const char *def,
                 const char *value);
/* Every attribute is one of `known` (NULL-terminated) with its `types`;
 * else the error names it. */
dlb_status onnx_check_attrs(struct onnx_map *m, const char *const *known,
                            const Onnx__AttributeProto__AttributeType *types);
/* "[2,2]" */
const char *onnx_ints_text(char *buf, size_t len, const int64_t *v, size_t n);

struct window {
    uint32_t size, stride, pad;
};
/* kh x kw from the weight (0: from kernel_shape), the input's h x w for
 * auto_pad = SAME_*. */
dlb_status onnx_read_window(struct onnx_map *m, int64_t kh, int64_t kw,
                            uint32_t in_h, uint32_t in_w, struct window *w);

/* onnx_qdq.c: QuantizeLinear and DequantizeLinear. */
dlb_status onnx_op_quantize(struct onnx_map *m);
dlb_status onnx_op_dequantize(struct onnx_map *m);
void onnx_made_free(struct onnx_map *m);

/* onnx_ops.c: map the current node. */
dlb_status onnx_map_node(struct onnx_map *m);

/* onnx_weights.c: tensor `t` as layer L's weight `suffix` ("weight",
 * "bias", "running_mean" ...), which must have `ndim` dims `shape`; with
 * `transpose` a 2-D tensor is stored transposed (MatMul's and Gemm's
 * transB = 0 weights are in x out; a linear layer's are out x in). */
dlb_status onnx_weight(struct onnx_map *m, const struct dlb_layer_spec *L,
                       const char *suffix, const Onnx__TensorProto *t,
                       unsigned ndim, const uint64_t *shape, int transpose);
/* A scalar constant (one element), as a double. */
dlb_status onnx_scalar(struct onnx_map *m, const Onnx__TensorProto *t,
                       const char *role, double *out);

#endif
