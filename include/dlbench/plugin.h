/* dlbench public SDK: the plugin ABI.
 *
 * A plugin is a shared object that exports exactly one symbol,
 * DLB_PLUGIN_ENTRY_NAME, a function returning a pointer to a constant
 * `struct dlb_plugin`. The core checks the ABI version, the struct size, the
 * name and the hooks before it calls anything else. Plugins never link
 * against the core: everything they may use is in `struct dlb_host`, and a
 * plugin that works on the network does so through its one model
 * interface, h->model_api (dlbench/model_api.h).
 *
 * plugins/skeleton/skeleton.c documents every field and hook; read it first. */
#ifndef DLBENCH_PLUGIN_H
#define DLBENCH_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <dlbench/param.h>
#include <dlbench/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A major bump breaks plugins built before it (the loader refuses them,
 * naming both versions); a minor bump only adds fields at the end of
 * structs, which older plugins leave out (struct_size says).
 *
 * History:
 *   1.0-1.7  data services for batch sources, backend_supports, page-
 *        locked memory, measure_only, quality_work_skipped, the plugin's
 *        check hook, precision reset and master_weights, the workload's
 *        own clock; model access through six tables (model_ops,
 *        quant_ops, prune_ops, replica_ops, train_ops, stage_ops).
 *   2.0  the six tables give way to one model interface, h->model_api
 *        (dlbench/model_api.h): open, clone and release models, inspect
 *        nodes and tensors by id, run and step them, slice a range of
 *        nodes into a pipeline stage, one rewrite hook for plugins that
 *        change layers, and extras looked up by name. Every 1.x field of
 *        the other structs is kept, and read for every 2.x plugin.
 *   2.1  model_api grows, at its end: open on a chosen backend and
 *        precision (two fields at the end of struct dlb_model_open, read
 *        only when its struct_size covers them), batch-norm statistics and
 *        optimizer state as tensor ids (tensor_count_all, tensor_desc,
 *        through the same tensor_io), and forward_range / backward_range
 *        over nodes of an opened model. 2.0 plugins load and run as they
 *        did.
 *   2.2  model_api's prepare, at its end: a plugin says from init which
 *        model it will open by name, so that its reference weights are
 *        trained before the measured backend opens, apart from the
 *        measured process. */
#define DLB_PLUGIN_ABI_MAJOR 2
#define DLB_PLUGIN_ABI_MINOR 2

#define DLB_PLUGIN_ENTRY_NAME "dlb_plugin_entry"

/* Capability flags. */
#define DLB_PLUGIN_NEEDS_CUDA     0x1u /* only runs on the cuda backend */
#define DLB_PLUGIN_MULTI_DEVICE   0x2u /* uses several devices */
#define DLB_PLUGIN_MULTI_PROCESS  0x4u /* runs under an MPI launcher */

enum dlb_log_level { DLB_LOG_ERROR, DLB_LOG_WARN, DLB_LOG_INFO,
                    DLB_LOG_DEBUG };

/* Element types of tensors and of the precision policy. */
enum dlb_dtype { DLB_F32, DLB_F16, DLB_BF16, DLB_S8, DLB_U8, DLB_S32,
                DLB_F64 };

/* Layer kinds, as named in model files; the precision policy is per kind. */
enum dlb_layer_kind {
    DLB_LAYER_CONV, DLB_LAYER_MAXPOOL, DLB_LAYER_AVGPOOL, DLB_LAYER_RELU,
    DLB_LAYER_DROPOUT, DLB_LAYER_BATCHNORM, DLB_LAYER_LINEAR,
    DLB_LAYER_FLATTEN,
    DLB_LAYER_LOGSOFTMAX, DLB_LAYER_ADD, DLB_LAYER_CONCAT,
    DLB_LAYER_GLOBAL_AVGPOOL, DLB_LAYER_KIND_COUNT
};

