/* skeleton: the documented example plugin. Copy it to start a new one.
 *
 * This file is the reference for writing a dlbench plugin. It documents every
 * field of the descriptor and every hook, says which are REQUIRED and which
 * are OPTIONAL, and carries small working code for each. It loads and runs:
 * its parameters, probe, init, fini and metrics are live; its hook-point
 * examples are compiled (so they keep matching the ABI) but are not wired
 * into the descriptor, so enabling `skeleton` in a suite changes nothing
 * that is measured. doc/plugin-guide.md tells the same story in prose.
 *
 * Build, in the dlbench tree: add plugins/skeleton to the build like the
 * other plugins (Makefile.am), which links it as a libtool module that
 * exports only dlb_plugin_entry.
 *
 * Build, out of tree, against an installed dlbench:
 *
 *     cc -shared -fPIC skeleton.c -o skeleton.so \
 *        $(pkg-config --cflags --libs dlbench-plugin)
 *
 * Try it:
 *
 *     dlbench plugin-help skeleton --plugin-dir .
 *
 * Rules every plugin follows:
 *   - Include only <dlbench/...> headers. Never include the core's private
 *     headers and never call a core function: everything the core offers is
 *     in `struct dlb_host`, passed to each hook. (A plugin that links
 *     against core symbols breaks with every core release.)
 *   - Export exactly one symbol, dlb_plugin_entry, made by DLB_PLUGIN_DEFINE.
 *     Everything else is `static`.
 *   - The file name is the plugin's name plus ".so"; the loader looks the
 *     plugin up by exact file name and checks that .name matches.
 *   - Return a dlb_status from every fallible hook; never exit() or abort():
 *     a configuration that fails must not take the whole run with it.
 *   - Hooks may be called in a fresh child process for every configuration,
 *     so keep no state in globals: put it in the state init returns.
 */
#include <dlbench/plugin.h>
#include <dlbench/model_api.h> /* only for plugins that touch the model */

#include <stdlib.h>
#include <string.h>
#include <stdio.h>

/* ---- Parameters ---------------------------------------------------------
 *
 * One table describes every key the plugin accepts in a suite's [skeleton]
 * section or as a sweep axis `skeleton.KEY`. dlbench uses it to validate
 * suites ("unknown key 'dept' (did you mean 'depth'?)"), fill defaults,
 * expand sweep ranges and print `dlbench plugin-help skeleton`. The plugin
 * never parses text itself: hooks receive parsed values.
 *
 * Fields of struct dlb_param_def:
 *   name    REQUIRED. [a-z0-9_.]+, unique within the table. "enable" is
 *           reserved: dlbench adds an `enable` bool to every plugin.
 *   type    REQUIRED. INT, FLOAT, BOOL, ENUM, SIZE (bytes, K/M/G suffixes),
 *           STRING or TIME (seconds, ns/us/ms/s/min suffixes).
 *   def     REQUIRED. The default, written as a user would write it in a
 *           suite; it must parse, which the loader checks.
 *   flags   OPTIONAL. DLB_PARAM_HAS_MIN / HAS_MAX make min / max binding;
 *           DLB_PARAM_NO_SWEEP forbids using the key as a sweep axis.
 *   min,max OPTIONAL. Bounds for INT, FLOAT, SIZE and TIME (with the flags).
 *   choices REQUIRED for ENUM: a NULL-terminated list of allowed values.
 *   unit    OPTIONAL. Shown in help and tables ("MiB", "steps"); NULL if none.
 *   help    REQUIRED. One line saying what the key means.
 */
static const char *const skeleton_modes[] = { "fast", "careful", NULL };

/* Indices into the table: hooks read p->values[k] for the k-th entry. */
enum { SK_DEPTH, SK_MODE, SK_VERBOSE, SK_N_PARAMS };

static const struct dlb_param_def skeleton_params[SK_N_PARAMS] = {
    [SK_DEPTH] = {
        .name = "depth", .type = DLB_PARAM_INT, .def = "4",
        .flags = DLB_PARAM_HAS_MIN | DLB_PARAM_HAS_MAX, .min = 1, .max = 64,
        .unit = "levels",
        .help = "how deep the example pretends to work (an int with bounds)",
    },
    [SK_MODE] = {
        .name = "mode", .type = DLB_PARAM_ENUM, .def = "fast",
        .choices = skeleton_modes,
        .help = "fast or careful (an enum; careful is refused on cuda)",
    },
    [SK_VERBOSE] = {
        .name = "verbose", .type = DLB_PARAM_BOOL, .def = "off",
        /* Sweeping over a logging switch measures nothing. */
        .flags = DLB_PARAM_NO_SWEEP,
        .help = "log what each hook does (a bool that cannot be swept)",
    },
};

