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
 *   conv:      filters, size, stride = 1, pad = 0, bias = 1
 *   maxpool, avgpool: size, stride = size, pad = 0
 *   dropout:   p = 0.5, mode = element | channel (dropout2d: whole planes)
 *   batchnorm: eps = 1e-5, momentum = 0.1
 *   linear:    out, bias = 1 (needs a flat input: put a flatten before it)
 *   relu, flatten, logsoftmax: none
 * Unknown types and keys are errors with a suggestion; shapes are inferred
 * and checked, and every message is "FILE:LINE: layer 'NAME': what". */
#ifndef DLB_CORE_MODEL_FILE_H
#define DLB_CORE_MODEL_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/backend.h>
#include <dlbench/plugin.h>

#include "util/error.h"

enum dlb_loss_kind { DLB_LOSS_NLL };

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
};

/* Read and check a network file. On failure err says FILE:LINE: what. */
dlb_status dlb_model_file_load(const char *path, struct dlb_model_spec **out,
                               struct dlb_error *err);
/* The same for text in memory; `name` stands for the file in messages. */
dlb_status dlb_model_file_parse(const char *name, const char *text, size_t len,
                                struct dlb_model_spec **out,
                                struct dlb_error *err);
void dlb_model_spec_free(struct dlb_model_spec *m);
/* Infer the shapes, parameters and FLOPs of every layer again from the
 * input shape and each layer's keys (filters, out ...), as loading does:
 * for a spec whose layers were changed (pruning). Errors as loading's. */
dlb_status dlb_model_spec_reshape(struct dlb_model_spec *spec,
                                  struct dlb_error *err);

/* "conv", "maxpool" ... as written after `type =`. */
const char *dlb_layer_kind_name(enum dlb_layer_kind k);

#endif
