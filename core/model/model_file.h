/* Network description files (suites/models/NAME.ini): one INI section per
 * layer, in order, darknet style. The first section is [net]:
 *
 *   [net]
 *   input = 1x28x28      ; channels x height x width of one image
 *   classes = 10
 *   loss = nll           ; the last layer must then be a logsoftmax
 *
 *   [conv1]              ; the section name names the layer in messages
 *   type = conv          ; conv maxpool avgpool relu dropout batchnorm
 *   filters = 10         ; linear flatten logsoftmax
 *   size = 5
 *
 * Section names are distinct. Keys per type, with defaults:
 *   conv:      filters, size, stride = 1, pad = 0, bias = 1, groups = 1
 *              (depthwise: groups = filters = input channels)
 *   maxpool, avgpool: size, stride = size, pad = 0
 *   global_avgpool: none; c x h x w to c x 1 x 1, any input size
 *   dropout:   p = 0.5, mode = element | channel (dropout2d: whole planes)
 *   batchnorm: eps = 1e-5, momentum = 0.1
 *   linear:    out, bias = 1 (needs a flat input: put a flatten before it)
 *   relu:      max = 0 (none; 6 makes ReLU6)
 *   flatten, logsoftmax: none
 *   add:       none; its inputs (two or more, of one shape) are summed
 *   concat:    none; its inputs (two or more, of one h x w) joined along
 *              the channels, in the order named
 * [net]'s loss = nll needs a logsoftmax last layer; loss = cross_entropy
 * takes the last layer's output as logits and adds the logsoftmax itself
 * (a layer named "cross_entropy", as PyTorch's loss does inside).
 * The layers form a graph: every layer may say which outputs it reads,
 *   input = NAME[, NAME ...]   ; earlier layers, or net: the network input
 * and without it reads the layer before (the first layer: net), so a
 * chain needs no input keys at all. A residual block is
 *   [conv2] ... [bn2] ... [sum] type = add, input = bn2, relu1
 * Every layer's output is read by a later one, except the last's (the
 * logsoftmax, whose output is the network's). Unknown types and keys are
 * errors with a suggestion; shapes are inferred and checked, and every
 * message is "FILE:LINE: layer 'NAME': what". */
#ifndef DLB_CORE_MODEL_FILE_H
#define DLB_CORE_MODEL_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/backend.h>
#include <dlbench/plugin.h>

#include "util/error.h"

struct dlb_model_weights;

enum dlb_loss_kind { DLB_LOSS_NLL, DLB_LOSS_CROSS_ENTROPY };

/* A layer's input that is the network's input, not a layer's output. */
#define DLB_LAYER_INPUT (-1)
#define DLB_LAYER_MAX_INPUTS 8

/* One layer, its parameters and the shapes of one image through it. A flat
 * tensor has c = features and h = w = 1. FLOPs are per image:
 * conv and linear count 2 * multiply-accumulates (bias adds not counted)
 * forward, and twice that backward (data and weight gradients); the other
 * layers count one FLOP per element they touch forward and backward
 * (pooling: per window element; batchnorm: 4 per element; logsoftmax: 3). */
struct dlb_layer_spec {
    enum dlb_layer_kind kind;
    char name[64];
    int line;                 /* line of the section header */

    uint32_t filters, size, stride, pad; /* conv; size/stride/pad: pooling */
    uint32_t out;                        /* linear */
    int bias;                            /* conv, linear */
    float p;                             /* dropout */
    enum dlb_dropout_mode mode;          /* dropout */
    float eps, momentum;                 /* batchnorm */
    uint32_t groups;                     /* conv: 1 when dense */
    float relu_max;                      /* relu: 0, or the clip (6) */
    /* conv, linear: an imported QDQ model's QuantizeLinear and
     * DequantizeLinear before the layer (onnx_qdq.c): its input is
     * quantised to in_q_type (DLB_S8 or DLB_U8) with in_q_scale and
     * in_q_zero and dequantised again, in fp32, before it computes;
     * in_q_scale 0: the input as it is. Not from INI files. */
    float in_q_scale;
    int32_t in_q_zero;
    enum dlb_dtype in_q_type;