/* ---- State --------------------------------------------------------------
 *
 * Whatever init returns through `*state` is handed back to fini, metrics and
 * every hook-point function. One configuration, one state. */
struct skeleton_state {
    int64_t depth;
    int careful;   /* mode == careful */
    int verbose;
    /* counters for the allocator example */
    uint64_t allocs, frees, bytes_now, bytes_peak;
};

/* ---- probe: OPTIONAL ----------------------------------------------------
 *
 * Called before init, in the child that will run the configuration, with the
 * configuration's parameters. Return DLB_OK when the plugin can run here.
 * Return DLB_ERR_UNSUPPORTED, with a one-line `reason` (always
 * NUL-terminated, at most reason_len bytes), when this device or build
 * cannot: the configuration is then reported as *skipped* with that reason,
 * never as failed. Check capabilities here rather than failing later.
 * Leave it NULL when the plugin runs everywhere. */
static dlb_status skeleton_probe(const struct dlb_host *h,
                                 const struct dlb_params *p, char *reason,
                                 size_t reason_len)
{
    if (!p || p->count < SK_N_PARAMS)
        return DLB_ERR_INTERNAL;
    int careful = p->values[SK_MODE].i == 1;
    if (careful && h->backend_name && strcmp(h->backend_name, "cuda") == 0) {
        snprintf(reason, reason_len,
                 "skeleton: mode=careful is only implemented for the ref and "
                 "cpu backends");
        return DLB_ERR_UNSUPPORTED;
    }
    return DLB_OK;
}

/* ---- init: REQUIRED when any hook point is set, else OPTIONAL -------------
 *
 * Turn the parameters into a state. `p` lists one value per table entry in
 * table order (defaults already applied; INT/BOOL/SIZE in .i, FLOAT/TIME in
 * .f, ENUM's index in .i and its text in .s). Do expensive preparation here,
 * not in the measured hooks. The pointers in `h` and `p` stay valid until
 * fini; copy what you need from `p` anyway, it is cheaper to read. Plain
 * malloc is right for the plugin's own bookkeeping: h->alloc is for the
 * workload's memory. On failure return a status and log why. */
static dlb_status skeleton_init(const struct dlb_host *h,
                                const struct dlb_params *p, void **state)
{
    if (!p || p->count < SK_N_PARAMS)
        return DLB_ERR_INTERNAL;
    struct skeleton_state *s = calloc(1, sizeof *s);
    if (!s)
        return DLB_ERR_NOMEM;
    s->depth = p->values[SK_DEPTH].i;
    s->careful = p->values[SK_MODE].i == 1;
    s->verbose = p->values[SK_VERBOSE].i != 0;
    if (s->verbose)
        h->log(h, DLB_LOG_INFO, "init: depth=%lld mode=%s on backend %s",
               (long long)s->depth, p->values[SK_MODE].s,
               h->backend_name ? h->backend_name : "?");
    *state = s;
    return DLB_OK;
}

/* ---- fini: OPTIONAL (but needed whenever init allocates) -----------------
 *
 * Release the state. Called once after the configuration ends, also after a
 * failure; never called when init failed. */
static void skeleton_fini(void *state)
{
    free(state);
}

/* ---- metrics: OPTIONAL --------------------------------------------------
 *
 * Called at the end of a run: record the plugin's figures with h->metric
 * (name, unit, value). They appear in results.json, results.csv and the
 * report next to the core's figures. Real plugins report what explains their
 * effect: a pool's hit rate, a scaler's skipped steps, a loader's stall
 * share. The skeleton reports its setting so you can watch a figure arrive. */
static dlb_status skeleton_metrics(void *state, const struct dlb_host *h)
{
    const struct skeleton_state *s = state;
    dlb_status st = h->metric(h, "depth", "count", (double)s->depth);
    if (st != DLB_OK)
        return st;
    if (s->allocs)
        st = h->metric(h, "alloc_peak", "bytes", (double)s->bytes_peak);
    return st;
}

