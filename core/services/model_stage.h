/* The model runtime's side of pipeline parallelism (model_api.h's
 * slices): a run
 * of layers trained micro-batch by micro-batch with what backward needs
 * kept per micro-batch, gradients summed over the micro-batches, and the
 * layers' state as a flat array. */
#ifndef DLB_CORE_MODEL_STAGE_H
#define DLB_CORE_MODEL_STAGE_H

#include <dlbench/model_api.h>

#include "model/model.h"

/* Elements per image at the input of layer i (i == layers: the output). */
size_t dlb_model_stage_act_count(const struct dlb_model *m, unsigned i);

dlb_status dlb_model_stage_open(struct dlb_model *m,
                                const struct dlb_stage_spec *spec,
                                struct dlb_stage **out, struct dlb_error *err);
void dlb_model_stage_close(struct dlb_stage *st);

dlb_status dlb_model_stage_begin(struct dlb_stage *st, uint32_t n,
                                 uint32_t *lo, struct dlb_error *err);
/* As begin, with the step's dropout seeds given (seeds[i] for dropout
 * layer i of the model) instead of drawn: ranges of one pass share them
 * (model_range.c). */
dlb_status dlb_model_stage_begin_seeded(struct dlb_stage *st, uint32_t n,
                                        const uint64_t *seeds,
                                        struct dlb_error *err);
dlb_status dlb_model_stage_forward(struct dlb_stage *st, unsigned k,
                                   const float *in, const int32_t *labels,
                                   float *out, double *loss,
                                   struct dlb_error *err);
dlb_status dlb_model_stage_backward(struct dlb_stage *st, unsigned k,
                                    const float *dout, float *din,
                                    struct dlb_error *err);
dlb_status dlb_model_stage_update(struct dlb_stage *st, struct dlb_error *err);
void dlb_model_stage_memory(const struct dlb_stage *st,
                            struct dlb_stage_memory *out);

/* The view variants (model_stage_view.c): activations in the backend's
 * memory, shown with its map. */
dlb_status dlb_model_stage_input_view(struct dlb_stage *st, unsigned k,
                                      enum dlb_stage_input which,
                                      struct dlb_act_view *out,
                                      struct dlb_error *err);
dlb_status dlb_model_stage_forward_view(struct dlb_stage *st, unsigned k,
                                        const float *in,
                                        const int32_t *labels,
                                        struct dlb_act_view *out,
                                        double *loss, struct dlb_error *err);
dlb_status dlb_model_stage_backward_view(struct dlb_stage *st, unsigned k,
                                         struct dlb_act_view *din,
                                         struct dlb_error *err);

/* Elements of the state parts `parts` of layers [first, last), and the
 * copy out (write = 0) or in (write = 1). */
size_t dlb_model_layers_count(const struct dlb_model *m, unsigned first,
                              unsigned last, unsigned parts);
dlb_status dlb_model_layers_io(struct dlb_model *m, unsigned first,
                               unsigned last, unsigned parts, float *flat,
                               size_t count, int write, struct dlb_error *err);

#endif
