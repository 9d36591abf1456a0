/* dlbench public SDK: data-parallel training, for step executors (the dp
 * plugin): h->replica_ops (ABI 1.2). See model_ops.h for the conventions
 * shared by the model tables.
 *
 * A step executor (struct dlb_executor_hooks) takes the whole training
 * step over. With this table it can
 *   - make replicas of the configuration's model: the same network on a
 *     backend handle of its own (one per thread: the cpu backend's
 *     primitive cache and stream belong to a handle), pinned to its share
 *     of the process's CPUs;
 *   - run forward and backward of any model, the configuration's own or a
 *     replica, on part of a batch, with a callback each time a layer's
 *     parameter gradients are final, so that gradient buckets can start
 *     their all-reduce while the layers below still run;
 *   - read and write gradients in place (a view, where the backend can
 *     show its memory) or as copies;
 *   - move a model's state (weights, batch-norm running statistics,
 *     momentum) as one flat fp32 array: to broadcast it, to sync replicas;
 *   - apply the SGD step, and read its settings;
 *   - tell the core that the configuration runs as several processes
 *     (join_world): only rank 0 then reports, the record names the world,
 *     and the measurement loop takes its decisions together with rank 0.
 *
 * Threads: calls on different models may run on different threads at
 * once, provided each model, with its backend, is used by one thread at a
 * time. create and destroy belong on the thread that uses the replica.
 * Models are fp32; other element types give DLB_ERR_UNSUPPORTED. */
#ifndef DLBENCH_REPLICA_OPS_H
#define DLBENCH_REPLICA_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <dlbench/model_ops.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A learnable tensor. They are numbered from 0 in the model's order (the
 * checkpoint order without the running statistics); backward finishes
 * them from the last layer to the first. */
struct dlb_param_info {
    char name[96];      /* "conv1.weight" */
    size_t count;       /* elements */
    unsigned layer;     /* the layer it belongs to, as model_ops counts */
};

/* A gradient in place: `count` fp32 values in the host view's layout. */
struct dlb_grad_view {
    float *data;
    size_t count;
    int device;         /* 0: host memory; 1: device memory (CUDA) */
};

/* Parts of a model's state, for state_count/read/write; the flat array
 * holds the parts in this order, each in the model's tensor order. */
#define DLB_STATE_WEIGHTS  0x1u /* learnable tensors */
#define DLB_STATE_STATS    0x2u /* batch-norm running mean and variance */
#define DLB_STATE_MOMENTUM 0x4u /* SGD momentum of the learnable tensors */
#define DLB_STATE_ALL      0x7u

/* Called on the thread running backward once the parameter gradients of
 * layer `layer` are final; a status other than DLB_OK ends the pass with
 * that status. */
typedef dlb_status (*dlb_grad_ready_fn)(void *ctx, unsigned layer);

/* A configuration that runs as several processes (MPI ranks). */
struct dlb_world {
    int rank, size;
    const char *const *hosts; /* `size` host names, by rank (copied) */
    /* Rank 0's `value`, returned on every rank: a collective that every
     * rank calls at the same points. The measurement loop decides through
     * it (warm-up done, next sample, stop), so that every rank runs the
     * same number of steps. */
    int64_t (*agree)(void *ctx, int64_t value);
    void *ctx;
};

struct dlb_replica_ops {
    uint32_t struct_size;

    /* Learnable tensors of m. */
    unsigned (*param_count)(const struct dlb_host *h,
                            const struct dlb_model *m);
    dlb_status (*param_info)(const struct dlb_host *h,
                             const struct dlb_model *m, unsigned i,
                             struct dlb_param_info *out);

