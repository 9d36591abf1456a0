/* dlbench public SDK: the model interface, h->model_api (ABI 2.2).
 *
 * Every plugin that works on a network (transforms such as quant and prune,
 * step executors such as dp, mp and distill) reaches the core's model,
 * `struct dlb_model`, through this one table, never through core symbols:
 *
 *   lifetime   find, open (a named model or a clone, on a chosen backend
 *              and precision), release
 *   inspect    nodes (layers) and tensors by id (weights, gradients,
 *              statistics, optimizer state), the flat state of a range
 *   run        infer, evaluate, forward_backward, step, synchronize, and
 *              forward/backward over a range of nodes
 *   slice      a range of nodes [first, last) as a pipeline stage
 *   change     rewrite: the one hook that changes how nodes compute
 *   extras     extra(name): what only one plugin needs (below)
 *
 * The table starts with struct_size; an entry appended by a later minor
 * version is tested with DLB_MODEL_API_HAS (2.1 appended tensor_count_all,
 * tensor_desc, forward_range and backward_range, and the backend and
 * precision of struct dlb_model_open). Every call returns a status
 * and, on failure, logs the reason under the plugin's name. Tensors cross
 * as dense fp32 arrays in backend.h's layouts ([out][in / groups][kh][kw]
 * for conv weights, [out][in] for linear ones), whatever the backend keeps.
 *
 * Threads: calls on different models may run at once on different
 * threads, provided each model, with its backend and its slices, is used
 * by one thread at a time. Open and release a clone on the thread that
 * uses it.
 *
 * Example, a transform that reads every conv weight:
 *
 *   const struct dlb_model_api *api = h->model_api;
 *   for (unsigned i = 0; i < api->node_count(h, m); i++) {
 *       struct dlb_layer_info li;
 *       if (api->node_info(h, m, i, &li) || li.kind != DLB_LAYER_CONV)
 *           continue;
 *       float *w = malloc(li.weight_count * sizeof *w);
 *       api->tensor_io(h, m, li.weight_id, DLB_TENSOR_VALUE, w,
 *                      li.weight_count, 0);
 *       ...
 *   }
 */
#ifndef DLBENCH_MODEL_API_H
#define DLBENCH_MODEL_API_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- inspect ------------------------------------------------------- */

/* One node (layer). Shapes are per image; a flat tensor has c = features
 * and h = w = 1. */
struct dlb_layer_info {
    enum dlb_layer_kind kind;
    char name[64];                /* the section name in the model file */
    uint32_t in_c, in_h, in_w;
    uint32_t out_c, out_h, out_w;
    uint32_t size, stride, pad;   /* conv and pooling; 0 elsewhere */
    uint32_t groups;              /* conv: 1, or channel groups (depthwise:
                                   * the channels); 0 elsewhere */
    float relu_max;               /* relu: the upper clip (6: ReLU6), 0 none */
    /* The nodes it reads, in order; -1 is the network's input. A chain's
     * node reads the one before it; an add or concat reads several. */
    uint32_t n_inputs;
    int32_t inputs[8];
    char weight[96], bias[96];    /* tensor names; "" when the layer has none */
    size_t weight_count, bias_count;
    uint64_t params;              /* learnable parameters */
    double flops_fwd;             /* per image */
    int weight_id, bias_id;       /* their tensor ids; -1 when none */
};

/* A tensor. Ids 0 .. tensor_count - 1 are the learnable tensors in the
 * model's order (the checkpoint order without the running statistics);
 * backward finishes them from the last node to the first. From 2.1 the
 * ids go on (tensor_count_all, tensor_desc): the batch-norm running
 * statistics, then the optimizer state of each learnable tensor. */
struct dlb_param_info {
    char name[96];      /* "conv1.weight" */
    size_t count;       /* elements */
    unsigned layer;     /* the node it belongs to */
};

