/* The built-in workload "cnn": the reference CNN of suites/models/ trained
 * (mode = train) or run for inference (mode = infer) on a backend, with the
 * hook points (doc/plugin-guide.md's table) wired in.
 *
 * A measured training step trains on the next batch and waits for the
 * device; the figures of quality come from evaluate, which trains a fresh
 * model for exactly train_steps steps from the seed, so every
 * configuration of a suite gets the same budget, seed and data order. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "results/device_record.h"
#include "child/host.h"
#include "data/augment.h"
#include "data/folder.h"
#include "model/model_find.h"
#include "model/onnx_write.h"
#include "train/ref_model.h"
#include "train/ref_weights.h"
#include "train/train_run.h"
#include "plan/session.h"
#include "child/workloads.h"
#include "child/dataset_record.h"
#include "child/train_figures.h"
#include "util/hexbits.h"

/* Test-set batch for evaluation: large enough to amortise per-batch work,
 * small enough for vgg-small's activations. Inference has no batch
 * dependence (batchnorm uses running statistics), so it changes nothing. */
#define CNN_EVAL_BATCH 500u
/* Under --quick the accuracy is taken on the first images of the test set. */
#define CNN_QUICK_TEST_IMAGES 2000u
/* mode = infer with train_steps = 0: one epoch of Fashion-MNIST at 64. */
#define CNN_DEFAULT_REF_STEPS 937u

struct cnn {
    struct dlb_workload_ctx *ctx;
    const struct dlb_core_settings *set; /* the configuration's core keys */
    const struct dlb_host *host;
    int infer;
    const char *model_key, *data_mode, *data_path;
    uint32_t batch;
    uint64_t seed, train_steps;
    float lr, momentum;
    struct dlb_backend *be;
    struct dlb_dataset train, test;
    int have_train, have_test, synthetic;
    struct dlb_model_spec *spec;
    struct dlb_model *model;
    struct dlb_trainer trainer;      /* mode = train */
    struct dlb_batch_spec bspec;
    struct dlb_batch_plugin plugin;
    struct dlb_host_data lent;       /* data and evaluation for plugins */
    float *images, *logprobs;        /* mode = infer: one prepared batch */
    uint64_t measured_steps;         /* steps timed by the harness */
    double measured_s;               /* their wall time, for the cast share */
};

/* Say why in the configuration's record (or the log, without one). */
static dlb_status fail(struct cnn *c, dlb_status s, const struct dlb_error *err)
{
    if (c->ctx->reason && c->ctx->reason_len)
        snprintf(c->ctx->reason, c->ctx->reason_len, "%s", err->msg);
    else
        c->host->log(c->host, DLB_LOG_ERROR, "%s", err->msg);
    return s;
}

/* The backends' host memory goes through the host allocator, where a pool
 * plugin sits. */
static void *cnn_host_alloc(void *ctx, size_t bytes)
{
    const struct cnn *c = ctx;
    return c->host->alloc(c->host, bytes);
}

static void cnn_host_free(void *ctx, void *p, size_t bytes)
{
    const struct cnn *c = ctx;
    c->host->free(c->host, p, bytes);
}

/* A GPU backend's buffers come from the pool when a plugin sits over
 * device memory; without one the backend calls cudaMalloc itself. */
static void *cnn_device_alloc(void *ctx, size_t bytes)
{
    const struct cnn *c = ctx;
    return dlb_host_pool_alloc(c->host, bytes);
}

static void cnn_device_free(void *ctx, void *p, size_t bytes)
{
    const struct cnn *c = ctx;
    dlb_host_pool_free(c->host, p, bytes);
}

/* What the reference weights were trained on (their cache key): an
 * image folder by its path. */
static const char *data_kind(const struct cnn *c)
{
    if (!strncmp(c->data_mode, DLB_DATASET_FOLDER_PREFIX,
                 strlen(DLB_DATASET_FOLDER_PREFIX)))
        return c->data_mode;
    return c->synthetic ? "synthetic" : "fashion-mnist";
}