    /* A replica of m: its network, on a new handle of the configuration's
     * backend with `threads` threads, its parameters initialised from the
     * configuration's seed (copy m's state over with state_read and
     * state_write). slot >= 0 first pins the calling thread to the CPUs
     * [slot * threads, (slot + 1) * threads) of those the process was
     * allowed when it started (wrapping around), where the backend then
     * pins its threads; slot < 0 leaves the thread's CPUs as they are.
     * Replica memory comes from the system allocator, not from a pool
     * plugin (pools serve one thread). destroy takes NULL. */
    dlb_status (*create)(const struct dlb_host *h, const struct dlb_model *m,
                         int threads, int slot, struct dlb_model **out);
    void (*destroy)(const struct dlb_host *h, struct dlb_model *replica);

    /* A number that changes whenever m's weights are written other than
     * by its own SGD steps (initialisation from the seed, a checkpoint, a
     * transform, state_write): an executor that keeps replicas or ranks
     * in step syncs them again when it moves. */
    uint64_t (*weights_version)(const struct dlb_host *h,
                                const struct dlb_model *m);

    /* The state parts `parts` (DLB_STATE_*) as one flat fp32 array of
     * *count elements; read copies it out, write copies it in. */
    dlb_status (*state_count)(const struct dlb_host *h,
                              const struct dlb_model *m, unsigned parts,
                              size_t *count);
    dlb_status (*state_read)(const struct dlb_host *h, struct dlb_model *m,
                             unsigned parts, float *dst, size_t count);
    dlb_status (*state_write)(const struct dlb_host *h, struct dlb_model *m,
                              unsigned parts, const float *src, size_t count);

    /* Forward and backward over n images (NCHW fp32 on the host,
     * normalised) and labels: the gradients of loss_scale x the mean loss
     * over these n images land in m's gradients; *loss (may be NULL)
     * receives the unscaled mean loss. `ready` (may be NULL) is called as
     * each layer's parameter gradients become final, last layer first. */
    dlb_status (*forward_backward)(const struct dlb_host *h,
                                   struct dlb_model *m, const float *images,
                                   const int32_t *labels, uint32_t n,
                                   float loss_scale, double *loss,
                                   dlb_grad_ready_fn ready, void *ctx);

    /* Gradient i in place: valid until the next forward_backward or
     * sgd_step of m. After writing through it, grad_unmap with written 1.
     * DLB_ERR_UNSUPPORTED when the backend cannot show it in place: use
     * grad_read and grad_write, which copy. */
    dlb_status (*grad_map)(const struct dlb_host *h, struct dlb_model *m,
                           unsigned i, struct dlb_grad_view *out);
    dlb_status (*grad_unmap)(const struct dlb_host *h, struct dlb_model *m,
                             unsigned i, int written);
    dlb_status (*grad_read)(const struct dlb_host *h, struct dlb_model *m,
                            unsigned i, float *dst, size_t count);
    dlb_status (*grad_write)(const struct dlb_host *h, struct dlb_model *m,
                             unsigned i, const float *src, size_t count);

    /* One SGD-with-momentum update of m from its gradients, and the
     * settings it uses (the configuration's lr and momentum). */
    dlb_status (*sgd_step)(const struct dlb_host *h, struct dlb_model *m);
    dlb_status (*sgd_settings)(const struct dlb_host *h,
                               const struct dlb_model *m, float *lr,
                               float *momentum);

    /* Wait until m's backend has finished the work enqueued so far. */
    dlb_status (*synchronize)(const struct dlb_host *h, struct dlb_model *m);

    /* Give dst the dropout stream of src (same network), so that both
     * draw the same masks from now on, as ranks started from one seed do:
     * for replicas synced to a model whose stream restarted (training
     * from the seed). */
    dlb_status (*copy_rng)(const struct dlb_host *h, struct dlb_model *dst,
                           const struct dlb_model *src);

    /* Say that this configuration runs as w->size processes, this one
     * being rank w->rank: call it from init, on every rank, before the
     * workload starts. Only rank 0 then writes the configuration's
     * record, which gets "world": {"size", "hosts"}. */
    dlb_status (*join_world)(const struct dlb_host *h,
                             const struct dlb_world *w);
};

#ifdef __cplusplus
}
#endif
#endif
