/* h->model_api (ABI 2.2), assembled from the files that implement it:
 * host_model.c (lifetime, inspect, run; the table), host_open.c (open's
 * backend and precision), host_range.c (2.1's tensor ids and ranges),
 * host_slice.c (slices), host_rewrite.c (rewrite and the extras). Each
 * entry checks what a plugin may get wrong, calls the core, and logs a
 * failure under the plugin's name (dlb_host_fail); what the entries do
 * lives in the core: lent models (clones, named models, where they run
 * and in what precision) in core/services/model_lend.c, the rest in
 * core/model, core/train and core/services. */
#ifndef DLB_CORE_HOST_API_H
#define DLB_CORE_HOST_API_H

#include <dlbench/model_api.h>

#include "util/error.h"

/* The table, filled on first use. */
const struct dlb_model_api *dlb_host_model_api(void);

/* Set the entries of one file. */
void dlb_host_slice_entries(struct dlb_model_api *api);
void dlb_host_rewrite_entries(struct dlb_model_api *api);
void dlb_host_range_entries(struct dlb_model_api *api);

/* open's 2.1 options, read as far as how->struct_size reaches, into o's
 * backend (NULL, the default, or a known name) and precision (-1, the
 * default, or dlb_model_lend_precision_find's index); the rest of o is
 * left as it is. DLB_ERR_INPUT for unknown names. */
struct dlb_model_lend_how;
dlb_status dlb_host_open_options(const struct dlb_model_open *how,
                                 struct dlb_model_lend_how *o,
                                 struct dlb_error *err);

/* Log "WHAT: a NULL model or argument" and return DLB_ERR_INTERNAL. */
dlb_status dlb_host_null(const struct dlb_host *h, const char *what);

/* The body of an entry: `ok` or the NULL-argument error, else `call`
 * (which reports into `err`) with its failure logged. */
#define DLB_HOST_CALL(what, ok, call)                                       \
    do {                                                                    \
        struct dlb_error err = {""};                                        \
        if (!(ok))                                                          \
            return dlb_host_null(h, what);                                  \
        return dlb_host_fail(h, (call), &err);                              \
    } while (0)

#endif
