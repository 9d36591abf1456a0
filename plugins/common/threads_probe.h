/* The probe both executors' threads engines share: one process, so a
 * rank count above 1 belongs to the multi-process engines. */
#ifndef DLB_THREADS_PROBE_H
#define DLB_THREADS_PROBE_H

#include <stddef.h>
#include <stdio.h>

#include <dlbench/status.h>

static inline dlb_status dlb_threads_probe(int ranks, char *reason, size_t len)
{
    if (ranks > 1) {
        snprintf(reason, len, "engine threads runs in one process: ranks must "
                 "be 1 (ranks = %d is for engines mpi and nccl)", ranks);
        return DLB_ERR_UNSUPPORTED;
    }
    return DLB_OK;
}

#endif
