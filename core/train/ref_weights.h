/* Reference weights for inference: a model trained with the baseline
 * (fp32, no plugins, batch 64, the suite's lr and momentum) for a fixed
 * number of steps from the seed, cached as a safetensors file per
 * (model, seed, steps) so that it is trained once per machine. */
#ifndef DLB_CORE_MODEL_REF_WEIGHTS_H
#define DLB_CORE_MODEL_REF_WEIGHTS_H

#include <stdint.h>

#include <dlbench/plugin.h>

#include "backend/backend.h"
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

/* Weights trained as `req` asks in the cache, for a model of `spec`
 * created from `init_seed`: DLB_OK at once when they are there; else they
 * are trained on a model and a backend of their own (`backend` opened with
 * `cfg`) and saved, and a model of the measured backend loads them with
 * dlb_ref_weights_get as a process that found them cached does. Call it
 * before opening the measured backend.
 *
 * The training runs in a forked copy of the process that exits when it
 * has saved them (apart.h), so nothing it built stays: its primitives,
 * their compiled code and buffers, the gradients and the optimizer's
 * state, and the holes they leave in the heap. Trained on the measured
 * backend, ResNet-20's weights left 20 MiB that its inference at batch 1
 * counted (138 MiB of peak memory against 115 in a process that found
 * them cached); trained on a backend of its own in the same process, the
 * heap's holes still cost 26 MiB (malloc_policy.h). Where the process
 * already runs other threads (a fork would copy this one alone), the
 * training runs here, its large blocks set aside (malloc_policy.h), at
 * 2.3x its time. The same model from the same seed trains to the same
 * weights either way. */
dlb_status dlb_ref_weights_prepare(const struct dlb_model_spec *spec,
                                   const struct dlb_ref_weights_req *req,
                                   const char *backend,
                                   const struct dlb_backend_config *cfg,
                                   uint64_t init_seed, struct dlb_error *err);

#endif
