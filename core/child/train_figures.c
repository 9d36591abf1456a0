/* A training configuration's trainer figures (train_figures.h). */
#include "child/train_figures.h"

#include "data/batch_prefetch.h"
#include "train/model_graph.h"

void dlb_train_figures_graphs(const struct dlb_host *h,
                              const struct dlb_trainer *t)
{
    struct dlb_model_graph_figures f;
    dlb_model_graph_figures(t->graph, &f);
    h->metric(h, "graphs_used", "", f.replays > 0);
    if (!t->graphs)
        return;
    h->metric(h, "graph_capture_s", "s", f.capture_s);
    h->metric(h, "graph_captures", "", (double)f.captures);
    h->metric(h, "graph_replays", "", (double)f.replays);
    h->metric(h, "graph_warmup_steps", "steps", (double)f.warmups);
}

void dlb_train_figures_uploads(const struct dlb_host *h,
                               const struct dlb_trainer *t)
{
    struct dlb_prefetch_figures f;
    dlb_batches_upload_figures(t->batches, &f);
    if (!f.batches)
        return;
    h->metric(h, "h2d_batches", "batches", (double)f.batches);
    h->metric(h, "h2d_bytes", "B", f.bytes);
    if (!f.measured || f.copy_s <= 0)
        return;
    h->metric(h, "h2d_copy_s", "s", f.copy_s / (double)f.measured);
    h->metric(h, "h2d_exposed_s", "s", f.exposed_s / (double)f.measured);
    h->metric(h, "h2d_overlap_share", "%",
              100.0 * (1.0 - f.exposed_s / f.copy_s));
}
