/* Opening a network by name with its reference weights. */
#include "train/ref_model.h"

#include <stdlib.h>

#include "model/model_find.h"

/* The file named by the request, found and loaded into *spec. */
static dlb_status load(const struct dlb_ref_model_req *r,
                       struct dlb_model_spec **spec, struct dlb_error *err)
{
    char *path = dlb_model_file_find(r->weights.model_key, r->suite_paths,
                                     r->n_suite_paths, r->installed_dir, err);
    *spec = NULL;
    if (!path)
        return DLB_ERR_INPUT;
    dlb_status s = dlb_model_file_load(path, spec, err);
    free(path);
    return s;
}

dlb_status dlb_ref_model_prepare(const struct dlb_ref_model_req *r,
                                 const char *backend,
                                 const struct dlb_backend_config *cfg,
                                 struct dlb_error *err)
{
    struct dlb_model_spec *spec = NULL;
    dlb_status s = load(r, &spec, err);
    /* created from the same seed as dlb_ref_model_open's model */
    if (s == DLB_OK)
        s = dlb_ref_weights_prepare(spec, &r->weights, backend, cfg,
                                    r->weights.seed, err);
    dlb_model_spec_free(spec);
    return s;
}

dlb_status dlb_ref_model_open(const struct dlb_ref_model_req *r,
                              struct dlb_model_spec **spec,
                              struct dlb_model **out, struct dlb_error *err)
{
    *out = NULL;
    dlb_status s = load(r, spec, err);
    if (s == DLB_OK)
        s = dlb_model_create(*spec, r->be, DLB_F32, r->weights.seed, out, err);
    if (s == DLB_OK) {
        dlb_model_set_sgd(*out, r->weights.lr, r->weights.momentum);
        s = dlb_ref_weights_get(*out, &r->weights, NULL, err);
    }
    if (s != DLB_OK) {
        dlb_model_destroy(*out);
        dlb_model_spec_free(*spec);
        *out = NULL;
        *spec = NULL;
    }
    return s;
}
