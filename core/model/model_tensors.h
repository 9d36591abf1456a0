/* Every tensor of a model by id: learnable, batch-norm statistics, then
 * optimizer state (model_api.h's tensor_count_all and tensor_desc say the
 * order). */
#ifndef DLB_CORE_MODEL_MODEL_TENSORS_H
#define DLB_CORE_MODEL_MODEL_TENSORS_H

#include "model/model.h"

unsigned dlb_model_tensor_count_all(const struct dlb_model *m);
/* Fills a whole struct dlb_tensor_desc (the caller copies what its
 * struct_size allows). */
dlb_status dlb_model_tensor_desc(const struct dlb_model *m, unsigned id,
                                 struct dlb_tensor_desc *out,
                                 struct dlb_error *err);
/* Copy tensor id's values out (write 0) or in (write 1) as fp32. */
dlb_status dlb_model_tensor_id_io(struct dlb_model *m, unsigned id,
                                  float *host, size_t count, int write,
                                  struct dlb_error *err);

#endif