/* Opaque types owned by the core. */
struct dlb_model;    /* the network: layers, weights, gradients */
struct dlb_backend;  /* the device: buffers, operations, timer */
struct dlb_dataset;  /* the training or test set, decoded as uint8 */
struct dlb_model_api; /* the model interface: dlbench/model_api.h */

/* The core's services to plugins. Passed to every hook; valid until fini. */
struct dlb_host {
    uint32_t struct_size;
    uint32_t abi_minor;

    /* Log a line prefixed with the plugin's name. */
    void (*log)(const struct dlb_host *h, enum dlb_log_level lvl,
                const char *fmt, ...) __attribute__((format(printf, 3, 4)));

    /* Record a plugin figure in this configuration's results
     * (e.g. "skipped_steps", "count", 3), named "PLUGIN.name". Later calls
     * overwrite. The plugin that provides the run's workload records its
     * quality figures, "accuracy" (%), "test_loss", "test_images" and
     * "train_loss_last", under those names: they are the configuration's,
     * as the built-in workload's are, and the selection judges them. */
    dlb_status (*metric)(const struct dlb_host *h, const char *name,
                         const char *unit, double value);

    /* Host memory for the workload, through the allocator hook when a
     * plugin provides one, else the system allocator. NULL means out of
     * memory. On a configuration whose backend keeps its buffers in device
     * memory (cuda) the hook serves those buffers instead, and this is
     * malloc: its callers write it from the host. */
    void *(*alloc)(const struct dlb_host *h, size_t bytes);
    void (*free)(const struct dlb_host *h, void *p, size_t bytes);

    /* The device allocator under any pool, for an allocator hook's
     * segments: malloc on the CPU; cudaMalloc (and cudaFree, which waits
     * for the device) on a cuda configuration, memory the host must not
     * touch. */
    void *(*raw_alloc)(const struct dlb_host *h, size_t bytes);
    void (*raw_free)(const struct dlb_host *h, void *p, size_t bytes);

    /* Monotonic time in seconds. */
    double (*now)(const struct dlb_host *h);

    uint64_t seed;            /* the configuration's seed */
    int quick;                /* 1 under --quick: keep work CI-sized */
    const char *backend_name; /* "ref", "cpu", "cuda" */
    struct dlb_backend *backend;
    struct dlb_model *model;  /* NULL until the workload builds it */
    void *core;               /* private to the core */

    /* ---- data services, for batch sources. Thread-safe and pure, so
     * worker threads may call them at once; `ds` is what the batch source's
     * open received (or a view of it). ------------------------------------ */

    /* n images of c x hh x w bytes, labels below `classes`. */
    void (*dataset_shape)(const struct dlb_host *h,
                          const struct dlb_dataset *ds,
                          uint32_t *n, uint32_t *c, uint32_t *hh, uint32_t *w,
                          uint32_t *classes);
    /* The raw bytes, read-only: n x c x hh x w pixels, n labels. */
    void (*dataset_bytes)(const struct dlb_host *h,
                          const struct dlb_dataset *ds,
                          const uint8_t **images, const uint8_t **labels);
    /* A data set with ds's shape and normalisation over other bytes of the
     * same layout (a mapped cache file, say). The bytes stay the caller's;
     * free the view with dataset_view_free before releasing them. */
    dlb_status (*dataset_view)(const struct dlb_host *h,
                               const struct dlb_dataset *ds,
                               const uint8_t *images, const uint8_t *labels,
                               struct dlb_dataset **view);
    void (*dataset_view_free)(const struct dlb_host *h,
                              struct dlb_dataset *view);
    /* Epoch `epoch`'s visiting order into idx[0..n): the baseline loader's,
     * a function of (seed, epoch, shuffle) only. */
    void (*epoch_order)(const struct dlb_host *h, const struct dlb_dataset *ds,
                        uint64_t seed, uint64_t epoch, int shuffle,
                        uint32_t *idx);
    /* Batch `batch_no` of epoch `epoch` from the images indices[0..n):
     * normalised NCHW floats and labels, augmented (flip, crop) with the
     * draws the baseline loader uses for that (seed, epoch, batch_no), so
     * the result is bit-identical to the baseline's batch. DLB_ERR_INTERNAL
     * for an index out of range. */
    dlb_status (*batch_fill)(const struct dlb_host *h,
                             const struct dlb_dataset *ds,
                             const uint32_t *indices, uint32_t n, int augment,
                             uint64_t seed, uint64_t epoch, uint64_t batch_no,
                             float *images, int32_t *labels);
    /* The user's dlbench cache directory ($DLBENCH_CACHE_DIR, else
     * $XDG_CACHE_HOME/dlbench, else ~/.cache/dlbench), not created.
     * DLB_ERR_INPUT when none is set or it does not fit in len. */
    dlb_status (*cache_dir)(const struct dlb_host *h, char *buf, size_t len);

