/* The model's layout, shared by the files of core/model/ only. */
#ifndef DLB_CORE_MODEL_IMPL_H
#define DLB_CORE_MODEL_IMPL_H

#include "model/model.h"
#include "util/rng.h"

/* Stream ids of the model's seeded draws, apart from the data module's. */
#define DLB_MODEL_INIT_STREAM 0x494e4954000000ull  /* + layer index */
#define DLB_MODEL_DROP_STREAM 0x44524f50000000ull

/* One tensor with its training state; grad and mom are NULL for the
 * batchnorm running statistics, which are not learned. */
struct dlb_model_param {
    struct dlb_model_tensor t;
    char name[96];
    struct dlb_buffer *grad, *mom;
};

/* Indices into dlb_model.params, -1 when the layer has no such tensor. */
struct dlb_model_layer {
    const struct dlb_layer_spec *spec;
    int weight, bias;            /* conv, linear; batchnorm gamma, beta */
    int run_mean, run_var;       /* batchnorm */
    /* Per-step state, valid between forward and backward. */
    struct dlb_buffer *ws;       /* max-pooling indices */
    struct dlb_buffer *save_mean, *save_invstd;
    uint64_t drop_seed;
    /* Mixed precision (model_prec.c). ctype: the type the layer computes
     * and outputs in when a policy is set; w_lp: the weights cast to it
     * (conv, linear; NULL when ctype is the model's type); x_in: per step,
     * the input cast to ctype, kept for backward (NULL: no cast). */
    enum dlb_dtype ctype;
    struct dlb_buffer *w_lp;
    struct dlb_buffer *x_in;
    /* int8 inference (model_quant*.c): NULL when the layer runs in float. */
    struct dlb_model_qlayer *q;
    /* Pruning (model_prune*.c): NULL when the layer has no mask / sparse
     * form. */
    struct dlb_model_pruned *pr;
    /* A ReLU whose batch norm before it applied it in this step's forward
     * (dlb_backend_bn_relu, model_fwd.c): it passes its input and gradient
     * through. */
    int relu_in_bn;
    /* A max pooling or ReLU that the convolution before it computed in
     * the fusing pass in flight (dlb_backend_conv_pool, model_fuse.c): it
     * passes its input through. */
    int in_conv_pool;
    /* A first convolution whose training pass fused the max pooling
     * after it: its backward reads the pooling's gradient and workspace
     * (dlb_backend_conv_pool.bwd_weights), and the pooling passes its
     * gradient through. Set by every training forward of the layer. */
    int pool_bwd;
    /* A convolution with the batch norm after it folded in, for
     * inference (model_fold.c): NULL until a pass folds it. */
    struct dlb_buffer *fold_w, *fold_b;
};

struct dlb_model_qlayer;   /* model_quant*.c */
struct dlb_model_pruned;   /* model_prune*.c */

