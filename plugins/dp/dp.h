/* dp: data-parallel training. Shared declarations of the plugin's files.
 *
 * The plugin is a step executor: it takes the training step over and runs
 * it on several workers, each on its share of the global batch, then sums
 * the gradients in buckets and applies the same SGD update everywhere.
 *   threads  one process; one replica per worker thread (dp_threads.c)
 *   mpi      one process per rank; MPI_(I)allreduce on host memory
 *            (dp_mpi.c)
 *   nccl     one process and GPU per rank; ncclAllReduce on a stream of
 *            its own, the NCCL id broadcast over MPI (dp_nccl.c, built
 *            as dp_nccl.so and loaded by dp_nccl_load.c only when asked
 *            for, so that dp.so links no CUDA library)
 * Engines this build cannot run have stubs that say why (dp_*_none.c). */
#ifndef DLB_DP_H
#define DLB_DP_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/plugin.h>
#include <dlbench/model_api.h>

#include "dp_bucket.h"

enum dp_engine_kind { DP_THREADS, DP_MPI, DP_NCCL };

enum { DP_ENGINE, DP_REPLICAS, DP_RANKS, DP_BUCKET, DP_OVERLAP, DP_AVERAGE,
       DP_REPLICA_THREADS, DP_N_PARAMS };

struct dp_settings {
    enum dp_engine_kind engine;
    int replicas;           /* threads engine: worker threads */
    int ranks;              /* mpi, nccl: processes */
    size_t bucket_bytes;
    int overlap;            /* all-reduce buckets during backward */
    int average;            /* 1: gradient of the global mean loss; 0: sum */
    int replica_threads;    /* backend threads of each replica (threads) */
};

/* Per-step figures an engine accumulates; dp_figures.c turns them into
 * metrics. Times in seconds, summed over `steps`. */
struct dp_figures {
    uint64_t steps;
    double comm_s;          /* all-reduce time on the critical path's data */
    double exposed_s;       /* the last worker's backward end to gradients
                               reduced */
    double imbalance_s;     /* worker 0's backward end to the last one's */
    double backward_s;      /* forward + backward of this worker */
    double step_s;
    double comm_calib_s;    /* one isolated all-reduce of every bucket; 0: none */
    int calibrated;
    size_t grad_bytes;      /* reduced per step */
    int workers;            /* replicas x ranks */
    int buckets;
    double last_loss;       /* mean training loss of the last step */
    double done_in_bwd_bytes; /* bytes already reduced when backward ended */
    int weights_checked, weights_identical;
    double weights_max_diff;
};

/* An engine: the executor's step and the engine's figures. */
struct dp_engine {
    const char *name;
    /* DLB_OK, or DLB_ERR_UNSUPPORTED with why this build or machine cannot
     * run it. */
    dlb_status (*probe)(const struct dlb_host *h, const struct dp_settings *s,
                        char *reason, size_t len);
    dlb_status (*init)(const struct dlb_host *h, const struct dp_settings *s,
                       void **eng);
    dlb_status (*step)(void *eng, struct dlb_model *model,
                       const struct dlb_batch *batch);
    /* Fill the figures (the weight check, a calibration run of the
     * all-reduce); called on every rank at the same point. */
    dlb_status (*figures)(void *eng, struct dlb_model *model,
                          struct dp_figures *out);
    void (*fini)(void *eng);
};

extern const struct dp_engine dp_engine_threads;
extern const struct dp_engine dp_engine_mpi;
extern const struct dp_engine dp_engine_nccl;

/* The shard of worker w of `workers` in a batch of n images: [*lo, *hi).
 * Contiguous, without overlap, sizes differing by at most one. */
void dp_shard(uint32_t n, int w, int workers, uint32_t *lo, uint32_t *hi);

/* The loss scale of a shard of `part` images in a global batch of n: the
 * summed gradients are then the global mean loss's (average) or the sum
 * of the shards' mean-loss gradients. */
float dp_shard_scale(const struct dp_settings *s, uint32_t part, uint32_t n);

/* Metrics from the figures (dp_figures.c), under the plugin's prefix. */
dlb_status dp_figures_report(const struct dlb_host *h,
                             const struct dp_settings *s,
                             const struct dp_figures *f, struct dlb_model *m);

/* Monotonic seconds. */
double dp_now(void);

#endif
