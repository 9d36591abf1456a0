/* h->model_api's open options (ABI 2.1): the backend and the precision a
 * plugin asks for, read only from a struct dlb_model_open long enough to
 * hold them (a 2.0 plugin's is not). */
#include "child/host_api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model.h"
#include "services/model_replica.h"

#define OPEN_HAS(how, field)                                                \
    ((how)->struct_size >= offsetof(struct dlb_model_open, field) +         \
                               sizeof((how)->field))

static const struct {
    const char *name;
    enum dlb_dtype type;
    enum dlb_backend_cap cap;
} precisions[] = {
    {"fp32", DLB_F32, DLB_CAP_F16 /* unused */},
    {"bf16", DLB_BF16, DLB_CAP_BF16},
    {"fp16", DLB_F16, DLB_CAP_F16},
};

dlb_status dlb_host_open_options(const struct dlb_model_open *how,
                                 struct dlb_host_open_opts *o,
                                 struct dlb_error *err)
{
    const char *b = OPEN_HAS(how, backend) ? how->backend : NULL;
    const char *p = OPEN_HAS(how, precision) ? how->precision : NULL;
    char names[64] = "";
    int known = 0;
    *o = (struct dlb_host_open_opts){b, -1};
    for (const char *const *n = dlb_backend_names(); b && *n; n++) {
        known |= !strcmp(*n, b);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                 names[0] ? ", " : "", *n);
    }
    if (b && !known)
        return dlb_errorf(err, DLB_ERR_INPUT, "open: backend '%.40s' is not "
                          "one of this dlbench's (%s)", b, names);
    for (size_t k = 0; p && k < sizeof precisions / sizeof *precisions; k++)
        if (!strcmp(p, precisions[k].name))
            o->precision = (int)k;
    if (p && o->precision < 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "open: precision '%.40s' is "
                          "not fp32, bf16 or fp16", p);
    return DLB_OK;
}

/* The policy of the amp plugin: every node in the low type but the loss;
 * fp32 master weights. */
dlb_status dlb_host_open_precision(struct dlb_model *m,
                                   const struct dlb_host_open_opts *o,
                                   struct dlb_error *err)
{
    enum dlb_dtype types[DLB_LAYER_KIND_COUNT];
    struct dlb_backend *be = dlb_model_backend(m);
    char why[320] = "";
    if (o->precision < 0)
        return DLB_OK;
    if (precisions[o->precision].type == DLB_F32)
        return dlb_model_set_precision(m, NULL, 1, err);
    dlb_status s = DLB_BE_CALL(be, supports, precisions[o->precision].cap,
                               why, sizeof why);
    if (s != DLB_OK)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "open: precision %s on "
                          "backend %s: %s", precisions[o->precision].name,
                          dlb_backend_name(be), why[0] ? why
                                                       : dlb_status_name(s));
    for (int k = 0; k < DLB_LAYER_KIND_COUNT; k++)
        types[k] = k == DLB_LAYER_LOGSOFTMAX ? DLB_F32
                                             : precisions[o->precision].type;
    return dlb_model_set_precision(m, types, 1, err);
}

/* A named model onto another backend: a replica there, given the
 * reference weights and statistics, and the dropout stream. */
dlb_status dlb_host_open_move(const struct dlb_model *src, const char *backend,
                              const struct dlb_backend_config *cfg,
                              uint64_t seed, struct dlb_model **out,
                              struct dlb_error *err)
{
    unsigned parts = DLB_STATE_WEIGHTS | DLB_STATE_STATS;
    size_t n = dlb_model_state_count(src, parts);
    float *flat = malloc((n ? n : 1) * sizeof *flat);
    dlb_status s = flat ? dlb_model_replica_create(src, backend, cfg, seed,
                                                   out, err)
                        : dlb_errorf(err, DLB_ERR_NOMEM, "open: out of "
                                     "memory moving a model to %s", backend);
    if (s == DLB_OK)
        s = dlb_model_state_io((struct dlb_model *)(uintptr_t)src, parts,
                               flat, n, 0, err);
    if (s == DLB_OK)
        s = dlb_model_state_io(*out, parts, flat, n, 1, err);
    if (s == DLB_OK)
        dlb_model_copy_rng(*out, src);
    if (s != DLB_OK && *out) {
        dlb_model_replica_destroy(*out);
        *out = NULL;
    }
    free(flat);
    return s;
}
