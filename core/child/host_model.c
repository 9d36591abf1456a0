/* h->model_api (ABI 2.2), the one model interface plugins see: the table,
 * and its lifetime, inspect and run entries, over core/model and
 * core/services (host_api.h says where the rest is). */
#include <dlbench/model_api.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "child/host.h"
#include "child/host_api.h"
#include "model/model.h"
#include "model/model_find.h"
#include "plan/session.h"
#include "services/model_distill.h"
#include "services/model_lend.h"
#include "services/model_replica.h"
#include "services/model_stage.h"
#include "model/model_tensors.h"

static struct dlb_host_shared *shared_of(const struct dlb_host *h)
{
    return ((const struct dlb_host_priv *)h)->shared;
}

dlb_status dlb_host_fail(const struct dlb_host *h, dlb_status s,
                         const struct dlb_error *err)
{
    if (s != DLB_OK)
        h->log(h, DLB_LOG_ERROR, "%s", err->msg[0] ? err->msg
                                                   : dlb_status_name(s));
    return s;
}

dlb_status dlb_host_null(const struct dlb_host *h, const char *what)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INTERNAL, "%s: a NULL "
                                       "model or argument", what), &err);
}

/* ---- lifetime ------------------------------------------------------- */

static dlb_status api_find(const struct dlb_host *h, const char *name,
                           char *reason, size_t len)
{
    return dlb_model_file_check(name, shared_of(h)->suite_paths, 2,
                                dlb_installed_suite_dir(), reason, len);
}

static dlb_status open_named(const struct dlb_host *h,
                             const struct dlb_model_open *how,
                             const struct dlb_model_lend_how *lend,
                             struct dlb_model **out, struct dlb_error *err)
{
    struct dlb_host_shared *sh = shared_of(h);
    const struct dlb_host_data *d = sh->data;
    if (!how->name || !*how->name)
        return dlb_errorf(err, DLB_ERR_INPUT, "open: neither a model to "
                          "clone nor a model name");
    if (!d || !d->open_model)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "no workload lends "
                          "models now (open a named model from executor "
                          "hooks and metrics, not probe or init)");
    /* The workload builds it, its log lines under the plugin's name. */
    struct dlb_model_spec *spec = NULL;
    struct dlb_model *m = NULL;
    dlb_status s = d->open_model(d->ctx, h, how->name, how->steps, &spec, &m,
                                 err);
    return s ? s : dlb_model_lend_named(&sh->models, how->name, spec, m, lend,
                                        out, err);
}

static dlb_status api_open(const struct dlb_host *h,
                           const struct dlb_model_open *how,
                           struct dlb_model **out)
{
    struct dlb_host_shared *sh = shared_of(h);
    struct dlb_error err = {""};
    if (!how || !out)
        return dlb_host_null(h, "open");
    *out = NULL;
    if (how->struct_size < offsetof(struct dlb_model_open, steps) +
                               sizeof how->steps)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INPUT, "open: "
                             "struct_size %u is shorter than plugin ABI 2.0's "
                             "struct dlb_model_open; set it to sizeof the "
                             "struct", (unsigned)how->struct_size), &err);
    struct dlb_model_lend_how lend = {
        .cpus = sh->have_cpus ? &sh->cpus : NULL, .threads = how->threads,
        .slot = how->slot, .home = h->backend_name, .seed = h->seed};
    dlb_status s = dlb_host_open_options(how, &lend, &err);
    if (s == DLB_OK)
        s = how->clone ? dlb_model_lend_clone(how->clone, &lend, out, &err)
                       : open_named(h, how, &lend, out, &err);
    return dlb_host_fail(h, s, &err);
}

/* Kept for the workload's setup (dlb_host_take_prepared), which trains
 * the weights before its backend opens. More models than there is room
 * for are trained by open, as before: a prepare is a hint. */
static dlb_status api_prepare(const struct dlb_host *h,
                              const struct dlb_model_open *how)
{
    struct dlb_host_shared *sh = shared_of(h);
    struct dlb_error err = {""};
    if (!how)
        return dlb_host_null(h, "prepare");
    if (how->struct_size < offsetof(struct dlb_model_open, steps) +
                               sizeof how->steps || !how->name || !*how->name)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INPUT, "prepare: a "
                             "struct dlb_model_open with a model name, and "
                             "its struct_size set to sizeof the struct"), &err);
    if (sh->prepared_taken)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_UNSUPPORTED,
                             "prepare '%s': the workload has set up already; "
                             "call it from init", how->name), &err);
    if (strlen(how->name) >= sizeof sh->prepared[0].name)
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INPUT, "prepare: "
                             "model name of %zu bytes (at most %zu)",
                             strlen(how->name), sizeof sh->prepared[0].name - 1),
                             &err);
    for (unsigned k = 0; k < sh->n_prepared; k++)
        if (!strcmp(sh->prepared[k].name, how->name) &&
            sh->prepared[k].steps == how->steps)
            return DLB_OK;
    if (sh->n_prepared == DLB_HOST_MAX_PREPARED) {
        h->log(h, DLB_LOG_DEBUG, "prepare '%s': %d models prepared already; "
               "open will train its weights", how->name, DLB_HOST_MAX_PREPARED);
        return DLB_OK;
    }
    struct dlb_host_prepared *p = &sh->prepared[sh->n_prepared++];
    snprintf(p->name, sizeof p->name, "%s", how->name);
    p->steps = how->steps;
    return DLB_OK;
}

