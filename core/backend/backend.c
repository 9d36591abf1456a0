/* The backend registry: names to constructors, and the handle helpers. */
#ifdef HAVE_CONFIG_H
#include "config.h" /* HAVE_ONEDNN */
#endif
#include "backend.h"
#include "backend_impl.h"
#include "backend_ops.h"
#include "backend_module.h"
#include "dtype.h"

#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef dlb_status (*dlb_backend_ctor)(const struct dlb_backend_config *cfg,
                                       struct dlb_backend **out, char *reason,
                                       size_t len);

/* A backend that is not built in has a NULL constructor and the reason;
 * a backend built as a loadable module (backend_module.h) names its file
 * instead, and says itself why it cannot run. */
static const struct {
    const char *name;
    dlb_backend_ctor create;
    const char *missing;
    const char *module;
} dlb_backends[] = {
    { "ref", dlb_backend_ref_create, NULL, NULL },
#ifdef HAVE_ONEDNN
    { "cpu", dlb_backend_cpu_create, NULL, NULL },
#else
    { "cpu", NULL, "backend cpu is not built in: configure found no oneDNN "
      "(install libdnnl-dev)", NULL },
#endif
    { "cuda", NULL, NULL, "dlbench_cuda.so" },
};

#define N_BACKENDS (sizeof dlb_backends / sizeof dlb_backends[0])

dlb_status dlb_backend_open(const char *name,
                            const struct dlb_backend_config *cfg,
                            struct dlb_backend **out, char *reason, size_t len)
{
    static const struct dlb_backend_config defaults = { 0 };
    *out = NULL;
    if (reason && len)
        reason[0] = '\0';
    for (size_t i = 0; i < N_BACKENDS; i++) {
        if (strcmp(name, dlb_backends[i].name) != 0)
            continue;
        dlb_status s;
        if (dlb_backends[i].module)
            s = dlb_backend_module_open(name, dlb_backends[i].module,
                                        cfg ? cfg : &defaults, out, reason, len);
        else if (!dlb_backends[i].create) {
            snprintf(reason, len, "%s", dlb_backends[i].missing);
            return DLB_ERR_UNSUPPORTED;
        } else
            s = dlb_backends[i].create(cfg ? cfg : &defaults, out, reason, len);
        if (s == DLB_OK && cfg)
            (*out)->profile = cfg->profile;
        return s;
    }
    snprintf(reason, len, "unknown backend '%s' (known: ref, cpu, cuda)", name);
    return DLB_ERR_INPUT;
}

void dlb_backend_close(struct dlb_backend *be)
{
    if (!be)
        return;
    if (be->ops->destroy)
        be->ops->destroy(be);
    dlb_backend_profile_reset(be);
    free(be->prof);
    free(be);
}

dlb_status dlb_backend_probe_cap(const char *name, enum dlb_backend_cap cap,
                                 char *reason, size_t len)
{
    struct dlb_backend *be = NULL;
    char why[512] = "";
    cpu_set_t mask;
    int have_mask = sched_getaffinity(0, sizeof mask, &mask) == 0;
    dlb_status s = dlb_backend_open(name, NULL, &be, why, sizeof why);
    if (s == DLB_OK)
        s = DLB_BE_CALL(be, supports, cap, why, sizeof why);
    dlb_backend_close(be);
    if (have_mask)
        sched_setaffinity(0, sizeof mask, &mask);
    if (s != DLB_OK && reason && len)
        snprintf(reason, len, "%s", why[0] ? why : dlb_status_name(s));
    return s;
}

dlb_status dlb_backend_probe_dtype(const char *name, enum dlb_dtype dtype,
                                   char *reason, size_t len)
{
    enum dlb_backend_cap cap;
    if (reason && len)
        reason[0] = '\0';
    switch (dtype) {
    case DLB_F32: return DLB_OK;
    case DLB_F16: cap = DLB_CAP_F16; break;
    case DLB_BF16: cap = DLB_CAP_BF16; break;
    case DLB_S8: case DLB_U8: cap = DLB_CAP_INT8; break;
    default:
        snprintf(reason, len, "no capability query for %s",
                 dlb_dtype_name(dtype));
        return DLB_ERR_UNSUPPORTED;
    }
    if (!name) {
        snprintf(reason, len, "no backend named for this configuration");
        return DLB_ERR_INTERNAL;
    }
    return dlb_backend_probe_cap(name, cap, reason, len);
}

const char *dlb_backend_name(const struct dlb_backend *be)
{
    return be->ops->name;
}