/* A corrupt image of an image folder, said in the configuration's log. */
static void folder_log(void *ctx, const char *line)
{
    const struct cnn *c = ctx;
    c->host->log(c->host, DLB_LOG_WARN, "%s", line);
}

/* The images of an image folder that failed to decode, both splits. */
static void record_corrupt(struct cnn *c)
{
    uint32_t n = 0;
    int folder = 0;
    if (c->have_train && c->train.folder) {
        n += dlb_folder_corrupt(c->train.folder);
        folder = 1;
    }
    if (c->have_test && c->test.folder) {
        n += dlb_folder_corrupt(c->test.folder);
        folder = 1;
    }
    if (folder && c->ctx->dataset)
        json_object_set_new(c->ctx->dataset, "corrupt_images",
                            json_integer((json_int_t)n));
}

/* The data at the model's input shape (dlb_dataset_open_for): padded,
 * synthetic at that shape, or refused. Synthetic data are said on the
 * console, with the reason when "auto" chose them. */
static dlb_status open_data(struct cnn *c, int train, struct dlb_error *err)
{
    struct dlb_dataset *d = train ? &c->train : &c->test;
    const struct dlb_data_want want = {c->spec->in_c, c->spec->in_h,
                                       c->spec->in_w, c->spec->classes};
    char why[512];
    dlb_status s = dlb_dataset_open_for(c->data_mode, c->data_path, train,
                                        c->seed, &want, d, why, sizeof why, err);
    if (s != DLB_OK)
        return s;
    *(train ? &c->have_train : &c->have_test) = 1;
    c->synthetic |= d->synthetic;
    if (d->folder)
        dlb_folder_set_log(d->folder, folder_log, c);
    dlb_dataset_record(&c->ctx->dataset, d, train, why);
    if (why[0])
        c->host->log(c->host, DLB_LOG_WARN, "%s: using %s, %u %s images; "
                     "the figures of quality are not those of real images",
                     why, d->description, d->n, train ? "training" : "test");
    else if (d->synthetic || d->padded_from_h || d->folder)
        c->host->log(c->host, DLB_LOG_INFO, "data: %s, %u %s images",
                     d->description, d->n, train ? "training" : "test");
    c->host->metric(c->host, "synthetic_data", "", c->synthetic);
    return DLB_OK;
}

static dlb_status load_train(void *ctx, const struct dlb_dataset **out,
                             struct dlb_error *err)
{
    struct cnn *c = ctx;
    dlb_status s = c->have_train ? DLB_OK : open_data(c, 1, err);
    *out = &c->train;
    return s;
}

/* model_api's data services: the sets this workload uses, and the same
 * test-set evaluation as the configuration's accuracy figure. */
static dlb_status lend_dataset(void *ctx, int train,
                               const struct dlb_dataset **out,
                               struct dlb_error *err)
{
    struct cnn *c = ctx;
    if (train)
        return load_train(ctx, out, err);
    *out = &c->test;
    return c->have_test ? DLB_OK : open_data(c, 0, err);
}

/* Whether this is a search's inference screening (screen_accuracy): its
 * accuracy only has to tell configurations that break the constraint by
 * far, which a subset does at a fifth of the cost (the search allows for
 * its sampling error). */
static int screening(const struct cnn *c)
{
    return c->host->measure_only && c->infer && c->set->screen_accuracy;
}

/* Test images the accuracy is scored on: a CI-sized or screening subset,
 * else all. */
static uint32_t test_images(const struct cnn *c)
{
    return (c->host->quick || screening(c)) && c->test.n > CNN_QUICK_TEST_IMAGES
               ? CNN_QUICK_TEST_IMAGES : c->test.n;
}

static dlb_status test_figures(struct cnn *c, struct dlb_model *m,
                               double *loss, double *acc, uint8_t *marks,
                               struct dlb_error *err)
{
    struct dlb_dataset test = c->test;
    test.n = test_images(c);
    return dlb_model_evaluate(m, &test, CNN_EVAL_BATCH, loss, acc, marks, err);
}

