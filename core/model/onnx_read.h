/* Reading an ONNX file: the protobuf (onnx.proto, compiled by protoc-c at
 * build time) into a ModelProto, its operator set checked, and tensors
 * (initializers, Constant nodes) as floats or integers, from the file or
 * from external data beside it. */
#ifndef DLB_CORE_MODEL_ONNX_READ_H
#define DLB_CORE_MODEL_ONNX_READ_H

#include <stddef.h>
#include <stdint.h>

#include "model/onnx.pb-c.h"
#include "util/error.h"

/* The default domain's operator sets dlbench maps (onnx_map.c): what
 * torch.onnx.export writes for opset_version 11 to 18. */
#define DLB_ONNX_OPSET_MIN 11
#define DLB_ONNX_OPSET_MAX 18

struct dlb_onnx {
    const char *name;        /* the file, in messages */
    char *dir;               /* its folder, for external data; NULL: none */
    Onnx__ModelProto *model;
    int64_t opset;           /* of the default domain */
};

/* Parse `len` bytes of an ONNX file `name`; `dir` is the folder external
 * data is read from (NULL refuses it). On failure err says "NAME: what"
 * and o holds nothing to close. */
dlb_status dlb_onnx_read(const char *name, const uint8_t *buf, size_t len,
                         const char *dir, struct dlb_onnx *o,
                         struct dlb_error *err);
void dlb_onnx_close(struct dlb_onnx *o);

/* The element count of `t` (product of its dims); `what` names it in
 * messages ("initializer 'fc.weight'"). */
dlb_status dlb_onnx_tensor_count(const struct dlb_onnx *o,
                                 const Onnx__TensorProto *t, const char *what,
                                 size_t *count, struct dlb_error *err);
/* Its values as fp32 (FLOAT or DOUBLE data), malloc'ed. */
dlb_status dlb_onnx_tensor_floats(const struct dlb_onnx *o,
                                  const Onnx__TensorProto *t, const char *what,
                                  float **out, size_t *count,
                                  struct dlb_error *err);
/* Its values as int64 (INT64, INT32, INT8 or UINT8 data), malloc'ed. */
dlb_status dlb_onnx_tensor_ints(const struct dlb_onnx *o,
                                const Onnx__TensorProto *t, const char *what,
                                int64_t **out, size_t *count,
                                struct dlb_error *err);

#endif