static void api_release(const struct dlb_host *h, struct dlb_model *m)
{
    dlb_model_lend_release(&shared_of(h)->models, m);
}

/* ---- inspect -------------------------------------------------------- */

static unsigned api_node_count(const struct dlb_host *h,
                               const struct dlb_model *m)
{
    (void)h;
    return m ? dlb_model_layer_count(m) : 0;
}

static dlb_status api_node_info(const struct dlb_host *h,
                                const struct dlb_model *m, unsigned i,
                                struct dlb_layer_info *out)
{
    struct dlb_error err = {""};
    if (!m || !out)
        return dlb_host_null(h, "node_info");
    dlb_status s = dlb_model_layer_info(m, i, out);
    if (s != DLB_OK)
        return dlb_host_fail(h, dlb_errorf(&err, s, "node %u does not exist "
                             "(the model has %u)", i,
                             dlb_model_layer_count(m)), &err);
    out->weight_id = dlb_model_learnable_id(m, out->weight);
    out->bias_id = dlb_model_learnable_id(m, out->bias);
    return DLB_OK;
}

static unsigned api_tensor_count(const struct dlb_host *h,
                                 const struct dlb_model *m)
{
    (void)h;
    return m ? dlb_model_n_learnable(m) : 0;
}

static dlb_status api_tensor_info(const struct dlb_host *h,
                                  const struct dlb_model *m, unsigned i,
                                  struct dlb_param_info *out)
{
    struct dlb_error err = {""};
    dlb_status s = m && out ? dlb_model_learnable(m, i,
                                                  out) : DLB_ERR_INTERNAL;
    if (s == DLB_ERR_INPUT)
        dlb_errorf(&err, s, "tensor %u does not exist (the model has %u)", i,
                   dlb_model_n_learnable(m));
    return dlb_host_fail(h, s, &err);
}

static dlb_status api_tensor_io(const struct dlb_host *h, struct dlb_model *m,
                                unsigned id, enum dlb_tensor_role role,
                                float *buf, size_t count, int write)
{
    struct dlb_error err = {""};
    struct dlb_param_info pi;
    dlb_status s;
    if (!m)
        return dlb_host_null(h, "tensor_io");
    if (id >= dlb_model_n_learnable(m) && role == DLB_TENSOR_GRAD)
        s = dlb_errorf(&err, DLB_ERR_INPUT, "tensor %u has no gradient: only "
                       "the %u learnable tensors do", id,
                       dlb_model_n_learnable(m));
    else if (id >= dlb_model_n_learnable(m))
        s = dlb_model_tensor_id_io(m, id, buf, count, write, &err);
    else if (role == DLB_TENSOR_GRAD)
        s = dlb_model_grad_io(m, id, buf, count, write, &err);
    else if ((s = api_tensor_info(h, m, id, &pi)) != DLB_OK)
        return s;
    else
        s = dlb_model_tensor_io(m, pi.name, buf, count, write, &err);
    return dlb_host_fail(h, s, &err);
}

/* Not being able to map is an answer, not an error: no log line. */
static dlb_status api_tensor_map(const struct dlb_host *h, struct dlb_model *m,
                                 unsigned id, enum dlb_tensor_role role,
                                 struct dlb_act_view *out)
{
    struct dlb_error err = {""};
    if (role != DLB_TENSOR_GRAD)
        return DLB_ERR_UNSUPPORTED;
    dlb_status s = dlb_model_grad_map(m, id, out, &err);
    return s == DLB_ERR_UNSUPPORTED ? s : dlb_host_fail(h, s, &err);
}

static dlb_status api_tensor_unmap(const struct dlb_host *h,
                                   struct dlb_model *m, unsigned id,
                                   enum dlb_tensor_role role, int written)
{
    DLB_HOST_CALL("tensor_unmap (a gradient)", m && role == DLB_TENSOR_GRAD,
                  dlb_model_grad_unmap(m, id, written, &err));
}

/* The whole model is the replicas' state; a range, a slice's layers. */
static dlb_status api_state_count(const struct dlb_host *h,
                                  const struct dlb_model *m, unsigned first,
                                  unsigned last, unsigned parts, size_t *count)
{
    if (!m || !count)
        return dlb_host_null(h, "state_count");
    *count = last == DLB_NODES_ALL ? dlb_model_state_count(m, parts)
                                   : dlb_model_layers_count(m, first, last,
                                                            parts);
    return DLB_OK;
}

