/* Opening a network by name with its reference weights. */
#include "train/ref_model.h"

#include <stdlib.h>

#include "model/model_find.h"

dlb_status dlb_ref_model_open(const struct dlb_ref_model_req *r,
                              struct dlb_model_spec **spec,
                              struct dlb_model **out, struct dlb_error *err)
{
    const char *name = r->weights.model_key;
    char *path = dlb_model_file_find(name, r->suite_paths, r->n_suite_paths,
                                     r->installed_dir, err);
    dlb_status s;
    *spec = NULL;
    *out = NULL;
    if (!path)
        return DLB_ERR_INPUT;
    s = dlb_model_file_load(path, spec, err);
    free(path);
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
