/* replica_ops (ABI 1.2): data-parallel replicas: per-replica forward/backward, gradients, the optimizer step, for the dp plugin. */
#include <dlbench/replica_ops.h>

#include "host.h"

const struct dlb_replica_ops dlb_host_replica_ops = {
    .struct_size = sizeof(struct dlb_replica_ops),
};
