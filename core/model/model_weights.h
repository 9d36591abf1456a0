/* Initial values of a model's tensors that come with its file (an ONNX
 * model's initializers): named as the model names its tensors
 * ("conv1.weight", "bn1.running_var"), in fp32, shared by every spec
 * copied from the one that read them (a replica starts from the same
 * weights as its master). */
#ifndef DLB_CORE_MODEL_WEIGHTS_H
#define DLB_CORE_MODEL_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct dlb_weight {
    char name[96];
    unsigned ndim;
    uint64_t shape[4];
    size_t count;
    float *data;
};

struct dlb_model_weights {
    _Atomic unsigned refs;  /* replicas may be made on several threads */
    char *source;           /* the file they come from, for messages */
    size_t n, cap;
    struct dlb_weight *t;
};

/* A new, empty set with one reference; NULL when out of memory. */
struct dlb_model_weights *dlb_model_weights_new(const char *source);
/* Add a tensor of `ndim` dimensions (<= 4), taking ownership of `data`
 * (malloc'ed, the product of the shape in floats), even on failure. */
dlb_status dlb_model_weights_add(struct dlb_model_weights *w, const char *name,
                                 unsigned ndim, const uint64_t *shape,
                                 float *data, struct dlb_error *err);
const struct dlb_weight *dlb_model_weights_find(
    const struct dlb_model_weights *w, const char *name);
/* Another reference (w may be NULL); the set is freed with the last. */
struct dlb_model_weights *dlb_model_weights_ref(struct dlb_model_weights *w);
void dlb_model_weights_unref(struct dlb_model_weights *w);

#endif
