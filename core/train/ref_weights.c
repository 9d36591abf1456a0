/* Cached reference weights: load when the cache matches, else train. */
#include "train/ref_weights.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "ckpt/model_ckpt.h"
#include "train/train_run.h"
#include "ckpt/weights_cache.h"
#include "util/apart.h"
#include "util/malloc_policy.h"

#define META_FORMAT "dlbench reference weights 1"

/* Set in a forked copy that trains the weights and exits (apart.h): its
 * heap is thrown away with it, so no blocks need to go aside. */
static int in_copy;

/* The settings the weights depend on, as metadata strings. */
struct settings {
    char seed[24], steps[24], batch[16], lr[32], momentum[32];
};

static void settings_of(const struct dlb_ref_weights_req *r, struct settings *s)
{
    snprintf(s->seed, sizeof s->seed, "%llu", (unsigned long long)r->seed);
    snprintf(s->steps, sizeof s->steps, "%llu", (unsigned long long)r->steps);
    snprintf(s->batch, sizeof s->batch, "%u", DLB_REF_WEIGHTS_BATCH);
    snprintf(s->lr, sizeof s->lr, "%.9g", (double)r->lr);
    snprintf(s->momentum, sizeof s->momentum, "%.9g", (double)r->momentum);
}

/* The cache file of `r`'s weights (malloc'ed) and the settings its
 * metadata must hold. */
static dlb_status locate(const struct dlb_ref_weights_req *r,
                         struct settings *s, char **path,
                         struct dlb_error *err)
{
    settings_of(r, s);
    return dlb_weights_cache_path(r->model_key, r->seed, r->steps, path, err);
}

/* NULL when the file was trained as requested, else the first difference. */
static const char *mismatch(const struct dlb_st_file *f,
                            const struct dlb_ref_weights_req *r,
                            const struct settings *s)
{
    const struct dlb_st_kv want[] = {
        {"format", META_FORMAT}, {"seed", s->seed}, {"steps", s->steps},
        {"batch", s->batch}, {"lr", s->lr}, {"momentum", s->momentum},
        {"dataset", r->dataset_kind}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *v = dlb_st_meta(f, want[i].key);
        if (!v || strcmp(v, want[i].value) != 0)
            return want[i].key;
    }
    return NULL;
}

static dlb_status try_cache(struct dlb_model *m, const char *path,
                            const struct dlb_ref_weights_req *r,
                            const struct settings *s)
{
    struct dlb_st_file f;
    struct dlb_error err = {""};
    const char *diff;
    if (access(path, F_OK) != 0)
        return DLB_ERR_INPUT;
    if (dlb_model_load(m, path, &f, &err) != DLB_OK) {
        r->host->log(r->host, DLB_LOG_WARN, "ignoring cached weights: %s; "
                     "training them again", err.msg);
        return DLB_ERR_INPUT;
    }
    diff = mismatch(&f, r, s);
    if (diff)
        r->host->log(r->host, DLB_LOG_WARN, "cached weights %s were trained "
                     "with another %s; training them again", path, diff);
    dlb_st_free(&f);
    return diff ? DLB_ERR_INPUT : DLB_OK;
}

static dlb_status train_and_save(struct dlb_model *m, const char *path,
                                 const struct dlb_ref_weights_req *r,
                                 const struct settings *s,
                                 struct dlb_error *err)
{
    const struct dlb_dataset *train = NULL;
    struct dlb_trainer tpl = {.model = m};
    struct dlb_batch_spec spec = {DLB_REF_WEIGHTS_BATCH, 1, 1, 1, r->seed};
    double loss = 0.0, secs = 0.0;
    /* Trained in the measured process (not apart), the training set and
     * the training's blocks are mmap'ed, so that they leave no holes in
     * its heap (malloc_policy.h). */
    int aside = in_copy ? 0 : dlb_malloc_aside_begin();
    dlb_status st = r->load_train(r->ctx, &train, err);
    if (st != DLB_OK) {
        dlb_malloc_aside_end(aside);
        return st;
    }
    r->host->log(r->host, DLB_LOG_INFO, "training reference weights: %llu "
                 "steps at batch %u on %s, %s (once; cached in %s)",
                 (unsigned long long)r->steps, DLB_REF_WEIGHTS_BATCH,
                 dlb_backend_name(dlb_model_backend(m)),
                 in_copy ? "in a process of its own" : "in this process", path);
    dlb_model_set_sgd(m, r->lr, r->momentum);
    st = dlb_train_run(&tpl, train, &spec, NULL, r->steps, &loss, &secs, err);
    dlb_malloc_aside_end(aside);
    if (st != DLB_OK)
        return st;
    const struct dlb_st_kv meta[] = {
        {"format", META_FORMAT}, {"model", r->model_key}, {"seed", s->seed},
        {"steps", s->steps}, {"batch", s->batch}, {"lr", s->lr},
        {"momentum", s->momentum}, {"dataset", r->dataset_kind},
        {"backend", dlb_backend_name(dlb_model_backend(m))}};
    st = dlb_model_save(m, path, meta, sizeof meta / sizeof meta[0], err);
    if (st == DLB_OK)
        r->host->log(r->host, DLB_LOG_INFO, "reference weights trained in "
                     "%.1f s (last loss %.4f)", secs, loss);
    return st;
}

