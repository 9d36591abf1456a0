/* train_ops (ABI 1.2): other models by name, logits and soft-target
 * training steps, for the distill plugin. The models a plugin opens live
 * on the workload's backend, so the core keeps a list of them and closes
 * what is left when the workload withdraws its data, before it closes
 * that backend (plugins' fini comes later). */
#include <dlbench/train_ops.h>

#include <stdio.h>
#include <stdlib.h>

#include "util/error.h"
#include "child/host.h"
#include "services/model_distill.h"
#include "model/model_find.h"
#include "plan/session.h"

struct dlb_host_model {
    struct dlb_model *model;
    struct dlb_model_spec *spec;
    struct dlb_host_model *next;
};

static struct dlb_host_shared *shared_of(const struct dlb_host *h)
{
    return ((const struct dlb_host_priv *)h)->shared;
}

static dlb_status to_find_model(const struct dlb_host *h, const char *name,
                                char *reason, size_t len)
{
    struct dlb_host_shared *sh = shared_of(h);
    struct dlb_error err = {"no model named"};
    struct dlb_model_spec *spec = NULL;
    dlb_status s = DLB_ERR_INPUT;
    char *path = NULL;
    if (name && *name)
        path = dlb_model_file_find(name, sh->suite_paths, 2,
                                   dlb_installed_suite_dir(), &err);
    if (path)
        s = dlb_model_file_load(path, &spec, &err);
    dlb_model_spec_free(spec);
    free(path);
    if (s != DLB_OK && reason && len)
        snprintf(reason, len, "%s", err.msg);
    return s;
}

static dlb_status to_open_model(const struct dlb_host *h, const char *name,
                                uint64_t steps, struct dlb_model **out)
{
    struct dlb_host_shared *sh = shared_of(h);
    const struct dlb_host_data *d = sh->data;
    struct dlb_error err = {""};
    struct dlb_host_model *e = NULL;
    dlb_status s;
    if (!out)
        return DLB_ERR_INTERNAL;
    *out = NULL;
    if (!name || !*name)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INPUT, "open_model: "
                             "no model named"), &err);
    if (!d || !d->open_model)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_UNSUPPORTED,
                             "no workload lends models now (open_model is "
                             "for executor hooks and metrics, not probe or "
                             "init)"), &err);
    if (!(e = calloc(1, sizeof *e)))
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_NOMEM, "out of "
                             "memory opening model %s", name), &err);
    s = d->open_model(d->ctx, h, name, steps, &e->spec, &e->model, &err);
    if (s != DLB_OK) {
        free(e);
        return dlb_host_fail(h, s, &err);
    }
    e->next = sh->models;
    sh->models = e;
    *out = e->model;
    return DLB_OK;
}

static void close_entry(struct dlb_host_model *e)
{
    dlb_model_destroy(e->model);
    dlb_model_spec_free(e->spec);
    free(e);
}

static void to_close_model(const struct dlb_host *h, struct dlb_model *m)
{
    struct dlb_host_model **p = &shared_of(h)->models;
    while (*p && (*p)->model != m)
        p = &(*p)->next;
    if (m && *p) {
        struct dlb_host_model *e = *p;
        *p = e->next;
        close_entry(e);
    }
}

void dlb_host_close_models(struct dlb_host_shared *shared)
{
    while (shared->models) {
        struct dlb_host_model *e = shared->models;
        shared->models = e->next;
        close_entry(e);
    }
}

static dlb_status to_logits(const struct dlb_host *h, struct dlb_model *m,
                            const float *images, uint32_t n, float *logits)
{
    struct dlb_error err = {""};
    if (!m || !images || !logits)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INTERNAL, "logits: "
                             "NULL model, images or output"), &err);
    return dlb_host_fail(h, dlb_model_logits(m, images, n, logits, &err), &err);
}

static dlb_status to_soft_target_step(const struct dlb_host *h,
                                      struct dlb_model *m,
                                      const struct dlb_batch *b,
                                      const float *teacher_logits,
                                      float temperature, float alpha,
                                      double *loss)
{
    struct dlb_error err = {""};
    if (!m || !b)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INTERNAL,
                             "soft_target_step: NULL model or batch"), &err);
    return dlb_host_fail(h, dlb_model_distill_step(m, b->images, b->labels,
                                                   b->n, teacher_logits,
                                                   temperature, alpha, loss,
                                                   &err), &err);
}

const struct dlb_train_ops dlb_host_train_ops = {
    .struct_size = sizeof(struct dlb_train_ops),
    .find_model = to_find_model,
    .open_model = to_open_model,
    .close_model = to_close_model,
    .logits = to_logits,
    .soft_target_step = to_soft_target_step,
};