static dlb_status lend_evaluate(void *ctx, struct dlb_model *m, double *loss,
                                double *acc, struct dlb_error *err)
{
    return test_figures(ctx, m, loss, acc, NULL, err);
}

/* model_api's other models (open by name): found and trained as
 * this workload's own reference weights are, on its backend. `suites`
 * holds the two directories the request points at. */
static struct dlb_ref_model_req other_model(struct cnn *c,
                                            const struct dlb_host *h,
                                            const char *name, uint64_t steps,
                                            const char *suites[2])
{
    suites[0] = c->ctx->suite_origin;
    suites[1] = c->ctx->plan->suite->path;
    return (struct dlb_ref_model_req){
        suites, 2, dlb_installed_suite_dir(), c->be,
        {name, c->seed, steps ? steps : CNN_DEFAULT_REF_STEPS, c->lr,
         c->momentum, data_kind(c), load_train, c, h}};
}

static dlb_status lend_open_model(void *ctx, const struct dlb_host *h,
                                  const char *name, uint64_t steps,
                                  struct dlb_model_spec **spec,
                                  struct dlb_model **out,
                                  struct dlb_error *err)
{
    const char *suites[2];
    struct dlb_ref_model_req r = other_model(ctx, h, name, steps, suites);
    return dlb_ref_model_open(&r, spec, out, err);
}

/* A backend's keys on another backend (a suite that sweeps the
 * backend): the configuration is skipped with the reason, never run as if
 * the key were at its default. Fixed suites were refused at load
 * (suite_backend.c). */
static dlb_status backend_keys(struct cnn *c, const char *name,
                               struct dlb_error *err)
{
    const char *set = c->set->cuda_graphs ? "cuda.graphs = on"
                      : c->set->cuda_tf32 ? "cuda.tf32 = on"
                      : c->set->cudnn_algo == DLB_CUDNN_SEARCH ? "cudnn.algo = search"
                      : NULL;
    if (set && strcmp(name, "cuda") != 0)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "%s applies to backend = "
                          "cuda only; this configuration runs backend = %s",
                          set, name);
    if (!c->set->cpu_winograd && strcmp(name, "cpu") != 0)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "cpu.winograd = off "
                          "applies to backend = cpu only; this configuration "
                          "runs backend = %s", name);
    if (c->set->cuda_graphs && c->infer)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "cuda.graphs = on "
                          "replays training steps; mode = infer runs eagerly");
    return DLB_OK;
}

/* The backend's settings from the suite, without the hooks that count
 * the configuration's memory. */
static struct dlb_backend_config backend_config(const struct cnn *c)
{
    return (struct dlb_backend_config){
        .threads = (int)c->set->threads, .device = 0, .seed = c->seed,
        .cudnn_search = c->set->cudnn_algo == DLB_CUDNN_SEARCH ? DLB_OPT_ON
                                                               : DLB_OPT_OFF,
        .tf32 = c->set->cuda_tf32 ? DLB_OPT_ON : DLB_OPT_OFF,
        .winograd = c->set->cpu_winograd ? DLB_OPT_ON : DLB_OPT_OFF,
        .profile = c->set->profile == DLB_PROFILE_OPS};
}

static dlb_status open_backend(struct cnn *c, struct dlb_error *err)
{
    struct dlb_backend_config cfg = backend_config(c);
    cfg.host_alloc = cnn_host_alloc;
    cfg.host_free = cnn_host_free;
    cfg.alloc_ctx = c;
    char why[512] = "";
    const char *name = dlb_backend_kind_names[c->set->backend];
    dlb_status ks = backend_keys(c, name, err);
    if (ks != DLB_OK)
        return ks;
    if (dlb_host_device_pool(c->host)) {
        cfg.device_alloc = cnn_device_alloc;
        cfg.device_free = cnn_device_free;
    }
    dlb_status s = dlb_backend_open(name, &cfg, &c->be, why, sizeof why);
    if (s != DLB_OK)
        return dlb_errorf(err, s, "%s", why[0] ? why : dlb_status_name(s));
    dlb_host_set_device(c->host, dlb_device_record(c->be));
    dlb_host_set_backend(c->host, c->be); /* lends pinned batch memory */
    return DLB_OK;
}