/* What of a tensor tensor_io and tensor_map reach. */
enum dlb_tensor_role {
    DLB_TENSOR_VALUE, /* the fp32 values (a write recasts any copies) */
    DLB_TENSOR_GRAD   /* the gradient of the last forward_backward or
                         backward_range (learnable tensors only) */
};

/* What a tensor id holds (2.1). */
enum dlb_tensor_kind {
    DLB_TENSOR_KIND_WEIGHTS,    /* learnable: conv / linear weights and
                                   biases, batch-norm scale and shift */
    DLB_TENSOR_KIND_STATISTICS, /* batch-norm running mean or variance:
                                   what training updates and inference
                                   normalises with */
    DLB_TENSOR_KIND_OPTIMIZER   /* the optimizer's state of learnable
                                   tensor `of`: SGD's momentum buffer v,
                                   v = momentum v + g, w -= lr v */
};

/* tensor_desc's answer. The caller sets struct_size = sizeof the struct
 * it was built with; the core fills no more than that. */
struct dlb_tensor_desc {
    uint32_t struct_size;
    char name[96];           /* "bn1.running_mean", "fc1.weight.momentum" */
    enum dlb_tensor_kind kind;
    enum dlb_dtype dtype;    /* as the model holds it; tensor_io moves fp32 */
    unsigned ndim;
    uint64_t shape[4];       /* conv weights [out][in / groups][kh][kw] ... */
    size_t count;            /* elements: the product of the shape */
    unsigned layer;          /* the node it belongs to */
    int of;                  /* optimizer: the learnable tensor's id; else -1 */
};

/* fp32 values in place: host memory (device 0) or the model's device
 * memory (device 1, a CUDA device pointer). */
struct dlb_act_view {
    float *data;
    size_t count;
    int device;
};

/* Parts of a model's state, for state_count and state_io: the flat array
 * holds the parts in this order, each in tensor id order. (From 2.1 each
 * tensor of the statistics and momentum parts is also a tensor id.) */
#define DLB_STATE_WEIGHTS  0x1u /* learnable tensors */
#define DLB_STATE_STATS    0x2u /* batch-norm running mean and variance */
#define DLB_STATE_MOMENTUM 0x4u /* SGD momentum of the learnable tensors */
#define DLB_STATE_ALL      0x7u
/* `last` of state_count and state_io meaning the whole model. */
#define DLB_NODES_ALL      0xffffffffu

/* ---- lifetime ------------------------------------------------------- */

/* What open makes. With `clone` set, a replica of it: the same network on
 * a new handle of the configuration's backend (or `backend`) with
 * `threads` threads, its
 * parameters initialised from the seed (copy clone's state over with
 * state_io); slot >= 0 first pins the calling thread to CPUs
 * [slot * threads, (slot + 1) * threads) of those the process started
 * with (and picks device `slot` on a GPU backend). Its memory comes from
 * the system allocator (pools serve one thread). Else model file `name`,
 * found as the suite's model key is, on the workload's backend with the
 * reference weights the harness trains for it: `steps` steps (0: one
 * epoch at batch 64) from the seed, cached in the dlbench cache
 * directory; only while the workload runs (executor hooks and metrics).
 * Release either with release; the core releases named models still
 * open when the workload ends.
 *
 * From 2.1 (struct_size covering them; a 2.0 plugin's shorter struct
 * means NULL for both):
 *   backend    "ref", "cpu" or "cuda": the model lives on a handle of its
 *              own of that backend (`threads`, `slot` as for a clone; a
 *              named model keeps its reference weights and statistics).
 *              NULL: a clone on the configuration's backend, a named model
 *              on the workload's. DLB_ERR_INPUT for an unknown name,
 *              DLB_ERR_UNSUPPORTED with the reason for one not built here
 *              or without a device.
 *   precision  "fp32", "bf16" or "fp16": the type the nodes compute in
 *              (the matrix products and the layers between them, the loss
 *              in fp32, fp32 master weights, as the amp plugin's policy);
 *              tensors still cross as fp32. NULL: a clone the precision of
 *              the model it copies, a named model fp32.
 *              DLB_ERR_UNSUPPORTED with the backend's reason when it lacks
 *              the type (cpu without AVX512_BF16, a GPU before sm_80),
 *              DLB_ERR_INPUT for another name. Ranges, slices and state_io
 *              take fp32 models only. */