static dlb_status api_state_io(const struct dlb_host *h, struct dlb_model *m,
                               unsigned first, unsigned last, unsigned parts,
                               float *flat, size_t count, int write)
{
    DLB_HOST_CALL("state_io", m && (flat || !count), last == DLB_NODES_ALL
        ? dlb_model_state_io(m, parts, flat, count, write, &err)
        : dlb_model_layers_io(m, first, last, parts, flat, count, write,
                              &err));
}

static uint64_t api_weights_version(const struct dlb_host *h,
                                    const struct dlb_model *m)
{
    (void)h;
    return m ? dlb_model_weights_version(m) : 0;
}

/* ---- run ------------------------------------------------------------ */

static dlb_status api_infer(const struct dlb_host *h, struct dlb_model *m,
                            const float *images, uint32_t n,
                            enum dlb_infer_output what, float *out)
{
    DLB_HOST_CALL("infer", m && images && (out || what != DLB_OUT_LOGITS),
                  what == DLB_OUT_LOGITS
                      ? dlb_model_logits(m, images, n, out, &err)
                      : dlb_model_infer(m, images, n, out, &err));
}

static dlb_status api_evaluate(const struct dlb_host *h, struct dlb_model *m,
                               double *loss, double *accuracy)
{
    struct dlb_error err = {""};
    const struct dlb_host_data *d = shared_of(h)->data;
    dlb_status s = d && d->evaluate
        ? d->evaluate(d->ctx, m, loss, accuracy, &err)
        : dlb_errorf(&err, DLB_ERR_UNSUPPORTED,
                     "this workload has no test set "
                     "to evaluate on");
    return dlb_host_fail(h, s, &err);
}

static dlb_status api_dataset(const struct dlb_host *h, int train,
                              const struct dlb_dataset **out)
{
    struct dlb_error err = {""};
    const struct dlb_host_data *d = shared_of(h)->data;
    dlb_status s = d && d->dataset
        ? d->dataset(d->ctx, train, out, &err)
        : dlb_errorf(&err, DLB_ERR_UNSUPPORTED, "this workload lends no data "
                     "set to plugins");
    return dlb_host_fail(h, s, &err);
}

static dlb_status api_forward_backward(const struct dlb_host *h,
                                       struct dlb_model *m,
                                       const float *images,
                                       const int32_t *labels, uint32_t n,
                                       float loss_scale, double *loss,
                                       dlb_grad_ready_fn ready, void *ctx)
{
    DLB_HOST_CALL("forward_backward", m && images && labels,
                  dlb_model_forward_backward_cb(m, images, labels, n,
                                                loss_scale, loss, ready, ctx,
                                                &err));
}

static dlb_status api_step(const struct dlb_host *h, struct dlb_model *m)
{
    DLB_HOST_CALL("step", m, dlb_model_sgd_step(m, &err));
}

static dlb_status api_optimizer(const struct dlb_host *h,
                                const struct dlb_model *m, float *lr,
                                float *momentum)
{
    if (!m || !lr || !momentum)
        return dlb_host_null(h, "optimizer");
    dlb_model_sgd_settings(m, lr, momentum);
    return DLB_OK;
}

static dlb_status api_synchronize(const struct dlb_host *h,
                                  struct dlb_model *m)
{
    struct dlb_error err = {""};
    struct dlb_backend *be = m ? dlb_model_backend(m) : NULL;
    dlb_status s = be ? DLB_BE_CALL0(be, synchronize) : DLB_ERR_INTERNAL;
    if (s != DLB_OK && be)
        dlb_errorf(&err, s, "synchronize: %s", dlb_backend_last_error(be));
    return dlb_host_fail(h, s, &err);
}

static struct dlb_model_api table = {
    .struct_size = sizeof(struct dlb_model_api),
    .find = api_find,
    .open = api_open,
    .release = api_release,
    .node_count = api_node_count,
    .node_info = api_node_info,
    .tensor_count = api_tensor_count,
    .tensor_info = api_tensor_info,
    .tensor_io = api_tensor_io,
    .tensor_map = api_tensor_map,
    .tensor_unmap = api_tensor_unmap,
    .state_count = api_state_count,
    .state_io = api_state_io,
    .weights_version = api_weights_version,
    .infer = api_infer,
    .evaluate = api_evaluate,
    .dataset = api_dataset,
    .forward_backward = api_forward_backward,
    .step = api_step,
    .optimizer = api_optimizer,
    .synchronize = api_synchronize,
    .prepare = api_prepare,
};
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_fill(void)
{
    dlb_host_slice_entries(&table);
    dlb_host_rewrite_entries(&table);
    dlb_host_range_entries(&table);
}

const struct dlb_model_api *dlb_host_model_api(void)
{
    pthread_once(&table_once, table_fill);
    return &table;
}
