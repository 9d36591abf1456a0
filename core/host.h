/* The core's side of `struct dlb_host`: what plugins and workloads may call
 * inside a configuration's process. One host per plugin, so that log lines
 * and figures carry the plugin's name. */
#ifndef DLB_CORE_HOST_H
#define DLB_CORE_HOST_H

#include <stdint.h>
#include <jansson.h>
#include <dlbench/plugin.h>

/* State shared by every host of one configuration. */
struct dlb_host_shared {
    json_t *metrics;                          /* { "name": {value, unit} } */
    const struct dlb_allocator_hooks *pool;   /* NULL: system allocator */
    void *pool_state;
    const struct dlb_host *pool_host;
    uint64_t sys_bytes, sys_peak;             /* through raw_alloc */
    int verbose;
    /* The workload's data and test-set evaluation, for model_ops (ABI
     * 1.2): set by the workload once it has them, NULL before. */
    const struct dlb_host_data *data;
};

struct dlb_error;

/* What a workload lends plugins through model_ops. */
struct dlb_host_data {
    void *ctx;
    /* The training (train = 1) or test set, opened on first use. */
    dlb_status (*dataset)(void *ctx, int train, const struct dlb_dataset **out,
                          struct dlb_error *err);
    /* Test-set loss and accuracy (%) of `m`. */
    dlb_status (*evaluate)(void *ctx, struct dlb_model *m, double *loss,
                           double *accuracy, struct dlb_error *err);
};

struct dlb_host_priv {
    struct dlb_host pub;
    struct dlb_host_shared *shared;
    char who[64];                             /* "core" or the plugin's name */
    char metric_prefix[66];                   /* "" for core, "NAME." for plugins */
};

/* Tables of model services (host_model.c, host_quant.c, host_prune.c,
 * host_replica.c). */
extern const struct dlb_model_ops dlb_host_model_ops;
extern const struct dlb_quant_ops dlb_host_quant_ops;
extern const struct dlb_prune_ops dlb_host_prune_ops;
extern const struct dlb_replica_ops dlb_host_replica_ops;
extern const struct dlb_train_ops dlb_host_train_ops;

/* Lend `data` to every plugin of the configuration of host `h`. */
void dlb_host_set_data(const struct dlb_host *h, const struct dlb_host_data *data);

/* The core's log line for a failed model service, under the plugin's name. */
dlb_status dlb_host_fail(const struct dlb_host *h, dlb_status s,
                         const struct dlb_error *err);

void dlb_host_setup(struct dlb_host_priv *h, struct dlb_host_shared *shared,
                    const char *who, uint64_t seed, int quick);

#endif