/* ---- Hook points --------------------------------------------------------
 *
 * Each hook point replaces one of the core's baselines (the table of
 * doc/plugin-guide.md).
 * Every hook point is OPTIONAL; a NULL pointer in the descriptor means the
 * baseline. A plugin that sets any hook point must have init. Within a hook
 * point, some functions are REQUIRED (the loader refuses the plugin without
 * them and says which) and the rest OPTIONAL.
 *
 * The examples below are real code but marked unused and left out of the
 * descriptor, so the skeleton never changes a measurement. To provide a
 * hook point, set the descriptor's field to its struct and drop
 * `__attribute__((unused))`. */

/* Allocator. Baseline: the system allocator (malloc / cudaMalloc) on every
 * request. Provided by: mempool. The core's training step allocates its
 * activations and workspaces through it on every step, as eager frameworks
 * do, so a caching pool shows its real effect.
 *   alloc     REQUIRED. `bytes` of device memory, or NULL when exhausted
 *             (the configuration then ends as oom). Get memory from the
 *             device with h->raw_alloc, never from h->alloc (that is you).
 *             On a cuda configuration that is GPU memory: never touch it
 *             from the host.
 *   free      REQUIRED. Gets back the pointer and the size it was asked for.
 *   stats     OPTIONAL. Fill `out`; the core reports it as memory figures.
 *   trim      OPTIONAL. Give cached memory back to the device.
 *   step_end  OPTIONAL. Called after every training step. */
static void *sk_alloc(void *state, const struct dlb_host *h, size_t bytes)
{
    struct skeleton_state *s = state;
    void *p = h->raw_alloc(h, bytes);
    if (p) {
        s->allocs++;
        s->bytes_now += bytes;
        if (s->bytes_now > s->bytes_peak)
            s->bytes_peak = s->bytes_now;
    }
    return p;
}

static void sk_free(void *state, const struct dlb_host *h, void *p,
                    size_t bytes)
{
    struct skeleton_state *s = state;
    if (!p)
        return;
    s->frees++;
    s->bytes_now -= bytes;
    h->raw_free(h, p, bytes);
}

static void sk_alloc_stats(void *state, struct dlb_alloc_stats *out)
{
    const struct skeleton_state *s = state;
    memset(out, 0, sizeof *out);
    /* A pass-through holds nothing in reserve: reserved == allocated. */
    out->allocated_bytes = out->reserved_bytes = s->bytes_now;
    out->allocated_peak = out->reserved_peak = s->bytes_peak;
    out->active_blocks = s->allocs - s->frees;
    out->system_allocs = s->allocs;
    out->system_frees = s->frees;
}

static const struct dlb_allocator_hooks skeleton_allocator
    __attribute__((unused)) = {
    .alloc = sk_alloc,            /* REQUIRED */
    .free = sk_free,              /* REQUIRED */
    .stats = sk_alloc_stats,      /* OPTIONAL */
    .trim = NULL,                 /* OPTIONAL: nothing cached to trim */
    .step_end = NULL,             /* OPTIONAL */
};

/* Batch source. Baseline: synchronous load and augmentation inside the
 * step. Provided by: dataloader (prefetching on worker threads).
 *   open   REQUIRED. Start delivering batches of `data` as `spec` says
 *          (batch size, shuffle, augment, drop_last, seed); *src is the
 *          source's own handle.
 *   next   REQUIRED. Fill `out` with the next batch; its buffers stay valid
 *          until the next call. Blocking here is what the core measures as
 *          loader stall.
 *   close  REQUIRED. Stop workers and release everything.
 * The example delivers blank synthetic batches of 1x28x28 images. */
struct sk_source {
    const struct dlb_host *h;
    struct dlb_batch batch;
    size_t image_bytes, label_bytes;
};

static dlb_status sk_source_open(void *state, const struct dlb_host *h,
                                 const struct dlb_dataset *data,
                                 const struct dlb_batch_spec *spec, void **src)
{
    (void)state;
    (void)data; /* a real source decodes this dataset's images */
    struct sk_source *s = calloc(1, sizeof *s);
    if (!s)
        return DLB_ERR_NOMEM;
    s->h = h;
    s->batch.n = spec->batch;
    s->batch.c = 1;
    s->batch.h = s->batch.w = 28;
    s->image_bytes = (size_t)spec->batch * 28 * 28 * sizeof(float);
    s->label_bytes = (size_t)spec->batch * sizeof(int32_t);
    s->batch.images = h->alloc(h, s->image_bytes);
    s->batch.labels = h->alloc(h, s->label_bytes);
    if (!s->batch.images || !s->batch.labels) {
        h->free(h, s->batch.images, s->image_bytes);
        h->free(h, s->batch.labels, s->label_bytes);
        free(s);
        return DLB_ERR_NOMEM;
    }
    *src = s;
    return DLB_OK;
}