static dlb_status load_spec(struct cnn *c, struct dlb_error *err)
{
    /* The suite as the user named it first: its models/ may sit beside
     * it; the run directory's copy has none. */
    const char *suites[2] = {c->ctx->suite_origin, c->ctx->plan->suite->path};
    char *path = dlb_model_file_find(c->model_key, suites, 2,
                                     dlb_installed_suite_dir(), err);
    if (!path)
        return DLB_ERR_INPUT;
    dlb_status s = dlb_model_file_load(path, &c->spec, err);
    free(path);
    return s;
}

static dlb_status open_model(struct cnn *c, struct dlb_error *err)
{
    dlb_status s = dlb_model_create(c->spec, c->be, DLB_F32, c->seed,
                                    &c->model, err);
    if (s != DLB_OK)
        return s;
    dlb_model_set_sgd(c->model, c->lr, c->momentum);
    c->host->metric(c->host, "params", "", (double)c->spec->params);
    c->host->metric(c->host, "model_flops_fwd", "FLOP", c->spec->flops_fwd);
    /* An ONNX model starts from its own trained weights, not the seed's:
     * the record says so. */
    if (c->spec->weights)
        c->host->metric(c->host, "weights_from_file", "", 1);
    return DLB_OK;
}

static dlb_status apply_transform(struct cnn *c, struct dlb_error *err)
{
    const struct dlb_workload_ctx *x = c->ctx;
    if (!x->transform || !x->transform->apply)
        return DLB_OK;
    dlb_status s = x->transform->apply(x->transform_state, x->transform_host,
                                       c->model);
    const char *why = dlb_host_last_error(x->transform_host);
    return s == DLB_OK ? s : dlb_errorf(err, s, "model transform failed (%s)%s%s",
                                        dlb_status_name(s), *why ? ": " : "",
                                        why);
}

static dlb_status setup_train(struct cnn *c, struct dlb_workload_info *info,
                              struct dlb_error *err)
{
    const struct dlb_workload_ctx *x = c->ctx;
    dlb_status s = open_data(c, 1, err);
    if (s != DLB_OK)
        return s;
    c->bspec = (struct dlb_batch_spec){c->batch, 1, (int)c->set->augment, 1,
                                       c->seed};
    c->plugin = (struct dlb_batch_plugin){x->batch_source, x->batch_source_state,
                                          x->batch_source_host,
                                          dlb_host_pinned_holds};
    c->trainer = (struct dlb_trainer){
        .model = c->model, .precision = x->precision,
        .precision_state = x->precision_state,
        .precision_abi_minor = x->precision_abi_minor, .executor = x->executor,
        .executor_state = x->executor_state, .executor_host = x->executor_host,
        .graphs = (int)c->set->cuda_graphs};
    s = dlb_trainer_set_precision(&c->trainer, err);
    if (s == DLB_OK) /* skipped with the reason rather than failing later */
        s = dlb_trainer_graphs_check(&c->trainer, err);
    if (s == DLB_OK)
        s = dlb_batches_open(&c->train, &c->bspec, &c->plugin,
                             &c->trainer.batches, err);
    info->flops_per_step = (c->spec->flops_fwd + c->spec->flops_bwd) * c->batch;
    return s;
}

/* Low-precision inference, as users run a model converted to half: the
 * whole forward pass in the convolutions' compute type, the weights cast
 * once here, after the reference weights and any transform. */
static dlb_status set_infer_precision(struct cnn *c, struct dlb_error *err)
{
    const struct dlb_precision_hooks *h = c->ctx->precision;
    enum dlb_dtype types[DLB_LAYER_KIND_COUNT];
    if (!h || !h->compute_type)
        return DLB_OK;
    enum dlb_dtype t = h->compute_type(c->ctx->precision_state, DLB_LAYER_CONV);
    for (int k = 0; k < DLB_LAYER_KIND_COUNT; k++)
        types[k] = t;
    return dlb_model_set_precision(c->model, types, 1, err);
}

