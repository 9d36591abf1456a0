/* dlbench public SDK: int8 execution of conv and linear layers, for the quant plugin (ABI 1.2, h->quant_ops). See model_ops.h. */
#ifndef DLBENCH_QUANT_OPS_H
#define DLBENCH_QUANT_OPS_H

#include <dlbench/model_ops.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dlb_quant_ops {
    uint32_t struct_size;
};

#ifdef __cplusplus
}
#endif
#endif
