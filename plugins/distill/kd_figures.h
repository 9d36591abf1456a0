/* What the teacher and the student cost at inference: parameters, forward
 * FLOPs, images per second at a fixed batch, and the teacher's test
 * accuracy, recorded as the plugin's figures. */
#ifndef DLB_PLUGIN_DISTILL_KD_FIGURES_H
#define DLB_PLUGIN_DISTILL_KD_FIGURES_H

#include <dlbench/model_api.h>

/* Inference throughput is taken at this batch, on test images. */
#define KD_INFER_BATCH 256u

/* Record teacher_accuracy, {teacher,student}_params, _flops_fwd,
 * _infer_ips and infer_speedup (student over teacher); both models output
 * `classes` log-probabilities. */
dlb_status kd_figures_record(const struct dlb_host *h,
                             struct dlb_model *teacher,
                             struct dlb_model *student, uint32_t classes);

#endif
