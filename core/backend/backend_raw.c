/* Raw memory of a backend's device, for the segments of a memory pool:
 * host memory for the built-in backends, the module's device allocator
 * for GPU backends. */
#include "backend.h"
#include "backend_module.h"

#include <stdio.h>
#include <stdlib.h>

int dlb_backend_device_memory(const char *name)
{
    return name && dlb_backend_module_file(name) != NULL;
}

dlb_status dlb_backend_raw_alloc(const char *name, int device, size_t bytes,
                                 void **out, char *reason, size_t len)
{
    if (dlb_backend_device_memory(name))
        return dlb_backend_module_raw_alloc(name, dlb_backend_module_file(name),
                                            device, bytes, out, reason, len);
    *out = malloc(bytes ? bytes : 1);
    if (*out)
        return DLB_OK;
    snprintf(reason, len, "out of host memory (%zu bytes)", bytes);
    return DLB_ERR_NOMEM;
}

void dlb_backend_raw_free(const char *name, int device, void *p, size_t bytes)
{
    if (dlb_backend_device_memory(name))
        dlb_backend_module_raw_free(name, dlb_backend_module_file(name), device,
                                    p, bytes);
    else
        free(p);
}
