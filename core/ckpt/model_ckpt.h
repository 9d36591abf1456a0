/* Saving and loading a model's tensors as a safetensors checkpoint. */
#ifndef DLB_CORE_MODEL_CKPT_H
#define DLB_CORE_MODEL_CKPT_H

#include "model/model.h"
#include "ckpt/safetensors.h"

/* Write every checkpoint tensor of `m` (dlb_model_tensor_at) in the
 * model's element type, with the metadata, atomically to `path`. */
dlb_status dlb_model_save(struct dlb_model *m, const char *path,
                          const struct dlb_st_kv *meta, size_t n_meta,
                          struct dlb_error *err);

/* Read `path`, check that it holds exactly the model's tensors with the
 * model's element type and shapes, then copy them into the model; on any
 * mismatch the model is left as it was. When `file_out` is not NULL it
 * receives the file (for its metadata; release with dlb_st_free). */
dlb_status dlb_model_load(struct dlb_model *m, const char *path,
                          struct dlb_st_file *file_out, struct dlb_error *err);

#endif
