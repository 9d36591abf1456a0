/* The core's side of `struct dlb_host`: what plugins and workloads may call
 * inside a configuration's process. One host per plugin, so that log lines
 * and figures carry the plugin's name. */
#ifndef DLB_CORE_HOST_H
#define DLB_CORE_HOST_H

#include <sched.h>
#include <stdint.h>
#include <jansson.h>
#include <dlbench/plugin.h>

#include "services/model_lend.h"

/* Models a configuration's plugins may prepare: a teacher, a few more. */
#define DLB_HOST_MAX_PREPARED 4

/* State shared by every host of one configuration. */
struct dlb_host_shared {
    json_t *metrics;                          /* { "name": {value, unit} } */
    /* The last error a plugin logged ("who: message"), so that a failed
     * hook's configuration gives the plugin's reason, not only a status. */
    char last_error[512];
    const struct dlb_allocator_hooks *pool;   /* NULL: system allocator */
    void *pool_state;
    const struct dlb_host *pool_host;
    uint64_t sys_bytes, sys_peak;             /* through raw_alloc */
    int verbose;
    /* The workload's data and test-set evaluation, for model_api: set by
     * the workload once it has them, NULL before. */
    const struct dlb_host_data *data;
    /* The CPUs the process was allowed when its first host was set up,
     * before a backend pinned any thread: replicas take their share. */
    cpu_set_t cpus;
    int have_cpus;
    /* A configuration run as several processes (the extra world.join):
     * only rank 0 reports; world is {"size", "hosts"} for its record, NULL
     * for one process; agree is rank 0's decision for the measurement. */
    int rank;
    json_t *world;
    int64_t (*agree)(void *ctx, int64_t value);
    void *agree_ctx;
    /* model_api's open (host_model.c): the suite file as the user named it and
     * as loaded, where model files are looked up beside; the named models
     * plugins opened, closed when the workload withdraws its data. */
    const char *suite_paths[2];
    struct dlb_model_lend_registry models;
    /* The device the workload's backend runs on (device_record.h), for
     * the configuration's record; and why device memory could not be had
     * for a pool (no GPU here), so that the configuration is skipped with
     * that reason rather than failing as out of memory (host_device.c). */
    /* A plugin skipped work that changes the model's quality under
     * measure_only (quality_work_skipped, ABI 1.6): the workload scores no
     * accuracy. */
    int quality_work_skipped;
    /* Nodes of a model not opened by a plugin (the workload's) were
     * rewritten to compute in int8 (quant): the record's share of peak is
     * of the int8 unit (AMX or VNNI), not of fp32's FMAs. */
    int int8_rewritten;
    json_t *device;
    char device_why[256];
    /* Page-locked memory (host_pinned.c): the workload's backend, which
     * lends it, and the blocks lent to plugins, by which the core knows a
     * pinned batch when it sees one. */
    struct dlb_backend *backend;
    struct dlb_host_pinned_block *pinned;
    size_t n_pinned, cap_pinned;
    /* Models plugins will open by name, said from init (model_api's
     * prepare, ABI 2.2); `prepared_taken` once the workload has read them
     * (dlb_host_take_prepared), after which a prepare comes too late. */
    struct dlb_host_prepared {
        char name[512];
        uint64_t steps;
    } prepared[DLB_HOST_MAX_PREPARED];
    unsigned n_prepared;
    int prepared_taken;
};

struct dlb_error;
struct dlb_model_spec;

