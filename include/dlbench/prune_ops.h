/* dlbench public SDK: masks, physical removal of units, sparse linear layers and fine-tuning, for the prune plugin (ABI 1.2, h->prune_ops). See model_ops.h. */
#ifndef DLBENCH_PRUNE_OPS_H
#define DLBENCH_PRUNE_OPS_H

#include <dlbench/model_ops.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dlb_prune_ops {
    uint32_t struct_size;
};

#ifdef __cplusplus
}
#endif
#endif