    /* ---- backend capabilities, for probe. ---------------------------
     * Can the configuration's backend compute in `dtype`? DLB_OK, or
     * DLB_ERR_UNSUPPORTED with the backend's reason ("no AVX512_FP16: ...").
     * F32 is always supported. probe runs before the workload opens the
     * backend, so this opens and closes a short-lived handle of
     * backend_name: call it from probe or init, never from measured hooks. */
    dlb_status (*backend_supports)(const struct dlb_host *h,
                                   enum dlb_dtype dtype, char *reason,
                                   size_t len);

    /* ---- model access, for transforms and step executors: the one
     * model interface (dlbench/model_api.h). ---------------------------- */
    const struct dlb_model_api *model_api;

    /* ---- page-locked memory, for batch sources. --------------------
     * DLB_OK when the configuration's backend lends page-locked host
     * memory for its uploads (cuda), else DLB_ERR_UNSUPPORTED and why (ref
     * and cpu keep their buffers in host memory: nothing is copied).
     * Answered without opening the backend, so probe may call it. */
    dlb_status (*pinned_supported)(const struct dlb_host *h, char *reason,
                                   size_t len);
    /* Page-locked host memory of the workload's backend (cudaHostAlloc);
     * NULL when its backend has none, is not open yet, or has no more.
     * A batch whose images and labels lie in it is uploaded by the core
     * on the backend's copy stream one step ahead, beside the step
     * before; the copy is done before the core calls next again, so the
     * contract of next (buffers valid until the next call) is unchanged.
     * pinned_free takes the same byte count. Not thread-safe: call them
     * from open and close, not from worker threads. */
    void *(*pinned_alloc)(const struct dlb_host *h, size_t bytes);
    void (*pinned_free)(const struct dlb_host *h, void *p, size_t bytes);

    /* ---- measure_only ---------------------------------------------------
     * 1 when only this configuration's speed figures are wanted (the
     * suite key measure_only; search = halving's screening rounds): work
     * that serves only quality figures, such as fine-tuning and accuracy
     * evaluations, may be skipped. Work that changes what is measured
     * (pruning, calibration) must still be done. */
    int measure_only;

    /* ---- quality_work_skipped -------------------------------------------
     * Under measure_only, a plugin that skipped work which changes the
     * model's quality, not only its measurement (prune's fine-tuning),
     * calls this: the core then scores no accuracy for the run (a search's
     * inference screening would otherwise judge a model the configuration
     * never measures at its full budget). */
    void (*quality_work_skipped)(const struct dlb_host *h);
};

/* Whether host `h` (possibly from an older core) has entry `field`. */
#define DLB_HOST_HAS(h, field)                                              \
    ((h)->struct_size >= offsetof(struct dlb_host, field) + sizeof((h)->field))

/* ---- Hook points (doc/plugin-guide.md's table). Each is optional; NULL
 * means the core's baseline. `state` is what init returned. ------------ */