/* The reference weights an inference measures: the baseline's training
 * from the seed (ref_weights.h). */
static struct dlb_ref_weights_req reference_req(struct cnn *c)
{
    return (struct dlb_ref_weights_req){
        c->model_key, c->seed, c->train_steps ? c->train_steps
                                              : CNN_DEFAULT_REF_STEPS,
        c->lr, c->momentum, data_kind(c),
        load_train, c, c->host};
}

/* Before the measured backend opens: reference weights not yet cached are
 * trained on a backend and model of their own, closed again, so that the
 * process measures as one that found them cached (ref_weights.h). The
 * training is not profiled: its operations are not the configuration's. */
static dlb_status pretrain_reference(struct cnn *c, struct dlb_error *err)
{
    struct dlb_ref_weights_req req = reference_req(c);
    struct dlb_backend_config cfg = backend_config(c);
    cfg.profile = 0;
    const char *name = dlb_backend_kind_names[c->set->backend];
    dlb_status s = backend_keys(c, name, err);
    if (s == DLB_OK && c->infer && !c->spec->weights)
        s = dlb_ref_weights_prepare(c->spec, &req, name, &cfg, c->seed, err);
    /* and those of the models plugins will open (model_api's prepare: a
     * distillation's teacher) */
    const struct dlb_host_prepared *p;
    unsigned n = dlb_host_take_prepared(c->host, &p);
    for (unsigned k = 0; k < n && s == DLB_OK; k++) {
        const char *suites[2];
        struct dlb_ref_model_req r = other_model(c, c->host, p[k].name,
                                                 p[k].steps, suites);
        s = dlb_ref_model_prepare(&r, name, &cfg, err);
    }
    return s;
}

static dlb_status setup_infer(struct cnn *c, struct dlb_workload_info *info,
                              struct dlb_error *err)
{
    const struct dlb_model_spec *sp = c->spec;
    size_t per = (size_t)sp->in_c * sp->in_h * sp->in_w;
    struct dlb_ref_weights_req req = reference_req(c);
    /* An ONNX model's weights are its trained ones: inference runs them
     * as they are, rather than the reference training's (from the cache:
     * pretrain_reference trained them apart if needed). */
    dlb_status s = c->spec->weights ? DLB_OK
                                    : dlb_ref_weights_get(c->model, &req, NULL, err);
    if (s == DLB_OK)
        s = apply_transform(c, err);
    if (s == DLB_OK)
        s = set_infer_precision(c, err);
    if (s != DLB_OK)
        return s;
    /* The training set served the reference training and the transform
     * (a calibration, a fine-tuning); the steps read the test set alone.
     * Freed, it is no part of the configuration's peak memory
     * (child_peak.h: 81 MiB of Fashion-MNIST padded to 32x32 in the
     * process that trained ResNet-20's weights); a later request opens
     * it again (load_train). */
    if (c->have_train) {
        dlb_dataset_free(&c->train);
        c->have_train = 0;
    }
    uint32_t *idx = malloc((size_t)c->batch * sizeof *idx);
    int32_t *labels = malloc((size_t)c->batch * sizeof *labels);
    c->images = malloc((size_t)c->batch * per * sizeof *c->images);
    c->logprobs = malloc((size_t)c->batch * sp->classes * sizeof *c->logprobs);
    if (!idx || !labels || !c->images || !c->logprobs)
        s = dlb_errorf(err, DLB_ERR_NOMEM, "out of memory for batch %u", c->batch);
    /* One batch of test images, prepared once: a step is the model's work
     * (upload, forward, predictions back), not the loader's. */
    for (uint32_t i = 0; s == DLB_OK && i < c->batch; i++)
        idx[i] = i % c->test.n;
    if (s == DLB_OK)
        s = dlb_batch_fill(&c->test, idx, c->batch, 0, NULL, c->images, labels);
    free(idx);
    free(labels);
    /* The model's own spec: a transform may have made it smaller. */
    info->flops_per_step = dlb_model_spec_of(c->model)->flops_fwd * c->batch;
    return s;
}

