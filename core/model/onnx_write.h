/* Writing a model as an ONNX file (doc/onnx.md, "Export"): the graph the
 * model runs (a pruned model's rebuilt layers and zeroed weights; an int8
 * model's calibrated scales as QuantizeLinear/DequantizeLinear pairs, the
 * QDQ format onnxruntime reads), its weights as initializers, opset
 * DLB_ONNX_WRITE_OPSET, an input "input" of shape batch x C x H x W (the
 * batch symbolic) and an output "logits". dlbench's importer reads it back
 * (onnx_map.h) as the same network. */
#ifndef DLB_CORE_MODEL_ONNX_WRITE_H
#define DLB_CORE_MODEL_ONNX_WRITE_H

#include "model/model.h"
#include "util/error.h"

/* The default domain's operator set written, and the IR version that
 * goes with it (onnx 1.12 reads both). */
#define DLB_ONNX_WRITE_OPSET 13
#define DLB_ONNX_WRITE_IR 7

/* Write `m` (fp32, as trained and transformed) to `path` through a
 * temporary file renamed into place: on failure nothing is left at
 * `path` that was not there before. Errors name the file or the layer
 * that cannot be written (DLB_ERR_UNSUPPORTED: a layer ONNX export does
 * not map) and say what to do. */
dlb_status dlb_onnx_write_model(struct dlb_model *m, const char *path,
                                struct dlb_error *err);

#endif