    /* The graph: the layers whose outputs it reads, in order (earlier
     * layers, or DLB_LAYER_INPUT), and how many inputs of later layers
     * read its output. A spec made in code may leave n_inputs 0: the
     * shape pass makes it the chain's {i - 1}. */
    uint32_t n_inputs;
    int32_t inputs[DLB_LAYER_MAX_INPUTS];
    uint32_t n_uses;

    uint32_t in_c, in_h, in_w;
    uint32_t out_c, out_h, out_w;
    int flat_out;             /* the output is a flat feature vector */
    uint64_t params;          /* learnable parameters (bn: gamma and beta) */
    double flops_fwd, flops_bwd;
};

struct dlb_model_spec {
    char *path;
    uint32_t in_c, in_h, in_w;
    uint32_t classes;
    enum dlb_loss_kind loss;
    size_t n_layers;
    struct dlb_layer_spec *layers;
    uint64_t params;                 /* sum over layers */
    double flops_fwd, flops_bwd;     /* per image, sum over layers */
    /* Initial values of the tensors that came with the file (an ONNX
     * model's initializers; model_weights.h), used instead of the seeded
     * initialisation; NULL for INI files. A copy of the spec takes a
     * reference (dlb_model_weights_ref); dlb_model_spec_free drops one. */
    struct dlb_model_weights *weights;
};

/* Read and check a network file. On failure err says FILE:LINE: what.
 * A path ending in .onnx is an ONNX model (onnx_map.h): its graph becomes
 * the spec's layers and its initializers the spec's weights; its errors
 * say FILE: node 'NAME' (OP): what. */
dlb_status dlb_model_file_load(const char *path, struct dlb_model_spec **out,
                               struct dlb_error *err);
/* The same for text in memory; `name` stands for the file in messages. */
dlb_status dlb_model_file_parse(const char *name, const char *text, size_t len,
                                struct dlb_model_spec **out,
                                struct dlb_error *err);
void dlb_model_spec_free(struct dlb_model_spec *m);
/* model_shape.c. Infer the shapes, parameters and FLOPs of every layer
 * again from the input shape, the graph and each layer's keys (filters,
 * out ...), as loading does: for a spec whose layers were changed
 * (pruning). Errors as loading's. */
dlb_status dlb_model_spec_reshape(struct dlb_model_spec *spec,
                                  struct dlb_error *err);
/* The same for layer i alone, its inputs' shapes known; adds its
 * parameters and FLOPs to the spec's sums and counts it in its inputs'
 * n_uses. */
dlb_status dlb_model_layer_infer(struct dlb_model_spec *spec, size_t i,
                                 struct dlb_error *err);
/* Every layer but the last has its output read ("FILE:LINE: layer ..."). */
dlb_status dlb_model_spec_check_uses(const struct dlb_model_spec *spec,
                                     struct dlb_error *err);
/* 1 when every layer reads the one before and is read by the one after:
 * the chain every model was before graphs. */
int dlb_model_spec_is_chain(const struct dlb_model_spec *spec);
/* Where the graph cannot be cut before layer k (a pipeline stage's
 * boundary, where only the output of layer k - 1 may cross): the first
 * layer at or after k that reads an earlier output, n_layers if none. */
size_t dlb_model_spec_cut_reader(const struct dlb_model_spec *spec, size_t k);
/* 1 when layer i's output goes to layer i + 1 and nowhere else, as a pass
 * that fuses i with i + 1 needs. */
int dlb_model_spec_feeds_next(const struct dlb_model_spec *spec, size_t i);

/* "conv", "maxpool" ... as written after `type =`. */
const char *dlb_layer_kind_name(enum dlb_layer_kind k);

#endif
