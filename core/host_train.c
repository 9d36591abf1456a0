/* train_ops (ABI 1.2): other models, logits and soft-target training
 * steps, for the distill plugin. */
#include <dlbench/train_ops.h>

#include "host.h"

const struct dlb_train_ops dlb_host_train_ops = {
    .struct_size = sizeof(struct dlb_train_ops),
};
