/* Reference weights for inference: a model trained with the baseline
 * (fp32, no plugins, batch 64, the suite's lr and momentum) for a fixed
 * number of steps from the seed, cached as a safetensors file per
 * (model, seed, steps) so that it is trained once per machine. */
#ifndef DLB_CORE_MODEL_REF_WEIGHTS_H
#define DLB_CORE_MODEL_REF_WEIGHTS_H

#include <stdint.h>

#include <dlbench/plugin.h>

#include "data/dataset.h"
#include "model/model.h"

#define DLB_REF_WEIGHTS_BATCH 64u

struct dlb_ref_weights_req {
    const char *model_key;      /* the suite's `model` value: names the file */
    uint64_t seed, steps;
    float lr, momentum;
    const char *dataset_kind;   /* "fashion-mnist" or "synthetic" */
    /* Provides the training set, called only when training is needed. */
    dlb_status (*load_train)(void *ctx, const struct dlb_dataset **out,
                             struct dlb_error *err);
    void *ctx;
    const struct dlb_host *host; /* for log lines */
};

/* Fill `m` with the cached weights when the cache holds them for the same
 * training settings; otherwise train, save (atomically) and keep them. A
 * corrupt or mismatched cache file is reported and replaced. *trained says
 * which happened (may be NULL). */
dlb_status dlb_ref_weights_get(struct dlb_model *m,
                               const struct dlb_ref_weights_req *req,
                               int *trained, struct dlb_error *err);

#endif
