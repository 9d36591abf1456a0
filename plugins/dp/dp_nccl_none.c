/* Engine nccl in a build without the CUDA toolkit, NCCL or MPI:
 * configurations using it are skipped with what is missing. */
#include <stdio.h>

#include "dp.h"

static dlb_status none_probe(const struct dlb_host *h,
                             const struct dp_settings *s, char *reason,
                             size_t len)
{
    (void)h;
    (void)s;
    snprintf(reason, len, "engine nccl is not built: it needs the CUDA toolkit "
             "with NCCL and MPI (configure found %s)", DLB_DP_NCCL_MISSING);
    return DLB_ERR_UNSUPPORTED;
}

const struct dp_engine dp_engine_nccl = {
    .name = "nccl",
    .probe = none_probe,
};
