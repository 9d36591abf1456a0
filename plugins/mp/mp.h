/* mp: pipeline model parallelism. Shared declarations of the plugin's
 * files.
 *
 * The plugin is a step executor: it cuts the network into stages, one per
 * worker, splits the batch into micro-batches that flow through them, and
 * applies one update per batch from the gradients summed over the
 * micro-batches (model_api.h's slices).
 *   threads  one process; stage 0 on the calling thread with the
 *            configuration's model, the others on threads with replicas
 *            (mp_threads.c)
 *   mpi      one process per stage; activations and gradients sent
 *            point to point with MPI (mp_mpi.c)
 *   nccl     one process and GPU per stage; ncclSend/ncclRecv between
 *            neighbours on the stages' device memory, the NCCL id
 *            broadcast over MPI (mp_nccl.c, built as the module
 *            mp_nccl.so that mp_nccl_load.c dlopens, so that mp.so links
 *            no CUDA library)
 * Engines this build cannot run have stubs that say why (mp_*_none.c). */
#ifndef DLB_MP_H
#define DLB_MP_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/plugin.h>
#include <dlbench/model_api.h>

enum mp_engine_kind { MP_THREADS, MP_MPI, MP_NCCL };
enum mp_schedule { MP_GPIPE, MP_1F1B };

enum { MP_ENGINE, MP_STAGES, MP_RANKS, MP_CUTS, MP_MICRO, MP_SCHEDULE,
       MP_STAGE_THREADS, MP_N_PARAMS };

/* The most stages a pipeline may have. */
#define MP_MAX_STAGES 64

struct mp_settings {
    enum mp_engine_kind engine;
    int stages;             /* threads: stages; mpi, nccl: ranks */
    int ranks;
    char cuts[512];         /* "conv2,fc1": first layers of stages 1..; "" */
    int micro;
    enum mp_schedule schedule;
    int stage_threads;      /* threads: backend threads of stages 1.. */
};

/* The stages' layers: stage s runs [first[s], first[s + 1]). */
struct mp_cut {
    int n;
    unsigned first[MP_MAX_STAGES + 1];
};

/* One step of a stage's schedule: forward or backward of micro-batch k. */
struct mp_op {
    unsigned char backward;
    unsigned k;
};

/* Figures an engine accumulates; mp_figures.c turns them into metrics.
 * Times in seconds, summed over `steps`. */
struct mp_figures {
    uint64_t steps;
    int stages, micro;
    double pipe_s;            /* first operation to the last stage's end */
    double busy_s[MP_MAX_STAGES];   /* forward, backward and update */
    double step_s;            /* the whole step, hand-back included */
    double handback_s;        /* stages' layers back to the reporting model */
    uint64_t saved_peak[MP_MAX_STAGES]; /* bytes kept for backward */
    uint64_t sent_bytes;      /* between stages, both ways, per step */
    unsigned first[MP_MAX_STAGES + 1];
    double last_loss;
};

struct mp_engine {
    const char *name;
    /* DLB_OK, or DLB_ERR_UNSUPPORTED with why this build or machine cannot
     * run it. */
    dlb_status (*probe)(const struct dlb_host *h, const struct mp_settings *s,
                        char *reason, size_t len);
    dlb_status (*init)(const struct dlb_host *h, const struct mp_settings *s,
                       void **eng);
    dlb_status (*step)(void *eng, struct dlb_model *model,
                       const struct dlb_batch *batch);
    /* Called on every rank at the same point. */
    dlb_status (*figures)(void *eng, struct mp_figures *out);
    void (*fini)(void *eng);
};

extern const struct mp_engine mp_engine_threads;
extern const struct mp_engine mp_engine_mpi;
extern const struct mp_engine mp_engine_nccl;

/* The stage count of the settings: threads' stages, else the ranks. */
int mp_stage_count(const struct mp_settings *s);

/* Check the cut settings against a network's layer names (mp_cut.c).
 * `reader` (NULL for a chain) is dlb_config_view's cut_reader: per layer
 * k, the first layer that reads an output from before k - 1, n_layers
 * where none does, so that a stage may begin at k. DLB_ERR_INPUT with
 * `reason` and *param (MP_STAGES, MP_RANKS, MP_CUTS) when the cuts name
 * no layer, are out of order, cut inside a residual block, or do not
 * make the stage count; or when there are more stages than layers or
 * than places to cut. */
dlb_status mp_cut_check(const struct mp_settings *s, unsigned n_layers,
                        const char *const *names, const uint32_t *reader,
                        int *param, char *reason, size_t len);
/* The stages of a network of n layers with per-layer costs `cost`: the
 * named cuts, or else the split that minimises the costliest stage among
 * the cuts `reader` allows. */
dlb_status mp_cut_plan(const struct mp_settings *s, unsigned n_layers,
                       const char *const *names, const uint32_t *reader,
                       const double *cost, struct mp_cut *out, char *reason,
                       size_t len);

/* The operations of stage s of S for M micro-batches under `sched`
 * (mp_sched.c): 2 M of them into ops. GPipe: every forward, then every
 * backward; 1F1B: S - s - 1 forwards to fill, then one forward and one
 * backward in turn, then the remaining backwards. Backwards run in
 * micro-batch order in both. */
void mp_schedule_ops(enum mp_schedule sched, int s, int S, int M,
                     struct mp_op *ops);

/* One point-to-point transfer of engine nccl: micro-batch k's
 * activations (forward, to the next stage) or their gradients (back, to
 * the previous one), sent or received by this stage. */
struct mp_p2p {
    unsigned char send;     /* 1: send to peer; 0: receive from it */
    unsigned char grad;     /* 0: activations; 1: gradients */
    unsigned k;
    int peer;
};

/* The transfers between two operations of a stage's schedule, issued as
 * one NCCL group: at most the send of the operation before and the
 * receive of the one after. */
struct mp_p2p_group {
    struct mp_p2p p[2];
    int n;
};

/* The 2 M + 1 groups of stage s of S (mp_p2p.c) for its 2 M operations
 * `ops` (mp_schedule_ops): group i before operation i, group 2 M after
 * the last. Pairing the send
 * that ends one operation with the receive the next one waits for is what
 * keeps blocking transfers from deadlocking under 1F1B, where a stage
 * sends forward while its neighbour sends back (as Megatron-LM's
 * send_forward_recv_backward does). */
void mp_p2p_plan(const struct mp_op *ops, int s, int S, int M,
                 struct mp_p2p_group *groups);

/* Cut plan of the model from its node table (model_api), for engines. */
dlb_status mp_plan_model(const struct dlb_host *h, const struct dlb_model *m,
                         const struct mp_settings *s, struct mp_cut *out);

/* Metrics from the figures (mp_figures.c), under the plugin's prefix. */
dlb_status mp_figures_report(const struct dlb_host *h,
                             const struct mp_settings *s,
                             const struct mp_figures *f);

/* Monotonic seconds. */
double mp_now(void);

#endif