struct dlb_alloc_stats {
    uint64_t allocated_bytes, allocated_peak;
    uint64_t reserved_bytes, reserved_peak;
    uint64_t active_blocks;
    uint64_t system_allocs, system_frees, cache_hits, oom_retries;
};

struct dlb_allocator_hooks {
    void *(*alloc)(void *state, const struct dlb_host *h, size_t bytes);
    void (*free)(void *state, const struct dlb_host *h, void *p, size_t bytes);
    void (*stats)(void *state, struct dlb_alloc_stats *out);
    void (*trim)(void *state, const struct dlb_host *h);
    void (*step_end)(void *state, const struct dlb_host *h); /* optional */
};

/* One batch: images normalised to float NCHW (n x c x h x w), labels. */
struct dlb_batch {
    float *images;
    int32_t *labels;
    uint32_t n, c, h, w;
};

struct dlb_batch_spec {
    uint32_t batch;
    int shuffle, augment, drop_last;
    uint64_t seed;
};

struct dlb_batch_source_hooks {
    dlb_status (*open)(void *state, const struct dlb_host *h,
                       const struct dlb_dataset *data,
                       const struct dlb_batch_spec *spec, void **src);
    /* Fill `out` with the next batch; buffers stay valid until the next call. */
    dlb_status (*next)(void *src, struct dlb_batch *out);
    void (*close)(void *src);
};

struct dlb_precision_hooks {
    /* The element type a layer kind computes in. */
    enum dlb_dtype (*compute_type)(void *state, enum dlb_layer_kind kind);
    /* The factor the loss is multiplied by before backward (1 = none). */
    float (*loss_scale)(void *state);
    /* After backward: were any gradients inf/NaN? Returns 1 when the
     * optimizer step must be applied, 0 when it must be skipped. */
    int (*after_backward)(void *state, int found_nonfinite);
    /* Optional: back to the initial state (scale, counters). The
     * core calls it before each training run from the seed, so the run
     * that gives the accuracy figure does not depend on how many steps
     * were measured before it. */
    void (*reset)(void *state);
    /* Optional: 1 (the default when NULL) keeps fp32 master
     * weights, cast to the compute type once per step; 0 rounds the
     * weights to the compute type after every update, as training without
     * a master copy does. */
    int (*master_weights)(void *state);
};

struct dlb_transform_hooks {
    /* Called after training, before evaluation and inference. */
    dlb_status (*apply)(void *state, const struct dlb_host *h,
                        struct dlb_model *model);
};

struct dlb_executor_hooks {
    /* Run one training step over `batch` on however many replicas. */
    dlb_status (*train_step)(void *state, const struct dlb_host *h,
                             struct dlb_model *model,
                             const struct dlb_batch *batch);
};

/* What a workload tells the core about one step. */
struct dlb_workload_info {
    double samples_per_step; /* images (or items) processed by one step */
    double flops_per_step;   /* counted from shapes; 0 if unknown */
};

/* A workload is what the harness measures: the reference CNN is the core's
 * built-in one; plugins may provide others (tests/plugins does). */
struct dlb_workload_hooks {
    dlb_status (*setup)(void *state, const struct dlb_host *h,
                        struct dlb_workload_info *info, void **wl);
    dlb_status (*step)(void *wl);       /* one measured step */
    dlb_status (*evaluate)(void *wl);   /* optional: quality figures */
    void (*teardown)(void *wl);
    /* Optional: the workload's own clock in seconds, for a
     * workload that simulates its step times instead of spending them (a
     * test workload whose figures must not depend on the machine or on
     * its load). The core reads it once after setup: a value >= 0 makes
     * it the clock of the whole measurement (warm-up, samples, time cap)
     * in place of the monotonic clock, and the record says so
     * (measure.clock = "workload"); a negative value keeps the monotonic
     * clock for this configuration. Each step must then advance it by the
     * duration the step simulates; one that leaves it where it was fails
     * the configuration. */
    double (*now)(void *wl);
};

