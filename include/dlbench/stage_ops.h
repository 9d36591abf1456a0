/* dlbench public SDK: pipeline model parallelism, for step executors (the
 * mp plugin): h->stage_ops (ABI 1.3). See model_ops.h for the conventions
 * shared by the model tables, and replica_ops.h for replicas, state and
 * the world of a multi-process configuration, which pipelines use too.
 *
 * A pipeline cuts the network into stages, runs of consecutive layers
 * [first, last), each owned by one worker with a model of its own (the
 * configuration's model, or a replica). A training step splits the batch
 * into micro-batches that flow through the stages: forward of a stage
 * takes the activation at the input of `first` and gives the one at the
 * input of `last`; backward takes the gradient at `last` and gives the one
 * at `first`. What backward needs is kept per micro-batch, so a stage may
 * hold several micro-batches in flight (GPipe keeps all of them, 1F1B at
 * most the stages after it). The last stage computes the loss.
 *
 * The result is single-worker training's, to fp32 rounding:
 *   - micro-batch k's loss gradient is scaled by n_k / n (n the step's
 *     images), so the sum over micro-batches is the batch mean's gradient;
 *   - parameter gradients accumulate over the micro-batches in micro-batch
 *     order, whatever the order backward ran in, so every schedule and
 *     every cut gives the same bits (sums in another order than one
 *     worker's full-batch kernels: fp32 rounding);
 *   - dropout draws the step's seeds from the model's stream as one worker
 *     does, and micro-batch k uses the masks of images [lo_k, hi_k) of the
 *     full batch, so the masks are the single worker's;
 *   - batch normalisation normalises each micro-batch with its own
 *     statistics and updates the running statistics once per micro-batch,
 *     as GPipe does: equal to one worker that accumulates gradients over
 *     the same micro-batches, not to one full-batch step.
 *
 * A stage handle belongs to one thread at a time, as its model does.
 * Activations cross as dense fp32 NCHW arrays: host arrays through
 * forward and backward, or, through the view variants at the end of the
 * table (input_view, forward_view, backward_view), memory of the stage's
 * own backend shown in place, so that on a GPU backend activations and
 * their gradients go from one device to the next (NCCL, peer copies)
 * without a host round trip. fp32 models without a precision policy;
 * others give DLB_ERR_UNSUPPORTED. */
#ifndef DLBENCH_STAGE_OPS_H
#define DLBENCH_STAGE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/replica_ops.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dlb_stage; /* one stage's step state: opaque, owned by the core */

struct dlb_stage_spec {
    unsigned first, last;   /* layers [first, last); 0 <= first < last */
    unsigned micro;         /* micro-batches per step, >= 1 */
    float loss_scale;       /* gradient scaler's factor; 1 without one */
};

/* What a stage holds for backward, in bytes of device memory: now (the
 * micro-batches in flight) and the most since open. */
struct dlb_stage_memory {
    uint64_t saved_bytes, saved_peak;
};

/* Activations or their gradients in place: `count` fp32 values in dense
 * NCHW order, in host memory (device 0) or in the device memory of the
 * stage's backend (device 1, a CUDA device pointer), as the backend's
 * map shows its buffers. */
struct dlb_act_view {
    float *data;
    size_t count;
    int device;
};

/* Which input input_view gives. */
enum dlb_stage_input {
    DLB_STAGE_ACT,  /* forward's: the activation at the input of `first` */
    DLB_STAGE_GRAD  /* backward's: the gradient at the input of `last` */
};

/* Whether table `so` (possibly from an older core) has entry `field`. */
#define DLB_STAGE_OPS_HAS(so, field)                                        \
    ((so)->struct_size >=                                                   \
     offsetof(struct dlb_stage_ops, field) + sizeof((so)->field))

struct dlb_stage_ops {
    uint32_t struct_size;

    /* Elements per image of the activation at the input of layer i of m
     * (i == layer count: the network's output, the log-probabilities). */
    dlb_status (*act_count)(const struct dlb_host *h,
                            const struct dlb_model *m, unsigned i,
                            size_t *count);

    /* A stage of m's layers: DLB_ERR_INPUT when the range is empty or out
     * of the network; DLB_ERR_UNSUPPORTED for a model this cannot run
     * (not fp32, a precision policy set). close takes NULL. */
    dlb_status (*open)(const struct dlb_host *h, struct dlb_model *m,
                       const struct dlb_stage_spec *spec,
                       struct dlb_stage **out);
    void (*close)(const struct dlb_host *h, struct dlb_stage *st);

