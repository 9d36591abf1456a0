/* Models lent to plugins: where they run (the calling thread's share of
 * the CPUs, a backend handle of their own), their precision (the amp
 * policy), and the lists by which release knows what it may close. */
#include "services/model_lend.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "model/model_file.h"
#include "services/model_replica.h"

/* A model built by name: it lives on the workload's backend, so it is
 * closed when the workload withdraws its data. */
struct dlb_model_lend_named {
    struct dlb_model *model;
    struct dlb_model_spec *spec;
    int moved;  /* a replica on a backend of its own (open's backend) */
    struct dlb_model_lend_named *next;
};

/* Clones, opened and released on executors' worker threads: release
 * tells them from named models the core already closed (which it must
 * not touch) by this list, not by reading the model. */
struct clone {
    struct dlb_model *model;
    struct clone *next;
};
static struct clone *clones;
static pthread_mutex_t clones_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct {
    const char *name;
    enum dlb_dtype type;
    enum dlb_backend_cap cap;
} precisions[] = {
    {"fp32", DLB_F32, DLB_CAP_F16 /* unused */},
    {"bf16", DLB_BF16, DLB_CAP_BF16},
    {"fp16", DLB_F16, DLB_CAP_F16},
};

int dlb_model_lend_precision_find(const char *name)
{
    for (size_t k = 0; k < sizeof precisions / sizeof *precisions; k++)
        if (!strcmp(name, precisions[k].name))
            return (int)k;
    return -1;
}

/* The policy of the amp plugin: every node in the low type but the loss;
 * fp32 master weights. */
static dlb_status set_precision(struct dlb_model *m, int precision,
                                struct dlb_error *err)
{
    enum dlb_dtype types[DLB_LAYER_KIND_COUNT];
    struct dlb_backend *be = dlb_model_backend(m);
    char why[320] = "";
    if (precision < 0)
        return DLB_OK;
    if (precisions[precision].type == DLB_F32)
        return dlb_model_set_precision(m, NULL, 1, err);
    dlb_status s = DLB_BE_CALL(be, supports, precisions[precision].cap, why,
                               sizeof why);
    if (s != DLB_OK)
        return dlb_errorf(err, DLB_ERR_UNSUPPORTED, "open: precision %s on "
                          "backend %s: %s", precisions[precision].name,
                          dlb_backend_name(be), why[0] ? why
                                                       : dlb_status_name(s));
    for (int k = 0; k < DLB_LAYER_KIND_COUNT; k++)
        types[k] = k == DLB_LAYER_LOGSOFTMAX ? DLB_F32
                                             : precisions[precision].type;
    return dlb_model_set_precision(m, types, 1, err);
}

/* Pin the calling thread to its share of the CPUs the process started
 * with: the backend opened next pins its threads inside that share. */
static void pin_slot(const struct dlb_model_lend_how *how)
{
    int ids[CPU_SETSIZE], n = 0, t1 = how->threads > 0 ? how->threads : 1;
    cpu_set_t mine;
    if (how->slot < 0 || !how->cpus)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, how->cpus))
            ids[n++] = c;
    if (n == 0)
        return;
    CPU_ZERO(&mine);
    for (int t = 0; t < t1; t++)
        CPU_SET(ids[((long)how->slot * t1 + t) % n], &mine);
    sched_setaffinity(0, sizeof mine, &mine);
}

/* The system allocator: a pool plugin serves one thread. */
static struct dlb_backend_config config_of(const struct dlb_model_lend_how *how)
{
    return (struct dlb_backend_config){
        .threads = how->threads > 0 ? how->threads : 1,
        .device = how->slot > 0 ? how->slot : 0, .seed = how->seed};
}