static dlb_status sk_source_next(void *src, struct dlb_batch *out)
{
    struct sk_source *s = src;
    memset(s->batch.images, 0, s->image_bytes);
    memset(s->batch.labels, 0, s->label_bytes);
    *out = s->batch;
    return DLB_OK;
}

static void sk_source_close(void *src)
{
    struct sk_source *s = src;
    if (!s)
        return;
    s->h->free(s->h, s->batch.images, s->image_bytes);
    s->h->free(s->h, s->batch.labels, s->label_bytes);
    free(s);
}

static const struct dlb_batch_source_hooks skeleton_batch_source
    __attribute__((unused)) = {
    .open = sk_source_open,   /* REQUIRED */
    .next = sk_source_next,   /* REQUIRED */
    .close = sk_source_close, /* REQUIRED */
};

/* Precision policy and gradient scaler. Baseline: fp32 everywhere.
 * Provided by: amp.
 *   compute_type    REQUIRED. The element type each layer kind computes in.
 *                   Ask for a type only in probe-checked configurations: a
 *                   type the device lacks must be a skip, not a fallback.
 *   loss_scale      OPTIONAL. Factor applied to the loss before backward;
 *                   NULL means 1.
 *   after_backward  OPTIONAL. Told whether any gradient was inf/NaN; return
 *                   1 to apply the optimizer step, 0 to skip it (a dynamic
 *                   scaler skips, halves its scale and counts the skip).
 * The example is the baseline written out: fp32, scale 1, never skip. */
static enum dlb_dtype sk_compute_type(void *state, enum dlb_layer_kind kind)
{
    (void)state;
    (void)kind;
    return DLB_F32;
}

static float sk_loss_scale(void *state)
{
    (void)state;
    return 1.0f;
}

static int sk_after_backward(void *state, int found_nonfinite)
{
    (void)state;
    (void)found_nonfinite; /* fp32 has no scale to back off */
    return 1;
}

static const struct dlb_precision_hooks skeleton_precision
    __attribute__((unused)) = {
    .compute_type = sk_compute_type,     /* REQUIRED */
    .loss_scale = sk_loss_scale,         /* OPTIONAL */
    .after_backward = sk_after_backward, /* OPTIONAL */
};

/* Model transform. Baseline: none. Provided by: quant, prune.
 *   apply  REQUIRED. Called once after training, before evaluation and
 *          inference; change the model's weights or layers in place. The
 *          evaluation that follows measures the accuracy it costs.
 * The model is opaque: read and change it through h->model_api, the one
 * model interface (<dlbench/model_api.h>, ABI 2.1): node_count and
 * node_info walk the layers, tensor_io reads or writes a tensor by the id
 * node_info gives, and rewrite is the one hook that changes how a layer
 * computes (int8, a weight mask, fewer units, a sparse kernel). From 2.1
 * the ids go on past tensor_count to the batch-norm running statistics
 * and the optimizer state: tensor_count_all counts them, tensor_desc says
 * what each is (kind, shape, element type), and tensor_io reads them as it
 * reads weights. Test a 2.1 entry with DLB_MODEL_API_HAS: a 2.1 plugin may
 * meet a 2.0 core. What only one plugin needs is an extra:
 * h->model_api->extra(h, "NAME") gives its function, or NULL; look it up
 * in probe and skip without it. This one only reads: it counts the zero
 * weights of the conv layers and the batch-norm statistics. */
static dlb_status sk_transform_apply(void *state, const struct dlb_host *h,
                                     struct dlb_model *model)
{
    const struct skeleton_state *s = state;
    const struct dlb_model_api *api = h->model_api;
    size_t zeros = 0;
    dlb_status st = DLB_OK;
    for (unsigned i = 0; st == DLB_OK && i < api->node_count(h, model); i++) {
        struct dlb_layer_info li;
        if ((st = api->node_info(h, model, i, &li)) != DLB_OK ||
            li.kind != DLB_LAYER_CONV || li.weight_id < 0)
            continue;
        float *w = malloc(li.weight_count * sizeof *w + 1);
        st = w ? api->tensor_io(h, model, (unsigned)li.weight_id,
                                DLB_TENSOR_VALUE, w, li.weight_count, 0)
               : DLB_ERR_NOMEM;
        for (size_t k = 0; st == DLB_OK && k < li.weight_count; k++)
            zeros += w[k] == 0.0f;
        free(w);
    }
    size_t stats = 0;
    unsigned all = DLB_MODEL_API_HAS(api, tensor_desc)
                       ? api->tensor_count_all(h, model) : 0;
    for (unsigned id = api->tensor_count(h, model); st == DLB_OK && id < all;
         id++) {
        struct dlb_tensor_desc d = {.struct_size = sizeof d};
        st = api->tensor_desc(h, model, id, &d);
        if (st == DLB_OK && d.kind == DLB_TENSOR_KIND_STATISTICS)
            stats += d.count;
    }
    if (st == DLB_OK && s->verbose)
        h->log(h, DLB_LOG_INFO, "transform: %zu conv weights are zero, %zu "
               "batch-norm statistics; leaving the model unchanged", zeros,
               stats);
    return st;
}