/* What a workload lends plugins through model_api. */
struct dlb_host_data {
    void *ctx;
    /* The training (train = 1) or test set, opened on first use. */
    dlb_status (*dataset)(void *ctx, int train, const struct dlb_dataset **out,
                          struct dlb_error *err);
    /* Test-set loss and accuracy (%) of `m`. */
    dlb_status (*evaluate)(void *ctx, struct dlb_model *m, double *loss,
                           double *accuracy, struct dlb_error *err);
    /* Model file `name` found as the workload finds its own, built on the
     * workload's backend with its reference weights for `steps` steps (0:
     * the workload's default budget); its log lines under `h`. The spec
     * is the caller's, to free after the model. NULL: none to lend. */
    dlb_status (*open_model)(void *ctx, const struct dlb_host *h,
                             const char *name, uint64_t steps,
                             struct dlb_model_spec **spec,
                             struct dlb_model **out, struct dlb_error *err);
};

struct dlb_host_priv {
    struct dlb_host pub;
    struct dlb_host_shared *shared;
    char who[64];                             /* "core" or the plugin's name */
    char metric_prefix[66];                   /* "" for core,
    "NAME." for plugins */
    int workload;                             /* the plugin provides the run's
                                                 workload: its quality figures
                                                 are the configuration's */
};

/* Lend `data` to every plugin of the configuration of host `h`. */
void dlb_host_set_data(const struct dlb_host *h,
                       const struct dlb_host_data *data);

/* The models plugins said they will open (model_api's prepare), for the
 * workload to train their reference weights before its backend opens;
 * later prepares are refused. */
unsigned dlb_host_take_prepared(const struct dlb_host *h,
                                const struct dlb_host_prepared **out);

/* Whether a plugin of this process called quality_work_skipped. */
int dlb_host_quality_work_skipped(const struct dlb_host *h);

/* The last error any host of this configuration logged, "" when none. */
const char *dlb_host_last_error(const struct dlb_host *h);

/* The core's log line for a failed model service, under the plugin's name. */
dlb_status dlb_host_fail(const struct dlb_host *h, dlb_status s,
                         const struct dlb_error *err);

void dlb_host_setup(struct dlb_host_priv *h, struct dlb_host_shared *shared,
                    const char *who, uint64_t seed, int quick);

/* ---- device memory (host_device.c) -----------------------------------
 * On a configuration whose backend keeps its buffers in device memory
 * (cuda), h->raw_alloc is the device's allocator (the segments a pool sits
 * over, DESIGN's "cudaMalloc on every request"), the pool serves the
 * backend's buffers, and h->alloc stays host memory outside the pool, since
 * its callers (batch slots) write it from the host. */

/* 1 when the configuration's backend keeps its buffers in device memory. */
int dlb_host_device_memory(const struct dlb_host *h);
/* Raw device memory (NULL when none: a missing device's reason goes to
 * shared->device_why). */
void *dlb_host_device_raw_alloc(const struct dlb_host *h, size_t bytes);
void dlb_host_device_raw_free(const struct dlb_host *h, void *p, size_t bytes);
/* 1 when a pool plugin serves the backend's device buffers; then these
 * take and give its blocks. */
int dlb_host_device_pool(const struct dlb_host *h);
void *dlb_host_pool_alloc(const struct dlb_host *h, size_t bytes);
void dlb_host_pool_free(const struct dlb_host *h, void *p, size_t bytes);
/* Keep `device` (a reference is taken over) for the configuration's
 * record; NULL drops it. */
void dlb_host_set_device(const struct dlb_host *h, json_t *device);

/* ---- page-locked memory (host_pinned.c, ABI 1.4) ---------------------
 * The workload names its backend once open (NULL before closing it);
 * pinned_alloc lends that backend's page-locked memory to plugins. */
void dlb_host_set_backend(const struct dlb_host *h, struct dlb_backend *be);
dlb_status dlb_host_pinned_supported(const struct dlb_host *h, char *reason,
                                     size_t len);
void *dlb_host_pinned_alloc(const struct dlb_host *h, size_t bytes);
void dlb_host_pinned_free(const struct dlb_host *h, void *p, size_t bytes);
/* 1 when [p, p + bytes) lies within one block pinned_alloc lent. */
int dlb_host_pinned_holds(const struct dlb_host *h, const void *p,
                          size_t bytes);

#endif
