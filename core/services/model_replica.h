/* The model runtime's side of data parallelism (model_api.h): learnable
 * tensors by number, replicas on backend handles of their own, the state
 * as one flat fp32 array, gradients in place, and backward with a
 * per-layer "gradients ready" callback. */
#ifndef DLB_CORE_MODEL_REPLICA_H
#define DLB_CORE_MODEL_REPLICA_H

#include <dlbench/model_api.h>

#include "model/model.h"

/* Learnable tensors (those with a gradient), numbered in model order. */
unsigned dlb_model_n_learnable(const struct dlb_model *m);
/* DLB_ERR_INPUT when i is out of range. */
dlb_status dlb_model_learnable(const struct dlb_model *m, unsigned i,
                               struct dlb_param_info *out);
/* The number of learnable tensor `name`, -1 when none is (or it is ""). */
int dlb_model_learnable_id(const struct dlb_model *m, const char *name);

/* A model of m's network (its own copy of the spec, so that it outlives
 * m) on a new handle of backend `name` opened with `cfg`, initialised
 * from `seed`, with m's SGD settings. */
dlb_status dlb_model_replica_create(const struct dlb_model *m,
                                    const char *name,
                                    const struct dlb_backend_config *cfg,
                                    uint64_t seed, struct dlb_model **out,
                                    struct dlb_error *err);
/* Release a replica, its spec and its backend handle; NULL is fine. */
void dlb_model_replica_destroy(struct dlb_model *replica);
/* A replica of src on `backend` with src's weights, statistics and
 * dropout stream: a model moved to another backend. */
dlb_status dlb_model_replica_move(const struct dlb_model *src,
                                  const char *backend,
                                  const struct dlb_backend_config *cfg,
                                  uint64_t seed, struct dlb_model **out,
                                  struct dlb_error *err);

uint64_t dlb_model_weights_version(const struct dlb_model *m);
/* dst draws the dropout seeds src would draw next. */
void dlb_model_copy_rng(struct dlb_model *dst, const struct dlb_model *src);
void dlb_model_sgd_settings(const struct dlb_model *m, float *lr,
                            float *momentum);

/* Elements of the state parts `parts` (DLB_STATE_*), and the copies. */
size_t dlb_model_state_count(const struct dlb_model *m, unsigned parts);
dlb_status dlb_model_state_io(struct dlb_model *m, unsigned parts, float *flat,
                              size_t count, int write, struct dlb_error *err);

/* dlb_model_forward_backward with `ready` called after each layer's
 * parameter gradients are final (NULL: none). */
dlb_status dlb_model_forward_backward_cb(struct dlb_model *m,
                                         const float *images,
                                         const int32_t *labels, uint32_t n,
                                         float loss_scale, double *loss,
                                         dlb_grad_ready_fn ready, void *ctx,
                                         struct dlb_error *err);

/* Gradient of learnable tensor i in place (the backend's map), and its
 * release; DLB_ERR_UNSUPPORTED when the backend cannot show it. */
dlb_status dlb_model_grad_map(struct dlb_model *m, unsigned i,
                              struct dlb_act_view *out, struct dlb_error *err);
dlb_status dlb_model_grad_unmap(struct dlb_model *m, unsigned i, int written,
                                struct dlb_error *err);
/* Gradient i copied out (write = 0) or in (write = 1). */
dlb_status dlb_model_grad_io(struct dlb_model *m, unsigned i, float *host,
                             size_t count, int write, struct dlb_error *err);

#endif