static const struct dlb_transform_hooks skeleton_transform
    __attribute__((unused)) = {
    .apply = sk_transform_apply, /* REQUIRED */
};

/* Step executor. Baseline: one replica. Provided by: dp, mp, distill.
 *   train_step  REQUIRED. Run one whole training step on `batch`: split it
 *               over the replicas, forward and backward on each, all-reduce
 *               the gradients, apply the update. The core times the call.
 * A real executor drives the model through h->model_api: dlb_model_clone
 * (or open with a backend and precision of its own, 2.1) for a replica per
 * worker, forward_backward on a shard, the gradients by tensor id
 * (tensor_map, tensor_io), state_io to keep replicas in step, step for the
 * update; slice for a pipeline stage of nodes [first, last) with
 * micro-batches, or (2.1) forward_range / backward_range to run nodes
 * [first, last) of the model itself. The skeleton trains as one replica,
 * as two ranges where the 2.1 entries exist: nodes [0, cut) hand their
 * output to [cut, n), whose backward hands the gradient at the cut back.
 * The same step as forward_backward (to fp32 rounding); a plugin would put
 * its own work at the cut (a teacher's features, a transfer). */
static dlb_status sk_train_step(void *state, const struct dlb_host *h,
                                struct dlb_model *model,
                                const struct dlb_batch *batch)
{
    const struct dlb_model_api *api = h->model_api;
    unsigned n = api->node_count(h, model), cut = n - 1;
    size_t per = 0;
    dlb_status s;
    (void)state;
    if (!DLB_MODEL_API_HAS(api, backward_range))
        return (s = api->forward_backward(h, model, batch->images,
                                          batch->labels, batch->n, 1.0f,
                                          NULL, NULL, NULL))
                   ? s : api->step(h, model);
    /* The last node is the log-softmax: one tensor crosses before it. */
    if ((s = api->act_count(h, model, cut, &per)) != DLB_OK)
        return s;
    float *act = malloc(2 * (size_t)batch->n * per * sizeof *act);
    if (!act)
        return DLB_ERR_NOMEM;
    float *grad = act + (size_t)batch->n * per;
    if ((s = api->forward_range(h, model, 0, cut, batch->n, batch->images,
                                NULL, act, NULL)) == DLB_OK &&
        (s = api->forward_range(h, model, cut, n, batch->n, act,
                                batch->labels, NULL, NULL)) == DLB_OK &&
        (s = api->backward_range(h, model, cut, n, 1.0f, NULL,
                                 grad)) == DLB_OK &&
        (s = api->backward_range(h, model, 0, cut, 1.0f, grad,
                                 NULL)) == DLB_OK)
        s = api->step(h, model);
    free(act);
    return s;
}

static const struct dlb_executor_hooks skeleton_executor
    __attribute__((unused)) = {
    .train_step = sk_train_step, /* REQUIRED */
};

/* Workload. Baseline: the core's reference CNN. A workload is the thing
 * measured; a plugin may bring its own (tests/plugins/testload.c does).
 *   setup     REQUIRED. Build the workload (*wl is its handle) and say in
 *             `info` how many samples one step processes (and its flops, if
 *             known) so throughput can be computed. Not timed.
 *   step      REQUIRED. One measured step. The core times it, repeats it
 *             through warm-up and sampling, so it must do the same work
 *             every time.
 *   evaluate  OPTIONAL. After measuring: record quality figures (accuracy,
 *             a checksum) with h->metric.
 *   teardown  REQUIRED. Release everything setup made.
 *   now       OPTIONAL. Only for a workload that simulates its
 *             step times instead of spending them (a test workload):
 *             its own clock in seconds, advanced by each step; read >= 0
 *             after setup, the core measures on it instead of the
 *             monotonic clock. tests/plugins/testload.c has one. */
