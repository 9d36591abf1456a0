/* Engine nccl in a build without the CUDA toolkit with NCCL, or without
 * MPI (which starts its ranks and carries the NCCL id): configurations
 * using it are skipped with what is missing, never run on another engine
 * in their place. */
#include <stdio.h>

#include "mp.h"

static dlb_status none_probe(const struct dlb_host *h,
                             const struct mp_settings *s, char *reason,
                             size_t len)
{
    (void)h;
    (void)s;
    snprintf(reason, len, "engine nccl is not built: it needs the CUDA toolkit "
             "with NCCL and MPI (configure found %s)", DLB_MP_NCCL_MISSING);
    return DLB_ERR_UNSUPPORTED;
}

const struct mp_engine mp_engine_nccl = {
    .name = "nccl",
    .probe = none_probe,
};