const struct dlb_backend_ops *dlb_backend_ops_of(const struct dlb_backend *be)
{
    return be->ops;
}

const char *dlb_backend_last_error(const struct dlb_backend *be)
{
    return be->reason;
}

enum dlb_dtype dlb_buffer_dtype(const struct dlb_buffer *b) { return b->dtype; }
size_t dlb_buffer_count(const struct dlb_buffer *b) { return b->count; }
size_t dlb_buffer_bytes(const struct dlb_buffer *b) { return b->bytes; }

dlb_status dlb_backend_fail(struct dlb_backend *be, dlb_status s,
                            const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->reason, sizeof be->reason, fmt, ap);
    va_end(ap);
    return s;
}

dlb_status dlb_backend_missing(struct dlb_backend *be, const char *op)
{
    return dlb_backend_fail(be, DLB_ERR_UNSUPPORTED,
                            "backend %s has no operation %s", be->ops->name, op);
}

void *dlb_backend_ctx(const struct dlb_backend *be)
{
    return be->ctx;
}

/* backend_ops.h names every entry after the version fields and name
 * (and the kernel list): an entry added to the table but to no family
 * fails here. */
#define DLB_OP_COUNT(be, op) + 1
_Static_assert(offsetof(struct dlb_backend_ops, destroy) +
               (0 DLB_OPS_ALL(DLB_OP_COUNT, _)) * sizeof(void (*)(void)) +
               sizeof(const struct dlb_kernel *) + sizeof(size_t) ==
               sizeof(struct dlb_backend_ops),
               "an entry of struct dlb_backend_ops is in no family of "
               "backend_ops.h");
#undef DLB_OP_COUNT

/* The entries every caller relies on (backend_ops.h); the rest may be
 * NULL. */
static const char *first_missing(const struct dlb_backend_ops *o)
{
#define REQ(be, f) if (!o->f) return #f;
    DLB_OPS_REQUIRED(REQ, _)
#undef REQ
    return NULL;
}

dlb_status dlb_backend_new(const struct dlb_backend_ops *ops, void *ctx,
                           struct dlb_backend **out, char *reason, size_t len)
{
    const char *miss;
    *out = NULL;
    if (ops->api_major != DLB_BACKEND_API_MAJOR ||
        ops->struct_size < sizeof *ops) {
        snprintf(reason, len, "backend %s: interface %u.%u (%u bytes), core "
                 "expects %u.%u (%zu bytes)", ops->name, ops->api_major,
                 ops->api_minor, ops->struct_size, DLB_BACKEND_API_MAJOR,
                 DLB_BACKEND_API_MINOR, sizeof *ops);
        return DLB_ERR_INTERNAL;
    }
    if ((miss = first_missing(ops))) {
        snprintf(reason, len, "backend %s lacks required entry %s", ops->name,
                 miss);
        return DLB_ERR_INTERNAL;
    }
    struct dlb_backend *be = calloc(1, sizeof *be);
    if (!be) {
        snprintf(reason, len, "out of memory opening backend %s", ops->name);
        return DLB_ERR_NOMEM;
    }
    be->ops = ops;
    be->ctx = ctx;
    *out = be;
    return DLB_OK;
}

const char *const *dlb_backend_names(void)
{
    static const char *names[N_BACKENDS + 1];
    for (size_t i = 0; i < N_BACKENDS; i++)
        names[i] = dlb_backends[i].name;
    return names;
}

/* Answered from the build alone: opening a backend initialises its
 * library (oneDNN's thread pool, a CUDA context), which only a
 * configuration's own process may do. A module is loaded and asks the
 * machine without initialising anything in this process. */
int dlb_backend_available(const char *name, char *reason, size_t len)
{
    for (size_t i = 0; i < N_BACKENDS; i++) {
        if (strcmp(name, dlb_backends[i].name) != 0)
            continue;
        if (dlb_backends[i].module)
            return dlb_backend_module_available(name, dlb_backends[i].module,
                                                reason, len);
        if (dlb_backends[i].create)
            return 1;
        snprintf(reason, len, "%s", dlb_backends[i].missing);
        return 0;
    }
    snprintf(reason, len, "unknown backend '%s'", name);
    return 0;
}

const char *dlb_backend_module_file(const char *name)
{
    for (size_t i = 0; i < N_BACKENDS; i++)
        if (!strcmp(name, dlb_backends[i].name))
            return dlb_backends[i].module;
    return NULL;
}