struct sk_workload {
    const struct dlb_host *h;
    float *buf;
    size_t n;
    double sum;
};

static dlb_status sk_wl_setup(void *state, const struct dlb_host *h,
                              struct dlb_workload_info *info, void **wl)
{
    const struct skeleton_state *s = state;
    struct sk_workload *w = calloc(1, sizeof *w);
    if (!w)
        return DLB_ERR_NOMEM;
    w->h = h;
    w->n = (size_t)s->depth * 1024;
    w->buf = h->alloc(h, w->n * sizeof *w->buf);
    if (!w->buf) {
        free(w);
        return DLB_ERR_NOMEM;
    }
    for (size_t i = 0; i < w->n; i++)
        w->buf[i] = (float)i;
    info->samples_per_step = (double)w->n;
    info->flops_per_step = (double)w->n;
    *wl = w;
    return DLB_OK;
}

static dlb_status sk_wl_step(void *wl)
{
    struct sk_workload *w = wl;
    double sum = 0;
    for (size_t i = 0; i < w->n; i++)
        sum += (double)w->buf[i];
    w->sum = sum; /* kept, so the loop has an observable result */
    return DLB_OK;
}

static dlb_status sk_wl_evaluate(void *wl)
{
    struct sk_workload *w = wl;
    return w->h->metric(w->h, "sum", "count", w->sum);
}

static void sk_wl_teardown(void *wl)
{
    struct sk_workload *w = wl;
    if (!w)
        return;
    w->h->free(w->h, w->buf, w->n * sizeof *w->buf);
    free(w);
}

static const struct dlb_workload_hooks skeleton_workload
    __attribute__((unused)) = {
    .setup = sk_wl_setup,       /* REQUIRED */
    .step = sk_wl_step,         /* REQUIRED */
    .evaluate = sk_wl_evaluate, /* OPTIONAL */
    .teardown = sk_wl_teardown, /* REQUIRED */
};

/* ---- The descriptor -----------------------------------------------------
 *
 * A constant: dlbench reads it and never writes it. Unset fields are 0/NULL,
 * which the designated initialisers give for free. */
static const struct dlb_plugin skeleton_plugin = {
    /* REQUIRED, always exactly these three lines. The loader refuses a
     * different major version (rebuild against the installed headers) and a
     * struct_size smaller than the ABI's descriptor. A newer core reads only
     * the fields an older plugin's struct_size covers. */
    .abi_major = DLB_PLUGIN_ABI_MAJOR,
    .abi_minor = DLB_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(struct dlb_plugin),

    /* REQUIRED. Equal to the file name without ".so". */
    .name = "skeleton",
    /* REQUIRED. The plugin's own version; recorded in results. */
    .version = "1.0",
    /* REQUIRED. One line for `dlbench plugins` and plugin-help. */
    .summary = "documented example plugin: changes nothing",
    /* OPTIONAL. DLB_PLUGIN_NEEDS_CUDA, DLB_PLUGIN_MULTI_DEVICE,
     * DLB_PLUGIN_MULTI_PROCESS: the planner uses them to skip
     * configurations the machine cannot run, before starting a child. */
    .caps = 0,

    /* OPTIONAL. The parameter table and its length (NULL, 0 when none). */
    .params = skeleton_params,
    .n_params = SK_N_PARAMS,

    .probe = skeleton_probe,     /* OPTIONAL */
    .init = skeleton_init,       /* REQUIRED when a hook point is set */
    .fini = skeleton_fini,       /* OPTIONAL */

    /* Hook points, all OPTIONAL; NULL keeps the baseline. To provide one:
     *     .allocator = &skeleton_allocator,
     *     .batch_source = &skeleton_batch_source,
     *     .precision = &skeleton_precision,
     *     .transform = &skeleton_transform,
     *     .executor = &skeleton_executor,
     *     .workload = &skeleton_workload,
     */
    .allocator = NULL,
    .batch_source = NULL,
    .precision = NULL,
    .transform = NULL,
    .executor = NULL,
    .workload = NULL,

    .metrics = skeleton_metrics, /* OPTIONAL */
};

/* REQUIRED: defines and exports dlb_plugin_entry, which returns the
 * descriptor. No semicolon after it: the macro is a whole definition. */
DLB_PLUGIN_DEFINE(skeleton_plugin)
