/* A training step replayed from a backend graph (model_graph.h). */
#include "train/model_graph.h"

#include <stdlib.h>

#include "backend/backend.h"
#include "model/model_impl.h"
#include "train/model_scaler.h"

enum { NEED_WARMUP, NEED_CAPTURE, READY };

struct dlb_model_graph {
    struct dlb_model *m;
    struct dlb_graph *g;
    int device_scaler;
    /* Outside the graph's memory, allocated per batch size: the batch is
     * copied in before each launch; the loss is written by each replay. */
    struct dlb_buffer *in, *labels, *loss;
    uint32_t n;
    int state;
    float scale, lr, momentum;          /* as captured */
    struct dlb_graph_seed *seeds;       /* one per dropout layer */
    size_t n_drop;
    struct dlb_model_graph_figures fig;
};

static dlb_status be_fail(struct dlb_model_graph *G, dlb_status s,
                          const char *op, struct dlb_error *err)
{
    return dlb_model_be_fail(G->m, s, "graph", op, err);
}

dlb_status dlb_model_graph_check(struct dlb_model *m, int precision,
                                 int device_scaler, struct dlb_error *err)
{
    const struct dlb_backend_ops *o = dlb_backend_ops_of(m->be);
    if (!o->graph_create || !o->graph_begin || !o->graph_end ||
        !o->graph_launch || !o->graph_destroy)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "cuda.graphs = on: "
                          "backend %s has no graphs", o->name);
    if (precision && !device_scaler)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "cuda.graphs = on: the "
                          "precision policy's overflow check runs on the host "
                          "inside the step (no master weights, or the host "
                          "scaler), which a graph cannot replay");
    return DLB_OK;
}

dlb_status dlb_model_graph_open(struct dlb_model *m, int device_scaler,
                                struct dlb_model_graph **out,
                                struct dlb_error *err)
{
    struct dlb_model_graph *G = calloc(1, sizeof *G);
    dlb_status s;
    *out = NULL;
    if (!G)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    G->m = m;
    G->device_scaler = device_scaler;
    for (size_t i = 0; i < m->spec->n_layers; i++)
        G->n_drop += m->layers[i].spec->kind == DLB_LAYER_DROPOUT;
    if (G->n_drop && !(G->seeds = calloc(G->n_drop, sizeof *G->seeds))) {
        free(G);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    }
    if ((s = DLB_BE_CALL(m->be, graph_create, &G->g)) != DLB_OK) {
        s = be_fail(G, s, "graph_create", err);
        free(G->seeds);
        free(G);
        return s;
    }
    m->untimed_casts = 1;
    *out = G;
    return DLB_OK;
}

static void free_io(struct dlb_model_graph *G)
{
    const struct dlb_backend_ops *o = dlb_backend_ops_of(G->m->be);
    o->buffer_free(G->m->be, G->in);
    o->buffer_free(G->m->be, G->labels);
    o->buffer_free(G->m->be, G->loss);
    G->in = G->labels = G->loss = NULL;
    G->n = 0;
}

void dlb_model_graph_close(struct dlb_model_graph *G)
{
    if (!G)
        return;
    dlb_backend_ops_of(G->m->be)->graph_destroy(G->m->be, G->g);
    free_io(G);
    G->m->untimed_casts = 0;
    free(G->seeds);
    free(G);
}

/* The fixed buffers, (re)made for a new batch size. */
static dlb_status size_io(struct dlb_model_graph *G, uint32_t n,
                          struct dlb_error *err)
{
    struct dlb_model *m = G->m;
    const struct dlb_backend_ops *o = dlb_backend_ops_of(m->be);
    size_t count = (size_t)n * dlb_model_act_size(m, 0);
    dlb_status s = DLB_OK;
    if (n != G->n) {
        free_io(G);
        if ((s = o->buffer_alloc(m->be, DLB_F32, count, &G->in)) ||
            (s = o->buffer_alloc(m->be, DLB_S32, n, &G->labels)) ||
            (s = o->buffer_alloc(m->be, m->dtype, 1, &G->loss))) {
            free_io(G);
            return be_fail(G, s, "input buffers", err);
        }
        G->n = n;
        G->state = NEED_WARMUP; /* other shapes: other memory and plans */
    }
    return DLB_OK;
}