    /* A step over n images: drops what an unfinished step held, draws the
     * step's dropout seeds, and splits n into the micro-batches, sizes
     * differing by at most one (DLB_ERR_INPUT when n < micro). lo[k] is
     * micro-batch k's first image, lo[micro] = n (lo may be NULL). */
    dlb_status (*begin)(const struct dlb_host *h, struct dlb_stage *st,
                        uint32_t n, uint32_t *lo);

    /* Forward of micro-batch k: `in` holds its n_k activations at the
     * input of `first` (on the first stage, the images). On the last stage
     * `labels` are its n_k labels and *loss (may be NULL) receives its
     * mean loss; elsewhere `out` receives the activations at the input of
     * `last`. */
    dlb_status (*forward)(const struct dlb_host *h, struct dlb_stage *st,
                          unsigned k, const float *in, const int32_t *labels,
                          float *out, double *loss);

    /* Backward of micro-batch k, after its forward, in micro-batch order
     * (0, 1, ...: both GPipe's drain and 1F1B run them so), which fixes
     * the order of the gradient sum: `dout` is the
     * gradient at the input of `last` (NULL on the last stage: the
     * loss's); `din` receives the gradient at the input of `first` (NULL
     * on the first stage, which has none to give). Its parameter
     * gradients join the step's sum; what forward kept is released. */
    dlb_status (*backward)(const struct dlb_host *h, struct dlb_stage *st,
                           unsigned k, const float *dout, float *din);

    /* After every micro-batch's backward: one SGD-with-momentum update of
     * the stage's layers from the summed gradients (the other layers of
     * its model are left alone). */
    dlb_status (*update)(const struct dlb_host *h, struct dlb_stage *st);

    void (*memory)(const struct dlb_host *h, const struct dlb_stage *st,
                   struct dlb_stage_memory *out);

    /* The state parts `parts` (DLB_STATE_*) of layers [first, last) of m
     * as one flat fp32 array, in the model's tensor order: a stage hands
     * its layers back to the model the harness evaluates (another
     * thread's or rank's). Writing counts as a write from outside for m's
     * weights_version. */
    dlb_status (*layers_count)(const struct dlb_host *h,
                               const struct dlb_model *m, unsigned first,
                               unsigned last, unsigned parts, size_t *count);
    dlb_status (*layers_io)(const struct dlb_host *h, struct dlb_model *m,
                            unsigned first, unsigned last, unsigned parts,
                            float *flat, size_t count, int write);

    /* ---- appended in 1.3: activations in the backend's memory. Test
     * with DLB_STAGE_OPS_HAS(so, backward_view). The views are the
     * backend's buffers in place: what the stage's backend computes into
     * them is enqueued on its stream, so wait for it (replica_ops'
     * synchronize on the stage's model) before another stream or process
     * reads a view; and data written into a view must be complete before
     * the call that consumes it, which runs on the backend's stream. A
     * backend that cannot show its buffers in place (no map) gives
     * DLB_ERR_UNSUPPORTED: use forward and backward, which copy. */

    /* A buffer of the stage's backend for micro-batch k's input, after
     * begin: DLB_STAGE_ACT, the n_k activations at the input of `first`
     * that forward_view consumes (stages after the first); DLB_STAGE_GRAD,
     * the gradient at the input of `last` that backward_view consumes
     * (stages before the last). The caller writes out->count values into
     * it (a receive from the neighbour); it stays valid until consumed,
     * or until the next begin or close. Asking again gives the same one. */
    dlb_status (*input_view)(const struct dlb_host *h, struct dlb_stage *st,
                             unsigned k, enum dlb_stage_input which,
                             struct dlb_act_view *out);

    /* forward with the input from input_view (in NULL), or from host
     * memory (in not NULL: the first stage's images). Elsewhere than on
     * the last stage, *out shows the activations at the input of `last`
     * in the stage's memory, valid until backward_view of micro-batch k
     * begins (forward keeps them for backward anyway). */
    dlb_status (*forward_view)(const struct dlb_host *h, struct dlb_stage *st,
                               unsigned k, const float *in,
                               const int32_t *labels, struct dlb_act_view *out,
                               double *loss);

    /* backward with the gradient at `last` from input_view (NULL on the
     * last stage: the loss's). Elsewhere than on the first stage, *din
     * shows the gradient at the input of `first` in the stage's memory,
     * valid until the stage's next backward_view, update, begin or
     * close: hand it on before then. */
    dlb_status (*backward_view)(const struct dlb_host *h, struct dlb_stage *st,
                                unsigned k, struct dlb_act_view *din);
};

#ifdef __cplusplus
}
#endif
#endif
