/* h->model_api's open options (ABI 2.1): the backend and the precision a
 * plugin asks for, read only from a struct dlb_model_open long enough to
 * hold them (a 2.0 plugin's is not). */
#include "child/host_api.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model.h"

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