static void read_keys(struct cnn *c)
{
    c->infer = c->set->mode == DLB_MODE_INFER;
    c->model_key = c->set->model;
    /* the value's text: folder:PATH carries its path */
    c->data_mode = c->ctx->config->values[0][DLB_KEY_dataset].s;
    c->data_path = c->set->dataset_path;
    c->batch = (uint32_t)c->set->batch;
    /* the host's: the suite's seed, or a later one of accuracy_seeds */
    c->seed = c->host->seed;
    c->train_steps = (uint64_t)c->set->train_steps;
    c->lr = (float)c->set->lr;
    c->momentum = (float)c->set->momentum;
}

static void cnn_teardown(void *wl);

static dlb_status cnn_setup(void *state, const struct dlb_host *h,
                            struct dlb_workload_info *info, void **wl)
{
    struct dlb_error err = {""};
    struct cnn *c = calloc(1, sizeof *c);
    dlb_status s;
    *wl = NULL;
    if (!c)
        return DLB_ERR_NOMEM;
    c->ctx = state;
    c->set = &c->ctx->config->core;
    c->host = h;
    read_keys(c);
    c->lent = (struct dlb_host_data){c, lend_dataset, lend_evaluate,
                                     lend_open_model};
    dlb_host_set_data(h, &c->lent);
    s = load_spec(c, &err);
    if (s == DLB_OK) /* the data take the model's input shape */
        s = open_data(c, 0, &err);
    if (s == DLB_OK)
        s = pretrain_reference(c, &err);
    if (s == DLB_OK)
        s = open_backend(c, &err);
    if (s == DLB_OK)
        s = open_model(c, &err);
    if (s == DLB_OK)
        s = c->infer ? setup_infer(c, info, &err) : setup_train(c, info, &err);
    if (s != DLB_OK) {
        fail(c, s, &err);
        cnn_teardown(c);
        return s;
    }
    info->samples_per_step = c->batch;
    *wl = c;
    return DLB_OK;
}

static dlb_status cnn_step(void *wl)
{
    struct cnn *c = wl;
    struct dlb_error err = {""};
    double t0 = c->host->now(c->host);
    dlb_status s = c->infer
        ? dlb_model_infer(c->model, c->images, c->batch, c->logprobs, &err)
        : dlb_trainer_step(&c->trainer, 0, &err);
    /* The step is timed by the host: its work must be done when it ends. */
    if (s == DLB_OK && (s = DLB_BE_CALL0(c->be, synchronize)) != DLB_OK)
        dlb_errorf(&err, s, "synchronize: %s", dlb_backend_last_error(c->be));
    c->measured_steps++;
    c->measured_s += c->host->now(c->host) - t0;
    return s == DLB_OK ? s : fail(c, s, &err);
}

/* The accuracy figures, and which images the model got right (the
 * record's test_correct): the selection compares a configuration with its
 * baseline image by image, whose sampling error is that of the images the
 * two disagree on, not of two independent test sets. */
static dlb_status eval_test(struct cnn *c, struct dlb_error *err)
{
    double loss = 0.0, acc = 0.0;
    uint32_t n = test_images(c);
    uint8_t *marks = calloc(dlb_hexbits_bytes(n) + 1, 1);
    if (!marks)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory scoring the "
                          "test set");
    dlb_status s = test_figures(c, c->model, &loss, &acc, marks, err);
    if (s == DLB_OK) {
        c->host->metric(c->host, "accuracy", "%", acc);
        c->host->metric(c->host, "test_loss", "", loss);
        c->host->metric(c->host, "test_images", "images", n);
        char *text = dlb_hexbits_encode(marks, n);
        json_decref(c->ctx->test_correct);
        c->ctx->test_correct = text ? json_string(text) : NULL;
        free(text);
    }
    free(marks);
    return s;
}

/* The casts of the measured steps (mixed precision): seconds per step and
 * share of the step time. Read before the training run adds its own. */