/* The batch into the fixed buffers. */
static dlb_status upload(struct dlb_model_graph *G, const float *images,
                         const int32_t *labels, uint32_t n,
                         struct dlb_error *err)
{
    struct dlb_model *m = G->m;
    const struct dlb_backend_ops *o = dlb_backend_ops_of(m->be);
    size_t count = (size_t)n * dlb_model_act_size(m, 0);
    dlb_status s = size_io(G, n, err);
    if (s != DLB_OK)
        return s;
    if ((s = o->copy_from_host(m->be, G->in, 0, images, count * sizeof(float))) ||
        (s = o->copy_from_host(m->be, G->labels, 0, labels,
                               (size_t)n * sizeof *labels)))
        return be_fail(G, s, "batch upload", err);
    return DLB_OK;
}

/* Fresh seeds for the dropout layers, in the order an eager step draws
 * them (dlb_model_forward_train); `captured` keeps them as the values
 * the next capture will see. */
static void draw_seeds(struct dlb_model_graph *G, int captured)
{
    struct dlb_model *m = G->m;
    size_t j = 0;
    for (size_t i = 0; i < m->spec->n_layers; i++) {
        if (m->layers[i].spec->kind != DLB_LAYER_DROPOUT)
            continue;
        m->layers[i].drop_seed = dlb_rng_u64(&m->drop_rng);
        if (captured)
            G->seeds[j].captured = m->layers[i].drop_seed;
        G->seeds[j++].now = m->layers[i].drop_seed;
    }
}

/* The step as an eager one does it (dlb_model_forward_backward and the
 * update), on the fixed input, with the loss into G->loss. */
static dlb_status body(struct dlb_model_graph *G, float scale,
                       struct dlb_error *err)
{
    struct dlb_model *m = G->m;
    size_t nl = m->spec->n_layers;
    const struct dlb_layer_spec *last = &m->spec->layers[nl - 1];
    struct dlb_loss_desc ld = {G->n, last->in_c};
    dlb_status s;
    m->n = G->n;
    dlb_model_step_release(m);
    /* Every replay follows an update: the capture must hold the casts. */
    m->lp_stale |= m->lowp;
    if ((s = dlb_model_prec_begin(m, err)))
        return s;
    m->act[0] = G->in;
    m->own[0] = 0;
    if (m->dtype != DLB_F32) {
        size_t count = (size_t)G->n * dlb_model_act_size(m, 0);
        if ((s = dlb_model_cast_new(m, G->in, m->dtype, count, "input",
                                    &m->act[0], err)))
            return s;
        m->own[0] = 1;
    }
    m->labels = G->labels;
    draw_seeds(G, 1);
    for (size_t i = 0; i < nl && s == DLB_OK; i++)
        s = dlb_model_node_fwd(m, i, 1, err);
    if (s == DLB_OK &&
        (s = dlb_backend_run(m->be, &(struct dlb_op){.kind = DLB_OP_NLL_LOSS,
                 .prop = DLB_PROP_FWD_TRAIN, .loss = ld, .x = m->act[nl],
                 .labels = m->labels, .y = G->loss})) != DLB_OK)
        s = dlb_model_be_fail(m, s, last->name, "loss", err);
    if (s == DLB_OK)
        s = dlb_model_backward(m, scale, err);
    m->labels = NULL; /* G's, not the step's */
    dlb_model_step_release(m);
    if (s != DLB_OK)
        return s;
    return G->device_scaler ? dlb_model_scaled_apply(m, scale, err)
                            : dlb_model_sgd_step(m, err);
}

/* The body between graph_begin and graph_end; graph_end runs on failure
 * too, so that no capture stays open. */
static dlb_status run_body(struct dlb_model_graph *G, int capture, float scale,
                           struct dlb_error *err)
{
    struct dlb_backend *be = G->m->be;
    double cap_s = 0.0;
    dlb_status s = DLB_BE_CALL(be, graph_begin, G->g, capture);
    if (s != DLB_OK)
        return be_fail(G, s, "graph_begin", err);
    s = body(G, scale, err);
    dlb_status e = DLB_BE_CALL(be, graph_end, G->g, &cap_s);
    if (s != DLB_OK)
        return s;
    if (e != DLB_OK)
        return be_fail(G, e, capture ? "capture" : "graph_end", err);
    G->fig.capture_s += cap_s;
    return DLB_OK;
}

/* A batch on the device (an upload on the copy stream) into the fixed
 * buffers, on the stream: a device-to-device copy, a small part of a
 * step, so that the next batch's upload may fill the caller's other
 * buffer while the graph replays. */