struct dlb_model {
    const struct dlb_model_spec *spec;
    /* A spec rebuilt by pruning (model_prune_rebuild.c), which the model
     * owns and spec then points to; NULL while spec is the caller's. */
    struct dlb_model_spec *own_spec;
    struct dlb_backend *be;
    enum dlb_dtype dtype;
    struct dlb_model_layer *layers;  /* spec->n_layers */
    struct dlb_model_param *params;
    size_t n_params;
    struct dlb_rng drop_rng;
    float lr, momentum;
    /* Activations of the step in flight: act[0] is the input, act[i + 1]
     * the output of layer i; own[i] says whether act[i] was allocated for
     * it (a flatten output is its input, reshaped). */
    struct dlb_buffer **act;
    unsigned char *own;
    /* An inference pass's lifetimes (model_infer.c): per activation, the
     * reads still to come and the activation whose buffer it is (a layer
     * that hands its input on makes no buffer of its own). */
    uint32_t *reads_left;
    size_t *root;
    struct dlb_buffer *labels;
    uint32_t n;                      /* images in the step in flight */
    /* Mixed precision: a policy is set (lowp), the low-precision weight
     * copies are stale (lp_stale), master weights are kept (master); the
     * casts of the steps are timed on the backend's timers, read back
     * (cast_s) once their marks completed. */
    int lowp, lp_stale, master;
    /* Casts are not timed (a graph capture records no timer marks). */
    int untimed_casts;
    struct dlb_timer **timers;
    size_t n_timers, timers_used;
    double cast_s;
    /* Data parallelism (model_replica.c): grad_ready, when set, is called
     * during backward once a layer's parameter gradients are final, so
     * that their all-reduce can start; weights_version moves whenever the
     * weights are written outside the model's own SGD steps. */
    dlb_status (*grad_ready)(void *ctx, unsigned layer);
    void *grad_ready_ctx;
    uint64_t weights_version;
    /* Moves whenever any parameter or running statistic may have changed
     * (dlb_model_params_moved); the folded weights (model_fold.c) are
     * valid while fold_epoch equals it. */
    uint64_t params_epoch, fold_epoch;
    int fold_valid;
    /* The gradient scaler on the device (model_scaler.c): the overflow
     * flag (S32, one element, made on first use) and whether its value
     * was posted for the host and not read yet. */
    struct dlb_buffer *found;
    int found_posted;
    /* Layers may fuse in the pass in flight (model_fuse.c); fused_layers
     * counts the layers the last such pass ran inside others. */
    int fuse;
    size_t fused_layers;
    /* Forward passes over ranges of nodes kept for their backward
     * (services/model_range.c), freed with the model through ranges_free:
     * the model code does not depend on the service. */
    struct dlb_model_ranges *ranges;
    void (*ranges_free)(struct dlb_model *m);
};

/* Per-step memory: the backend's buffers, allocated at every step as an
 * eager framework does. Failures fill err naming `what`. */
dlb_status dlb_model_step_alloc(struct dlb_model *m, enum dlb_dtype dtype,
                                size_t count, const char *what,
                                struct dlb_buffer **out, struct dlb_error *err);
void dlb_model_step_free(struct dlb_model *m, struct dlb_buffer **b);
/* Release everything the step in flight holds (after errors, too). */
void dlb_model_step_release(struct dlb_model *m);

/* Elements of one image at the input of layer i (i == n_layers: output). */
size_t dlb_model_act_size(const struct dlb_model *m, size_t i);

/* The activation (index into act[]) that is input k of layer i: the
 * network's input is act[0], layer j's output act[j + 1]. */
static inline size_t dlb_model_in(const struct dlb_model *m, size_t i,
                                  unsigned k)
{
    return (size_t)(m->spec->layers[i].inputs[k] + 1);
}

/* Layer i computes and outputs type t (f32_layer: fp32) and nothing
 * quantises it: what the fusions and the batch-norm fold take
 * (model_fuse.c). chain_type: the type a fusion or fold that begins at
 * layer i computes in, into *t: F32, or in inference BF16 (a
 * mixed-precision network's); 0 where none may. */
int dlb_model_plain_layer(const struct dlb_model *m, size_t i, enum dlb_dtype t);
int dlb_model_f32_layer(const struct dlb_model *m, size_t i);
int dlb_model_chain_type(const struct dlb_model *m, size_t i, int train,
                         enum dlb_dtype *t);

/* Batch normalisation folded into the convolution before it, for
 * inference passes (model_fold.c). params_moved: any parameter or running
 * statistic may have changed (every write, update and training forward
 * says so). fold_applies: convolution i alone feeds a batch norm i + 1
 * of its own type (fp32, or bf16: chain_type) that can fold. fold_refresh: make the folded copies again if
 * anything moved since. folded: the copies of layer i, valid for this
 * pass (0: not folded). */
void dlb_model_params_moved(struct dlb_model *m);
int dlb_model_fold_applies(const struct dlb_model *m, size_t i);
dlb_status dlb_model_fold_refresh(struct dlb_model *m, struct dlb_error *err);
int dlb_model_folded(const struct dlb_model *m, size_t i,
                     const struct dlb_buffer **w, const struct dlb_buffer **b);
void dlb_model_fold_free(struct dlb_model *m);
/* Fold batch norm i + 1 into convolution or linear layer i's weights w
 * and bias b, host copies of them (as the int8 form does too). */
dlb_status dlb_model_bn_fold(struct dlb_model *m, size_t i, float *w, float *b,
                             struct dlb_error *err);

