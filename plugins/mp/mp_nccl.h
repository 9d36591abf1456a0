/* Engine nccl's files inside the module mp_nccl.so (mp_nccl_module.h). */
#ifndef DLB_MP_NCCL_H
#define DLB_MP_NCCL_H

#include <stddef.h>

#include "mp.h"

/* The rank's index on its host, from the launcher's environment; NULL
 * when no launcher says. */
const char *mp_nccl_local_rank(void);

/* DLB_OK when every stage on this host can have a GPU of its own, which
 * CUDA_VISIBLE_DEVICES then narrows this rank to; else
 * DLB_ERR_UNSUPPORTED with why (no CUDA driver, fewer GPUs than stages)
 * (mp_nccl_probe.c). */
dlb_status mp_nccl_probe(const struct dlb_host *h, const struct mp_settings *s,
                         char *reason, size_t len);

#endif
