/* Shared by the ONNX writer's files: onnx_write_pb.c builds the protobuf
 * messages (nodes, initializers, the graph) that protoc-c generated from
 * onnx.proto, owning every allocation until ow_free; onnx_write.c maps the
 * model's layers onto nodes. */
#ifndef DLB_CORE_MODEL_ONNX_WRITE_IMPL_H
#define DLB_CORE_MODEL_ONNX_WRITE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "model/onnx.pb-c.h"
#include "util/error.h"

struct ow {
    void **owned;             /* everything allocated, freed by ow_free */
    size_t n_owned, cap_owned;
    Onnx__NodeProto **nodes;
    size_t n_nodes, cap_nodes;
    Onnx__TensorProto **inits;
    size_t n_inits, cap_inits;
    int oom;                  /* an allocation failed: the build is void */
};

/* Zeroed memory the builder frees; NULL (and oom set) on failure. */
void *ow_alloc(struct ow *w, size_t bytes);
/* A copy of s / of "a" "b" the builder frees. */
char *ow_str(struct ow *w, const char *s);
char *ow_cat(struct ow *w, const char *a, const char *b);
void ow_free(struct ow *w);

/* A node op(inputs) -> output named `name`; attributes added after. */
Onnx__NodeProto *ow_node(struct ow *w, const char *op, const char *name,
                         const char *const *inputs, size_t n_inputs,
                         const char *output);
void ow_attr_int(struct ow *w, Onnx__NodeProto *n, const char *name,
                 int64_t v);
void ow_attr_float(struct ow *w, Onnx__NodeProto *n, const char *name,
                   float v);
void ow_attr_ints(struct ow *w, Onnx__NodeProto *n, const char *name,
                  const int64_t *v, size_t count);

/* Initializers, their values copied: FLOAT, INT8, UINT8 (raw bytes) and
 * INT32 tensors of `ndim` dims (0: a scalar). */
void ow_init_floats(struct ow *w, const char *name, const float *v,
                    const int64_t *dims, size_t ndim);
void ow_init_bytes(struct ow *w, const char *name, int32_t onnx_type,
                   const void *v, const int64_t *dims, size_t ndim);
void ow_init_int32(struct ow *w, const char *name, const int32_t *v,
                   const int64_t *dims, size_t ndim);

/* Pack a model of the nodes and initializers so far, with one float input
 * `in` of N x c x h x w (N symbolic, "batch") and one float output `out`
 * of N x classes, and write it to `path` through a temporary file. */
dlb_status ow_write_file(struct ow *w, const char *path, const char *graph,
                         const char *in, const int64_t chw[3],
                         const char *out, int64_t classes,
                         struct dlb_error *err);

#endif