/* Whether `path` holds weights trained as `req` asks, from its metadata
 * alone (the tensors are read once, when the measured model loads them). */
static int cached(const char *path, const struct dlb_ref_weights_req *req,
                  const struct settings *s)
{
    struct dlb_st_file f;
    struct dlb_error err = {""};
    if (access(path, F_OK) != 0 || dlb_st_read_meta(path, &f, &err) != DLB_OK)
        return 0;
    int same = mismatch(&f, req, s) == NULL;
    dlb_st_free(&f);
    return same;
}

/* What dlb_ref_weights_prepare trains on: a backend and model of its own. */
struct prepare {
    const struct dlb_model_spec *spec;
    const struct dlb_ref_weights_req *req;
    const char *backend;
    const struct dlb_backend_config *cfg;
    uint64_t init_seed;
};

static dlb_status train_own(void *ctx, struct dlb_error *err)
{
    const struct prepare *p = ctx;
    char why[512] = "";
    /* Opening a cpu backend pins the calling thread to one CPU (it is one
     * of the pool's): the thread gets its CPUs back after, so that the
     * backend opened next sees all of them. */
    cpu_set_t mask;
    int have_mask = sched_getaffinity(0, sizeof mask, &mask) == 0;
    struct dlb_backend *be = NULL;
    struct dlb_model *m = NULL;
    dlb_status st = dlb_backend_open(p->backend, p->cfg, &be, why, sizeof why);
    if (st != DLB_OK) /* the backend's reason, as its measured open gives */
        st = dlb_errorf(err, st, "%s", why[0] ? why : dlb_status_name(st));
    if (st == DLB_OK)
        st = dlb_model_create(p->spec, be, DLB_F32, p->init_seed, &m, err);
    if (st == DLB_OK)
        st = dlb_ref_weights_get(m, p->req, NULL, err);
    dlb_model_destroy(m);
    dlb_backend_close(be);
    if (have_mask)
        sched_setaffinity(0, sizeof mask, &mask);
    return st;
}

static dlb_status train_copy(void *ctx, struct dlb_error *err)
{
    in_copy = 1;
    return train_own(ctx, err);
}

dlb_status dlb_ref_weights_prepare(const struct dlb_model_spec *spec,
                                   const struct dlb_ref_weights_req *req,
                                   const char *backend,
                                   const struct dlb_backend_config *cfg,
                                   uint64_t init_seed, struct dlb_error *err)
{
    struct settings s;
    char *path = NULL;
    dlb_status st = locate(req, &s, &path, err);
    if (st != DLB_OK)
        return st;
    int have = cached(path, req, &s);
    free(path);
    if (have)
        return DLB_OK;
    struct prepare p = {spec, req, backend, cfg, init_seed};
    if (dlb_apart_possible())
        return dlb_apart_run(train_copy, &p, err);
    req->host->log(req->host, DLB_LOG_DEBUG, "reference weights trained in "
                   "this process: it runs other threads");
    return train_own(&p, err);
}

dlb_status dlb_ref_weights_get(struct dlb_model *m,
                               const struct dlb_ref_weights_req *req,
                               int *trained, struct dlb_error *err)
{
    struct settings s;
    char *path = NULL;
    dlb_status st = locate(req, &s, &path, err);
    if (st != DLB_OK)
        return st;
    if (trained)
        *trained = 0;
    if (try_cache(m, path, req, &s) != DLB_OK) {
        st = train_and_save(m, path, req, &s, err);
        if (trained)
            *trained = st == DLB_OK;
    }
    free(path);
    return st;
}