/* Wrap a failing backend call's status with the backend's reason. */
dlb_status dlb_model_be_fail(struct dlb_model *m, dlb_status s,
                             const char *layer, const char *op,
                             struct dlb_error *err);

/* Upload n host images into a new input buffer of the model's type. */
dlb_status dlb_model_upload_input(struct dlb_model *m, const float *images,
                                  uint32_t n, struct dlb_buffer **out,
                                  struct dlb_error *err);

/* Forward of layer i over m->n images from `x` into a new `*y` (training
 * mode when `train`); layers without work (flatten; dropout in inference)
 * hand x through with *owned = 0. */
dlb_status dlb_model_layer_fwd(struct dlb_model *m, size_t i, int train,
                               struct dlb_buffer *x, struct dlb_buffer **y,
                               int *owned, struct dlb_error *err);

/* The forward of layer i from its inputs in act[] into act[i + 1] and
 * own[i + 1] (training mode when `train`): an add sums its inputs, every
 * other layer runs dlb_model_layer_fwd on its one input. */
dlb_status dlb_model_node_fwd(struct dlb_model *m, size_t i, int train,
                              struct dlb_error *err);

/* An inference pass over layers [0, upto) from act[0] (model_infer.c):
 * each activation is freed once the last layer that reads it has run, so
 * that a residual's input lives until its add and a chain keeps one
 * activation beside the one being made. `seen` (NULL: none) is called
 * before each layer i runs, its inputs in act[], and with i = upto at the
 * end; act[upto] is left to the caller. Only a whole pass without `seen`
 * fuses layers. */
typedef dlb_status (*dlb_model_seen_fn)(struct dlb_model *m, size_t t,
                                        void *ctx, struct dlb_error *err);
dlb_status dlb_model_infer_pass(struct dlb_model *m, size_t upto,
                                dlb_model_seen_fn seen, void *ctx,
                                struct dlb_error *err);

/* model_fuse.c: passes over the whole network, whose callers read only
 * the last output and what backward saved, may fuse layers between begin
 * and end. dlb_model_fused_fwd: the forward of layer i fused with layers
 * after it when such a pass is in flight and the backend has the fusion;
 * 0 (nothing done) otherwise, else 1 with the status in *st, *y the
 * output of the last layer fused, and the layers it covered marked to
 * pass their input through. */
void dlb_model_fuse_begin(struct dlb_model *m);
void dlb_model_fuse_end(struct dlb_model *m);
int dlb_model_fused_fwd(struct dlb_model *m, size_t i, int train,
                        struct dlb_buffer *x, struct dlb_buffer **y,
                        int *owned, dlb_status *st, struct dlb_error *err);
/* An add (layer i, `count` elements of type t) in an inference pass whose
 * output only a ReLU reads: that ReLU's relu_max (>= 0) when the backend
 * fuses the two (ADD_RELU) and the ReLU is marked to pass its input
 * through, else -1. */
float dlb_model_fused_add_relu(struct dlb_model *m, size_t i, int train,
                               size_t count, enum dlb_dtype t);
/* An int8 convolution (layer i, its fp32 output) in an inference pass
 * whose output, past the batch norms folded into it, only the residual
 * add after it reads, with an fp32 other branch nothing reads after the
 * add: the layers that CONV2D_INT8_ADD (op, its kind set and its
 * descriptors filled in) covers after i, marked to pass their input
 * through, with *y the other branch's buffer, which the convolution sums
 * onto; 0 when that does not apply or the backend has no kernel. */
size_t dlb_model_int8_add_span(struct dlb_model *m, size_t i,
                               struct dlb_op *op, struct dlb_buffer **y);

/* Backward from the loss (the last layer is a logsoftmax) to the first
 * layer, after a training forward; releases the activations on the way. */
dlb_status dlb_model_backward(struct dlb_model *m, float loss_scale,
                              struct dlb_error *err);
/* Backward from `dy`, the gradient of act[top] (the output of layer
 * top - 1, in its type), through layers top - 1 .. 0; takes dy over when
 * dy_owned. Distillation starts here with the gradient at the logits. */