struct dlb_model_open {
    uint32_t struct_size;
    const struct dlb_model *clone;
    int threads, slot;
    const char *name;
    uint64_t steps;
    const char *backend;     /* 2.1 */
    const char *precision;   /* 2.1 */
};

/* ---- run ------------------------------------------------------------ */

/* What infer writes for each image. */
enum dlb_infer_output {
    DLB_OUT_LOGPROBS, /* the network's output */
    DLB_OUT_LOGITS    /* the input of its last node (a logsoftmax) */
};

/* Called on the thread running backward once node `layer`'s parameter
 * gradients are final; another status than DLB_OK ends the pass. */
typedef dlb_status (*dlb_grad_ready_fn)(void *ctx, unsigned layer);

/* ---- slices: pipeline stages ----------------------------------------
 * A slice is nodes [first, last) of a model, run as one pipeline stage:
 * a step splits the batch into micro-batches; forward takes the
 * activation at the input of `first` and gives the one at `last`,
 * backward the reverse; the last slice computes the loss. Single-worker
 * training's result to fp32 rounding: micro-batch k's loss gradient is
 * scaled by n_k / n; parameter gradients accumulate in micro-batch order
 * whatever order backward ran in (every schedule and cut gives the same
 * bits); dropout uses the masks of images [lo_k, hi_k) of the full batch;
 * batch normalisation uses each micro-batch's statistics (as GPipe).
 * fp32 models without a precision policy, else DLB_ERR_UNSUPPORTED. */
struct dlb_stage;

struct dlb_stage_spec {
    unsigned first, last;   /* nodes [first, last); 0 <= first < last */
    unsigned micro;         /* micro-batches per step, >= 1 */
    float loss_scale;       /* gradient scaler's factor; 1 without one */
};

/* Device memory a slice holds for backward: now, and the most since. */
struct dlb_stage_memory {
    uint64_t saved_bytes, saved_peak;
};

enum dlb_stage_input {
    DLB_STAGE_ACT,  /* forward's: the activation at the input of `first` */
    DLB_STAGE_GRAD  /* backward's: the gradient at the input of `last` */
};

/* ---- change: rewrite ------------------------------------------------ */

/* How a conv or linear node runs in int8 (rewrite DLB_REWRITE_INT8).
 * act_type DLB_F32 leaves it in fp32. For input scale s_x, zero point z_x
 * and weight scales s_w[o]: qx = clamp(round_half_even(x / s_x) + z_x),
 * qw = clamp(round_half_even(w / s_w[o]), -127, 127), qb =
 * round_half_even(b / (s_x s_w[o])), y = s_x s_w[o] (sum (qx - z_x) qw +
 * qb), ReLU fused where one follows (through max pooling, dropout and
 * flatten), requantised straight into the next int8 node where only those
 * and a folded batch normalisation lie between; w and b are extra
 * "quant.folded_weights"'. */
struct dlb_quant_layer {
    enum dlb_dtype act_type;   /* DLB_F32, or DLB_U8 / DLB_S8: the input */
    float act_scale;           /* > 0 */
    int32_t act_zero_point;    /* U8: [0, 255]; S8: 0 (symmetric) */
    const float *w_scale;      /* n_w_scale scales > 0 of the S8 weights */
    uint32_t n_w_scale;        /* 1: per tensor; out channels: per channel */
};

/* What an int8 rewrite built. Sizes count every tensor (learnable and
 * statistics): fp32 as held, and as the int8 model runs. */
