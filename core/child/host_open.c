/* h->model_api's open options (ABI 2.1): the backend and the precision a
 * plugin asks for, read only from a struct dlb_model_open long enough to
 * hold them (a 2.0 plugin's is not). */
#include "child/host_api.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "services/model_lend.h"

#define OPEN_HAS(how, field)                                                \
    ((how)->struct_size >= offsetof(struct dlb_model_open, field) +         \
                               sizeof((how)->field))

dlb_status dlb_host_open_options(const struct dlb_model_open *how,
                                 struct dlb_model_lend_how *o,
                                 struct dlb_error *err)
{
    const char *b = OPEN_HAS(how, backend) ? how->backend : NULL;
    const char *p = OPEN_HAS(how, precision) ? how->precision : NULL;
    char names[64] = "";
    int known = 0;
    o->backend = b;
    o->precision = -1;
    for (const char *const *n = dlb_backend_names(); b && *n; n++) {
        known |= !strcmp(*n, b);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                 names[0] ? ", " : "", *n);
    }
    if (b && !known)
        return dlb_errorf(err, DLB_ERR_INPUT, "open: backend '%.40s' is not "
                          "one of this dlbench's (%s)", b, names);
    if (p && (o->precision = dlb_model_lend_precision_find(p)) < 0)
        return dlb_errorf(err, DLB_ERR_INPUT, "open: precision '%.40s' is "
                          "not fp32, bf16 or fp16", p);
    return DLB_OK;
}
