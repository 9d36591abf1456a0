/* replica_ops (ABI 1.2): data-parallel replicas, per-replica forward and
 * backward, gradients, the state, the optimizer step, and the world of a
 * multi-process configuration, for the dp plugin. */
#include <dlbench/replica_ops.h>

#include <sched.h>
#include <stdio.h>

#include "backend/backend.h"
#include "util/error.h"
#include "child/host.h"
#include "services/model_replica.h"

static struct dlb_host_shared *shared_of(const struct dlb_host *h)
{
    return ((const struct dlb_host_priv *)h)->shared;
}

static unsigned ro_param_count(const struct dlb_host *h,
                               const struct dlb_model *m)
{
    (void)h;
    return m ? dlb_model_n_learnable(m) : 0;
}

static dlb_status ro_param_info(const struct dlb_host *h,
                                const struct dlb_model *m, unsigned i,
                                struct dlb_param_info *out)
{
    struct dlb_error err = {""};
    dlb_status s = m && out ? dlb_model_learnable(m, i, out) : DLB_ERR_INTERNAL;
    if (s == DLB_ERR_INPUT)
        dlb_errorf(&err, s, "learnable tensor %u does not exist (the model "
                   "has %u)", i, dlb_model_n_learnable(m));
    return dlb_host_fail(h, s, &err);
}

/* Pin the calling thread to its share of the CPUs the process started
 * with: the backend opened next pins its threads inside that share. */
static void pin_slot(const struct dlb_host *h, int threads, int slot)
{
    const struct dlb_host_shared *sh = shared_of(h);
    int ids[CPU_SETSIZE], n = 0;
    cpu_set_t mine;
    if (slot < 0 || !sh->have_cpus)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &sh->cpus))
            ids[n++] = c;
    if (n == 0)
        return;
    CPU_ZERO(&mine);
    for (int t = 0; t < (threads > 0 ? threads : 1); t++)
        CPU_SET(ids[((long)slot * (threads > 0 ? threads : 1) + t) % n], &mine);
    sched_setaffinity(0, sizeof mine, &mine);
}

static dlb_status ro_create(const struct dlb_host *h, const struct dlb_model *m,
                            int threads, int slot, struct dlb_model **out)
{
    struct dlb_error err = {""};
    if (!m || !out || !h->backend_name)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    pin_slot(h, threads, slot);
    /* The system allocator: a pool plugin serves one thread. */
    struct dlb_backend_config cfg = {
        .threads = threads > 0 ? threads : 1, .device = slot > 0 ? slot : 0,
        .seed = h->seed};
    return dlb_host_fail(h, dlb_model_replica_create(m, h->backend_name, &cfg,
                                                     h->seed, out, &err),
                         &err);
}

static void ro_destroy(const struct dlb_host *h, struct dlb_model *replica)
{
    (void)h;
    dlb_model_replica_destroy(replica);
}

static uint64_t ro_weights_version(const struct dlb_host *h,
                                   const struct dlb_model *m)
{
    (void)h;
    return m ? dlb_model_weights_version(m) : 0;
}

static dlb_status ro_state_count(const struct dlb_host *h,
                                 const struct dlb_model *m, unsigned parts,
                                 size_t *count)
{
    (void)h;
    if (!m || !count)
        return DLB_ERR_INTERNAL;
    *count = dlb_model_state_count(m, parts);
    return DLB_OK;
}

static dlb_status ro_state_read(const struct dlb_host *h, struct dlb_model *m,
                                unsigned parts, float *dst, size_t count)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_model_state_io(m, parts, dst, count, 0, &err),
                         &err);
}

static dlb_status ro_state_write(const struct dlb_host *h, struct dlb_model *m,
                                 unsigned parts, const float *src, size_t count)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_model_state_io(m, parts, (float *)src, count,
                                               1, &err), &err);
}

static dlb_status ro_forward_backward(const struct dlb_host *h,
                                      struct dlb_model *m, const float *images,
                                      const int32_t *labels, uint32_t n,
                                      float loss_scale, double *loss,
                                      dlb_grad_ready_fn ready, void *ctx)
{
    struct dlb_error err = {""};
    if (!m || !images || !labels)
        return dlb_host_fail(h, DLB_ERR_INTERNAL, &err);
    return dlb_host_fail(h, dlb_model_forward_backward_cb(m, images, labels, n,
                                                          loss_scale, loss,
                                                          ready, ctx, &err),
                         &err);
}