dlb_status dlb_model_backward_from(struct dlb_model *m, size_t top,
                                   struct dlb_buffer *dy, int dy_owned,
                                   struct dlb_error *err);
/* Backward of layers top - 1 .. bottom from `dy` (as backward_from), for
 * a pipeline stage: when dx is not NULL, *dx receives the gradient of
 * act[bottom] (bottom > 0), owned by the caller when *dx_owned. */
dlb_status dlb_model_backward_range(struct dlb_model *m, size_t bottom,
                                    size_t top, struct dlb_buffer *dy,
                                    int dy_owned, struct dlb_buffer **dx,
                                    int *dx_owned, struct dlb_error *err);
/* The mean NLL loss of the forward pass in flight (waits for the device). */
dlb_status dlb_model_read_loss(struct dlb_model *m, double *loss,
                               struct dlb_error *err);
/* The loss's gradient at the logits (scaled by loss_scale), in the type of
 * act[n_layers - 1]; releases the log-probabilities. dlb_model_backward is
 * this and backward_from. */
dlb_status dlb_model_loss_grad(struct dlb_model *m, float loss_scale,
                               struct dlb_buffer **dy, int *dy_owned,
                               struct dlb_error *err);
/* The forward pass of a training step over n images and labels (uploaded
 * into act[0] and m->labels); backward or dlb_model_step_release follow. */
dlb_status dlb_model_forward_train(struct dlb_model *m, const float *images,
                                   const int32_t *labels, uint32_t n,
                                   struct dlb_error *err);

/* ---- mixed precision (model_prec.c) ---------------------------------- */

/* The type layer i computes and outputs in: the model's type without a
 * policy. */
enum dlb_dtype dlb_model_layer_type(const struct dlb_model *m, size_t i);
/* The type layer i writes its output in: its own type, except for a
 * convolution, which writes in the type of the layer it feeds. */
enum dlb_dtype dlb_model_out_type(const struct dlb_model *m, size_t i);
/* The weights layer i computes with: its low-precision copy or the master. */
struct dlb_buffer *dlb_model_layer_weights(const struct dlb_model *m, size_t i);
/* A timed cast of `count` elements; failures name `what`. */
dlb_status dlb_model_cast(struct dlb_model *m, size_t count,
                          const struct dlb_buffer *src, struct dlb_buffer *dst,
                          const char *what, struct dlb_error *err);
/* A new step buffer of type `t` holding src cast (timed). */
dlb_status dlb_model_cast_new(struct dlb_model *m, const struct dlb_buffer *src,
                              enum dlb_dtype t, size_t count, const char *what,
                              struct dlb_buffer **out, struct dlb_error *err);
/* Replace *b (owned by the caller when *owned) by a copy cast to `t`
 * when its type differs; the result is owned. */
dlb_status dlb_model_cast_to(struct dlb_model *m, struct dlb_buffer **b,
                             int *owned, enum dlb_dtype t, size_t count,
                             const char *what, struct dlb_error *err);
/* Before a forward pass: cast stale master weights to their copies and
 * add the completed cast timers of earlier steps to cast_s. */
dlb_status dlb_model_prec_begin(struct dlb_model *m, struct dlb_error *err);
/* After an SGD update: mark the copies stale, or (master weights off)
 * round the weights to the compute type at once. */
dlb_status dlb_model_prec_updated(struct dlb_model *m, struct dlb_error *err);
/* Release the copies and timers (dlb_model_destroy). */
void dlb_model_prec_free(struct dlb_model *m);

/* Operation descriptors of layer L for a batch of n. */
struct dlb_conv2d_desc dlb_model_conv_desc(const struct dlb_layer_spec *L,
                                           uint32_t n);
struct dlb_pool_desc dlb_model_pool_desc(const struct dlb_layer_spec *L,
                                         uint32_t n);
struct dlb_batchnorm_desc dlb_model_bn_desc(const struct dlb_layer_spec *L,
                                            uint32_t n);
struct dlb_dropout_desc dlb_model_drop_desc(const struct dlb_layer_spec *L,
                                            uint32_t n, uint64_t seed);
struct dlb_linear_desc dlb_model_linear_desc(const struct dlb_layer_spec *L,
                                             uint32_t n);

#endif
