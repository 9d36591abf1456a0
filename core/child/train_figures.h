/* What a training configuration's record says of its trainer beyond the
 * step times: whether the steps replayed a graph and what that cost, and
 * the batches uploaded a step ahead. */
#ifndef DLB_CORE_CHILD_TRAIN_FIGURES_H
#define DLB_CORE_CHILD_TRAIN_FIGURES_H

#include <dlbench/plugin.h>

#include "train/trainer.h"

/* graphs_used on every training record; graph_capture_s, graph_captures,
 * graph_replays and graph_warmup_steps where graphs were asked for. */
void dlb_train_figures_graphs(const struct dlb_host *h,
                              const struct dlb_trainer *t);

/* h2d_* figures (batch_prefetch.h): bytes, copy time per batch and the
 * share of it the measured steps hid. None when the batches came on the
 * host. */
void dlb_train_figures_uploads(const struct dlb_host *h,
                               const struct dlb_trainer *t);

#endif
