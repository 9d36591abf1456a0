/* dlbench public SDK: training services for plugins that change what a
 * step learns from (knowledge distillation): other models by name with
 * their cached reference weights, logits, and a training step against
 * soft targets (ABI 1.2, h->train_ops). See model_ops.h. */
#ifndef DLBENCH_TRAIN_OPS_H
#define DLBENCH_TRAIN_OPS_H

#include <dlbench/model_ops.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dlb_train_ops {
    uint32_t struct_size;
};

#ifdef __cplusplus
}
#endif
#endif
