/* dlbench public SDK: data-parallel replicas: per-replica forward/backward, gradients, the optimizer step, for the dp plugin (ABI 1.2, h->replica_ops). See model_ops.h. */
#ifndef DLBENCH_REPLICA_OPS_H
#define DLBENCH_REPLICA_OPS_H

#include <dlbench/model_ops.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dlb_replica_ops {
    uint32_t struct_size;
};

#ifdef __cplusplus
}
#endif
#endif
