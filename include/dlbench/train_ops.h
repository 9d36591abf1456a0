/* dlbench public SDK: training services for plugins that change what a
 * step learns from (knowledge distillation): other models by name with
 * their cached reference weights, logits, and a training step against
 * soft targets (ABI 1.2, h->train_ops). See model_ops.h.
 *
 * A plugin that trains through these takes the step over with the
 * executor hook (struct dlb_executor_hooks); its train_step receives the
 * workload's model (the student) and the batch. */
#ifndef DLBENCH_TRAIN_OPS_H
#define DLBENCH_TRAIN_OPS_H

#include <dlbench/model_ops.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dlb_train_ops {
    uint32_t struct_size;

    /* Is there a model file `name` for this configuration, looked up as
     * the suite's `model` key is (a path, or NAME as models/NAME.ini
     * beside the suite, in ./suites, $DLBENCH_SUITE_PATH, the installed
     * suites), and is it a valid network? For probe: DLB_ERR_INPUT with
     * the reason (where it looked, or the file's error) in `reason`. */
    dlb_status (*find_model)(const struct dlb_host *h, const char *name,
                             char *reason, size_t len);

    /* Model `name` on the configuration's backend, with the reference
     * weights the harness trains for it: `steps` steps (0: the harness'
     * default budget, one epoch at batch 64) of the baseline step at batch
     * 64 from the configuration's seed, with the suite's lr and momentum,
     * cached per model, seed, steps and data set in the dlbench cache
     * directory. The first use trains them, which takes that training's
     * time. Only while the workload runs (in executor hooks and metrics;
     * DLB_ERR_UNSUPPORTED in probe and init). The model shares the
     * workload's backend: close it with close_model; the core closes any
     * still open when the workload ends, before fini, after which
     * close_model on it does nothing. model_ops works on it (layer_info,
     * infer, evaluate). */
    dlb_status (*open_model)(const struct dlb_host *h, const char *name,
                             uint64_t steps, struct dlb_model **out);
    void (*close_model)(const struct dlb_host *h, struct dlb_model *m);

    /* The pre-softmax outputs of `m` (the input of its last layer, a
     * logsoftmax) for n images (NCHW fp32 on the host, normalised as the
     * data set is), in inference mode: logits [n][classes]. Waits for the
     * device. */
    dlb_status (*logits)(const struct dlb_host *h, struct dlb_model *m,
                         const float *images, uint32_t n, float *logits);

    /* One training step of `m` on `batch` against the blend of its hard
     * labels and the soft targets given by teacher_logits [n][classes]:
     *
     *   loss = (1 - alpha) NLL(z, y)
     *        + alpha T^2 KL(softmax(t / T) || softmax(z / T))
     *
     * (z the student's logits, t the teacher's, means over the batch):
     * forward in training mode, the loss's gradient at the logits,
     *   (1 - alpha) (softmax(z) - onehot(y)) / n
     *     + alpha T (softmax(z / T) - softmax(t / T)) / n,
     * backward from there, and the baseline's SGD update. alpha = 0 is
     * the baseline step bit for bit (teacher_logits unread, may be NULL).
     * *loss (may be NULL) receives the blended loss (waits for the
     * device). fp32 models; T > 0 and alpha in [0, 1], else
     * DLB_ERR_INPUT. A precision hook's loss scaling does not apply. */
    dlb_status (*soft_target_step)(const struct dlb_host *h,
                                   struct dlb_model *m,
                                   const struct dlb_batch *batch,
                                   const float *teacher_logits,
                                   float temperature, float alpha,
                                   double *loss);
};

#ifdef __cplusplus
}
#endif
#endif
