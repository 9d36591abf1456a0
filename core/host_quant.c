/* quant_ops (ABI 1.2): int8 execution of conv and linear layers, for the quant plugin. */
#include <dlbench/quant_ops.h>

#include "host.h"

const struct dlb_quant_ops dlb_host_quant_ops = {
    .struct_size = sizeof(struct dlb_quant_ops),
};
