/* prune_ops (ABI 1.2): masks, physical removal of units, sparse linear layers and fine-tuning, for the prune plugin. */
#include <dlbench/prune_ops.h>

#include "host.h"

const struct dlb_prune_ops dlb_host_prune_ops = {
    .struct_size = sizeof(struct dlb_prune_ops),
};