struct dlb_quant_summary {
    unsigned int8_layers;     /* conv and linear nodes in int8 */
    unsigned int8_outputs;    /* of which requantise for the next */
    unsigned folded;          /* batch normalisations folded away */
    unsigned input_quantize;  /* fp32 -> int8 conversions per forward pass */
    uint64_t fp32_bytes, int8_bytes;
};

/* How a linear node with zeros in its weights runs in inference. */
enum dlb_prune_sparse_mode {
    DLB_PRUNE_SPARSE_OFF,  /* the dense kernel, zeros and all */
    DLB_PRUNE_SPARSE_ON,   /* the backend's CSR kernel at every batch size */
    DLB_PRUNE_SPARSE_AUTO  /* per batch size, whichever of the two was
                              faster when the node first ran at that size */
};

enum dlb_rewrite_kind {
    /* .quant: the node runs in int8. One call gives every node (in
     * order) and replaces an earlier int8 rewrite; `result` may point to
     * a struct dlb_quant_summary. Weights are read now: rewrite again
     * after writing them. DLB_ERR_UNSUPPORTED without int8 kernels. */
    DLB_REWRITE_INT8,
    /* Every node back to fp32 (node ignored). */
    DLB_REWRITE_FP32,
    /* .mask: weight k of a conv or linear node zeroed where mask[k] is 0,
     * and again after every update from then on; mask NULL drops it. */
    DLB_REWRITE_MASK,
    /* .keep: only these output units stay; the others leave the network
     * with the matching batch-norm channels and inputs of the next conv
     * or linear node (for a linear node after a flatten, blocks of h x w
     * features). Only batchnorm, relu, pooling, dropout or flatten may lie
     * between; the node feeding the class scores cannot lose units. The
     * model is rebuilt smaller, its outputs those of the original with
     * the removed units' inputs zeroed; momentum restarts at zero. Models
     * with masks or sparse nodes are refused: keep units first. */
    DLB_REWRITE_KEEP,
    /* .sparse: how a linear node runs in inference from now on (the CSR
     * form is rebuilt after the weights change). */
    DLB_REWRITE_SPARSE
};

struct dlb_rewrite {
    unsigned node;
    enum dlb_rewrite_kind kind;   /* the same for every entry of one call */
    union {
        struct dlb_quant_layer quant;
        struct { const uint8_t *mask; size_t count; } mask;
        struct { const uint32_t *units; uint32_t n; } keep; /* ascending */
        enum dlb_prune_sparse_mode sparse;
    } u;
};

/* Whether table `api` (possibly from an older core) has entry `field`. */
#define DLB_MODEL_API_HAS(api, field)                                       \
    ((api)->struct_size >=                                                  \
     offsetof(struct dlb_model_api, field) + sizeof((api)->field))

typedef void (*dlb_extra_fn)(void);

struct dlb_model_api {
    uint32_t struct_size;

    /* -- lifetime -- */
    /* Is there a valid model file `name`, found as the suite's model key
     * is (a path, or NAME as models/NAME.ini beside the suite, in
     * ./suites, $DLBENCH_SUITE_PATH, the installed suites)? For probe:
     * DLB_ERR_INPUT with where it looked or the file's error. */
    dlb_status (*find)(const struct dlb_host *h, const char *name,
                       char *reason, size_t len);
    dlb_status (*open)(const struct dlb_host *h,
                       const struct dlb_model_open *how,
                       struct dlb_model **out);
    void (*release)(const struct dlb_host *h,
                    struct dlb_model *m); /* takes NULL */

