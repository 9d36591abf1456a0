/* Forward and backward over a range of nodes of a model itself
 * (model_api.h's forward_range and backward_range, whose contract this
 * is). */
#ifndef DLB_CORE_SERVICES_MODEL_RANGE_H
#define DLB_CORE_SERVICES_MODEL_RANGE_H

#include "model/model.h"

dlb_status dlb_model_range_forward(struct dlb_model *m, unsigned first,
                                   unsigned last, uint32_t n, const float *in,
                                   const int32_t *labels, float *out,
                                   double *loss, struct dlb_error *err);
dlb_status dlb_model_range_backward(struct dlb_model *m, unsigned first,
                                    unsigned last, float loss_scale,
                                    const float *dout, float *din,
                                    struct dlb_error *err);
/* Drop every range's kept forward and stage (after a rewrite that changes
 * the network; the model's destroy calls it too). */
void dlb_model_ranges_drop(struct dlb_model *m);

#endif