static dlb_status copy_in(struct dlb_model_graph *G,
                          const struct dlb_buffer *images,
                          const struct dlb_buffer *labels, uint32_t n,
                          struct dlb_error *err)
{
    struct dlb_model *m = G->m;
    const struct dlb_backend_ops *o = dlb_backend_ops_of(m->be);
    size_t count = (size_t)n * dlb_model_act_size(m, 0);
    dlb_status s = size_io(G, n, err);
    if (s != DLB_OK)
        return s;
    if ((s = o->copy(m->be, G->in, 0, images, 0, count * sizeof(float))) ||
        (s = o->copy(m->be, G->labels, 0, labels, 0,
                     (size_t)n * sizeof(int32_t))))
        return be_fail(G, s, "batch copy", err);
    return DLB_OK;
}

static dlb_status launch(struct dlb_model_graph *G, float loss_scale,
                         struct dlb_error *err);

dlb_status dlb_model_graph_step(struct dlb_model_graph *G, const float *images,
                                const int32_t *labels, uint32_t n,
                                float loss_scale, struct dlb_error *err)
{
    dlb_status s = upload(G, images, labels, n, err);
    return s != DLB_OK ? s : launch(G, loss_scale, err);
}

dlb_status dlb_model_graph_step_dev(struct dlb_model_graph *G,
                                    const struct dlb_buffer *images,
                                    const struct dlb_buffer *labels,
                                    uint32_t n, float loss_scale,
                                    struct dlb_error *err)
{
    dlb_status s = copy_in(G, images, labels, n, err);
    return s != DLB_OK ? s : launch(G, loss_scale, err);
}

/* Warm-up, capture or replay, on the batch in the fixed buffers. */
static dlb_status launch(struct dlb_model_graph *G, float loss_scale,
                         struct dlb_error *err)
{
    struct dlb_model *m = G->m;
    dlb_status s;
    /* a replay updates the weights without the model's code running */
    dlb_model_params_moved(m);
    if (G->state == READY && (loss_scale != G->scale || m->lr != G->lr ||
                              m->momentum != G->momentum))
        G->state = NEED_CAPTURE;
    switch (G->state) {
    case NEED_WARMUP:
        if ((s = run_body(G, 0, loss_scale, err)))
            return s;
        G->fig.warmups++;
        G->state = NEED_CAPTURE;
        break;
    case NEED_CAPTURE:
        if ((s = run_body(G, 1, loss_scale, err)))
            return s;
        G->fig.captures++;
        G->scale = loss_scale;
        G->lr = m->lr;
        G->momentum = m->momentum;
        G->state = READY;
        /* The capture drew this step's seeds and ran nothing: launch it
         * with them (the slots hold them). */
        if ((s = DLB_BE_CALL(m->be, graph_launch, G->g, NULL, 0)))
            return be_fail(G, s, "graph_launch", err);
        G->fig.replays++;
        break;
    default:
        draw_seeds(G, 0);
        if ((s = DLB_BE_CALL(m->be, graph_launch, G->g, G->seeds, G->n_drop)))
            return be_fail(G, s, "graph_launch", err);
        G->fig.replays++;
        break;
    }
    return G->device_scaler ? dlb_model_scaled_post(m, err) : DLB_OK;
}

dlb_status dlb_model_graph_loss(struct dlb_model_graph *G, double *loss,
                                struct dlb_error *err)
{
    struct dlb_model *m = G->m;
    const struct dlb_backend_ops *o = dlb_backend_ops_of(m->be);
    struct dlb_buffer *f32 = G->loss;
    float f = 0.0f;
    dlb_status s = DLB_OK;
    if (!G->loss)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "graph loss: no step ran");
    if (m->dtype != DLB_F32 &&
        (s = dlb_model_cast_new(m, G->loss, DLB_F32, 1, "loss", &f32, err)))
        return s;
    s = o->copy_to_host(m->be, &f, f32, 0, sizeof f);
    if (f32 != G->loss)
        dlb_model_step_free(m, &f32);
    if (s != DLB_OK)
        return be_fail(G, s, "loss", err);
    *loss = f;
    return DLB_OK;
}

void dlb_model_graph_figures(const struct dlb_model_graph *G,
                             struct dlb_model_graph_figures *out)
{
    *out = G ? G->fig : (struct dlb_model_graph_figures){0, 0, 0, 0.0};
}