    /* -- inspect -- */
    unsigned (*node_count)(const struct dlb_host *h,
                           const struct dlb_model *m);
    dlb_status (*node_info)(const struct dlb_host *h,
                            const struct dlb_model *m, unsigned node,
                            struct dlb_layer_info *out);
    unsigned (*tensor_count)(const struct dlb_host *h,
                             const struct dlb_model *m);
    dlb_status (*tensor_info)(const struct dlb_host *h,
                              const struct dlb_model *m, unsigned id,
                              struct dlb_param_info *out);
    /* Copy tensor `id`'s `role` out (write 0) or in (write 1); count must
     * be its element count. */
    dlb_status (*tensor_io)(const struct dlb_host *h, struct dlb_model *m,
                            unsigned id, enum dlb_tensor_role role,
                            float *buf, size_t count, int write);
    /* The gradient in place, valid until the next forward_backward or
     * step; tensor_unmap after, written 1 when written through it.
     * DLB_ERR_UNSUPPORTED (not logged) when the backend cannot show it:
     * use tensor_io. */
    dlb_status (*tensor_map)(const struct dlb_host *h, struct dlb_model *m,
                             unsigned id, enum dlb_tensor_role role,
                             struct dlb_act_view *out);
    dlb_status (*tensor_unmap)(const struct dlb_host *h, struct dlb_model *m,
                               unsigned id, enum dlb_tensor_role role,
                               int written);
    /* The state parts (DLB_STATE_*) of nodes [first, last) (last
     * DLB_NODES_ALL: the whole model) as one flat fp32 array: to sync
     * replicas, or hand a slice's nodes back. A write counts as a change
     * from outside for weights_version. */
    dlb_status (*state_count)(const struct dlb_host *h,
                              const struct dlb_model *m, unsigned first,
                              unsigned last, unsigned parts, size_t *count);
    dlb_status (*state_io)(const struct dlb_host *h, struct dlb_model *m,
                           unsigned first, unsigned last, unsigned parts,
                           float *flat, size_t count, int write);
    /* Changes whenever m's weights are written other than by its own
     * steps (seed, checkpoint, transform, state_io): resync replicas. */
    uint64_t (*weights_version)(const struct dlb_host *h,
                                const struct dlb_model *m);

    /* -- run -- */
    /* Inference over n images (NCHW fp32 host, normalised as the data
     * set is) with whatever rewrite the model carries; waits for the
     * device. out: [n][classes] (may be NULL for DLB_OUT_LOGPROBS). */
    dlb_status (*infer)(const struct dlb_host *h, struct dlb_model *m,
                        const float *images, uint32_t n,
                        enum dlb_infer_output what, float *out);
    /* Test-set loss and top-1 accuracy in percent (under --quick, the
     * test set's first images). */
    dlb_status (*evaluate)(const struct dlb_host *h, struct dlb_model *m,
                           double *loss, double *accuracy);
    /* The configuration's training (train 1) or test set, opened on first
     * use; read it with dlb_host's data services. */
    dlb_status (*dataset)(const struct dlb_host *h, int train,
                          const struct dlb_dataset **out);
    /* Forward and backward over n images and labels: the gradients of
     * loss_scale x the mean loss land in m's; *loss (may be NULL) the
     * unscaled mean. `ready` (may be NULL) as each node's gradients are
     * final, last node first. fp32 models. */
    dlb_status (*forward_backward)(const struct dlb_host *h,
                                   struct dlb_model *m, const float *images,
                                   const int32_t *labels, uint32_t n,
                                   float loss_scale, double *loss,
                                   dlb_grad_ready_fn ready, void *ctx);
    /* One SGD-with-momentum update from m's gradients, and its settings
     * (the configuration's lr and momentum). */
    dlb_status (*step)(const struct dlb_host *h, struct dlb_model *m);
    dlb_status (*optimizer)(const struct dlb_host *h,
                            const struct dlb_model *m, float *lr,
                            float *momentum);
    /* Wait until m's backend has finished the work enqueued so far. */
    dlb_status (*synchronize)(const struct dlb_host *h, struct dlb_model *m);

