/* A pipeline stage with its activations in the backend's own memory
 * (model_api.h, the slices' view variants): the same forward and backward as
 * model_stage.c, but what crosses to the neighbouring stages is a
 * backend buffer shown in place with the backend's map, so that on the
 * cuda backend NCCL sends and receives device memory directly. The
 * buffers are the ones the step would hold anyway: the received input
 * becomes act[first] (or backward's dy), and the shown output is
 * act[last], which forward keeps for backward. */
#include "services/model_stage_impl.h"

#include "backend/backend.h"

static dlb_status show(struct dlb_model *m, struct dlb_buffer *b,
                       size_t count, const char *what,
                       struct dlb_act_view *out, struct dlb_error *err)
{
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    void *p = NULL;
    int device = 0;
    if (!ops->map || !ops->unmap)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s: the %s backend cannot "
                          "show its buffers in place (no map): use the stage's "
                          "host forward and backward", m->spec->path,
                          dlb_backend_ops_of(m->be)->name);
    dlb_status s = ops->map(m->be, b, &p, &device);
    if (s != DLB_OK)
        return dlb_model_be_fail(m, s, what, "map", err);
    *out = (struct dlb_act_view){p, count, device};
    return DLB_OK;
}

/* The caller wrote through the view: let the backend drop what it
 * derived from the old contents, and take the buffer over. */
static dlb_status take_input(struct dlb_stage *st, struct stash *sh,
                             enum dlb_stage_input which,
                             struct dlb_buffer **out, struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    dlb_status s = dlb_backend_ops_of(m->be)->unmap(m->be, sh->in[which], 1);
    *out = sh->in[which];
    sh->in[which] = NULL;
    if (s != DLB_OK) {
        dlb_model_step_free(m, out);
        return dlb_model_be_fail(m, s, "stage input", "unmap", err);
    }
    return DLB_OK;
}

dlb_status dlb_model_stage_input_view(struct dlb_stage *st, unsigned k,
                                      enum dlb_stage_input which,
                                      struct dlb_act_view *out,
                                      struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    if (k >= st->micro || !st->n || (which != DLB_STAGE_ACT &&
                                     which != DLB_STAGE_GRAD))
        return dlb_errorf(err, DLB_ERR_INTERNAL, "stage input of micro-batch "
                          "%u of %u: not begun, or no such input", k,
                          st->micro);
    if (which == DLB_STAGE_GRAD && dlb_stage_is_last(st))
        return dlb_errorf(err, DLB_ERR_INTERNAL, "the last stage takes no "
                          "gradient: its backward starts from the loss");
    uint32_t nk = st->lo[k + 1] - st->lo[k];
    unsigned at = which == DLB_STAGE_ACT ? st->first : st->last;
    size_t count = (size_t)nk * dlb_model_act_size(m, at);
    struct stash *sh = &st->stash[k];
    const char *what = which == DLB_STAGE_ACT ? "stage input"
                                              : "stage output gradient";
    dlb_status s;
    if (!sh->in[which] &&
        (s = dlb_model_step_alloc(m, DLB_F32, count, what, &sh->in[which],
                                  err)) != DLB_OK)
        return s;
    return show(m, sh->in[which], count, what, out, err);
}

dlb_status dlb_model_stage_forward_view(struct dlb_stage *st, unsigned k,
                                        const float *in,
                                        const int32_t *labels,
                                        struct dlb_act_view *out,
                                        double *loss, struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    int last = dlb_stage_is_last(st);
    struct dlb_buffer *x = NULL;
    if (k >= st->micro || st->stash[k].live || !st->n ||
        (!in && !st->stash[k].in[DLB_STAGE_ACT]) || (last ? !labels : !out))
        return dlb_errorf(err, DLB_ERR_INTERNAL, "stage forward of "
                          "micro-batch %u of %u: not begun, run twice, or "
                          "without its input (host images or input_view), "
                          "labels or output", k, st->micro);
    uint32_t nk = st->lo[k + 1] - st->lo[k];
    dlb_status s = in ? dlb_stage_upload(m, in, (size_t)nk *
                                         dlb_model_act_size(m, st->first),
                                         m->spec->layers[st->first].name, &x,
                                         err)
                      : take_input(st, &st->stash[k], DLB_STAGE_ACT, &x, err);
    if (s == DLB_OK)
        s = dlb_stage_run_forward(st, k, x, labels, loss, err);
    if (s == DLB_OK && !last) {
        s = show(m, m->act[st->last],
                 (size_t)nk * dlb_model_act_size(m, st->last),
                 m->spec->layers[st->last - 1].name, out, err);
        st->stash[k].out_shown = s == DLB_OK;
    }
    return dlb_stage_forward_done(st, k, s);
}

dlb_status dlb_model_stage_backward_view(struct dlb_stage *st, unsigned k,
                                         struct dlb_act_view *din,
                                         struct dlb_error *err)
{
    struct dlb_model *m = st->m;
    const struct dlb_backend_ops *ops = dlb_backend_ops_of(m->be);
    struct stash *sh = k < st->micro ? &st->stash[k] : NULL;
    struct dlb_buffer *dy = NULL, *dx = NULL;
    int dx_owned = 0;
    /* The caller has handed the previous one on by now (the contract). */
    dlb_stage_drop_din(st);
    dlb_status s = dlb_stage_backward_begin(
        st, k, sh && sh->in[DLB_STAGE_GRAD] != NULL, din != NULL, err);
    if (s != DLB_OK)
        return s;
    if (sh->out_shown) {
        /* Nothing was written through it: unmap drops nothing. */
        ops->unmap(m->be, m->act[st->last], 0);
        sh->out_shown = 0;
    }
    if (!dlb_stage_is_last(st))
        s = take_input(st, sh, DLB_STAGE_GRAD, &dy, err);
    if (s == DLB_OK)
        s = dlb_stage_run_backward(st, k, dy, din ? &dx : NULL, &dx_owned, err);
    if (s == DLB_OK && dx) {
        size_t count = (size_t)(st->lo[k + 1] - st->lo[k]) *
                       dlb_model_act_size(m, st->first);
        /* A gradient handed through (a flatten at the top of the stage)
         * belongs to the step, which is released below: keep a copy. */
        if (!dx_owned) {
            s = dlb_model_step_alloc(m, DLB_F32, count, "stage input gradient",
                                     &st->din, err);
            if (s == DLB_OK &&
                (s = ops->copy(m->be, st->din, 0, dx, 0, count * sizeof(float))))
                s = dlb_model_be_fail(m, s, "stage input gradient", "copy", err);
        } else {
            st->din = dx;
            dx_owned = 0;
        }
        if (s == DLB_OK)
            s = show(m, st->din, count, m->spec->layers[st->first].name, din,
                     err);
    }
    if (dx_owned)
        dlb_model_step_free(m, &dx);
    return dlb_stage_backward_done(st, s);
}
