/* Engine mpi in a build without MPI: configurations using it are skipped
 * with what to install. */
#include <stdio.h>

#include "mp.h"

static dlb_status none_probe(const struct dlb_host *h,
                             const struct mp_settings *s, char *reason,
                             size_t len)
{
    (void)h;
    (void)s;
    snprintf(reason, len, "engine mpi is not built: configure found no MPI "
             "(install libopenmpi-dev and openmpi-bin, then rebuild dlbench)");
    return DLB_ERR_UNSUPPORTED;
}

const struct mp_engine mp_engine_mpi = {
    .name = "mpi",
    .probe = none_probe,
};