    /* -- slice -- */
    /* Elements per image at the input of node i (i = node count: the
     * network's output). */
    dlb_status (*act_count)(const struct dlb_host *h,
                            const struct dlb_model *m, unsigned i,
                            size_t *count);
    dlb_status (*slice)(const struct dlb_host *h, struct dlb_model *m,
                        const struct dlb_stage_spec *spec,
                        struct dlb_stage **out);
    void (*slice_close)(const struct dlb_host *h,
                        struct dlb_stage *st); /* takes NULL */
    /* A step over n images: drops an unfinished step, draws the step's
     * dropout seeds, splits n into micro-batches differing by at most one
     * (lo[k] the first image of k, lo[micro] = n; lo may be NULL). */
    dlb_status (*slice_begin)(const struct dlb_host *h, struct dlb_stage *st,
                              uint32_t n, uint32_t *lo);
    /* Forward of micro-batch k from host memory: `in` its activations at
     * `first` (the images on the first slice); the last slice takes
     * `labels` and gives *loss (may be NULL), the others `out`. */
    dlb_status (*slice_forward)(const struct dlb_host *h, struct dlb_stage *st,
                                unsigned k, const float *in,
                                const int32_t *labels, float *out,
                                double *loss);
    /* Backward of micro-batch k, in micro-batch order: dout the gradient
     * at `last` (NULL on the last slice), din receives the one at `first`
     * (NULL on the first). */
    dlb_status (*slice_backward)(const struct dlb_host *h,
                                 struct dlb_stage *st, unsigned k,
                                 const float *dout, float *din);
    /* After every backward: one SGD update of the slice's nodes. */
    dlb_status (*slice_step)(const struct dlb_host *h, struct dlb_stage *st);
    void (*slice_memory)(const struct dlb_host *h, const struct dlb_stage *st,
                         struct dlb_stage_memory *out);
    /* The same in the backend's memory, so activations go device to
     * device: slice_input lends micro-batch k's input buffer (the same one
     * when asked again) for the caller to fill; slice_forward_view (in
     * NULL: from slice_input) shows the output at `last` in place, valid
     * until slice_backward_view of k begins; slice_backward_view shows the
     * gradient at `first`, valid until the slice's next
     * slice_backward_view, slice_step, slice_begin or slice_close. The
     * work is enqueued on the backend's stream: synchronize before another
     * stream or process reads a view. DLB_ERR_UNSUPPORTED from a backend
     * that cannot show its buffers: use the copies. */
    dlb_status (*slice_input)(const struct dlb_host *h, struct dlb_stage *st,
                              unsigned k, enum dlb_stage_input which,
                              struct dlb_act_view *out);
    dlb_status (*slice_forward_view)(const struct dlb_host *h,
                                     struct dlb_stage *st, unsigned k,
                                     const float *in, const int32_t *labels,
                                     struct dlb_act_view *out, double *loss);
    dlb_status (*slice_backward_view)(const struct dlb_host *h,
                                      struct dlb_stage *st, unsigned k,
                                      struct dlb_act_view *din);

    /* -- change -- */
    /* Change how `n` nodes compute (see enum dlb_rewrite_kind). Bad
     * requests give DLB_ERR_INPUT naming the node and the setting. */
    dlb_status (*rewrite)(const struct dlb_host *h, struct dlb_model *m,
                          const struct dlb_rewrite *rw, unsigned n,
                          void *result);

    /* -- extras -- */
    /* Extra `name` (cast to its type below), or NULL when this core has
     * none of that name. */
    dlb_extra_fn (*extra)(const struct dlb_host *h, const char *name);

    /* ---- 2.1: test with DLB_MODEL_API_HAS before calling ---- */

    /* -- inspect -- */
    /* Every tensor id: the tensor_count learnable tensors, then the
     * batch-norm running statistics (mean, variance, in node order), then
     * the optimizer state of learnable tensors 0, 1 ... (SGD momentum).
     * tensor_io reads and writes any id's DLB_TENSOR_VALUE (a statistics
     * write counts as a change from outside for weights_version, as
     * state_io's does); DLB_TENSOR_GRAD only a learnable one's. */
    unsigned (*tensor_count_all)(const struct dlb_host *h,
                                 const struct dlb_model *m);
    dlb_status (*tensor_desc)(const struct dlb_host *h,
                              const struct dlb_model *m, unsigned id,
                              struct dlb_tensor_desc *out);

