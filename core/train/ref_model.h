/* A second network beside the workload's: a model file found by name as
 * the suite's `model` key is (model_find.h), built on a backend and filled
 * with its reference weights (ref_weights.h: trained once by the harness,
 * cached). What a distillation teacher is. */
#ifndef DLB_CORE_MODEL_REF_MODEL_H
#define DLB_CORE_MODEL_REF_MODEL_H

#include "train/ref_weights.h"

struct dlb_ref_model_req {
    const char *const *suite_paths;  /* as dlb_model_file_find takes them */
    size_t n_suite_paths;
    const char *installed_dir;
    struct dlb_backend *be;
    /* weights.model_key is the name looked up. */
    struct dlb_ref_weights_req weights;
};

/* Find, load and build r->weights.model_key on r->be (fp32), with the
 * reference weights of r->weights (trained now when the cache has none).
 * The spec is the caller's, to free after the model. */
dlb_status dlb_ref_model_open(const struct dlb_ref_model_req *r,
                              struct dlb_model_spec **spec,
                              struct dlb_model **out, struct dlb_error *err);

/* The reference weights of r->weights for model r->weights.model_key in
 * the cache, trained now where they are not (dlb_ref_weights_prepare: on
 * `backend` opened with `cfg`, apart from this process where it can):
 * before the measured backend opens, for a model a plugin will open by
 * name. r->be is not used. */
dlb_status dlb_ref_model_prepare(const struct dlb_ref_model_req *r,
                                 const char *backend,
                                 const struct dlb_backend_config *cfg,
                                 struct dlb_error *err);

#endif
