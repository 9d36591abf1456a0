/* ONNX models as dlbench networks: the graph's nodes become layers of a
 * struct dlb_model_spec (the same graph INI model files describe), its
 * initializers the spec's weights. doc/onnx.md lists the operators,
 * attributes and opsets read. The output's Softmax or LogSoftmax, if
 * any, is dropped: the spec trains with loss = cross_entropy on the
 * logits, whose logsoftmax layer ("cross_entropy") gives the model's
 * inference output (log-probabilities). Errors say
 *   FILE: node 'NAME' (OP): what
 * and the spec is not made. */
#ifndef DLB_CORE_MODEL_ONNX_MAP_H
#define DLB_CORE_MODEL_ONNX_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "model/model_file.h"

/* 1 when `path` names an ONNX file (it ends in .onnx, any case). */
int dlb_onnx_is_path(const char *path);

dlb_status dlb_onnx_load(const char *path, struct dlb_model_spec **out,
                         struct dlb_error *err);
/* The same for bytes in memory; `name` stands for the file in messages and
 * `dir` is the folder of external data (NULL: refused). */
dlb_status dlb_onnx_parse(const char *name, const uint8_t *buf, size_t len,
                          const char *dir, struct dlb_model_spec **out,
                          struct dlb_error *err);

#endif