/* Not being able to map is an answer, not an error: no log line. */
static dlb_status ro_grad_map(const struct dlb_host *h, struct dlb_model *m,
                              unsigned i, struct dlb_grad_view *out)
{
    struct dlb_error err = {""};
    dlb_status s = dlb_model_grad_map(m, i, out, &err);
    return s == DLB_ERR_UNSUPPORTED ? s : dlb_host_fail(h, s, &err);
}

static dlb_status ro_grad_unmap(const struct dlb_host *h, struct dlb_model *m,
                                unsigned i, int written)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_model_grad_unmap(m, i, written, &err), &err);
}

static dlb_status ro_grad_read(const struct dlb_host *h, struct dlb_model *m,
                               unsigned i, float *dst, size_t count)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_model_grad_io(m, i, dst, count, 0, &err), &err);
}

static dlb_status ro_grad_write(const struct dlb_host *h, struct dlb_model *m,
                                unsigned i, const float *src, size_t count)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_model_grad_io(m, i, (float *)src, count, 1,
                                              &err), &err);
}

static dlb_status ro_sgd_step(const struct dlb_host *h, struct dlb_model *m)
{
    struct dlb_error err = {""};
    return dlb_host_fail(h, dlb_model_sgd_step(m, &err), &err);
}

static dlb_status ro_sgd_settings(const struct dlb_host *h,
                                  const struct dlb_model *m, float *lr,
                                  float *momentum)
{
    (void)h;
    if (!m || !lr || !momentum)
        return DLB_ERR_INTERNAL;
    dlb_model_sgd_settings(m, lr, momentum);
    return DLB_OK;
}

static dlb_status ro_synchronize(const struct dlb_host *h, struct dlb_model *m)
{
    struct dlb_error err = {""};
    struct dlb_backend *be = m ? dlb_model_backend(m) : NULL;
    dlb_status s = be ? DLB_BE_CALL0(be, synchronize) : DLB_ERR_INTERNAL;
    if (s != DLB_OK && be)
        dlb_errorf(&err, s, "synchronize: %s", dlb_backend_last_error(be));
    return dlb_host_fail(h, s, &err);
}

static dlb_status ro_copy_rng(const struct dlb_host *h, struct dlb_model *dst,
                              const struct dlb_model *src)
{
    (void)h;
    if (!dst || !src)
        return DLB_ERR_INTERNAL;
    dlb_model_copy_rng(dst, src);
    return DLB_OK;
}

static dlb_status ro_join_world(const struct dlb_host *h,
                                const struct dlb_world *w)
{
    struct dlb_host_shared *sh = shared_of(h);
    struct dlb_error err = {""};
    if (!w || w->size < 1 || w->rank < 0 || w->rank >= w->size ||
        (w->size > 1 && !w->agree))
        return dlb_host_fail(h, dlb_errorf(&err, DLB_ERR_INTERNAL, "join_world: "
                                           "a rank in [0, size) and, for more "
                                           "than one process, agree"), &err);
    json_t *hosts = json_array();
    for (int r = 0; hosts && r < w->size; r++)
        json_array_append_new(hosts, json_string(w->hosts && w->hosts[r]
                                                     ? w->hosts[r] : "?"));
    json_t *world = json_pack("{s:i,s:o*}", "size", w->size, "hosts", hosts);
    if (!world)
        return DLB_ERR_NOMEM;
    json_decref(sh->world);
    sh->world = world;
    sh->rank = w->rank;
    sh->agree = w->size > 1 ? w->agree : NULL;
    sh->agree_ctx = w->ctx;
    return DLB_OK;
}

const struct dlb_replica_ops dlb_host_replica_ops = {
    .struct_size = sizeof(struct dlb_replica_ops),
    .param_count = ro_param_count,
    .param_info = ro_param_info,
    .create = ro_create,
    .destroy = ro_destroy,
    .weights_version = ro_weights_version,
    .state_count = ro_state_count,
    .state_read = ro_state_read,
    .state_write = ro_state_write,
    .forward_backward = ro_forward_backward,
    .grad_map = ro_grad_map,
    .grad_unmap = ro_grad_unmap,
    .grad_read = ro_grad_read,
    .grad_write = ro_grad_write,
    .sgd_step = ro_sgd_step,
    .sgd_settings = ro_sgd_settings,
    .synchronize = ro_synchronize,
    .copy_rng = ro_copy_rng,
    .join_world = ro_join_world,
};
