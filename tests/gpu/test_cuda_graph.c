/* cuda.graphs: LeNet trained on the cuda backend with the step replayed
 * from a CUDA graph follows the same training run without graphs: the
 * same seed, data order, initial weights and dropout masks (each replay
 * gets fresh seeds from the model's stream), the same kernels, so the
 * per-step losses agree to rounding of the algorithms (1e-4 relative over
 * 30 steps; in practice bit for bit), and the graph path really replays
 * (one warm-up, one capture, the rest launches). Exits 77 without a GPU. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "data/dataset.h"
#include "gpu_open.h"
#include "train/model_graph.h"
#include "train/trainer.h"

#define STEPS 30

static int train(struct dlb_backend *be, const struct dlb_model_spec *spec,
                 const struct dlb_dataset *tr, int graphs, double *loss,
                 struct dlb_model_graph_figures *fig)
{
    struct dlb_model *m = NULL;
    struct dlb_error err = {""};
    struct dlb_batch_spec bs = {64, 1, 0, 1, 42};
    dlb_status s = dlb_model_create(spec, be, DLB_F32, 42, &m, &err);
    if (s != DLB_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 0;
    }
    dlb_model_set_sgd(m, 0.01f, 0.9f);
    struct dlb_trainer t = {.model = m, .graphs = graphs};
    if ((s = dlb_model_init(m, 42, &err)) == DLB_OK)
        s = dlb_batches_open(tr, &bs, NULL, &t.batches, &err);
    for (int i = 0; i < STEPS && s == DLB_OK; i++)
        s = dlb_trainer_step(&t, 1, &err), loss[i] = t.last_loss;
    if (s == DLB_OK && (s = DLB_BE_CALL0(be, synchronize)) != DLB_OK)
        dlb_errorf(&err, s, "%s", dlb_backend_last_error(be));
    dlb_model_graph_figures(t.graph, fig);
    if (s != DLB_OK)
        fprintf(stderr, "graphs %s: %s\n", graphs ? "on" : "off", err.msg);
    dlb_trainer_close_graph(&t);
    dlb_batches_close(t.batches);
    dlb_model_destroy(m);
    return s == DLB_OK;
}

int main(void)
{
    struct dlb_backend_config cfg = {.seed = 42};
    struct dlb_dataset tr;
    struct dlb_model_spec *spec = NULL;
    struct dlb_error err = {""};
    const char *srcdir = getenv("srcdir");
    char path[1024];
    int synth = 0;
    struct dlb_backend *gpu = gpu_open_or_skip(&cfg);
    snprintf(path, sizeof path, "%s/suites/models/lenet.ini",
             srcdir && *srcdir ? srcdir : ".");
    if (dlb_dataset_open("auto", NULL, 1, 42, &tr, &synth, &err) ||
        dlb_model_file_load(path, &spec, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double eager[STEPS], graph[STEPS];
    struct dlb_model_graph_figures fe, fg;
    CHECK(train(gpu, spec, &tr, 0, eager, &fe));
    CHECK(train(gpu, spec, &tr, 1, graph, &fg));
    CHECK(fe.replays == 0);
    CHECK(fg.warmups == 1 && fg.captures == 1);
    CHECK(fg.replays == STEPS - 1);
    double worst = 0.0;
    for (int i = 0; i < STEPS; i++) {
        double d = fabs(eager[i] - graph[i]) / fmax(1.0, fabs(eager[i]));
        worst = fmax(worst, d);
        CHECK(d <= 1e-4);
    }
    fprintf(stderr, "graph vs eager over %d steps: largest relative loss "
            "difference %.3g; capture %.3f ms, %llu replays; last loss %.6f\n",
            STEPS, worst, fg.capture_s * 1e3, (unsigned long long)fg.replays,
            graph[STEPS - 1]);
    CHECK(graph[STEPS - 1] < graph[0]); /* it learned */
    dlb_backend_close(gpu);
    dlb_model_spec_free(spec);
    dlb_dataset_free(&tr);
    return check_exit();
}
