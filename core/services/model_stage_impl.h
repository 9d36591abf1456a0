/* The layout of a pipeline stage, shared by model_stage.c (host arrays)
 * and model_stage_view.c (activations in the backend's memory) only. */
#ifndef DLB_CORE_MODEL_STAGE_IMPL_H
#define DLB_CORE_MODEL_STAGE_IMPL_H

#include "model/model_impl.h"
#include "services/model_stage.h"

/* The per-step state of one micro-batch, for layers [first, last]. */
struct stash {
    struct dlb_buffer **act;     /* act[first .. last] */
    unsigned char *own;
    struct dlb_buffer **ws, **mean, **invstd, **x_in; /* [first, last) */
    struct dlb_buffer *labels;
    int live;
    /* input_view's buffers (enum dlb_stage_input), until consumed, and
     * whether act[last] is shown to the caller (forward_view). */
    struct dlb_buffer *in[2];
    int out_shown;
};

struct dlb_stage {
    struct dlb_model *m;
    unsigned first, last, micro;
    float loss_scale;
    uint32_t n, *lo;             /* the step's images; micro + 1 bounds */
    uint64_t *seed;              /* the step's dropout seeds, per layer */
    struct stash *stash;         /* per micro-batch */
    unsigned done;               /* micro-batches whose backward ran */
    /* Gradient sum: a later micro-batch's backward writes into tmp[j],
     * which is then added to the parameter's gradient. */
    size_t *grad_of;             /* params with a gradient, in range */
    size_t n_grad;
    struct dlb_buffer **tmp, *zeros;
    size_t max_count;
    uint64_t saved, saved_peak;
    /* The last backward_view's gradient at `first`, shown to the caller
     * until the next backward_view, update, begin or close. */
    struct dlb_buffer *din;
};

/* Is the stage the network's end (it computes the loss)? */
int dlb_stage_is_last(const struct dlb_stage *st);

/* A new step buffer holding count host floats. */
dlb_status dlb_stage_upload(struct dlb_model *m, const float *src,
                            size_t count, const char *what,
                            struct dlb_buffer **out, struct dlb_error *err);

/* Forward of micro-batch k from x (taken over: it becomes act[first]),
 * leaving act[last] in the model; on the last stage with labels uploaded
 * and *loss read (loss may be NULL). */
dlb_status dlb_stage_run_forward(struct dlb_stage *st, unsigned k,
                                 struct dlb_buffer *x, const int32_t *labels,
                                 double *loss, struct dlb_error *err);
/* After run_forward: keep micro-batch k's state for backward (s == OK),
 * or drop what the model holds. Returns s. */
dlb_status dlb_stage_forward_done(struct dlb_stage *st, unsigned k,
                                  dlb_status s);

/* Before backward of micro-batch k: the order checked (with_dout: the
 * caller gives the gradient at `last`; with_din: it wants the one at
 * `first`) and k's state moved back into the model. */
dlb_status dlb_stage_backward_begin(struct dlb_stage *st, unsigned k,
                                    int with_dout, int with_din,
                                    struct dlb_error *err);
/* Backward of micro-batch k from dy (taken over; NULL on the last stage:
 * the loss's), its parameter gradients summed into the step's; *dx (when
 * dx is not NULL and first > 0) the gradient at `first`, owned by the
 * caller when *dx_owned. */
dlb_status dlb_stage_run_backward(struct dlb_stage *st, unsigned k,
                                  struct dlb_buffer *dy, struct dlb_buffer **dx,
                                  int *dx_owned, struct dlb_error *err);
/* After run_backward: the model's step state released, k done when
 * s == OK. Returns s. */
dlb_status dlb_stage_backward_done(struct dlb_stage *st, dlb_status s);

/* Free input_view's buffers of micro-batch k and the last din. */
void dlb_stage_drop_inputs(struct dlb_stage *st, struct stash *sh);
void dlb_stage_drop_din(struct dlb_stage *st);

#endif