    /* -- run: a range of nodes of this model --
     * Training-mode forward of nodes [first, last) over n images, on m
     * itself (no slice to open): `in` holds the n activations at the input
     * of `first` (act_count(first) floats each; the images when first is
     * 0), `out` receives those at `last` (act_count(last) each; on a range
     * ending at the network's end, the log-probabilities, and out may be
     * NULL). A range ending at the end takes `labels` and gives *loss (may
     * be NULL), the mean NLL. Only one tensor may cross a cut (as for a
     * slice). Ranges of one pass run from node 0 onward: a forward of a
     * range beginning at node 0 draws the pass's dropout seeds (as
     * forward_backward does), later ranges use them, so that [0, k) then
     * [k, n) computes what forward over [0, n) does, bit for bit.
     *
     * backward_range needs the forward of the same range (first, last and
     * n) since the last backward of it; it takes `dout`, the gradient at
     * `last` (NULL on a range ending at the end: the loss's, scaled by
     * loss_scale), and gives `din`, the gradient at `first` (may be NULL;
     * unused when first is 0). The range's learnable tensors' gradients
     * are overwritten with this pass's, ready for step. Any number of
     * ranges may wait for their backward at once; each holds its
     * activations until then.
     *
     * DLB_ERR_INPUT for first >= last, last > node_count, a cut that more
     * than one tensor crosses, n = 0, a missing input, labels, or dout,
     * and for a backward without its forward; DLB_ERR_UNSUPPORTED for a
     * model with a precision policy or not fp32. */
    dlb_status (*forward_range)(const struct dlb_host *h, struct dlb_model *m,
                                unsigned first, unsigned last, uint32_t n,
                                const float *in, const int32_t *labels,
                                float *out, double *loss);
    dlb_status (*backward_range)(const struct dlb_host *h,
                                 struct dlb_model *m, unsigned first,
                                 unsigned last, float loss_scale,
                                 const float *dout, float *din);

    /* ---- 2.2: test with DLB_MODEL_API_HAS before calling ---- */

    /* -- lifetime -- */
    /* From init: this configuration will open model how->name by name
     * (with how->steps; the other fields are not read). Where its
     * reference weights are not cached, the workload trains them before
     * it opens its own backend, in a process of their own where it can,
     * as it does an inference's weights: trained later by open, they are
     * trained in the measured process among its backend's threads (more
     * slowly, their blocks mapped aside so that its heap stays as it
     * was). open then finds them cached. Optional: open trains what was
     * not prepared. DLB_ERR_INPUT without a name; DLB_ERR_UNSUPPORTED
     * once the workload has set up (too late: call it from init). */
    dlb_status (*prepare)(const struct dlb_host *h,
                          const struct dlb_model_open *how);
};

/* open with a clone: the replica a step executor gives each worker. */
static inline dlb_status dlb_model_clone(const struct dlb_host *h,
                                         const struct dlb_model *m,
                                         int threads, int slot,
                                         struct dlb_model **out)
{
    struct dlb_model_open how = {sizeof how, m, threads, slot, NULL, 0,
                                 NULL, NULL};
    return h->model_api->open(h, &how, out);
}

/* ---- extras ----------------------------------------------------------
 * Services only one plugin needs, looked up once (in init) with extra().
 * A name never changes meaning; a new version gets a new name. */

/* "quant.observe": one inference pass over n images as the model runs now
 * (fp32, or int8 after a rewrite), calling fn with the fp32 input of every
 * conv and linear node (per_image values each) and once with node =
 * node_count and the output. Another status than DLB_OK stops the pass. */