/* What a plugin's check hook sees of one configuration: its
 * model file, parsed, and its batch. */
struct dlb_config_view {
    uint32_t struct_size;
    const char *model_path;        /* the model file */
    uint32_t batch;                /* the suite's batch: images per step */
    unsigned n_layers;
    const char *const *layer_names; /* section names, in order */
    const enum dlb_layer_kind *layer_kinds;
    /* DLB_OK when model file `name` exists and parses, found as the
     * suite's model key is (a second model a plugin opens, such as the
     * distill teacher); else `reason` says where it looked. Check
     * struct_size before calling. */
    dlb_status (*find_model)(const struct dlb_config_view *cv,
                             const char *name, char *reason, size_t len);
    /* Per layer k: n_layers when a cut before layer k (a pipeline stage
     * beginning there) hands exactly one tensor on, the output of layer
     * k - 1; else the first layer at or after k that reads an output from
     * before k - 1 (a residual block's add reading its shortcut, or a
     * layer reading the network's input). Check struct_size first. */
    const uint32_t *cut_reader;
};

/* The descriptor. Unused hook pointers are NULL. */
struct dlb_plugin {
    uint16_t abi_major;     /* DLB_PLUGIN_ABI_MAJOR */
    uint16_t abi_minor;     /* DLB_PLUGIN_ABI_MINOR */
    uint32_t struct_size;   /* sizeof(struct dlb_plugin) */
    const char *name;       /* must equal the file name without .so */
    const char *version;
    const char *summary;    /* one line */
    uint32_t caps;          /* DLB_PLUGIN_NEEDS_CUDA ... */

    const struct dlb_param_def *params;
    unsigned n_params;

    /* Can the plugin run this configuration here? On DLB_ERR_UNSUPPORTED,
     * `reason` says why and the configuration is skipped. Optional. */
    dlb_status (*probe)(const struct dlb_host *h, const struct dlb_params *p,
                        char *reason, size_t reason_len);
    /* Required when any hook point is set. */
    dlb_status (*init)(const struct dlb_host *h, const struct dlb_params *p,
                       void **state);
    void (*fini)(void *state);

    const struct dlb_allocator_hooks *allocator;
    const struct dlb_batch_source_hooks *batch_source;
    const struct dlb_precision_hooks *precision;
    const struct dlb_transform_hooks *transform;
    const struct dlb_executor_hooks *executor;
    const struct dlb_workload_hooks *workload;

    /* Optional: record figures through h->metric at the end of a run,
     * after the measurement and the peak_rss reading: work done here (a
     * measurement of the plugin's own) is no part of either. */
    dlb_status (*metrics)(void *state, const struct dlb_host *h);

    /* Optional: are the settings `p` valid for the model and
     * batch of configuration `cv` (the built-in cnn workload)? Called in
     * the parent when the suite is loaded, before anything runs, for each
     * configuration that enables the plugin; it may not use a host. On
     * DLB_ERR_INPUT, `reason` says what is wrong and *param is the index
     * of the setting at fault (-1: none in particular): the run stops with
     * the suite file and that setting's line, exit status 2. */
    dlb_status (*check)(const struct dlb_params *p,
                        const struct dlb_config_view *cv, int *param,
                        char *reason, size_t reason_len);
};

typedef const struct dlb_plugin *(*dlb_plugin_entry_fn)(void);

/* Declare the entry point in a plugin:
 *   DLB_PLUGIN_DEFINE(my_descriptor)  */
#define DLB_PLUGIN_DEFINE(desc)                                             \
    __attribute__((visibility("default"))) const struct dlb_plugin *        \
    dlb_plugin_entry(void);                                                 \
    const struct dlb_plugin *dlb_plugin_entry(void) { return &(desc); }

#ifdef __cplusplus
}
#endif
#endif
