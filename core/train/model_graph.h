/* A training step replayed from a backend graph (suite key cuda.graphs).
 *
 * The step's batch is copied into input buffers the graph keeps (outside
 * the graph, before each launch), then the whole step runs as one graph
 * launch: forward, loss, backward, and the SGD update, or with a gradient
 * scaler on the device the unscale, inf/NaN check and conditional update.
 * The first step on a batch size is a warm-up that runs eagerly in the
 * graph's memory (sizing it and every workspace, choosing algorithms);
 * the second is captured and launched; later steps are replays.
 *
 * What a capture freezes, and how it is kept right:
 * - the dropout seeds: each replay gives the backend fresh ones, drawn
 *   from the model's stream in the order an eager step draws them, so a
 *   replayed run trains exactly as an eager one;
 * - the loss scale, learning rate and momentum: a change captures again
 *   (the backend updates the executable graph in place);
 * - the loss: computed into a buffer every replay and read on the host
 *   only when asked (dlb_model_graph_loss), since a read waits;
 * - the scaler's overflow flag: posted after the launch, read by the next
 *   step's settle as on the eager path;
 * - mixed-precision casts run in the graph but are not timed (timer marks
 *   do not replay), so the cast figures are absent with graphs. */
#ifndef DLB_CORE_MODEL_GRAPH_H
#define DLB_CORE_MODEL_GRAPH_H

#include <stdint.h>

#include "util/error.h"
#include "model/model.h"

struct dlb_model_graph;

struct dlb_model_graph_figures {
    uint64_t warmups;   /* eager runs that sized the graph's memory */
    uint64_t captures;  /* captures (the first, and after a change) */
    uint64_t replays;   /* graph launches, the first after each capture
                           included */
    double capture_s;   /* host time of the captures and instantiations */
};

/* DLB_OK when the model's step can be replayed from a graph on its
 * backend, else DLB_ERR_UNSUPPORTED with the reason: the backend has no
 * graphs, or the step needs the host in its middle (a gradient scaler
 * the device cannot run: `device_scaler` 0 with a precision policy,
 * `precision` 1). */
dlb_status dlb_model_graph_check(struct dlb_model *m, int precision,
                                 int device_scaler, struct dlb_error *err);

/* A graph for model m's training steps; `device_scaler` 1 when the update
 * goes through the gradient scaler on the device (the flag is posted after
 * every step), 0 for plain SGD. */
dlb_status dlb_model_graph_open(struct dlb_model *m, int device_scaler,
                                struct dlb_model_graph **out,
                                struct dlb_error *err);
/* Waits for replays in flight; NULL is fine. */
void dlb_model_graph_close(struct dlb_model_graph *g);

/* One training step on n images and labels with the loss multiplied by
 * loss_scale. Nothing waits for the device, except a capture replacing
 * one still replaying. */
dlb_status dlb_model_graph_step(struct dlb_model_graph *g, const float *images,
                                const int32_t *labels, uint32_t n,
                                float loss_scale, struct dlb_error *err);

/* The same on a batch already on the backend (F32 images, S32 labels of
 * n), copied into the graph's buffers on the stream before the launch. */
dlb_status dlb_model_graph_step_dev(struct dlb_model_graph *g,
                                    const struct dlb_buffer *images,
                                    const struct dlb_buffer *labels,
                                    uint32_t n, float loss_scale,
                                    struct dlb_error *err);

/* The last step's loss (a device wait). */
dlb_status dlb_model_graph_loss(struct dlb_model_graph *g, double *loss,
                                struct dlb_error *err);

void dlb_model_graph_figures(const struct dlb_model_graph *g,
                             struct dlb_model_graph_figures *out);

#endif