typedef dlb_status (*dlb_quant_observe_fn)(void *ctx, unsigned layer,
                                           const float *x, uint32_t n,
                                           size_t per_image);
typedef dlb_status (*dlb_extra_quant_observe)(const struct dlb_host *h,
                                              struct dlb_model *m,
                                              const float *images, uint32_t n,
                                              dlb_quant_observe_fn fn,
                                              void *ctx);
/* "quant.folded_weights": the fp32 weights (weight_count) and bias (out
 * channels; zeros without one) conv or linear node i computes with in
 * int8: with a batch normalisation that directly follows folded in. */
typedef dlb_status (*dlb_extra_quant_folded_weights)(
    const struct dlb_host *h, struct dlb_model *m, unsigned i, float *w,
    size_t w_count, float *b, size_t b_count);

/* "prune.sparse_info": what a DLB_REWRITE_SPARSE made of linear node
 * `layer`, and what it ran as at the batch size of most inferences. */
struct dlb_prune_sparse_info {
    enum dlb_prune_sparse_mode mode;
    size_t nnz, count;     /* nonzero weights in the CSR form, all weights */
    uint32_t batch;        /* that batch size; 0: no inference yet */
    uint64_t calls;        /* inferences at that batch size */
    int sparse;            /* 1 when they ran the CSR kernel */
    double dense_s;        /* auto: one dense call at that batch, seconds */
    double sparse_s;       /* auto: one CSR call; both 0 when not timed */
};
typedef dlb_status (*dlb_extra_prune_sparse_info)(
    const struct dlb_host *h, const struct dlb_model *m, unsigned layer,
    struct dlb_prune_sparse_info *out);

/* "prune.finetune": ft->steps steps of SGD (the configuration's momentum,
 * momentum zeroed first, fp32) on the training set in a shuffled order of
 * a stream of its own, masks kept. *last_loss, *seconds may be NULL. */
struct dlb_prune_finetune {
    uint64_t steps;        /* SGD steps; 0 does nothing */
    uint32_t batch;        /* images per step */
    float lr;              /* 0: the configuration's lr */
};
typedef dlb_status (*dlb_extra_prune_finetune)(
    const struct dlb_host *h, struct dlb_model *m,
    const struct dlb_prune_finetune *ft, double *last_loss, double *seconds);

/* "distill.soft_target_step": one training step of m on `batch` against
 *   (1 - alpha) NLL(z, y) + alpha T^2 KL(softmax(t / T) || softmax(z / T))
 * (z its logits, t teacher_logits [n][classes]); alpha = 0 is the
 * baseline step bit for bit (t unread). *loss (may be NULL) the blended
 * loss. T > 0 and alpha in [0, 1], else DLB_ERR_INPUT; no loss scaling. */
typedef dlb_status (*dlb_extra_distill_step)(
    const struct dlb_host *h, struct dlb_model *m,
    const struct dlb_batch *batch, const float *teacher_logits,
    float temperature, float alpha, double *loss);

/* "model.copy_rng": give dst (same network) src's dropout stream, as
 * ranks started from one seed share it (replicas synced to a model whose
 * stream restarted). */
typedef dlb_status (*dlb_extra_copy_rng)(const struct dlb_host *h,
                                         struct dlb_model *dst,
                                         const struct dlb_model *src);

/* "world.join": this configuration runs as w->size processes, this one
 * rank w->rank; call it from init on every rank. Only rank 0 then writes
 * the record, which gets "world": {"size", "hosts"}; the measurement loop
 * decides through agree (rank 0's value on every rank) so that every rank
 * runs the same steps. */
struct dlb_world {
    int rank, size;
    const char *const *hosts; /* `size` host names, by rank (copied) */
    int64_t (*agree)(void *ctx, int64_t value);
    void *ctx;
};
typedef dlb_status (*dlb_extra_world_join)(const struct dlb_host *h,
                                           const struct dlb_world *w);

#ifdef __cplusplus
}
#endif
#endif
