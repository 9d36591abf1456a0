/* Backends built as separately loadable modules (the cuda backend): the
 * one symbol a module exports, what it gets from the core, and the core's
 * loader.
 *
 * A module is a shared object in $DLBENCH_BACKEND_PATH or the installed
 * backends directory ($pkglibdir/backends), opened with dlopen the first
 * time the backend is asked for, so that a dlbench built with CUDA still
 * runs where the CUDA libraries or the driver are missing: the backend is
 * then unavailable, with the reason. A module links nothing of the core;
 * the core lends it the few helpers every backend shares. */
#ifndef DLB_CORE_BACKEND_MODULE_H
#define DLB_CORE_BACKEND_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/backend.h>

#define DLB_BACKEND_MODULE_ENTRY "dlb_backend_module_entry"

/* What the core lends a module. */
struct dlb_backend_core {
    uint32_t struct_size;
    /* dlb_backend_new: wraps the module's table and context in a handle
     * that the core's dlb_backend_close frees (after ops->destroy). */
    dlb_status (*backend_new)(const struct dlb_backend_ops *ops, void *ctx,
                              struct dlb_backend **out, char *reason,
                              size_t len);
    dlb_status (*conv2d_desc_check)(struct dlb_backend *be, const char *op,
                                    const struct dlb_conv2d_desc *d);
    dlb_status (*pool_desc_check)(struct dlb_backend *be, const char *op,
                                  const struct dlb_pool_desc *d);
};

/* What the module's entry returns. */
struct dlb_backend_module {
    uint32_t struct_size;  /* sizeof(struct dlb_backend_module) */
    uint16_t api_major;    /* DLB_BACKEND_API_MAJOR of the module's build */
    uint16_t api_minor;
    const char *name;      /* "cuda" */
    /* 1 when the backend can run on this machine, else 0 and the reason.
     * Called by the parent process (dlbench list, info), which must not
     * initialise the device's runtime itself: a probe that needs to ask
     * the driver does it in a child process. */
    int (*probe)(char *reason, size_t len);
    /* Open the backend: as the built-in constructors do. */
    dlb_status (*create)(const struct dlb_backend_core *core,
                         const struct dlb_backend_config *cfg,
                         struct dlb_backend **out, char *reason, size_t len);
    /* Device memory outside any buffer, for the segments of a memory pool
     * (dlb_backend_raw_alloc): no handle is needed, since a pool takes
     * its arena before the workload opens the backend. The memory is the
     * device's, usable by every handle of the process on that device.
     * DLB_ERR_UNSUPPORTED with the reason where there is no device,
     * DLB_ERR_NOMEM when it is full. */
    dlb_status (*raw_alloc)(int device, size_t bytes, void **out,
                            char *reason, size_t len);
    void (*raw_free)(int device, void *p, size_t bytes);
};

typedef const struct dlb_backend_module *(*dlb_backend_module_entry_fn)(void);

/* Core side (backend_module.c). Load the module `file` (a file name such
 * as "dlbench_cuda.so") of backend `name` and open it / probe it. A module
 * that is missing or does not load gives DLB_ERR_UNSUPPORTED (open) or 0
 * (available) with the reason. */
dlb_status dlb_backend_module_open(const char *name, const char *file,
                                   const struct dlb_backend_config *cfg,
                                   struct dlb_backend **out, char *reason,
                                   size_t len);
int dlb_backend_module_available(const char *name, const char *file,
                                 char *reason, size_t len);
dlb_status dlb_backend_module_raw_alloc(const char *name, const char *file,
                                        int device, size_t bytes, void **out,
                                        char *reason, size_t len);
void dlb_backend_module_raw_free(const char *name, const char *file,
                                 int device, void *p, size_t bytes);

/* The module file of backend `name` ("dlbench_cuda.so"), or NULL for a
 * backend built into the core (backend.c). */
const char *dlb_backend_module_file(const char *name);

#endif