dlb_status dlb_model_lend_clone(const struct dlb_model *src,
                                const struct dlb_model_lend_how *how,
                                struct dlb_model **out, struct dlb_error *err)
{
    const char *backend = how->backend ? how->backend : how->home;
    struct dlb_backend_config cfg = config_of(how);
    if (!backend)
        return dlb_errorf(err, DLB_ERR_INTERNAL, "open: no backend");
    pin_slot(how);
    struct clone *c = malloc(sizeof *c);
    dlb_status s = c ? dlb_model_replica_create(src, backend, &cfg, how->seed,
                                                out, err)
                     : dlb_errorf(err, DLB_ERR_NOMEM, "open: out of memory");
    if (s == DLB_OK && (s = set_precision(*out, how->precision, err))) {
        dlb_model_replica_destroy(*out);
        *out = NULL;
    }
    if (s != DLB_OK) {
        free(c);
        return s;
    }
    pthread_mutex_lock(&clones_lock);
    *c = (struct clone){*out, clones};
    clones = c;
    pthread_mutex_unlock(&clones_lock);
    return DLB_OK;
}

/* 1 when m was a clone, now destroyed. */
static int release_clone(struct dlb_model *m)
{
    struct clone **p, *c = NULL;
    pthread_mutex_lock(&clones_lock);
    for (p = &clones; *p && (*p)->model != m; p = &(*p)->next)
        ;
    if ((c = *p))
        *p = c->next;
    pthread_mutex_unlock(&clones_lock);
    if (c)
        dlb_model_replica_destroy(m);
    free(c);
    return c != NULL;
}

static void close_named(struct dlb_model_lend_named *e)
{
    if (e->moved)
        dlb_model_replica_destroy(e->model);
    else
        dlb_model_destroy(e->model);
    dlb_model_spec_free(e->spec);
    free(e);
}

/* Onto the backend open asked for, unless it is the model's already. */
static dlb_status move_named(const struct dlb_model_lend_how *how,
                             struct dlb_model_lend_named *e,
                             struct dlb_error *err)
{
    struct dlb_backend_config cfg = config_of(how);
    struct dlb_model *r = NULL;
    if (!how->backend ||
        !strcmp(how->backend, dlb_backend_name(dlb_model_backend(e->model))))
        return DLB_OK;
    pin_slot(how);
    dlb_status s = dlb_model_replica_move(e->model, how->backend, &cfg,
                                          how->seed, &r, err);
    if (s != DLB_OK)
        return s;
    dlb_model_destroy(e->model);
    e->model = r;
    e->moved = 1;
    return DLB_OK;
}

dlb_status dlb_model_lend_named(struct dlb_model_lend_registry *reg,
                                const char *name, struct dlb_model_spec *spec,
                                struct dlb_model *m,
                                const struct dlb_model_lend_how *how,
                                struct dlb_model **out, struct dlb_error *err)
{
    struct dlb_model_lend_named *e = calloc(1, sizeof *e);
    dlb_status s;
    if (!e) {
        dlb_model_destroy(m);
        dlb_model_spec_free(spec);
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory opening model "
                          "%s", name);
    }
    e->model = m;
    e->spec = spec;
    if ((s = move_named(how, e, err)) != DLB_OK ||
        (s = set_precision(e->model, how->precision, err)) != DLB_OK) {
        close_named(e);
        return s;
    }
    e->next = reg->head;
    reg->head = e;
    *out = e->model;
    return DLB_OK;
}

void dlb_model_lend_release(struct dlb_model_lend_registry *reg,
                            struct dlb_model *m)
{
    struct dlb_model_lend_named **p = &reg->head;
    if (!m || release_clone(m))
        return;
    while (*p && (*p)->model != m)
        p = &(*p)->next;
    if (*p) {
        struct dlb_model_lend_named *e = *p;
        *p = e->next;
        close_named(e);
    }
}

void dlb_model_lend_close_all(struct dlb_model_lend_registry *reg)
{
    while (reg->head) {
        struct dlb_model_lend_named *e = reg->head;
        reg->head = e->next;
        close_named(e);
    }
}

int dlb_model_lend_holds(const struct dlb_model_lend_registry *reg,
                         const struct dlb_model *m)
{
    for (const struct dlb_model_lend_named *e = reg->head; e; e = e->next)
        if (e->model == m)
            return 1;
    return 0;
}