static void record_casts(struct cnn *c)
{
    /* Graph replays run the casts untimed (model_graph.h). */
    if (!c->ctx->precision || !c->measured_steps || c->trainer.graphs)
        return;
    double cast = dlb_model_cast_seconds(c->model);
    c->host->metric(c->host, "cast_time_s", "s", cast / (double)c->measured_steps);
    if (c->measured_s > 0)
        c->host->metric(c->host, "cast_share", "%", 100.0 * cast / c->measured_s);
}

/* dlbench export: the model as the quality run left it (trained, the
 * transform applied) written as ONNX where the parent asked. */
static dlb_status export_model(struct cnn *c, struct dlb_error *err)
{
    const char *path = c->ctx->export_onnx;
    dlb_status s = dlb_onnx_write_model(c->model, path, err);
    if (s == DLB_OK)
        c->host->log(c->host, DLB_LOG_INFO, "model written as ONNX to %s",
                     path);
    return s;
}

static dlb_status cnn_evaluate(void *wl)
{
    struct cnn *c = wl;
    struct dlb_error err = {""};
    double loss = 0.0, secs = 0.0;
    dlb_status s = DLB_OK;
    /* The last measured step's overflow flag, for the scaler's figures. */
    if (!c->infer && (s = dlb_trainer_settle(&c->trainer, &err)) != DLB_OK)
        return fail(c, s, &err);
    record_casts(c);
    if (!c->infer) {
        dlb_train_figures_graphs(c->host, &c->trainer);
        dlb_train_figures_uploads(c->host, &c->trainer);
    }
    /* Measure only: no quality figures asked for, except the accuracy of
     * an inference screening (screen_accuracy), which the budget does not
     * change and which the search's constraint needs; unless a plugin
     * skipped work that changes it (prune's fine-tuning), when the run's
     * accuracy is not the configuration's. */
    int skipped = dlb_host_quality_work_skipped(c->host);
    if (screening(c) && skipped)
        c->host->log(c->host, DLB_LOG_INFO, "screen_accuracy: no accuracy scored; "
                     "a plugin skipped work under measure_only that changes it");
    if (c->ctx->export_onnx && !c->infer && c->train_steps == 0) {
        s = dlb_errorf(&err, DLB_ERR_INPUT, "train_steps = 0: the "
                       "configuration trains no model, so there is none to "
                       "export; give it a training budget");
        return fail(c, s, &err);
    }
    if ((c->host->measure_only && (!screening(c) || skipped)) ||
        (!c->infer && c->train_steps == 0))
        return DLB_OK;
    if (!c->infer) {
        s = dlb_train_run(&c->trainer, &c->train, &c->bspec, &c->plugin,
                          c->train_steps, &loss, &secs, &err);
        if (s == DLB_OK) {
            c->host->metric(c->host, "train_time_s", "s", secs);
            c->host->metric(c->host, "train_loss_last", "", loss);
            s = apply_transform(c, &err);
        }
    }
    if (s == DLB_OK)
        s = eval_test(c, &err);
    if (s == DLB_OK && c->ctx->export_onnx)
        s = export_model(c, &err);
    return s == DLB_OK ? s : fail(c, s, &err);
}

static void cnn_teardown(void *wl)
{
    struct cnn *c = wl;
    if (!c)
        return;
    dlb_host_set_data(c->host, NULL);
    record_corrupt(c);
    if (c->be) /* peaks of the whole run, accuracy training included */
        dlb_device_memory_figures(c->be, c->host);
    dlb_trainer_close_graph(&c->trainer);
    dlb_batches_close(c->trainer.batches);
    dlb_model_destroy(c->model);
    dlb_model_spec_free(c->spec);
    dlb_host_set_backend(c->host, NULL);
    dlb_backend_close(c->be);
    if (c->have_train)
        dlb_dataset_free(&c->train);
    if (c->have_test)
        dlb_dataset_free(&c->test);
    free(c->images);
    free(c->logprobs);
    free(c);
}

const struct dlb_workload_hooks dlb_workload_cnn = {
    .setup = cnn_setup, .step = cnn_step, .evaluate = cnn_evaluate,
    .teardown = cnn_teardown,
};
